"""A sweep's figures: a per-point statistic of a metric against a swept parameter.

As in seed 000's "Averaged Peak Queue Size" and "Fairness Index" slides: one marker per point,
the mean over replications with an error bar (95 % confidence interval by default), or the
standard deviation over replications. A sweep with more parameters than the x axis draws one
line per combination of the others. Values are scaled to the unit their name carries
(`_bytes` in KB, `_bps` in Gb/s), as the run plots do.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from cnsim import analysis, api
from cnsim.plots.style import (
    AXIS_NAMES,
    DPI,
    FIGSIZE,
    line_style,
    stamp,
    value_unit,
)
from cnsim.plots.sweep_sizes import SIZE_BUCKET, size_bucket_figure
from cnsim.readout import value_text
from cnsim.sweeps.paths import parse_path
from cnsim.sweeps.spec import PlotSpec, plot_file_stem

if TYPE_CHECKING:
    from cnsim.sweeps.result import SweepResult

ERROR_TEXT = {"ci95": "error bars: 95% confidence interval", "std": "error bars: +-1 std"}
# Lines (one per combination of the other swept values) a legend may cover inside the axes.
MAX_LINES_INSIDE = 4
LEGEND_ROWS = 12  # rows of a legend beside the axes before it takes another column
# The summary's per-bucket slowdowns (`[report] slowdown_size_edges_bytes`): drawn by bucket.
BUCKET_PREFIX = "flows.slowdown_by_size."
BUCKET_METRIC = re.compile(re.escape(BUCKET_PREFIX) + r"b\d+\.")
SLOWDOWN_PERCENTILES = ("p50", "p95", "p99")


def make_sweep_plots(result: SweepResult, out_dir: Path, *, dpi: int = DPI) -> list[Path]:
    """Every [[sweep.plots]] figure (or one mean plot per numeric metric) as PNG files.

    A transient study draws its three figures (`transient_plots`) instead of the default ones;
    a [sweep.fluid] study adds its two (`cnsim.sweeps.fluid.fluid_plots`).
    """
    paths = []
    if result.spec.transient is not None:
        paths += transient_plots(result, out_dir, dpi=dpi)
        specs = list(result.spec.plots)
    else:
        specs = list(result.spec.plots) or default_plots(result)
    for spec in specs:
        path = out_dir / f"{plot_file_stem(spec)}.png"
        if plot_sweep(result, spec, path, dpi=dpi) is not None:
            paths.append(path)
    if not result.spec.plots and not any(s.x == SIZE_BUCKET for s in specs):
        paths += flows_slowdown_plot(result, out_dir, dpi=dpi)
    if result.spec.fluid is not None:
        from cnsim.sweeps.fluid import fluid_plots

        paths += fluid_plots(result, out_dir, dpi=dpi)
    return paths


def default_plots(result: SweepResult) -> list[PlotSpec]:
    """Mean of each numeric metric against the first swept parameter (none if nothing swept);
    the summary's slowdown-by-size buckets (`flows.slowdown_by_size.bK.pNN`) instead as the
    slowdown-by-size figure, one per percentile, one line per point (`size_bucket_defaults`)."""
    if not result.parameters:
        return []
    found = list(dict.fromkeys(result.aggregate()["metric"]))
    metrics = [m for m in found if not BUCKET_METRIC.match(m)]
    leaves = [leaf(m) for m in metrics]
    x = result.parameters[0]
    # Two metrics with the same last key (VS's and H11's throughput_bps) would write one file:
    # those are named by their whole path.
    return size_bucket_defaults(found) + [
        PlotSpec(x=x, y=m, name=None if leaves.count(leaf(m)) == 1 else f"mean_{m}_vs_{leaf(x)}")
        for m in metrics
    ]


def size_bucket_defaults(metrics: list[str]) -> list[PlotSpec]:
    """`x = "size_bucket"` figures for the p50, p95 and p99 the runs' summaries hold per flow-size
    bucket (with `[report] slowdown_size_edges_bytes`): the figure data-center papers show, one
    line per point, instead of a figure per bucket and percentile."""
    held = {m.rsplit(".", 1)[-1] for m in metrics if BUCKET_METRIC.match(m)}
    return [
        PlotSpec(
            x=SIZE_BUCKET,
            y=f"{BUCKET_PREFIX}*.{p}",
            name=f"slowdown_{p}_by_size",
            yscale="log",
            title=f"FCT slowdown by flow size, {p}",
            ylabel=f"FCT slowdown, {p}",
        )
        for p in SLOWDOWN_PERCENTILES
        if p in held
    ]


def flows_slowdown_plot(result: SweepResult, out_dir: Path, *, dpi: int = DPI) -> list[Path]:
    """The slowdown-by-size figure from the runs' kept flows (keep="full"), one line per point,
    when the summaries have no buckets to draw; nothing when any finished run kept no flows."""
    from cnsim.plots.flows import sweep_slowdown_table_figure
    from cnsim.sweeps.store import Store

    keys = list(result.ok["key"])
    store = Store(result.out_dir)
    if not keys or not all(store.flows_path(k).is_file() for k in keys):
        return []
    table = result.fct_slowdown_by_size()
    if table.empty or not (table["flows"] > 0).any():
        return []
    fig = sweep_slowdown_table_figure(result, table)
    return [_stamped_png(fig, result, out_dir / "fct_slowdown_by_size.png", dpi)]


def unit_key(path: str) -> str:
    """The key of a path that carries its unit: the last one, or its parent when the last has
    none ('latency_s.mean' is in seconds)."""
    keys = parse_path(path)
    if len(keys) > 1 and not keys[-1].endswith(UNIT_SUFFIXES) and keys[-2].endswith(UNIT_SUFFIXES):
        return keys[-2]
    return keys[-1]


def leaf(path: str) -> str:
    """Last key of a dotted path: the name that carries the unit."""
    return parse_path(path)[-1]


def plot_sweep(result: SweepResult, spec: PlotSpec, path: Path, *, dpi: int = DPI) -> Path | None:
    """Draw one figure into `path`; warn and return None when the metric has no numbers."""
    fig = sweep_figure(result, spec)
    return None if fig is None else _save(fig, result, spec, path, dpi)


def _why_no_numbers(result: SweepResult, spec: PlotSpec) -> str:
    """Why a plot's metric has nothing to draw: its finished runs hold text (a store made before
    the sweep refused such a metric), or too few runs finished."""
    values = result.ok[spec.y].dropna() if spec.y in result.ok else None
    if values is not None and len(values) and pd.to_numeric(values, errors="coerce").isna().all():
        return f"its value is text ({values.iloc[0]!r}), not a number"
    needs = "two finished runs per point" if spec.stat == "std" else "a finished run"
    return f"it needs {needs}"


def sweep_figure(result: SweepResult, spec: PlotSpec) -> Figure | None:
    """One [[sweep.plots]] figure; a warning and None when the metric has no numbers."""
    if spec.x == SIZE_BUCKET:
        figure = size_bucket_figure(result, spec)
        if figure is None:
            warnings.warn(f"sweep plot of {spec.y!r} skipped: no bucket has a number", stacklevel=2)
        return figure
    table = _where(result, spec, result.aggregate([spec.y]))
    table, x_text, x_ticks = _numeric_x(result, spec, table)
    column = "std" if spec.stat == "std" else "mean"
    if table.empty or table[column].isna().all():
        warnings.warn(
            f"sweep plot of {spec.y!r} skipped: {_why_no_numbers(result, spec)}", stacklevel=2
        )
        return None
    x_div, x_unit = labelled_unit(spec.xlabel, unit_key(spec.x)) or _unit(spec.x, table[spec.x])
    y_div, y_unit = labelled_unit(spec.ylabel, unit_key(spec.y)) or value_unit(
        unit_key(spec.y), float(table[column].abs().max())
    )
    panels = _plot_panels(result, spec, table, column)
    others = _line_parameters(result, spec)
    n_lines = table.groupby(others).ngroups if others else 1
    # A legend beside the axes in columns of 12 widens the figure, not squeezes the axes.
    columns = 1 + (n_lines - 1) // LEGEND_ROWS if n_lines > MAX_LINES_INSIDE else 0
    height = FIGSIZE[1] * (0.8 * len(panels) if len(panels) > 1 else 1)
    fig = Figure(figsize=(FIGSIZE[0] + 1.6 * columns, height))
    fig.set_layout_engine("constrained")
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (panel_title, rows) in zip(axes, panels, strict=True):
        ax.grid(alpha=0.3)
        groups = rows.groupby(others, sort=False) if others else [((), rows)]
        for index, (label, group) in enumerate(groups):
            text = _label(result, others, label)
            _draw_line(ax, spec, group, column, (x_div, y_div), text, index)
        ax.set_xlabel(spec.xlabel or x_text or _axis_text(spec.x, x_unit))
        if x_ticks is not None:
            ax.set_xticks(range(len(x_ticks)), x_ticks)
        elif spec.xscale == "log":
            ax.set_xscale("log")
        elif _all_whole(table[spec.x] / x_div):  # counts and sizes: no ticks between whole numbers
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(spec.ylabel or _y_text(spec, y_unit))
        ax.set_yscale(spec.yscale)
        if spec.yscale == "linear" and _never_negative(spec.y) and ax.get_ylim()[0] < 0:
            ax.set_ylim(bottom=0)  # an error bar below 0 of a rate, size, time or count
        if panel_title:
            ax.set_title(panel_title, fontsize="medium")
        if others and columns:
            # Many lines: a legend inside would hide some of them.
            ax.legend(
                fontsize="x-small",
                loc="center left",
                bbox_to_anchor=(1.01, 0.5),
                ncols=columns,
            )
        elif others:
            ax.legend(fontsize="x-small")
    y_words = _y_text(spec, "")
    title = spec.title or f"{y_words[:1].upper()}{y_words[1:]} vs {x_text or path_words(spec.x)}"
    if len(panels) > 1 or panels[0][0]:
        fig.suptitle(title)
    else:
        axes[0].set_title(title)
    return fig


def _where(result: SweepResult, spec: PlotSpec, table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the points `where` keeps (a value matches as given or by its name)."""
    for path, wanted in spec.where.items():
        keep = [
            wanted in (value, result.spec.value_name(path, _value_of(result, path, value)))
            for value in table[path]
        ]
        table = table[keep]
    return table


def _numeric_x(
    result: SweepResult, spec: PlotSpec, table: pd.DataFrame
) -> tuple[pd.DataFrame, str | None, list[str] | None]:
    """An x that is not a number made plottable: its [sweep.names] when they are all numbers,
    else its names (or a string or bool value itself) as ticks in the sweep's order, else, for
    a list (a traffic entry's host list), the list's length ("number of hosts"). Returns the
    table, an axis text and ticks."""
    values = result.spec.grid.get(spec.x) or result.spec.zip.get(spec.x) or []
    if all(_is_number(v) for v in values):
        return table, None, None
    index = [values.index(_value_of(result, spec.x, cell)) for cell in table[spec.x]]
    names = result.spec.names.get(spec.x)
    if names is not None:
        numbers = [n for n in map(_as_number, names) if n is not None]
        if len(numbers) == len(names):
            return table.assign(**{spec.x: [numbers[i] for i in index]}), None, None
        return table.assign(**{spec.x: index}), None, [str(n) for n in names]
    if all(isinstance(v, list) for v in values):
        lengths = [len(values[i]) for i in index]
        return table.assign(**{spec.x: lengths}), f"number of {key_words(leaf(spec.x))}", None
    ticks = [str(v) if isinstance(v, str | bool) else f"#{i}" for i, v in enumerate(values)]
    return table.assign(**{spec.x: index}), None, ticks


# Units a custom axis label may name in its final parentheses, by the suffix they fit.
LABEL_UNITS = {
    "_bps": {"Tb/s": 1e12, "Gb/s": 1e9, "Mb/s": 1e6, "kb/s": 1e3, "b/s": 1.0},
    "_bytes": {"GB": 1e9, "MB": 1e6, "KB": 1e3, "B": 1.0},
    "_s": {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9},
}


def labelled_unit(label: str | None, key: str) -> tuple[float, str] | None:
    """The unit a custom label names ("mean FCT (s)"), when it fits the key's: the author's
    label is then true of the numbers, whatever unit their magnitude would choose."""
    if not label or not label.endswith(")") or "(" not in label:
        return None
    named = label[label.rindex("(") + 1 : -1].strip()
    for suffix, units in LABEL_UNITS.items():
        if key.endswith(suffix) and named in units:
            return units[named], named
    return None


def _never_negative(path: str) -> bool:
    """Rates, sizes, times, counts of frames and flows, fairness: no value below 0."""
    return (
        unit_key(path).endswith(("_bps", "_bytes", "_s"))
        or path.startswith(("frames.", "flows.", "control_frames."))
        or leaf(path).endswith("fairness_index")
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _all_whole(values: pd.Series) -> bool:
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return False
    numbers = values.to_numpy(dtype=float)
    return bool(np.all(np.isfinite(numbers)) and np.all(numbers == np.round(numbers)))


def _as_number(name: Any) -> float | None:
    try:
        return float(name)
    except (TypeError, ValueError):
        return None


def _value_of(result: SweepResult, path: str, cell: Any) -> Any:
    """The swept value a table cell shows (lists and tables are TOML text in the table)."""
    values = result.spec.grid.get(path) or result.spec.zip.get(path) or []
    for value in values:
        if value == cell or (
            not isinstance(value, int | float | str | bool) and api.toml_literal(value) == cell
        ):
            return value
    return cell


def _line_parameters(result: SweepResult, spec: PlotSpec) -> list[str]:
    """Parameters that make a line: not x (nor what is zipped with it), not fixed by `where`,
    not the panel."""
    along_x = set(result.spec.zip) if spec.x in result.spec.zip else {spec.x}
    fixed = {*spec.where, *([spec.panel] if spec.panel else [])}
    return [p for p in result.parameters if p not in along_x and p not in fixed]


def _plot_panels(
    result: SweepResult, spec: PlotSpec, table: pd.DataFrame, column: str
) -> list[tuple[str, pd.DataFrame]]:
    """One (title, rows) per value of the panel parameter that has numbers; one untitled
    panel without a panel parameter."""
    if spec.panel is None:
        return [("", table)]
    panels = []
    for value, rows in table.groupby(spec.panel, sort=False):
        if rows[column].notna().any():
            name = result.spec.value_name(spec.panel, _value_of(result, spec.panel, value))
            panels.append((f"{path_words(spec.panel)} = {name}", rows))
    return panels or [("", table)]


def _draw_line(
    ax: Axes,
    spec: PlotSpec,
    group: pd.DataFrame,
    column: str,
    scale: tuple[float, float],
    label: str | None,
    index: int = 0,
) -> None:
    """One line of markers with error bars; `scale` divides x and y into their units."""
    x_div, y_div = scale
    group = group.sort_values(spec.x)
    x = group[spec.x].to_numpy()
    x = x / x_div if x_div != 1.0 else x
    y = group[column].to_numpy(dtype=float) / y_div
    err = None
    if spec.stat == "mean" and spec.error != "none":
        err = group[spec.error].to_numpy(dtype=float) / y_div
    # Past the colour cycle's ten colours, lines differ by dash and marker too.
    marker = ("o", "s", "^", "D")[index // 10 % 4]
    ax.errorbar(x, y, yerr=err, marker=marker, ls=line_style(index), capsize=4, label=label)


def _unit(param: str, values: pd.Series) -> tuple[float, str]:
    if not pd.api.types.is_numeric_dtype(values):
        return 1.0, ""
    return value_unit(unit_key(param), float(values.abs().max()))


# Words for summary keys and metrics a sweep collects (the run figures' AXIS_NAMES cover the
# probe metrics); anything else is its key with the unit suffix dropped and spaces for "_".
PATH_WORDS = {
    "steady_queue_mean_bytes": "steady-state queue, mean",
    "steady_queue_std_bytes": "steady-state queue, std",
    "steady_rate_mean_bps": "steady-state rate, mean",
    "steady_rate_cv": "rate CV (std / mean)",
    "steady_throughput_bps": "steady-state throughput",
    "steady_fairness_index": "steady-state fairness index",
    "steady_n_flows": "flows at the fixed point",
    "fairness_index": "Jain's fairness index",
    "transient_duration_s": "transient duration",
    "recovery_time_s": "recovery time",
    "rx_throughput_bps": "received throughput",
    "fct_mean_s": "mean FCT",
    "fct_p50_s": "median FCT",
    "fct_p99_s": "99th-percentile FCT",
    "slowdown_mean": "mean slowdown",
    "delivered": "frames delivered",
    "generated": "frames generated",
    "in_flight": "frames in flight",
    "interval_bytes": "sampling interval",
    "mark_on": "ECN marking at",
    "load": "offered load",
}
UNIT_SUFFIXES = ("_bps", "_bytes", "_s", "_frames", "_frac")
# Summary tables whose next key names an entity ("per_port.core->ep4.peak_queue_bytes").
ENTITY_TABLES = {"per_port": "at", "per_source": "of", "per_switch": "of", "classes": "class"}


def key_words(key: str) -> str:
    """A key in words: 'peak_queue_bytes' -> 'peak queue'."""
    if key in PATH_WORDS:
        return PATH_WORDS[key]
    if key in AXIS_NAMES:
        return AXIS_NAMES[key]
    for suffix in UNIT_SUFFIXES:
        if key.endswith(suffix) and key != suffix:
            key = key[: -len(suffix)]
            break
    return key.replace("_", " ")


def path_words(path: str) -> str:
    """A summary path or a swept parameter in words, never a dotted path:
    'window.per_port.core->ep4.peak_queue_bytes' -> 'peak queue at core->ep4, in the window';
    'frames.dropped.total' -> 'frames dropped, total'; 'links[64].delay_s' -> 'delay of
    links[64]'; 'congestion.bcn.sampling.interval_bytes' -> 'sampling interval'."""
    keys = list(parse_path(path))
    words = key_words(keys[-1])
    context = []
    parents = keys[:-1]
    if parents and parents[0] == "window":
        context.append("in the window")
        parents = parents[1:]
    for table, joiner in ENTITY_TABLES.items():
        if table in parents[:-1]:
            at = parents.index(table)
            words = f"{words} {joiner} {parents[at + 1]}"
            parents = parents[:at]
    if parents and parents[-1].endswith(UNIT_SUFFIXES):  # "latency_s.mean": latency, mean
        words = f"{key_words(parents[-1])}, {words}"
        parents = parents[:-1]
    if parents and parents[0] in ("frames", "flows", "control_frames"):
        subject = parents[0].replace("_", " ")
        rest = [key_words(k) for k in parents[1:]]
        if keys[-1] in ("total",) and rest:
            words = f"{subject} {' '.join(rest)}, total"
        elif keys[-1] not in PATH_WORDS and not words.startswith(subject):
            words = f"{subject} {' '.join([*rest, words])}"
    elif parents and "[" in parents[-1]:  # a parameter of one element: "delay of links[64]"
        words = f"{words} of {parents[-1]}"
    return ", ".join([words, *context])


def _axis_text(path: str, unit: str) -> str:
    name = path_words(path)
    return f"{name} ({unit})" if unit else name


def _y_text(spec: PlotSpec, unit: str) -> str:
    name = _axis_text(spec.y, unit)
    return f"std of {name}" if spec.stat == "std" else name


def _label(result: SweepResult, names: list[str], values: Any) -> str | None:
    """A line's legend label: each other parameter's value by its [sweep.names] name (the
    author's words, as given), else a list by its length ("16 hosts"), a number in the unit
    its path carries ("delay of links[64] 6 us")."""
    if not names:
        return None
    values = values if isinstance(values, tuple) else (values,)
    parts = []
    for name, cell in zip(names, values, strict=True):
        value = _value_of(result, name, cell)
        if name in result.spec.names:
            parts.append(str(result.spec.value_name(name, value)))
        elif isinstance(value, list):
            parts.append(f"{len(value)} {key_words(leaf(name))}")
        elif _is_number(value):
            parts.append(f"{path_words(name)} {value_text(unit_key(name), value)}")
        else:
            parts.append(f"{path_words(name)} {value}")
    return ", ".join(parts)


def _save(fig: Figure, result: SweepResult, spec: PlotSpec, path: Path, dpi: int) -> Path:
    """Stamp what the points are (replications, error bars) at the bottom and write the PNG."""
    what = (
        "points: mean over replications" if spec.stat == "mean" else "points: std over replications"
    )
    errors = ERROR_TEXT.get(spec.error or "none", "") if spec.stat == "mean" else ""
    return _stamped_png(fig, result, path, dpi, f"; {what}" + (f", {errors}" if errors else ""))


def _stamped_png(fig: Figure, result: SweepResult, path: Path, dpi: int, extra: str = "") -> Path:
    """The study's provenance (name, replications, base seed) in a strip at the bottom."""
    n = replications_text(result.spec.replications)
    stamp(fig, f"{result.spec.name}: {n} per point, base seed {result.spec.seed}{extra}")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path


def replications_text(n: int) -> str:
    """'1 replication', '25 replications'."""
    return f"{n} replication" + ("" if n == 1 else "s")


# ---------------------------------------------------------------- transient studies (seed 001)


def transient_plots(result: SweepResult, out_dir: Path, *, dpi: int = DPI) -> list[Path]:
    """A transient study's figures: the replication-mean aggregate throughput per point, the
    relative-change curves with their knees, and the durations beside the reference's.

    Points are named by the study's label column and split into panels by its panel column.
    """
    found = result.transients()
    table = result.transient_table()
    if not any(entry[2] is not None for entry in found.values()):
        warnings.warn("transient plots skipped: no point has a finished run", stacklevel=2)
        return []
    study = result.spec.transient
    assert study is not None
    label = study.label_column
    panels = _panels(table, study.panel)
    draw = [
        ("transient_throughput", _draw_mean_series),
        ("transient_relative_change", _draw_relative_change),
        ("transient_duration", _draw_durations),
    ]
    paths = []
    for name, drawer in draw:
        fig = Figure(figsize=(FIGSIZE[0], FIGSIZE[1] * max(1, len(panels)) * 0.8))
        fig.set_layout_engine("constrained")
        axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
        for ax, (title, rows) in zip(axes, panels, strict=True):
            ax.grid(alpha=0.3)
            drawer(ax, rows, found, label, study.reference_column)
            ax.set_title(title, fontsize="medium")
        fig.suptitle(TRANSIENT_TITLES[name])
        paths.append(_stamped_png(fig, result, out_dir / f"{name}.png", dpi))
    return paths


TRANSIENT_TITLES = {
    "transient_throughput": "Aggregate throughput, mean over replications",
    "transient_relative_change": "Initial data deletion: relative change of the remaining mean",
    "transient_duration": "Transient duration",
}


def _panels(table: pd.DataFrame, panel: str | None) -> list[tuple[str, pd.DataFrame]]:
    if panel is None:
        return [("", table)]
    out = []
    for value, rows in table.groupby(panel, sort=False):
        if isinstance(value, int | float):
            div, unit = value_unit(panel, float(value))
            shown = f"{value / div:g} {unit}".strip() if unit else str(value)
        else:
            shown = str(value)
        out.append((f"{key_words(panel)} = {shown}", rows))
    return out


def _point_label(row: pd.Series, label: str | None) -> str:
    return f"case {row[label]}" if label == "case" else str(row[label] if label else row["point"])


def _draw_mean_series(ax: Axes, rows: pd.DataFrame, found: Any, label: Any, _ref: Any) -> None:
    for i, (_, row) in enumerate(rows.iterrows()):
        entry = found[int(row["point"])][2]
        if entry is None:
            continue
        style = "-" if i < 10 else "--"
        ax.plot(entry.times_s, entry.mean_series / 1e9, style, lw=1, label=_point_label(row, label))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("aggregate throughput (Gb/s)")
    ax.legend(fontsize="x-small", ncol=2)


def _draw_relative_change(ax: Axes, rows: pd.DataFrame, found: Any, label: Any, _ref: Any) -> None:
    for i, (_, row) in enumerate(rows.iterrows()):
        entry = found[int(row["point"])][2]
        if entry is None:
            continue
        deleted_ms = (entry.times_s - entry.times_s[0]) * 1e3
        style = "-" if i < 10 else "--"
        last = entry.searched_index + 1
        knee = f"{entry.duration_s * 1e3:.0f} ms" if entry.settled else "not settled"
        (line,) = ax.plot(
            deleted_ms[:last],
            entry.relative_change[:last] * 100,
            style,
            lw=1,
            label=f"{_point_label(row, label)}: {knee}",
        )
        k = entry.knee_index
        ax.plot(deleted_ms[k], entry.relative_change[k] * 100, "o", color=line.get_color())
        d = analysis.knee_flat(entry.relative_change, entry.searched_index)
        ax.plot(deleted_ms[d], entry.relative_change[d] * 100, "x", color=line.get_color())
    ax.axhline(0.0, color="0.5", lw=0.8)
    ax.set_xlabel("data deleted from the onset, l x probe interval (ms); o knee, x flat")
    ax.set_ylabel("relative change of the mean (%)")
    ax.legend(fontsize="x-small", ncol=2)


def _draw_durations(
    ax: Axes, rows: pd.DataFrame, _found: Any, label: Any, reference: str | None
) -> None:
    names = [_point_label(row, label) for _, row in rows.iterrows()]
    x = np.arange(len(rows))
    bars = 3 if reference else 2
    width = 0.8 / bars
    ours = rows["transient_s"].to_numpy(dtype=float) * 1e3
    lower = (rows["settled"] == False).to_numpy()  # noqa: E712 (a column of bools and None)
    drawn = ax.bar(x - width * (bars - 1) / 2, ours, width, label="cnsim transient")
    for bar, is_bound in zip(drawn, lower, strict=True):
        if is_bound:  # not settled: a lower bound
            bar.set_hatch("//")
            ax.annotate(
                ">=",
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize="x-small",
            )
    flat = rows["flat_s"].to_numpy(dtype=float) * 1e3
    ax.bar(x - width * (bars - 1) / 2 + width, flat, width, label="cnsim, flat knee", alpha=0.6)
    if reference:
        theirs = pd.to_numeric(rows[reference], errors="coerce").to_numpy(dtype=float) * 1e3
        ax.bar(x + width * (bars - 1) / 2, theirs, width, label="seed", color="0.6")
    ax.set_xticks(x, names, fontsize="small")
    ax.set_ylabel("transient duration (ms)")
    ax.legend(fontsize="small")
