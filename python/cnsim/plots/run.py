"""The figures of a run, as the seeds draw them: throughput, queues, rates vs time; bars.

Driven by the resolved scenario's [[report.plots]] tables (one function per `kind`), with a
default set when a scenario names none, plus the drops figure and the flow figures (`flows`).
Drawn in the shared look of `style`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from cnsim import analysis
from cnsim.plots.flows import flow_figure, flow_figure_names
from cnsim.plots.style import (
    AXIS_NAMES,
    DPI,
    FIGSIZE,
    axis_label,
    bar_width,
    file_stem,
    legend,
    line_style,
    new_figure,
    stamp,
    time_unit,
    value_unit,
)

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

# ---------------------------------------------------------------- plot kinds


def plot_timeseries(result: Result, spec: Mapping[str, Any]) -> Figure:
    """Lines of one metric vs time: per entity, or their sum when `aggregate = "sum"`.

    Piecewise-constant levels are steps; dense series are min/max bands around the bin mean;
    a short recovery on a long axis gets a zoomed inset."""
    metric = spec["metric"]
    patterns = spec["entities"] or None
    table, omitted = _drop_all_zero(result.series(metric, patterns), explicit=bool(patterns))
    summed = spec["aggregate"] == "sum"
    if summed:
        label = f"total of {table.shape[1]}" if table.shape[1] > 1 else str(table.columns[0])
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

    fig, ax = new_figure()
    dense = times.size > ENVELOPE_MAX_POINTS
    for index, column in enumerate(table.columns):
        values = table[column].to_numpy() / v_scale
        _draw_line(ax, times * t_scale, values, metric, index, str(column), dense=dense)
    if summed:
        _mark_recovery(ax, result, metric, t_scale, table.iloc[:, 0] / v_scale)
    ax.set_xlabel(f"time ({t_unit})")
    ax.set_ylabel(axis_label(metric, v_unit))
    default_title = AXIS_NAMES.get(metric, metric)
    ax.set_title(spec["title"] or (f"Total {default_title}" if summed else default_title))
    if xlim:
        ax.set_xlim(xlim[0] * t_scale, xlim[1] * t_scale)
    if np.nanmin(table.to_numpy(), initial=0) >= 0:
        # From 0, with 5% headroom: a line at its maximum throughout (a link at 10 Gb/s) must
        # not lie on the frame. (set_ylim(bottom=0) alone would freeze a tight autoscaled top.)
        top = float(np.nanmax(table.to_numpy(), initial=0)) / v_scale
        ax.set_ylim(0, top * 1.05 if top > 0 else None)
    if metric.endswith(("_frames", "_messages")):  # counts: whole ticks, and 0..1 for "none"
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if np.nanmax(table.to_numpy(), initial=0) == 0:
            ax.set_ylim(0, 1)
    notes = [f"{omitted} all-zero not shown"] if omitted else []
    if dense:
        notes.append("band: min-max per bin, line: mean")
    legend(ax, table.shape[1], "; ".join(notes) or None)
    return fig


def _draw_line(
    ax: Axes,
    times: np.ndarray,
    values: np.ndarray,
    metric: str,
    index: int,
    label: str,
    *,
    dense: bool,
) -> None:
    style: dict[str, Any] = {"lw": 1.0, "ls": line_style(index), "label": label}
    if dense:
        t, low, high, mean = envelope(times, values, ENVELOPE_BINS)
        (line,) = ax.plot(t, mean, **style)
        ax.fill_between(t, low, high, color=line.get_color(), alpha=0.25, lw=0, step="mid")
    elif metric in STEP_METRICS:
        ax.step(times, values, where="post", **style)
    else:
        ax.plot(times, values, **style)


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


def plot_bar(result: Result, spec: Mapping[str, Any]) -> Figure:
    """Bars per entity: a per-source/per-port summary field, or a time series' window mean."""
    metric = spec["metric"]
    values, per, where = bar_values(result, metric)
    chosen = analysis.select_entities(values, spec["entities"] or None)
    if not chosen:
        raise KeyError(f"no entity of {metric!r} matches {spec['entities']}")
    heights = np.array([float(values[name] or 0.0) for name in chosen])
    v_scale, v_unit = value_unit(metric, float(np.max(np.abs(heights), initial=0)))

    fig, ax = new_figure()
    bars = ax.bar(chosen, heights / v_scale, color="tab:blue", width=bar_width(len(chosen)))
    ax.bar_label(bars, fmt="%.3g", fontsize="small", padding=2)
    ax.set_ylabel(axis_label(metric, v_unit))
    title = spec["title"] or f"{AXIS_NAMES.get(metric, metric).capitalize()} per {per}"
    fairness = result.metrics.get("fairness_index")
    if per == "source" and metric == "throughput_bps" and fairness is not None:
        where += f", Jain fairness index {fairness:.3f}"  # seed 000 reads the bars by it
    ax.set_title(f"{title}\n({where})", fontsize="medium")
    ax.margins(y=0.12)
    if len(chosen) > 8:
        ax.tick_params(axis="x", labelrotation=45)
    return fig


def bar_values(result: Result, metric: str) -> tuple[dict[str, Any], str, str]:
    """Values per entity for a bar plot, what an entity is, and over which time (for titles).

    Looked up in order: per-source counters (over the report window when the summary has
    one), per-port counters, then the mean of a time-series metric over report.window_s.
    """
    window = result.scenario.get("report", {}).get("window_s")
    per_source = analysis.senders(analysis.per_source_table(result.summary))
    if any(metric in row for row in per_source.values()):
        span = window_text(window) if result.summary.get("window") else "whole run"
        return _rows_with(per_source, metric), "source", span
    per_port = result.summary.get("per_port", {})
    if any(metric in row for row in per_port.values()):
        return _rows_with(per_port, metric), "port", "whole run"
    table = result.series(metric)
    means = {str(c): analysis.mean(table[c], window) for c in table.columns}
    return means, "entity", f"mean, {window_text(window) if window else 'whole run'}"


def _rows_with(table: Mapping[str, Mapping[str, Any]], field: str) -> dict[str, Any]:
    """One field of a summary table, for the rows that have it (switch rows lack port fields)."""
    return {name: row[field] for name, row in table.items() if field in row}


def window_text(window_s: Any) -> str:
    """'window 20-80 ms' (or in s), for titles."""
    if not window_s:
        return "report window"
    scale, unit = time_unit(window_s[1])
    return f"window {window_s[0] * scale:g}-{window_s[1] * scale:g} {unit}"


def plot_drops(result: Result, *, over_time: bool = True) -> Figure | None:
    """Where frames were dropped (by place) and, if probed and `over_time`, cumulative drops
    per node (left out when another figure of the scenario already shows them)."""
    dropped = dict(result.summary.get("frames", {}).get("dropped", {}))
    total = dropped.pop("total", sum(dropped.values()))
    if not total:
        return None
    series = _nonzero_drops_over_time(result) if over_time else None
    fig = Figure(figsize=(FIGSIZE[0] * (1.6 if series is not None else 1), FIGSIZE[1]))
    fig.set_layout_engine("constrained")
    axes = fig.subplots(1, 2 if series is not None else 1, squeeze=False)[0]
    _drops_by_place(axes[0], dropped, total)
    if series is not None:
        _drops_over_time(axes[1], series)
    fig.suptitle("Dropped frames")
    return fig


def _drops_by_place(ax: Axes, dropped: Mapping[str, int], total: int) -> None:
    places = list(dropped)  # zeros too: "0 at the CP" is a result (seed 002)
    bars = ax.bar(
        places, [dropped[p] for p in places], color="tab:red", width=bar_width(len(places))
    )
    ax.bar_label(bars, fontsize="small", padding=2)
    ax.set_ylabel("frames")
    ax.set_title(f"by place (total {total:,})", fontsize="medium")
    ax.margins(y=0.12)


def _nonzero_drops_over_time(result: Result) -> pd.DataFrame | None:
    if "dropped_frames" not in result.metric_names:
        return None
    table, _ = _drop_all_zero(result.series("dropped_frames"), explicit=False)
    return table if table.to_numpy().any() else None


def _drops_over_time(ax: Axes, table: pd.DataFrame) -> None:
    times = table.index.to_numpy(dtype=float)
    t_scale, t_unit = time_unit(float(np.ptp(times)) if times.size else 0.0)
    for column in table.columns:
        ax.plot(times * t_scale, table[column].to_numpy(), lw=1.0, label=str(column))
    ax.set_xlabel(f"time ({t_unit})")
    ax.set_ylabel("dropped frames (cumulative)")
    ax.set_title("by node over time", fontsize="medium")
    ax.set_ylim(bottom=0)
    legend(ax, table.shape[1], None)


PLOT_KINDS: dict[str, Callable[[Result, Mapping[str, Any]], Figure]] = {
    "timeseries": plot_timeseries,
    "bar": plot_bar,
}


# ---------------------------------------------------------------- driver


def default_specs(result: Result) -> list[dict[str, Any]]:
    """Plots for a scenario without [[report.plots]]: what every congestion study looks at."""
    present = set(result.metric_names)
    specs: list[dict[str, Any]] = []
    if "host_tx_bps" in present:
        specs.append(_ts("aggregate_throughput", "host_tx_bps", "Aggregate accepted throughput"))
        specs[-1]["aggregate"] = "sum"
    if "queue_bytes" in present:
        specs.append(_ts("queues", "queue_bytes", "Egress queue length"))
    if "rp_rate_bps" in present:
        specs.append(_ts("rp_rate", "rp_rate_bps", "Rate limiter rate"))
    if result.summary.get("per_source"):
        specs.append({"name": "per_source_throughput", "kind": "bar", "metric": "throughput_bps"})
    return specs


DROPS = "drops"


def plot_specs(result: Result) -> list[dict[str, Any]]:
    """The figures of a run, named: the scenario's [[report.plots]] (or the default set), each
    with every field, the core's defaults (from its schema) where the table left one out."""
    specs = result.scenario.get("report", {}).get("plots") or default_specs(result)
    defaults = analysis.report_defaults("PlotSpec")
    return [
        {**defaults, **spec, "name": spec["name"] or f"{spec['metric']}_{index}"}
        for index, spec in enumerate(specs)
    ]


def figure_names(result: Result) -> list[str]:
    """Names `figure()` accepts: the plot specs', then `drops` when frames were dropped."""
    names = [spec["name"] for spec in plot_specs(result)]
    dropped = result.summary.get("frames", {}).get("dropped", {}).get("total", 0)
    if DROPS not in names and dropped:
        names.append(DROPS)
    return names + [n for n in flow_figure_names(result) if n not in names]


def figure(result: Result, name: str) -> Figure:
    """One figure of the run as a matplotlib Figure (stamped with scenario and seed).

    KeyError when the run has no figure of that name or cannot draw it (metric absent)."""
    specs = {spec["name"]: spec for spec in plot_specs(result)}
    if name in specs:
        spec = specs[name]
        kind = spec["kind"]
        if kind not in PLOT_KINDS:
            raise KeyError(f"unknown plot kind {kind!r} (known: {', '.join(PLOT_KINDS)})")
        fig = PLOT_KINDS[kind](result, spec)
    elif name == DROPS:
        shown = any(spec.get("metric") == "dropped_frames" for spec in specs.values())
        drops = plot_drops(result, over_time=not shown)
        if drops is None:
            raise KeyError("no frame was dropped, so there is no drops figure")
        fig = drops
    elif name in flow_figure_names(result):
        fig = flow_figure(result, name)
    else:
        known = ", ".join(figure_names(result)) or "none"
        raise KeyError(f"no figure {name!r} in this run (figures: {known})")
    stamp(fig, f"{result.name}, seed {result.summary.get('seed')}")
    return fig


def make_plots(result: Result, out_dir: str | Path) -> list[Path]:
    """Draw the scenario's [[report.plots]] (or the default set) plus a drops plot if any.

    A plot that cannot be drawn (a metric this run did not produce, an unknown kind) is
    skipped with a warning: losing a figure must not lose the run's other outputs.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in figure_names(result):
        path = out_dir / f"{file_stem(name)}.png"
        try:
            fig = figure(result, name)
        except KeyError as exc:
            warnings.warn(f"plot {name!r} skipped: {exc.args[0]}", stacklevel=2)
            continue
        fig.savefig(path, dpi=DPI)
        written.append(path)
    return written


# ---------------------------------------------------------------- helpers


def _ts(name: str, metric: str, title: str) -> dict[str, Any]:
    return {"name": name, "kind": "timeseries", "metric": metric, "title": title}


def _drop_all_zero(table: pd.DataFrame, *, explicit: bool) -> tuple[pd.DataFrame, int]:
    """Without explicit entities, hide series that never leave zero (idle ports clutter)."""
    if explicit:
        return table, 0
    keep = table.columns[(table.fillna(0) != 0).any(axis=0)]
    if len(keep) == 0:
        return table, 0
    return table[keep], table.shape[1] - len(keep)
