"""Headline numbers: the few numbers an experiment is about, printed first.

A scenario names them in its `[report]` table as `[[report.headline]]` entries (part of the
scenario format, checked by the core, docs/scenario.md); every preset declares its own in its
file. Each entry:

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
    """The scenario's `[[report.headline]]` entries (none: no headline)."""
    entries = scenario.get("report", {}).get("headline") or []
    return [Headline(**entry) for entry in entries]


def value(summary: Mapping[str, Any], headline: Headline) -> Any:
    """The number at the headline's path; None when the run has none there (a metric that
    could not be computed, a window the run lacks)."""
    try:
        return extract(summary, headline.metric)
    except KeyError:
        return None
