"""Shared fixtures: synthetic runs built without the native module.

`make_result` builds a `cnsim.Result` shaped like a seed-004 run (4 sources into one congested
core port, a service-rate drop and recovery) from arrays whose answers the tests know.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pytest
import tomli_w

from cnsim.result import Result, timeseries_frame

TWO_HOST_SATURATE = """
name = "small"
duration_s = 1e-3
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
[[links]]
ends = ["a", "sw"]
rate_bps = 10e9
delay_s = 1e-6
[[links]]
ends = ["b", "sw"]
rate_bps = 10e9
delay_s = 1e-6
[[traffic]]
kind = "saturate"
hosts = ["a"]
dst = "b"
"""


def small_run(report: str) -> str:
    """TOML of the smallest useful run (hosts a and b on switch sw, 10 Gb/s links of 1 us, a
    saturating a -> b for 1 ms) with `report` as its [report] table's lines."""
    return f"{TWO_HOST_SATURATE}[report]\n{report}\n"


HOSTS = ("ep0", "ep1", "ep2", "ep3")
CORE_PORT = "core->ep4"
IDLE_PORT = "es0->core"


def native_timeseries(times: np.ndarray, series: Mapping[tuple[str, str], np.ndarray]) -> dict:
    """The dict `_native.run` returns under "timeseries", from {(metric, entity): values}."""
    metrics = list(dict.fromkeys(m for m, _ in series))
    entities = list(dict.fromkeys(e for _, e in series))
    cols: dict[str, list[np.ndarray]] = {"time_s": [], "metric": [], "entity": [], "value": []}
    for (metric, entity), values in series.items():
        cols["time_s"].append(times)
        cols["metric"].append(np.full(times.size, metrics.index(metric), dtype=np.uint32))
        cols["entity"].append(np.full(times.size, entities.index(entity), dtype=np.uint32))
        cols["value"].append(np.asarray(values, dtype=np.float64))
    out: dict[str, Any] = {k: np.concatenate(v) for k, v in cols.items()}
    out["metrics"], out["entities"] = metrics, entities
    return out


def capacity_profile(times: np.ndarray) -> np.ndarray:
    """Aggregate throughput: 9.5 Gb/s, 2 Gb/s in [0.03, 0.06) s, then a 10 ms ramp back."""
    total = np.full(times.size, 9.5e9)
    total[(times >= 0.03) & (times < 0.06)] = 2e9
    ramp = (times >= 0.06) & (times < 0.07)
    total[ramp] = 2e9 + (times[ramp] - 0.06) / 0.01 * 7.5e9
    return total


def build_series(times: np.ndarray, drops: int) -> dict[tuple[str, str], np.ndarray]:
    total = capacity_profile(times)
    shares = np.array([0.4, 0.3, 0.2, 0.1])
    series: dict[tuple[str, str], np.ndarray] = {}
    for host, share in zip(HOSTS, shares, strict=True):
        series["host_tx_bps", host] = total * share
        series["rp_rate_bps", f"{host}->ep4"] = np.where(times < 0.03, 10e9, 2.5e9)
    series["queue_bytes", CORE_PORT] = np.clip(np.sin(times * 200) * 60e3 + 30e3, 0, None)
    series["queue_bytes", IDLE_PORT] = np.zeros(times.size)
    drop_curve = np.round(np.linspace(0, drops, times.size))
    series["dropped_frames", "core"] = drop_curve
    series["dropped_frames", "es0"] = np.zeros(times.size)
    return series


SENDER_BPS = (2.44e9, 3.54e9, 1.44e9, 2.58e9)  # seed 002's table


def build_summary(name: str, drops: int, window: bool) -> dict[str, Any]:
    """A summary shaped like the core's (crates/cnsim-core/src/report.rs)."""
    per_source = {
        host: {"generated_frames": 1000, "tx_frames": 1000, "throughput_bps": bps}
        for host, bps in zip(HOSTS, SENDER_BPS, strict=True)
    }
    per_source["ep4"] = {"generated_frames": 0, "tx_frames": 0, "throughput_bps": 0.0}
    places = {"nic": 0, "rp": 0, "ingress": 0, "shared": 0, "egress": drops, "rx": 0}
    summary: dict[str, Any] = {
        "scenario": name,
        "seed": 7,
        "sim_time_s": 0.1,
        "wall_time_s": 0.5,
        "events": 1_234_567,
        "events_per_s": 2.5e6,
        "frames": {
            "generated": 10_000 + drops,
            "delivered": 10_000,
            "dropped": {**places, "total": drops},
            "in_flight": 0,
            "conserved": True,
        },
        "latency_s": {"mean": 2.5e-5, "max": 1.2e-4},
        "control_frames": {"pause_xoff": 0, "qcn_cnm": 321, "bytes": 20544, "bandwidth_bps": 1.6e6},
        "per_source": per_source,
        "per_port": {
            CORE_PORT: {"peak_queue_bytes": 90_000, "mean_queue_bytes": 30_000.0},
            IDLE_PORT: {"peak_queue_bytes": 0, "mean_queue_bytes": 0.0},
        },
        "per_switch": {"core": {"peak_memory_bytes": 90_000, "dropped_frames": drops}},
        "window": None,
        "metrics": {},
    }
    if window:
        summary["window"] = {
            "start_s": 0.02,
            "end_s": 0.08,
            "per_source": per_source,
            "fairness_index": 0.875,  # the core's number; Python must not replace it
        }
    return summary


def build_scenario(name: str, probe_s: float, report_extra: Mapping[str, Any]) -> str:
    report = {"probe_interval_s": probe_s, "window_s": [0.02, 0.08], **report_extra}
    scenario = {
        "name": name,
        "description": "synthetic seed-004-like run\nsecond line",
        "seed": 7,
        "duration_s": 0.1,
        "report": report,
    }
    return tomli_w.dumps(scenario)


@pytest.fixture
def make_result() -> Callable[..., Result]:
    """Factory of synthetic Results; keyword arguments shape the summary and [report]."""

    def factory(
        *,
        drops: int = 0,
        window: bool = True,
        probe_s: float = 1e-3,
        plots: list[dict[str, Any]] | None = None,
        recovery: dict[str, Any] | None = None,
        transient: dict[str, Any] | None = None,
        core_metrics: dict[str, Any] | None = None,
    ) -> Result:
        name = "synthetic"
        # Probe times as the core produces them: accumulated sums, not exact multiples.
        times = np.cumsum(np.full(round(0.1 / probe_s), probe_s))
        extra = {"plots": plots, "recovery": recovery, "transient": transient}
        extra = {k: v for k, v in extra.items() if v is not None}
        summary = build_summary(name, drops, window)
        summary["metrics"] = dict(core_metrics or {})
        return Result(
            summary,
            build_scenario(name, probe_s, extra),
            timeseries_frame(native_timeseries(times, build_series(times, drops))),
        )

    return factory
