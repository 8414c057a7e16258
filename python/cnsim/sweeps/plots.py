"""A sweep's figures: a per-point statistic of a metric against a swept parameter.

As in seed 000's "Averaged Peak Queue Size" and "Fairness Index" slides: one marker per point,
the mean over replications with an error bar (95 % confidence interval by default), or the
standard deviation over replications. A sweep with more parameters than the x axis draws one
line per combination of the others. Values are scaled to the unit their name carries
(`_bytes` in KB, `_bps` in Gb/s), as the run plots do.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from cnsim.plots import AXIS_NAMES, DPI, FIGSIZE, file_stem, value_unit
from cnsim.sweeps.paths import parse_path
from cnsim.sweeps.spec import PlotSpec

if TYPE_CHECKING:
    from cnsim.sweeps.result import SweepResult

ERROR_TEXT = {"ci95": "error bars: 95% confidence interval", "std": "error bars: +-1 std"}


def make_sweep_plots(result: SweepResult, out_dir: Path) -> list[Path]:
    """Every [[sweep.plots]] figure (or one mean plot per numeric metric) as PNG files."""
    specs = list(result.spec.plots) or default_plots(result)
    paths = []
    for spec in specs:
        path = out_dir / f"{file_stem(spec.name or default_name(spec))}.png"
        if plot_sweep(result, spec, path) is not None:
            paths.append(path)
    return paths


def default_plots(result: SweepResult) -> list[PlotSpec]:
    """Mean of each numeric metric against the first swept parameter (none if nothing swept)."""
    if not result.parameters:
        return []
    aggregate = result.aggregate()
    return [PlotSpec(x=result.parameters[0], y=m) for m in dict.fromkeys(aggregate["metric"])]


def default_name(spec: PlotSpec) -> str:
    """'mean_peak_queue_bytes_vs_interval_bytes'."""
    return f"{spec.stat}_{leaf(spec.y)}_vs_{leaf(spec.x)}"


def leaf(path: str) -> str:
    """Last key of a dotted path: the name that carries the unit."""
    return parse_path(path)[-1]


def plot_sweep(result: SweepResult, spec: PlotSpec, path: Path) -> Path | None:
    """Draw one figure; warn and return None when the metric has no numbers."""
    table = result.aggregate([spec.y])
    column = "std" if spec.stat == "std" else "mean"
    if table.empty or table[column].isna().all():
        needs = "two finished runs per point" if spec.stat == "std" else "a finished run"
        warnings.warn(f"sweep plot of {spec.y!r} skipped: it needs {needs}", stacklevel=2)
        return None
    x_div, x_unit = _unit(spec.x, table[spec.x])
    y_div, y_unit = value_unit(leaf(spec.y), float(table[column].abs().max()))
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    ax.grid(alpha=0.3)
    others = [p for p in result.parameters if p != spec.x]
    groups = table.groupby(others, sort=False) if others else [((), table)]
    for label, group in groups:
        _draw_line(ax, spec, group, column, (x_div, y_div), _label(others, label))
    ax.set_xlabel(spec.xlabel or _axis_text(spec.x, x_unit))
    ax.set_ylabel(spec.ylabel or _y_text(spec, y_unit))
    ax.set_title(spec.title or f"{_y_text(spec, '')} vs {leaf(spec.x)}")
    if others:
        ax.legend(fontsize="small")
    return _save(fig, result, spec, path)


def _draw_line(
    ax: Axes,
    spec: PlotSpec,
    group: pd.DataFrame,
    column: str,
    scale: tuple[float, float],
    label: str | None,
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
    ax.errorbar(x, y, yerr=err, marker="o", capsize=4, label=label)


def _unit(param: str, values: pd.Series) -> tuple[float, str]:
    if not pd.api.types.is_numeric_dtype(values):
        return 1.0, ""
    return value_unit(leaf(param), float(values.abs().max()))


def _axis_text(path: str, unit: str) -> str:
    name = AXIS_NAMES.get(leaf(path), path)
    return f"{name} ({unit})" if unit else name


def _y_text(spec: PlotSpec, unit: str) -> str:
    name = _axis_text(spec.y, unit)
    return f"std of {name}" if spec.stat == "std" else f"mean {name}"


def _label(names: list[str], values: Any) -> str | None:
    if not names:
        return None
    values = values if isinstance(values, tuple) else (values,)
    return ", ".join(f"{leaf(n)}={v}" for n, v in zip(names, values, strict=True))


def _save(fig: Figure, result: SweepResult, spec: PlotSpec, path: Path) -> Path:
    """Stamp what the points are (replications, error bars) at the bottom and write the PNG."""
    errors = ERROR_TEXT.get(spec.error, "") if spec.stat == "mean" else ""
    stamp = f"{result.spec.name}: {result.spec.replications} replications per point"
    stamp += f", base seed {result.spec.seed}" + (f"; {errors}" if errors else "")
    engine = fig.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine):  # room for the stamp below the axes
        engine.set(rect=(0.0, 0.03, 1.0, 0.97))
    fig.text(0.995, 0.005, stamp, ha="right", va="bottom", fontsize=7, color="0.5")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    return path
