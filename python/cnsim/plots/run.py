"""The figures of a run, as the seeds draw them: throughput, queues, rates vs time; bars.

Driven by the resolved scenario's [[report.plots]] tables (one function per `kind`: the time
series of `timeseries`, the bars here), with a default set when a scenario names none, plus the
drops figure and the flow figures (`flows`). Drawn in the shared look of `style`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cnsim import analysis
from cnsim.plots.flows import flow_figure, flow_figure_names
from cnsim.plots.ranked import MANY_BARS, ranked_figure
from cnsim.plots.style import (
    AXIS_NAMES,
    DPI,
    FIGSIZE,
    axis_label,
    bar_width,
    drop_all_zero,
    explain,
    file_stem,
    legend,
    new_figure,
    stamp,
    time_unit,
    value_unit,
)
from cnsim.plots.timeseries import plot_timeseries

if TYPE_CHECKING:
    from cnsim.result import Result

# Bars of the entities a headline number names (the PFC victim first).
HEADLINE_COLOURS = ("tab:orange", "tab:purple", "tab:green")

# ---------------------------------------------------------------- plot kinds


def plot_bar(result: Result, spec: Mapping[str, Any]) -> Figure:
    """Bars per entity: a per-source/per-port summary field, or a time series' window mean.

    An entity a headline number names (`cnsim.headline`: the PFC victim) is marked, its bar in
    another colour with its reference (a fair share) drawn on it."""
    metric = spec["metric"]
    values, per, where = bar_values(result, metric)
    chosen = analysis.select_entities(values, spec["entities"] or None)
    if not chosen:
        raise KeyError(f"no entity of {metric!r} matches {spec['entities']}")
    heights = np.array([float(values[name] or 0.0) for name in chosen])
    v_scale, v_unit = value_unit(metric, float(np.max(np.abs(heights), initial=0)))

    if len(chosen) > MANY_BARS:  # a fabric's hosts: ranked values, not a bar each
        fig, ax = ranked_figure(chosen, heights / v_scale, per)
        marked: list[tuple[str, float]] = []
    else:
        fig, ax = new_figure()
        bars = ax.bar(chosen, heights / v_scale, color="tab:blue", width=bar_width(len(chosen)))
        ax.bar_label(bars, fmt="%.3g", fontsize="small", padding=2)
        marked = _mark_headline_bars(ax, result, metric, chosen, bars, v_scale)
    ax.set_ylabel(axis_label(metric, v_unit))
    title = spec["title"] or f"{AXIS_NAMES.get(metric, metric).capitalize()} per {per}"
    notes = [where]
    if where.removeprefix("mean, ") in title:  # the title names the window already
        notes = ["mean"] if where.startswith("mean, ") else []
    fairness = result.metrics.get("fairness_index")
    if metric in ("throughput_bps", "host_tx_bps") and fairness is not None:
        notes.append(f"Jain fairness index {fairness:.3f}")  # seed 000 reads the bars by it
    ax.set_title(f"{title}\n({', '.join(notes)})" if notes else title, fontsize="medium")
    top = max([float(np.max(heights, initial=0)), *(r for _, r in marked)]) / v_scale
    ax.set_ylim(0, top * 1.15 if top > 0 else None)
    if marked:
        ax.legend(fontsize="small", loc="best", framealpha=0.9)
    if 8 < len(chosen) <= MANY_BARS:
        ax.tick_params(axis="x", labelrotation=45)
    explain(fig, metric)
    return fig


def _mark_headline_bars(
    ax: Axes, result: Result, metric: str, chosen: list[str], bars: Any, v_scale: float
) -> list[tuple[str, float]]:
    """Colour the bars of the entities a headline names (same unit) and draw each one's
    reference across its bar; returns (entity, reference) of those marked."""
    from cnsim import headline

    unit = metric.rsplit("_", 1)[-1]
    marked: list[tuple[str, float]] = []
    named: set[str] = set()
    for entry in headline.declared(result.scenario):
        entity = entry.entity
        if entity not in chosen or not entry.unit_name.endswith(f"_{unit}"):
            continue
        bar = bars[chosen.index(entity)]
        bar.set_color(HEADLINE_COLOURS[len(marked) % len(HEADLINE_COLOURS)])
        bar.set_label(entry.label)
        reference = 0.0 if entry.reference is None else float(entry.reference)
        if entry.reference is not None:
            x0, width = bar.get_x(), bar.get_width()
            # One legend entry per kind of reference ("_" labels stay out of the legend).
            label = entry.reference_label if entry.reference_label not in named else "_"
            named.add(entry.reference_label)
            ax.hlines(
                reference / v_scale,
                x0 - 0.08 * width,
                x0 + 1.08 * width,
                colors="0.15",
                linestyles="--",
                lw=1.4,
                label=label,
            )
        marked.append((entity, reference))
    return marked


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
    table, _ = drop_all_zero(result.series("dropped_frames"), explicit=False)
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


def drawable(result: Result) -> Iterator[tuple[str, Figure]]:
    """Every figure of the run that can be drawn, by name; one that cannot (a metric this run
    did not produce, an unknown kind) is skipped with a warning."""
    for name in figure_names(result):
        try:
            fig = figure(result, name)
        except KeyError as exc:
            warnings.warn(f"plot {name!r} skipped: {exc.args[0]}", stacklevel=2)
            continue
        yield name, fig


def make_plots(result: Result, out_dir: str | Path, *, dpi: int = DPI) -> list[Path]:
    """Draw the scenario's [[report.plots]] (or the default set) plus a drops plot if any.

    A plot that cannot be drawn is skipped with a warning (`drawable`): losing a figure must
    not lose the run's other outputs.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, fig in drawable(result):
        path = out_dir / f"{file_stem(name)}.png"
        fig.savefig(path, dpi=dpi)
        written.append(path)
    return written


# ---------------------------------------------------------------- helpers


def _ts(name: str, metric: str, title: str) -> dict[str, Any]:
    return {"name": name, "kind": "timeseries", "metric": metric, "title": title}
