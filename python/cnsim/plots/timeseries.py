"""A run's time-series figures: one metric vs time, per entity or summed.

What makes them readable (issue 27):
- more than `MANY_ENTITIES` lines become a band: the range (min to max over the entities) and
  their median at each probe time, with the few extreme entities drawn and named (highest and
  lowest mean, highest peak);
- the references the experiment is about (`cnsim.references`: Kmin/Kmax, Qeq, queue limits,
  XOFF/XON, the fair share C/N, a link's capacity) drawn as dashed lines, labelled;
- a zoomed steady-state panel below when a start-up transient dwarfs the steady behaviour
  (the peak before the steady window, or the run's second half, is `ZOOM_RATIO` times larger);
- piecewise-constant levels as steps; a series longer than `ENVELOPE_MAX_POINTS` drawn per
  time bin as a min-max band around the bin mean (so every peak stays visible); a short
  recovery on a long axis repeated in a zoomed inset.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from cnsim import analysis, references
from cnsim.plots.style import (
    AXIS_NAMES,
    FIGSIZE,
    axis_label,
    drop_all_zero,
    explain,
    legend,
    line_style,
    reference_lines,
    time_unit,
    value_unit,
)
from cnsim.readout import natural_order

if TYPE_CHECKING:
    from cnsim.result import Result

# A line with more samples than this (about the axes width in pixels) is drawn as a min/max band
# per time bin plus the bin mean:
# 18,000 samples of an oscillating queue on ~900 pixels would otherwise be a solid block.
ENVELOPE_MAX_POINTS = 1000
ENVELOPE_BINS = 300
# Levels that hold between changes (a limiter's rate, the CP's last Fb) are drawn as steps.
STEP_METRICS = frozenset({"rp_rate_bps", "rp_target_bps", "rp_feedback", "cp_fb"})
# The recovery gets a zoomed inset when it is shorter than this fraction of the time axis.
RECOVERY_INSET_FRACTION = 0.05
# More lines than the colour cycle has colours: a band with the extremes named.
MANY_ENTITIES = 10
# A start-up peak this many times the steady part's gets a zoomed steady-state panel (the steady
# behaviour then fills under a fifth of the axis), unless the steady part is flat.
ZOOM_RATIO = 5.0
FLAT_FRACTION = 0.05
# References up to this multiple of the data's top stretch the value axis to show them.
REFERENCE_STRETCH = 1.6


def plot_timeseries(result: Result, spec: Mapping[str, Any]) -> Figure:
    """Lines of one metric vs time: per entity (a band for many), or their sum when
    `aggregate = "sum"`, with the experiment's reference lines and, when a start-up transient
    dwarfs the rest, a zoomed steady-state panel."""
    metric = spec["metric"]
    patterns = spec["entities"] or None
    table, omitted = drop_all_zero(result.series(metric, patterns), explicit=bool(patterns))
    if not patterns:  # legends in natural order (h2 before h10); a list given keeps its order
        table = table[natural_order(table.columns)]
    summed = spec["aggregate"] == "sum"
    entities = [str(c) for c in table.columns]
    refs = references.plot_references(
        result.scenario, result.summary, metric, entities, summed=summed
    )
    aliasing = None if summed else _aliasing_note(result, metric, entities)
    if summed:
        label = f"total of {table.shape[1]}" if table.shape[1] > 1 else entities[0]
        table = table.sum(axis=1, min_count=1).to_frame(label)
    xlim = spec.get("xlim_s")
    if xlim:  # a close-up: bin and scale what is shown, keeping one sample either side
        times = table.index.to_numpy(dtype=float)
        first = max(int(np.searchsorted(times, xlim[0])) - 1, 0)
        last = int(np.searchsorted(times, xlim[1], side="right")) + 1
        table = table.iloc[first:last]
    times = table.index.to_numpy(dtype=float)
    span = (xlim[1] - xlim[0]) if xlim else float(np.ptp(times)) if times.size else 0.0
    t_scale, t_unit = time_unit(span)
    v_scale, v_unit = value_unit(metric, float(np.nanmax(np.abs(table.to_numpy()), initial=0)))
    zoom_s = None if xlim else steady_zoom_start(result, times, table.to_numpy(dtype=float))

    fig = Figure(figsize=(FIGSIZE[0], FIGSIZE[1] * (1.6 if zoom_s is not None else 1.0)))
    fig.set_layout_engine("constrained")
    axes = fig.subplots(2 if zoom_s is not None else 1, 1, squeeze=False)[:, 0]
    ax = axes[0]
    panel = _Panel(metric, t_scale, v_scale, refs, samples=aliasing is not None)
    # (a band of many queues keeps its range and median: what under-sampled probes can show)
    notes = panel.draw(ax, times, table)
    if times.size > ENVELOPE_MAX_POINTS:
        aliasing = None  # binned: the band shows each bin's range already
    elif aliasing is not None and table.shape[1] <= MANY_ENTITIES:
        aliasing = "Dots: s" + aliasing[1:]  # drawn as samples (`_Panel`)
    if summed:
        _mark_recovery(ax, result, metric, t_scale, table.iloc[:, 0] / v_scale)
    default_title = AXIS_NAMES.get(metric, metric)
    ax.set_title(spec["title"] or (f"Total {default_title}" if summed else default_title))
    if xlim:
        ax.set_xlim(xlim[0] * t_scale, xlim[1] * t_scale)
    if omitted:
        notes.insert(0, f"{omitted} all-zero not shown")
    n_lines = len(ax.get_legend_handles_labels()[0])
    legend(ax, n_lines, "; ".join(dict.fromkeys(notes)) or None)
    for axis in axes:
        axis.set_xlabel(f"time ({t_unit})")
        axis.set_ylabel(axis_label(metric, v_unit))
    if zoom_s is not None:
        _zoom_panel(axes[1], panel, times, table, zoom_s, result)
        ax.axvspan(zoom_s * t_scale, times[-1] * t_scale, color="0.5", alpha=0.08, lw=0)
    explain(fig, metric, result.scenario.get("report", {}).get("probe_interval_s"), aliasing)
    return fig


class _Panel:
    """Draws one metric's table on an axes in fixed units, with its references."""

    def __init__(
        self,
        metric: str,
        t_scale: float,
        v_scale: float,
        refs: Sequence[references.Reference],
        *,
        samples: bool = False,
    ) -> None:
        self.metric, self.t_scale, self.v_scale, self.refs = metric, t_scale, v_scale, refs
        # Under-sampled (`_aliasing_note`): the samples as dots, no line implying a shape.
        self.samples = samples

    def draw(self, ax: Axes, times: np.ndarray, table: pd.DataFrame) -> list[str]:
        """The lines (or the band), the value axis from 0 with headroom, the references;
        returns the legend notes."""
        values = table.to_numpy(dtype=float) / self.v_scale
        t = times * self.t_scale
        dense = times.size > ENVELOPE_MAX_POINTS
        notes = []
        if table.shape[1] > MANY_ENTITIES:
            _draw_band(ax, t, values, [str(c) for c in table.columns], self.metric, dense=dense)
            notes.append(f"{table.shape[1]} series: median, min-max range, extremes named")
        else:
            dots = {"marker": ".", "ms": 5, "ls": "none"} if self.samples and not dense else {}
            for index, column in enumerate(table.columns):
                _draw_line(
                    ax, t, values[:, index], self.metric, index, str(column), dense=dense, **dots
                )
        if dense:
            notes.append("per time bin: line mean, band min-max")
        self._value_axis(ax, values, t[-1] if t.size else 0.0)
        return notes

    def _value_axis(self, ax: Axes, values: np.ndarray, t_end: float) -> None:
        top = float(np.nanmax(values, initial=0))
        shown = [r for r in self.refs if 0 < r.peak / self.v_scale <= REFERENCE_STRETCH * top]
        if top == 0:
            shown = []
        if np.nanmin(values, initial=0) >= 0:
            # From 0, with 5% headroom: a line at its maximum throughout (a link at 10 Gb/s) must
            # not lie on the frame. (set_ylim(bottom=0) alone would freeze a tight autoscaled top.)
            ref_top = max((r.peak / self.v_scale for r in shown), default=0.0)
            top = max(top, ref_top)
            ax.set_ylim(0, top * 1.05 if top > 0 else None)
        if self.metric.endswith(("_frames", "_messages")):  # counts: whole ticks, 0..1 for none
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            if np.nanmax(values, initial=0) == 0:
                ax.set_ylim(0, 1)
        reference_lines(ax, shown, self.t_scale, self.v_scale, t_end / self.t_scale)


def _aliasing_note(result: Result, metric: str, entities: Sequence[str]) -> str | None:
    """A note when the probes are further apart than the fastest oscillation the plotted
    queues make (PFC's pause cycle, `references.pfc_cycle_s`): the samples then show the
    queue's range, not its shape, and a slow pattern joining them can be an alias. None when
    the probes resolve it."""
    probe_s = result.scenario.get("report", {}).get("probe_interval_s")
    cycle_s = references.pfc_cycle_s(result.scenario, metric, entities)
    if probe_s is None or cycle_s is None or float(probe_s) <= cycle_s:
        return None
    p_scale, p_unit = value_unit("interval_s", float(probe_s))
    c_scale, c_unit = value_unit("interval_s", cycle_s)
    return (
        f"Samples every {float(probe_s) / p_scale:g} {p_unit}. A queue crosses PFC's "
        f"XON-XOFF band in {cycle_s / c_scale:.2g} {c_unit} at line rate, so the shape between "
        "samples is not resolved (a slow pattern may be aliasing)."
    )


def steady_zoom_start(result: Result, times: np.ndarray, values: np.ndarray) -> float | None:
    """Where a zoomed steady-state panel starts: the [report.steady] window's start, else the
    run's second half; None unless the peak before it is `ZOOM_RATIO` times the peak after and
    the part after it moves (by more than `FLAT_FRACTION` of its peak)."""
    if times.size < 20:
        return None
    steady = analysis.report_table(result, "steady")
    start = float(steady["start_s"]) if steady else float(times[0] + 0.5 * np.ptp(times))
    after = np.abs(values[times >= start])
    if after.size == 0 or not np.isfinite(after).any():
        return None
    peak_after = float(np.nanmax(after))
    peak = float(np.nanmax(np.abs(values)))
    if peak_after <= 0 or peak < ZOOM_RATIO * peak_after:
        return None
    if float(np.nanmax(after) - np.nanmin(after)) <= FLAT_FRACTION * peak_after:
        return None
    return start


def _zoom_panel(
    ax: Axes, panel: _Panel, times: np.ndarray, table: pd.DataFrame, start_s: float, result: Result
) -> None:
    keep = times >= start_s
    notes = panel.draw(ax, times[keep], table.iloc[keep])
    ax.set_xlim(start_s * panel.t_scale, times[-1] * panel.t_scale)
    steady = analysis.report_table(result, "steady")
    what = "steady-state window" if steady else "second half"
    start_text = f"{start_s * panel.t_scale:.3g} {time_unit(float(np.ptp(times)))[1]}"
    ax.set_title(f"{what}, zoomed (from {start_text}, y scaled to it)", fontsize="medium")
    if table.shape[1] > 1 and table.shape[1] <= MANY_ENTITIES:
        return  # the lines are named in the panel above
    legend(ax, len(ax.get_legend_handles_labels()[0]), "; ".join(notes) or None)


def _draw_line(
    ax: Axes,
    times: np.ndarray,
    values: np.ndarray,
    metric: str,
    index: int,
    label: str,
    *,
    dense: bool,
    **style: Any,
) -> None:
    style = {"lw": 1.0, "ls": line_style(index), "label": label, **style}
    if dense:
        t, low, high, mean = envelope(times, values, ENVELOPE_BINS)
        (line,) = ax.plot(t, mean, **style)
        ax.fill_between(t, low, high, color=line.get_color(), alpha=0.25, lw=0, step="mid")
    elif metric in STEP_METRICS:
        ax.step(times, values, where="post", **style)
    else:
        ax.plot(times, values, **style)


def _draw_band(
    ax: Axes, times: np.ndarray, values: np.ndarray, names: list[str], metric: str, *, dense: bool
) -> None:
    """Many series: their range and median at each time, and the extreme ones named."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a time at which every series is NaN
        low = np.nanmin(values, axis=1)
        high = np.nanmax(values, axis=1)
        median = np.nanmedian(values, axis=1)
    t = times
    if dense:
        t, _, _, median = envelope(times, median, ENVELOPE_BINS)
        _, low, _, _ = envelope(times, low, ENVELOPE_BINS)
        _, _, high, _ = envelope(times, high, ENVELOPE_BINS)
    steps = metric in STEP_METRICS and not dense
    n = values.shape[1]
    ax.fill_between(
        t,
        low,
        high,
        color="tab:blue",
        alpha=0.2,
        lw=0,
        step="post" if steps else None,
        label=f"range of {n}",
    )
    drawstyle = "steps-post" if steps else "default"
    ax.plot(t, median, color="tab:blue", lw=1.2, drawstyle=drawstyle, label=f"median of {n}")
    colours = ("tab:red", "tab:green", "tab:purple")
    for (index, why), colour in zip(extremes(values), colours, strict=False):
        label = f"{names[index]} ({why})"
        _draw_line(ax, times, values[:, index], metric, 0, label, dense=dense, color=colour)


def extremes(values: np.ndarray) -> list[tuple[int, str]]:
    """The few series worth naming in a band: highest and lowest time-mean, highest peak (each
    once), as (column index, why)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(values, axis=0)
        peaks = np.nanmax(values, axis=0)
    if not np.isfinite(means).any():
        return []
    picks = [
        (int(np.nanargmax(means)), "highest mean"),
        (int(np.nanargmin(means)), "lowest mean"),
        (int(np.nanargmax(peaks)), "highest peak"),
    ]
    seen: dict[int, str] = {}
    for index, why in picks:
        seen[index] = f"{seen[index]}, {why}" if index in seen else why
    return list(seen.items())


def envelope(
    times: np.ndarray, values: np.ndarray, bins: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per time bin of equal sample count: the bin's centre time, min, max and mean (NaN-aware),
    so decimation keeps every peak and trough."""
    edges = np.linspace(0, times.size, bins + 1).astype(int)
    edges = np.unique(edges)
    starts, stops = edges[:-1], edges[1:]
    centre = np.array([times[a:b].mean() for a, b in zip(starts, stops, strict=True)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN bin (limiter released)
        low = np.array([np.nanmin(values[a:b]) for a, b in zip(starts, stops, strict=True)])
        high = np.array([np.nanmax(values[a:b]) for a, b in zip(starts, stops, strict=True)])
        mean = np.array([np.nanmean(values[a:b]) for a, b in zip(starts, stops, strict=True)])
    return centre, low, high, mean


def _mark_recovery(
    ax: Axes, result: Result, metric: str, t_scale: float, aggregate: pd.Series
) -> None:
    """Shade the recovery interval on the aggregate it was measured on (seed 004's figure);
    when it is a sliver of the axis, repeat it in a zoomed inset."""
    spec = analysis.report_table(result, "recovery")
    recovered_at = result.metrics.get("recovered_at_s")
    if not spec or recovered_at is None or spec["metric"] != metric:
        return
    elapsed = result.metrics["recovery_time_s"]
    after = spec["after_s"]
    shade: dict[str, Any] = {"color": "tab:green", "alpha": 0.2}
    label = f"recovery {elapsed * 1e3:.4g} ms"  # the seeds quote it in ms at any span
    ax.axvspan(after * t_scale, recovered_at * t_scale, label=label, **shade)
    times = aggregate.index.to_numpy(dtype=float)
    span = float(np.ptp(times)) if times.size else 0.0
    if span == 0 or (recovered_at - after) > RECOVERY_INSET_FRACTION * span:
        return
    pad = max(recovered_at - after, 4 * float(np.median(np.diff(times))))
    lo, hi = after - pad, recovered_at + 2 * pad
    inset = ax.inset_axes((0.6, 0.1, 0.37, 0.4))
    window = (times >= lo) & (times <= hi)
    inset.plot(times[window] * t_scale, aggregate.to_numpy()[window], lw=1.0, color="tab:blue")
    inset.axvspan(after * t_scale, recovered_at * t_scale, **shade)
    inset.set_xlim(lo * t_scale, hi * t_scale)
    inset.set_title("recovery, zoomed", fontsize="x-small")
    inset.tick_params(labelsize="x-small")
    inset.xaxis.set_major_locator(MaxNLocator(4))
    inset.grid(alpha=0.3)
    ax.indicate_inset_zoom(inset, edgecolor="0.5")
