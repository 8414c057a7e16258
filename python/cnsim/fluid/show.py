"""Showing the fluid model beside a packet run: the run's figures with the model drawn on them
(in the figure's own units, read from its axis labels), `fluid.json` and `fluid.csv` in the
run's directory, and the terminal's table (`cnsim run --fluid`). The model itself and the
comparison are `cnsim.fluid.beside`'s.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cnsim.fluid.beside import FLUID_CSV, FLUID_JSON, Fluid, fluid_of

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from cnsim.result import Result

# ---------------------------------------------------------------- figures


def panels(fig: Figure) -> list[Axes]:
    """The time panels of a run's figure (the main one and a zoomed one; not insets)."""
    return [ax for ax in fig.axes if ax.get_xlabel().startswith("time")]


UNIT_IN_LABEL = re.compile(r"\(([^()]*)\)\s*$")


def scales(ax: Axes, metric: str) -> tuple[float, float]:
    """The panel's time multiplier and value divisor, read from its axis labels' units (the
    figure drew them with `plots.style.time_unit` and `value_unit`)."""
    from cnsim.plots.style import time_unit, value_unit

    t_unit = _unit(ax.get_xlabel())
    times = {time_unit(span)[1]: time_unit(span)[0] for span in (1e-3, 10.0)}
    v_unit = _unit(ax.get_ylabel())
    values = {value_unit(metric, 10.0**k)[1]: value_unit(metric, 10.0**k)[0] for k in range(-9, 13)}
    return times.get(t_unit, 1.0), values.get(v_unit, 1.0)


def _unit(label: str) -> str:
    found = UNIT_IN_LABEL.search(label)
    return found.group(1) if found else ""


def second_legend(ax: Axes, handles: list[Any]) -> None:
    """The model's lines in a legend of their own, the figure's legend kept as it was."""
    first = ax.get_legend()
    ax.legend(handles=handles, loc="lower right", fontsize="x-small", framealpha=0.9)
    if first is not None:
        ax.add_artist(first)


def figure(result: Result, name: str, fluid: Fluid) -> tuple[Figure, bool]:
    """The run's figure `name` with the model drawn on it when it has a counterpart;
    (figure, drawn)."""
    from cnsim import plots
    from cnsim.plots.style import drop_all_zero

    fig = plots.figure(result, name)
    spec = next((s for s in plots.plot_specs(result) if s["name"] == name), None)
    if spec is None or spec["kind"] != "timeseries":
        return fig, False
    metric = spec["metric"]
    if metric not in result.metric_names:
        return fig, False
    patterns = spec["entities"] or None
    # The entities the figure shows: all-zero series are left out as the figure leaves them.
    shown, _ = drop_all_zero(result.series(metric, patterns), explicit=bool(patterns))
    columns = [str(c) for c in shown.columns]
    return fig, fluid.draw(fig, metric, columns, spec["aggregate"] == "sum")


def write(result: Result, fluid: Fluid, out_dir: str | Path, *, plots: bool = True) -> list[Path]:
    """Into a saved run's directory: `fluid.json`, `fluid.csv` (the time course) and, with
    `plots`, the run's figures that have a model counterpart redrawn with it (same files).
    Returns the figures redrawn."""
    from cnsim.outputs import PLOTS_DIR
    from cnsim.plots.style import DPI, file_stem

    out = Path(out_dir)
    text = json.dumps(finite(fluid.summary(result)), indent=2, allow_nan=False)
    (out / FLUID_JSON).write_text(text + "\n")
    table = fluid.time_course_table()
    header = ",".join(table)
    np.savetxt(
        out / FLUID_CSV,
        np.column_stack(list(table.values())),
        delimiter=",",
        header=header,
        comments="",
        fmt="%.9g",
    )
    drawn: list[Path] = []
    if not plots:
        return drawn
    from cnsim import plots as run_plots

    for name in run_plots.figure_names(result):
        try:
            fig, ok = figure(result, name, fluid)
        except KeyError:
            continue
        if ok:
            path = out / PLOTS_DIR / f"{file_stem(name)}.png"
            fig.savefig(path, dpi=DPI)
            drawn.append(path)
    return drawn


def finite(value: Any) -> Any:
    """JSON without NaN or infinity (a fixed point on RED's jump has no finite queue): null."""
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# ---------------------------------------------------------------- terminal


def _shown(value: float, unit: str) -> str:
    if not math.isfinite(value):
        return "-"
    if unit == "bytes":
        return f"{value / 1e3:,.1f} KB"
    if unit == "bps":
        return f"{value / 1e9:.4g} Gb/s" if abs(value) >= 1e8 else f"{value / 1e6:.4g} Mb/s"
    return f"{value:.4g}"


def text_rows(fluid: Fluid, result: Result) -> list[tuple[str, str, str, str]]:
    """The comparison as text: (quantity, packet run, fluid time course, fluid fixed point)."""
    rows = []
    for row in fluid.comparison(result):
        fixed = row["fixed_point"]
        fixed_text = _shown(fixed, row["unit"])
        if row["quantity"] == "queue mean" and not math.isfinite(fixed):
            # DCTCP: no fixed point; DCQCN: p* > Pmax, no queue on the RED line.
            fixed_text = (
                "none: a limit cycle" if fluid.scheme == "dctcp" else "on RED's jump at Kmax"
            )
        rows.append(
            (
                row["quantity"],
                _shown(row["packet"], row["unit"]),
                _shown(row["fluid"], row["unit"]),
                fixed_text,
            )
        )
    return rows


def window_text(window_s: tuple[float, float]) -> str:
    """'30-60 ms' (or in s past one second)."""
    scale, unit = (1e3, "ms") if window_s[1] <= 1.0 else (1.0, "s")
    return f"{window_s[0] * scale:g}-{window_s[1] * scale:g} {unit}"


def rich_table(fluid: Fluid, result: Result) -> Any:
    """The terminal's table: the packet run's numbers beside the model's over the window."""
    from rich.table import Table

    delay_us = fluid.model.feedback_delay_s * 1e6
    settles = f", {'settles' if fluid.settles else 'does not settle'} from line rate"
    title = (
        f"{fluid.source}: N = {fluid.n_flows}, feedback delay {delay_us:.3g} us, "
        f"{fluid.stability}{settles if fluid.scheme != 'dctcp' else ''}"
    )
    caption = f"means over t = {window_text(fluid.window_s)}; " + "; ".join(fluid.notes)
    table = Table("", "packet run", "fluid model", "fixed point", title=title, caption=caption)
    for row in text_rows(fluid, result):
        table.add_row(*row)
    return table


def write_beside(result: Result, out_dir: str | Path, *, plots: bool = True) -> Fluid:
    """`cnsim run --fluid`: the model of the saved run, written into its directory."""
    fluid = fluid_of(result.scenario)
    write(result, fluid, out_dir, plots=plots)
    return fluid
