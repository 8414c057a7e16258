"""Headline numbers: the few numbers an experiment is about, printed first.

A scenario names them in its `[report]` table as `[[report.headline]]` entries (part of the
scenario format, checked by the core, docs/scenario.md); the presets' declarations still live
here (`PRESET_HEADLINES`, keyed by scenario name) and are used when the scenario declares none.
Each entry:

    [[report.headline]]
    label = "victim VS -> VR"                        # what the number is
    metric = "window.per_source.VS.throughput_bps"   # a summary path, as a sweep collects it
    reference = 20e9                                 # optional: what to read it against
    reference_label = "max-min fair share"           # optional: what the reference is

The terminal and the notebook print "victim VS -> VR: 9.79 Gb/s = 0.49 x max-min fair share
(20 Gb/s)"; a bar figure of the same entity marks its bar and draws the reference on it, so a
run whose fairness index reads 0.99 cannot hide a victim at half its fair share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cnsim.sweeps.paths import extract, parse_path

MAX_MIN = "max-min fair share"


def _read(label: str, metric: str, reference: float, reference_label: str) -> dict[str, Any]:
    """An entry read against a reference."""
    return {
        "label": label,
        "metric": metric,
        "reference": reference,
        "reference_label": reference_label,
    }


def _plain(label: str, metric: str) -> dict[str, Any]:
    return {"label": label, "metric": metric}


_SEED000 = [
    _plain("fairness, 20-80 ms", "window.fairness_index"),
    _plain("peak core queue", "per_port.core->ep4.peak_queue_bytes"),
]
_SEED003 = [
    _plain("aggregate throughput", "metrics.throughput_bps"),
    _plain("hot port queue, mean", "per_port.sw->h1.mean_queue_bytes"),
]
_HARDWARE = "hardware (seed 004)"
# The presets' headline declarations, used when a scenario declares no `[[report.headline]]`.
PRESET_HEADLINES: dict[str, list[dict[str, Any]]] = {
    "pfc-victim-flow": [
        _read("victim VS -> VR", "window.per_source.VS.throughput_bps", 20e9, MAX_MIN),
        _read("H11 -> R (congested)", "window.per_source.H11.throughput_bps", 10e9, MAX_MIN),
    ],
    "pfc-unfairness": [
        _read("H4 (R's switch)", "window.per_source.H4.throughput_bps", 10e9, MAX_MIN),
        _read("H1 (through the spine)", "window.per_source.H1.throughput_bps", 10e9, MAX_MIN),
    ],
    "dcqcn-incast": [
        _plain("steady queue, mean", "metrics.steady_queue_mean_bytes"),
        _plain("steady queue, std", "metrics.steady_queue_std_bytes"),
        _plain("steady rate, mean", "metrics.steady_rate_mean_bps"),
        _plain("steady rate, CV", "metrics.steady_rate_cv"),
    ],
    "seed000-pause": _SEED000,
    "seed000-pause-bcn": _SEED000,
    "seed000-pause-bcn00": _SEED000,
    "seed001-og-ms": [
        _read("transient", "metrics.transient_duration_s", 0.052, "seed 001 (case 2, B = 600 KB)")
    ],
    "seed002-bcn-baseline": [
        _plain("fairness, 5-95 ms", "window.fairness_index"),
        _plain("frames dropped at the RP", "frames.dropped.rp"),
    ],
    "seed003-bernoulli": _SEED003,
    "seed003-flows-exp": _SEED003,
    "seed003-flows-pareto": _SEED003,
    "seed004-qcn": [_read("recovery", "metrics.recovery_time_s", 0.07, _HARDWARE)],
    "seed004-qcn-delay": [_read("recovery", "metrics.recovery_time_s", 0.07, _HARDWARE)],
    "seed004-pause": [_read("frames dropped", "frames.dropped.total", 0, _HARDWARE)],
    "seed004-qcn-pause": [_read("frames dropped", "frames.dropped.total", 0, _HARDWARE)],
    "flows-16-exp": [
        _plain("FCT p99", "flows.fct_p99_s"),
        _plain("slowdown, mean", "flows.slowdown_mean"),
    ],
}


@dataclass(frozen=True)
class Headline:
    """One declared headline number (see the module docstring)."""

    label: str
    metric: str
    reference: float | None = None
    reference_label: str = ""

    @property
    def unit_name(self) -> str:
        """The path's last key: the name that carries the unit."""
        return parse_path(self.metric)[-1]

    @property
    def entity(self) -> str | None:
        """The host or port the path names (`window.per_source.VS.throughput_bps`: VS)."""
        keys = parse_path(self.metric)
        for container in ("per_source", "per_port", "per_switch"):
            if container in keys[:-2]:
                return keys[keys.index(container) + 1]
        return None


def declared(scenario: Mapping[str, Any]) -> list[Headline]:
    """The scenario's `[[report.headline]]` entries, else its preset's (`PRESET_HEADLINES`)."""
    entries = scenario.get("report", {}).get("headline")
    if entries is None:
        entries = PRESET_HEADLINES.get(str(scenario.get("name")), [])
    return [Headline(**entry) for entry in entries]


def value(summary: Mapping[str, Any], headline: Headline) -> Any:
    """The number at the headline's path; None when the run has none there (a metric that
    could not be computed, a window the run lacks)."""
    try:
        return extract(summary, headline.metric)
    except KeyError:
        return None
