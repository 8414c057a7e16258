"""Scalar results computed from a run's time series: fairness, peaks, recovery, transients.

Pure numpy/pandas and free of the native module, so sweeps and notebooks can analyse saved runs
(`Result.load`) on any machine. The definitions here are the ones `summary.json["metrics"]`
reports; each function's docstring is the definition.

Conventions of the native time series: a rate metric (`*_bps`) sampled at `time_s = t_k` is the
mean over the probe interval that ends at `t_k`; a byte metric is the instantaneous value at
`t_k`.
"""

from __future__ import annotations

import fnmatch
import functools
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pandas as pd

    from cnsim.result import Result

# pandas is imported by the functions that need it, not here: `compute_metrics` on a run whose
# [report] asks for no time-series metric works from the summary alone, and `cnsim run` then
# never pays pandas' import (longer than a small simulation; performance.md).

Patterns = Sequence[str] | str | None
KneeMethod = Literal["chord", "settle", "flat"]

PS_DIGITS = 12  # the core's clock ticks in picoseconds; finer digits are float noise
DEFAULT_HOLD_INTERVALS = 3
# A steady or transient window with fewer probe samples than this is a warning, not a statistic
# (a 30 ms run of dcqcn-incast leaves its steady window from 30 ms one probe). A scenario's
# `[report].min_window_samples` sets it (default the same, docs/scenario.md).
MIN_WINDOW_SAMPLES = 10
FEW_SAMPLES = "too few samples"


class FewSamplesWarning(UserWarning):
    """A steady or transient window holds fewer probe samples than its statistics need."""


@functools.cache
def report_defaults(table: str) -> dict[str, Any]:
    """The core's defaults of a [report.*] table ("RecoverySpec", "TransientSpec"), read from
    the scenario schema it exports: Python keeps no copy of a Rust default."""
    from cnsim import api

    fields = api.scenario_schema()["$defs"][table]["properties"]
    return {name: field["default"] for name, field in fields.items() if "default" in field}


REPORT_TABLES = {"recovery": "RecoverySpec", "transient": "TransientSpec", "steady": "SteadySpec"}


def report_table(result: Result, key: str) -> dict[str, Any] | None:
    """The run's `[report.<key>]` with every default filled (a resolved scenario has them; a
    hand-made one gets the core's), or None when the scenario has no such table."""
    table = result.scenario.get("report", {}).get(key)
    if table is None:
        return None
    return {**report_defaults(REPORT_TABLES[key]), **table}


# ---------------------------------------------------------------- selecting series


def select_entities(names: Iterable[str], patterns: Patterns) -> list[str]:
    """Names matching any pattern, in their original order; no pattern means all.

    Patterns are shell globs (`core->*`, `ep[0-3]`) so a preset can name entities without
    knowing the topology's size; an exact name always matches itself.
    """
    names = list(names)
    if not patterns:
        return names
    globs = pattern_list(patterns)
    return [n for n in names if any(n == p or fnmatch.fnmatchcase(n, p) for p in globs)]


def pattern_list(patterns: Patterns) -> list[str]:
    """The patterns as a list: one string is one pattern (not its characters)."""
    if patterns is None:
        return []
    return [patterns] if isinstance(patterns, str) else list(patterns)


def observed(column: pd.Series) -> list[str]:
    """Distinct values of a (categorical) column, in category order when it has one.

    Category order is the native module's entity order (topology order), which reads better
    in legends than alphabetical order ("ep10" after "ep9").
    """
    import pandas as pd

    present = set(pd.unique(column).tolist())
    if isinstance(column.dtype, pd.CategoricalDtype):
        return [str(c) for c in column.cat.categories if c in present]
    return [str(v) for v in pd.unique(column)]


def wide(timeseries: pd.DataFrame, metric: str, entities: Patterns = None) -> pd.DataFrame:
    """One column per entity of `metric`, indexed by `time_s`; KeyError names what exists."""
    rows = timeseries[timeseries["metric"] == metric]
    if rows.empty:
        metrics = ", ".join(observed(timeseries["metric"])) or "none"
        raise KeyError(f"no metric {metric!r} in this run (available: {metrics})")
    available = observed(rows["entity"])
    chosen = select_entities(available, entities)
    if not chosen:
        raise KeyError(
            f"no entity of {metric!r} matches {pattern_list(entities)} "
            f"(available: {', '.join(available)})"
        )
    rows = rows[rows["entity"].isin(chosen)]
    rows = rows.assign(entity=rows["entity"].astype(str))
    table = rows.pivot(index="time_s", columns="entity", values="value")
    table = table.reindex(columns=chosen)
    table.columns.name = "entity"
    return table


def aggregate(timeseries: pd.DataFrame, metric: str, entities: Patterns = None) -> pd.Series:
    """Sum of `metric` over the matching entities at each probe time (e.g. total throughput)."""
    total = wide(timeseries, metric, entities).sum(axis=1, min_count=1)
    total.name = metric
    return total


def in_window(series: pd.Series, window_s: Sequence[float] | None) -> pd.Series:
    """The part of a time-indexed series with `start <= time_s <= end`; all of it if no window."""
    if window_s is None:
        return series
    start, end = window_s
    return series[(series.index >= start) & (series.index <= end)]


def peak(series: pd.Series, window_s: Sequence[float] | None = None) -> float:
    """Largest sample in the window (NaN when the window is empty)."""
    part = in_window(series, window_s)
    return float(part.max()) if len(part) else math.nan


def mean(series: pd.Series, window_s: Sequence[float] | None = None) -> float:
    """Mean of the samples in the window; samples are equally spaced, so this is a time mean."""
    part = in_window(series, window_s)
    return float(part.mean()) if len(part) else math.nan


# ---------------------------------------------------------------- fairness


def jain_fairness(values: Iterable[float]) -> float:
    """Jain's fairness index J = (sum x)^2 / (n * sum x^2) (protocols.md section 7).

    1 when all sources get the same throughput, 1/n when one source gets everything; NaN when
    there are no sources or none sent anything (the index is undefined there).
    """
    x = np.asarray(list(values), dtype=float)
    if x.size == 0 or not np.any(x):
        return math.nan
    return float(x.sum() ** 2 / (x.size * np.square(x).sum()))


# ---------------------------------------------------------------- recovery


def probe_step(times: npt.ArrayLike) -> float:
    """The probe interval of a time axis (median spacing, robust to a short last interval)."""
    t = np.asarray(times, dtype=float)
    return float(np.median(np.diff(t))) if t.size > 1 else 0.0


def recovery_time(
    series: pd.Series,
    *,
    after_s: float,
    capacity_bps: float,
    band: float | None = None,
    hold_s: float | None = None,
) -> float | None:
    """Time from `after_s` until the series is back at `capacity_bps` to stay (seed 004).

    Definition: let x(t_k) be the series at probe times t_k. A sample is *in band* when
    |x(t_k) - capacity_bps| <= band * capacity_bps. The recovery instant t* is the first probe
    time t_k >= after_s such that every sample with t_k <= t_j <= t_k + hold_s is in band
    (`hold_s` defaults to 3 probe intervals, so 4 consecutive samples; `band` to the core's
    [report.recovery] default, `report_defaults("RecoverySpec")`). The result is
    t* - after_s. It is None when no such t_k exists, including when the hold window would
    run past the last sample (recovery cannot be confirmed). Since a rate sample averages the
    interval ending at t_k, the resolution is one probe interval.
    """
    if capacity_bps <= 0:
        raise ValueError(f"capacity_bps must be > 0 (got {capacity_bps})")
    band = report_defaults("RecoverySpec")["band"] if band is None else band
    t = series.index.to_numpy(dtype=float)
    x = series.to_numpy(dtype=float)
    step = probe_step(t)
    hold = DEFAULT_HOLD_INTERVALS * step if hold_s is None else hold_s
    eps = 1e-6 * step  # probe times are sums of floats: 6.0 may arrive as 5.999999999
    in_band = np.abs(x - capacity_bps) <= band * capacity_bps  # NaN compares False
    for i in np.flatnonzero((t >= after_s - eps) & in_band):
        if t[i] + hold > t[-1] + eps:
            return None
        j = int(np.searchsorted(t, t[i] + hold + eps, side="right"))
        if in_band[i:j].all():
            return round(max(float(t[i]) - after_s, 0.0), PS_DIGITS)
    return None


# ---------------------------------------------------------------- transient (Jain 1991)


def relative_change_curve(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Initial data deletion curve R_l = (mean(x[l:]) - mean(x)) / mean(x), l = 0 .. n-1.

    Jain, "The Art of Computer Systems Performance Analysis" (1991), p. 424: deleting the first
    l observations moves the mean while they belong to the transient and stops moving it after.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("need a non-empty 1-D series")
    tail_sums = np.cumsum(x[::-1])[::-1]
    tail_means = tail_sums / (x.size - np.arange(x.size))
    overall = tail_means[0]
    if overall == 0:
        raise ValueError("the series has mean 0; its relative change is undefined")
    return np.asarray((tail_means - overall) / overall, dtype=np.float64)


def knee_chord(curve: npt.ArrayLike, max_index: int | None = None) -> int:
    """Knee of a curve as its point farthest from the chord (the "kneedle" rule).

    Definition: take the points (l, R_l) for l = 0 .. L (L = `max_index`, default the last),
    rescale both axes to [0, 1] (l / L, and R over its min..max range), draw the chord from the
    first to the last point, and return the smallest l with the largest perpendicular distance
    to it. A curve that rises (or falls) and then stays flat has its knee exactly where it
    flattens. A flat curve has knee 0.
    """
    y = np.asarray(curve, dtype=float)
    last = y.size - 1 if max_index is None else min(max_index, y.size - 1)
    y = y[: last + 1]
    span = float(y.max() - y.min()) if y.size else 0.0
    if last < 2 or span == 0.0:
        return 0
    u = np.arange(last + 1) / last
    v = (y - y.min()) / span
    rise = v[-1] - v[0]
    distance = np.abs(v - v[0] - rise * u) / math.hypot(1.0, rise)
    return int(np.argmax(distance))


def knee_settle(curve: npt.ArrayLike, tol: float, max_index: int | None = None) -> int:
    """Knee of a curve as the first point after which it stays within `tol`.

    Definition: the smallest l such that max(R[l..L]) - min(R[l..L]) <= tol. The suffix range
    only shrinks as l grows, so the curve stays settled from the knee on; L is always settled.
    `tol` is in units of the curve (a relative change of the mean, e.g. 0.005 = 0.5 %).
    """
    y = np.asarray(curve, dtype=float)
    last = y.size - 1 if max_index is None else min(max_index, y.size - 1)
    y = y[: last + 1]
    suffix_max = np.maximum.accumulate(y[::-1])[::-1]
    suffix_min = np.minimum.accumulate(y[::-1])[::-1]
    return int(np.argmax(suffix_max - suffix_min <= tol))


def remaining_range(curve: npt.ArrayLike, max_index: int | None = None) -> npt.NDArray[np.float64]:
    """S_l = max(R[l..L]) - min(R[l..L]): how far the curve still moves after l (non-increasing)."""
    y = np.asarray(curve, dtype=float)
    last = y.size - 1 if max_index is None else min(max_index, y.size - 1)
    y = y[: last + 1]
    return np.maximum.accumulate(y[::-1])[::-1] - np.minimum.accumulate(y[::-1])[::-1]


def knee_flat(curve: npt.ArrayLike, max_index: int | None = None) -> int:
    """Knee of a curve as the point where it stops moving for good (seed 001's study rule).

    Definition: the chord knee (`knee_chord`) of the remaining range S_l = max(R[l..L]) -
    min(R[l..L]), l = 0 .. L. S falls from the curve's whole range to 0 and is flat once R is,
    so its knee is where R flattens for good. For a curve that rises (or falls) and then stays
    flat, S is the curve mirrored and the knee is the same as `knee_chord`'s; for a curve that
    rises and then falls back (an initial deficit followed by an overshoot, as the aggregate
    throughput of seed 001 gives), `knee_chord` stops at the turning point while this rule
    waits until the fall is over. Parameter-free, like `knee_chord`.
    """
    return knee_chord(remaining_range(curve, max_index))


@dataclass(frozen=True)
class Transient:
    """Result of initial data deletion on a replication-averaged series."""

    knee_index: int
    end_s: float
    duration_s: float
    times_s: npt.NDArray[np.float64]
    mean_series: npt.NDArray[np.float64]
    relative_change: npt.NDArray[np.float64]
    searched_index: int = 0  # L: the knee was searched over l = 0 .. L
    settled: bool = True  # the series after the knee matches the unsearched tail (see below)

    @property
    def searched_s(self) -> float:
        """t[L] - t[0]: the longest transient the search could find."""
        return round(float(self.times_s[self.searched_index] - self.times_s[0]), PS_DIGITS)

    @property
    def lower_bound_s(self) -> float:
        """t[L/2] - t[0]: how long a transient that has not settled lasts at least (the
        series still moves in x[L/2 .. L], see `transient_duration`)."""
        half = self.searched_index // 2
        return round(float(self.times_s[half] - self.times_s[0]), PS_DIGITS)


def replication_mean(replications: pd.Series | pd.DataFrame | Sequence[pd.Series]) -> pd.Series:
    """Average of time-indexed series over replications, on the probe times they all share."""
    import pandas as pd

    if isinstance(replications, pd.Series):
        return replications.astype(float)
    if isinstance(replications, pd.DataFrame):
        return replications.mean(axis=1)
    if not replications:
        raise ValueError("need at least one replication")
    table = pd.concat(list(replications), axis=1, join="inner")
    return table.mean(axis=1)


def transient_duration(
    replications: pd.Series | pd.DataFrame | Sequence[pd.Series],
    *,
    start_s: float | None = None,
    end_s: float | None = None,
    method: KneeMethod | None = None,
    max_fraction: float | None = None,
    tol: float | None = None,
    min_change: float = 1e-3,
) -> Transient:
    """Transient duration by Jain's initial data deletion (protocols.md section 7, seed 001).

    Steps: average the series over replications (same probe times); keep samples with
    start_s <= t <= end_s (e.g. from the congestion onset to its end); compute R_l with
    `relative_change_curve`; find the knee l* over l = 0 .. L, L = floor(max_fraction * (n-1))
    (Jain: keep enough observations for the remaining mean to mean something):
    `method`, `max_fraction` and `tol` default to the core's [report.transient] defaults
    (`report_defaults("TransientSpec")`: chord, 0.5, 0.005).
    - method "chord": `knee_chord`; if R varies by less than `min_change` over
      0 .. L, deleting data does not move the mean and l* = 0;
    - method "settle": `knee_settle` with `tol`;
    - method "flat": `knee_flat` (the chord knee of the remaining range; with the same
      `min_change` floor as "chord").
    The transient is the first l* observations: duration_s = t[l*] - t[0] (= l* probe
    intervals), end_s = t[l*].

    `settled` checks that the run was long enough for the answer to mean something: the mean
    of the second half of the searched part, x[L/2 .. L], and the mean of the tail never
    searched, x[L+1 ..], differ by at most `tol` of the tail's mean. A series still drifting,
    draining a backlog or oscillating slowly in x[L/2 ..] is not settled: its transient lasts
    at least `lower_bound_s`, whatever knee the rule found.
    """
    defaults = report_defaults("TransientSpec")
    method = defaults["method"] if method is None else method
    max_fraction = defaults["max_fraction"] if max_fraction is None else max_fraction
    tol = defaults["tol"] if tol is None else tol
    series = replication_mean(replications).sort_index()
    if start_s is not None or end_s is not None:
        lo = -math.inf if start_s is None else start_s
        hi = math.inf if end_s is None else end_s
        series = series[(series.index >= lo) & (series.index <= hi)]
    if len(series) < 3:
        raise ValueError(f"need at least 3 samples for a transient (got {len(series)})")
    times = series.index.to_numpy(dtype=float)
    values = series.to_numpy(dtype=float)
    curve = relative_change_curve(values)
    last = max(2, int(max_fraction * (values.size - 1)))
    knee = _knee(curve, method, last, tol, min_change)
    return Transient(
        knee_index=knee,
        end_s=float(times[knee]),
        duration_s=round(float(times[knee] - times[0]), PS_DIGITS),
        times_s=times,
        mean_series=values,
        relative_change=curve,
        searched_index=last,
        settled=_settled(values, last, tol),
    )


def _settled(values: npt.NDArray[np.float64], last: int, tol: float) -> bool:
    """Mean of x[L/2 .. L] within `tol` of the mean of the unsearched tail x[L+1 ..]."""
    tail = values[last + 1 :]
    if tail.size == 0:
        return True  # nothing left to compare with
    tail_mean = float(tail.mean())
    late = float(values[last // 2 : last + 1].mean())
    return abs(late - tail_mean) <= tol * abs(tail_mean)


def _knee(curve: npt.NDArray[np.float64], method: str, last: int, tol: float, floor: float) -> int:
    """Dispatch on the knee rule named in a scenario or call."""
    if method == "chord":
        if np.ptp(curve[: last + 1]) < floor:
            return 0
        return knee_chord(curve, last)
    if method == "settle":
        return knee_settle(curve, tol, last)
    if method == "flat":
        if np.ptp(curve[: last + 1]) < floor:
            return 0
        return knee_flat(curve, last)
    raise ValueError(f"unknown knee method {method!r} (expected 'chord', 'settle' or 'flat')")


# ---------------------------------------------------------------- summary metrics

# Schemes that act on a transport's ACKs (docs/dctcp.md, timely.md, hpcc.md, swift.md): open-loop
# traffic has none and runs uncontrolled.
ACK_DRIVEN_SCHEMES = frozenset({"dctcp", "timely", "hpcc", "swift"})


def uncontrolled_scheme_warning(scenario: Mapping[str, Any]) -> str | None:
    """A warning when the scheme acts on ACKs and no traffic entry has a transport: the run
    is then the same as with no scheme, which nobody asks for on purpose."""
    scheme = scenario.get("congestion", {}).get("scheme", "none")
    entries = scenario.get("traffic", [])
    if scheme not in ACK_DRIVEN_SCHEMES or not entries:
        return None
    if any(entry.get("transport", "none") != "none" for entry in entries):
        return None
    return (
        f'congestion.scheme = "{scheme}" acts on a transport\'s ACKs and no traffic entry has a '
        'transport: nothing was controlled (give the entries transport = "roce", "irn" or "tcp")'
    )


def compute_metrics(result: Result) -> dict[str, Any]:
    """The metrics Python adds to summary["metrics"], driven by the resolved [report] table.

    Always: `peak_queue_bytes`/`peak_queue_port` (largest per-port peak), `throughput_bps`
    (data delivered to all hosts over the run) and, when the summary has a window,
    `fairness_index` over it. With [report].recovery: `recovery_time_s`,
    `recovered_at_s`. With [report].transient: `transient_duration_s`, `transient_end_s`,
    `transient_settled` and, given `rtt_s`, `transient_duration_rtt`. With [report].steady: the
    `steady_*` metrics of `steady_state`. A spec naming a metric
    the run lacks warns and is skipped rather than losing the run; a recovery the run ends
    too early to see (before `after_s` plus `hold_s`) is None with a warning. NaN becomes None so
    summary.json stays strict JSON.
    """
    report = result.scenario.get("report", {})
    uncontrolled = uncontrolled_scheme_warning(result.scenario)
    if uncontrolled is not None:
        warnings.warn(uncontrolled, stacklevel=2)
    metrics: dict[str, Any] = {}
    metrics.update(_queue_metrics(result.summary))
    metrics.update(_throughput_metrics(result.summary))
    metrics.update(_fairness_metrics(result.summary))
    specs = [
        ("recovery", _recovery_metrics),
        ("transient", _transient_metrics),
        ("steady", _steady_metrics),
    ]
    for key, compute in specs:
        spec = report_table(result, key)
        if spec is None:
            continue
        try:
            metrics.update(compute(result, spec, report))
        except (KeyError, ValueError) as exc:
            warnings.warn(f"[report].{key}: {exc}", stacklevel=2)
    for message in few_sample_warnings(result):
        warnings.warn(message, FewSamplesWarning, stacklevel=2)
    return {name: json_scalar(value) for name, value in metrics.items()}


def few_sample_warnings(result: Result) -> list[str]:
    """One message per [report.steady] or [report.transient] window whose statistics rest on
    fewer than `[report].min_window_samples` (default `MIN_WINDOW_SAMPLES`) probe samples;
    a window with none, or a transient with under 3, is already an error of its own."""
    report = result.scenario.get("report", {})
    minimum = int(report.get("min_window_samples", MIN_WINDOW_SAMPLES))
    found = []
    steady = report_table(result, "steady")
    if steady is not None:
        end = steady.get("end_s") or float(result.scenario.get("duration_s", math.inf))
        window = [float(steady["start_s"]), float(end)]
        with suppress(KeyError):  # a metric the run lacks: warned about already
            queue = wide(result.timeseries, "queue_bytes", [steady["port"]])[steady["port"]]
            found.append(("steady", window, len(in_window(queue, window).dropna()), 1))
    transient = report_table(result, "transient")
    if transient is not None:
        lo, hi = transient.get("start_s"), transient.get("end_s")
        window = [-math.inf if lo is None else lo, math.inf if hi is None else hi]
        with suppress(KeyError):  # a metric the run lacks: warned about already
            series = aggregate(result.timeseries, transient["metric"], _spec_entities(transient))
            found.append(("transient", window, len(in_window(series, window).dropna()), 3))
    return [
        f"[report].{key}: {FEW_SAMPLES}: the window {_span(window)} holds {n} probe "
        f"sample{'s' if n != 1 else ''} (fewer than {minimum}); its {key}_* metrics rest on them"
        for key, window, n, floor in found
        if floor <= n < minimum
    ]


def _span(window: Sequence[float]) -> str:
    lo = "the start" if math.isinf(window[0]) else f"{window[0]:g} s"
    hi = "the end" if math.isinf(window[1]) else f"{window[1]:g} s"
    return f"{lo} - {hi}"


def json_scalar(value: Any) -> Any:
    """A plain Python value for JSON: numpy scalars unwrapped, NaN and infinities as None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def per_source_table(summary: Mapping[str, Any], *, window: bool = True) -> dict[str, Any]:
    """Per-source counters, over the report window when the summary has one and `window`."""
    win = summary.get("window") if window else None
    if isinstance(win, Mapping):
        if isinstance(win.get("per_source"), Mapping):
            return dict(win["per_source"])
        flat = {k: v for k, v in win.items() if isinstance(v, Mapping)}
        if flat:
            return flat
    return dict(summary.get("per_source", {}))


def senders(per_source: Mapping[str, Any]) -> dict[str, Any]:
    """Sources that generated traffic: a pure sink is not a source of an unfair share."""
    return {k: row for k, row in per_source.items() if row.get("generated_frames", 1) > 0}


def _queue_metrics(summary: Mapping[str, Any]) -> dict[str, Any]:
    ports = summary.get("per_port", {})
    peaks = {port: row.get("peak_queue_bytes") for port, row in ports.items()}
    peaks = {port: value for port, value in peaks.items() if value is not None}
    if not peaks:
        return {}
    port = max(peaks, key=lambda p: peaks[p])
    return {"peak_queue_bytes": peaks[port], "peak_queue_port": port}


def _throughput_metrics(summary: Mapping[str, Any]) -> dict[str, Any]:
    """Aggregate throughput: data bytes every host received, in bit/s of simulated time."""
    sim_time_s = summary.get("sim_time_s")
    rows = summary.get("per_source", {}).values()
    if not sim_time_s or not rows:
        return {}
    return {"throughput_bps": sum(r.get("rx_bytes", 0) for r in rows) * 8.0 / sim_time_s}


def _fairness_metrics(summary: Mapping[str, Any]) -> dict[str, Any]:
    win = summary.get("window")
    if not isinstance(win, Mapping):
        return {}
    if win.get("fairness_index") is not None:
        return {"fairness_index": win["fairness_index"]}
    rows = senders(per_source_table(summary)).values()
    return {"fairness_index": jain_fairness(r.get("throughput_bps", 0.0) for r in rows)}


def _spec_entities(spec: Mapping[str, Any]) -> Patterns:
    """A resolved [report.*] table's entity globs; none (all entities) when empty."""
    entities: list[str] = spec["entities"]
    return entities or None


def _recovery_metrics(
    result: Result, spec: Mapping[str, Any], report: Mapping[str, Any]
) -> dict[str, Any]:
    series = aggregate(result.timeseries, spec["metric"], _spec_entities(spec))
    default_hold = DEFAULT_HOLD_INTERVALS * float(report["probe_interval_s"])
    hold_s = spec.get("hold_s", default_hold)  # optional: None = 3 probe intervals
    after_s = float(spec["after_s"])
    elapsed = recovery_time(
        series,
        after_s=after_s,
        capacity_bps=float(spec["capacity_bps"]),
        band=float(spec["band"]),
        hold_s=hold_s,
    )
    if elapsed is None:
        _warn_unmeasurable_recovery(series, after_s, hold_s)
    at = None if elapsed is None else round(after_s + elapsed, PS_DIGITS)
    return {"recovery_time_s": elapsed, "recovered_at_s": at}


def _warn_unmeasurable_recovery(series: pd.Series, after_s: float, hold_s: float | None) -> None:
    """A null recovery reads as "never recovered"; when the run ends before the first probe
    from `after_s` plus one hold (as `recovery_time` confirms it), it was not measured at all,
    and a warning says so."""
    t = series.index.to_numpy(dtype=float)
    step = probe_step(t)
    hold = DEFAULT_HOLD_INTERVALS * step if hold_s is None else float(hold_s)
    eps = 1e-6 * step
    first = t[t >= after_s - eps]
    if first.size and first[0] + hold <= t[-1] + eps:
        return  # measurable: null means it did not recover within the run
    last = f"the run's last probe ({t[-1]:g} s)" if t.size else "the run (no probe)"
    warnings.warn(
        f"[report].recovery: not measured: after_s = {after_s:g} s plus hold_s = {hold:g} s is"
        f" past {last}; recovery_time_s is null",
        stacklevel=2,
    )


def steady_state(
    timeseries: pd.DataFrame,
    port: str,
    window_s: Sequence[float],
    entities: Patterns = None,
) -> dict[str, float]:
    """Fixed-point statistics over `window_s` = [start, end] (probe times start <= t <= end).

    - `steady_queue_mean_bytes`, `steady_queue_std_bytes`: mean and (population) standard
      deviation of `queue_bytes` of `port` over the probes (instantaneous samples);
    - `steady_throughput_bps`: mean `port_tx_bps` of `port`;
    - `steady_n_flows`: rate limiters (`rp_rate_bps` entities matching `entities`) with a sample
      in the window; in a run without rate limiters, transported flows with a congestion
      controller (`flow_rx_bps` entities: a window scheme such as DCTCP, HPCC, Swift); 0, and
      NaN rate statistics, without either;
    - `steady_rate_mean_bps`, `steady_rate_cv`: mean of every limiter's CR sample (of every
      flow's delivered rate) in the window pooled, and their standard deviation over that mean:
      the rate oscillation, in time and across flows together;
    - `steady_fairness_index`: Jain's index over the limiters' time-mean CR (the flows'
      time-mean delivered rate).
    """
    start, end = float(window_s[0]), float(window_s[1])
    queue = in_window(wide(timeseries, "queue_bytes", [port])[port], [start, end]).dropna()
    if queue.empty:
        raise ValueError(f"no probe of {port!r} within [{start}, {end}] s")
    tx = in_window(wide(timeseries, "port_tx_bps", [port])[port], [start, end]).dropna()
    metrics = timeseries["metric"]
    if (metrics == "rp_rate_bps").any():
        rates = wide(timeseries, "rp_rate_bps", entities)
    elif (metrics == "flow_rx_bps").any():  # no rate limiter: a window scheme's flows
        rates = wide(timeseries, "flow_rx_bps", entities)
    else:  # neither: no rate statistics
        rates = queue.to_frame().iloc[:, :0]
    rates = rates[(rates.index >= start) & (rates.index <= end)]
    rates = rates.dropna(axis=1, how="all")
    samples = rates.to_numpy(dtype=float).ravel()
    samples = samples[np.isfinite(samples)]
    mean_rate = float(samples.mean()) if samples.size else math.nan
    cv = float(samples.std() / mean_rate) if samples.size and mean_rate > 0 else math.nan
    return {
        "steady_n_flows": int(rates.shape[1]),
        "steady_queue_mean_bytes": float(queue.mean()) if len(queue) else math.nan,
        "steady_queue_std_bytes": float(queue.std(ddof=0)) if len(queue) else math.nan,
        "steady_throughput_bps": float(tx.mean()) if len(tx) else math.nan,
        "steady_rate_mean_bps": mean_rate,
        "steady_rate_cv": cv,
        "steady_fairness_index": jain_fairness(rates.mean(axis=0).to_numpy(dtype=float)),
    }


def _steady_metrics(
    result: Result, spec: Mapping[str, Any], report: Mapping[str, Any]
) -> dict[str, Any]:
    end = spec.get("end_s")
    if end is None:
        end = float(result.scenario["duration_s"])
    return steady_state(
        result.timeseries, str(spec["port"]), [float(spec["start_s"]), end], _spec_entities(spec)
    )


def _transient_metrics(
    result: Result, spec: Mapping[str, Any], report: Mapping[str, Any]
) -> dict[str, Any]:
    series = aggregate(result.timeseries, spec["metric"], _spec_entities(spec))
    found = transient_duration(
        series,
        start_s=spec.get("start_s"),  # optional fields: absent = the whole run
        end_s=spec.get("end_s"),
        method=spec["method"],
        max_fraction=spec["max_fraction"],
        tol=spec["tol"],
    )
    out = {
        "transient_duration_s": found.duration_s,
        "transient_end_s": found.end_s,
        "transient_settled": found.settled,
    }
    if spec.get("rtt_s"):
        out["transient_duration_rtt"] = found.duration_s / float(spec["rtt_s"])
    return out
