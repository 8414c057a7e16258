"""Rich display in Jupyter: what `Result` and `SweepResult` show when they end a cell.

A result shows its headline numbers (simulated and wall time, frame accounting, control frames,
metrics), the per-source and per-port tables and its figures inline; a sweep shows its runs and
the per-point statistics, with its figures when `plot()` has drawn them. Everything is one
self-contained HTML string (figures as base64 PNG), so a saved notebook keeps them. Progress
while a run or sweep works is the shared progress bar's (`terminal.progress_bar`), which draws
in the cell here.
"""

from __future__ import annotations

import base64
import html
import io
import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from cnsim.result import Result
    from cnsim.sweeps import SweepResult

# Figures inline at a screen resolution (the saved PNGs use plots.DPI).
INLINE_DPI = 80
PORT_COLUMNS = ["peak_queue_bytes", "mean_queue_bytes", "utilisation", "dropped_frames"]
SOURCE_COLUMNS = ["offered_bps", "throughput_bps", "rx_throughput_bps", "dropped_frames"]
MAX_TABLE_ROWS = 40


def figure_png(fig: Figure, dpi: int = INLINE_DPI) -> str:
    """A figure as an <img> tag with the PNG inline."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" style="max-width:100%"/>'


def _rows(pairs: Iterable[tuple[str, str]]) -> str:
    return "".join(
        f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
        f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
        for k, v in pairs
    )


def _number(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def headline(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The numbers a reader wants first, as (label, text) pairs."""
    frames = summary.get("frames", {})
    dropped = {k: v for k, v in frames.get("dropped", {}).items() if k != "total" and v}
    where = ", ".join(f"{place} {n:,}" for place, n in dropped.items())
    control = summary.get("control_frames", {})
    kinds = {k: v for k, v in control.items() if k not in ("bytes", "bandwidth_bps") and v}
    rows = [
        ("simulated", f"{_number(summary.get('sim_time_s'))} s"),
        ("wall time", f"{_number(summary.get('wall_time_s'))} s"),
        ("events", _number(summary.get("events"))),
        ("frames generated", _number(frames.get("generated"))),
        ("frames delivered", _number(frames.get("delivered"))),
        (
            "frames dropped",
            _number(frames.get("dropped", {}).get("total")) + (f" ({where})" if where else ""),
        ),
        ("frames in flight", _number(frames.get("in_flight"))),
    ]
    if kinds:
        text = ", ".join(f"{k} {v:,}" for k, v in kinds.items())
        rows.append(
            ("control frames", f"{text} ({control.get('bandwidth_bps', 0) / 1e3:.4g} kb/s)")
        )
    rows += [(name, _number(value)) for name, value in summary.get("metrics", {}).items()]
    return rows


def _frame_html(frame: pd.DataFrame, columns: list[str], title: str) -> str:
    if frame.empty:
        return ""
    shown = frame[[c for c in columns if c in frame.columns]]
    more = len(shown) - MAX_TABLE_ROWS
    table = shown.head(MAX_TABLE_ROWS).to_html(float_format=lambda v: f"{v:.4g}", border=0)
    note = f"<p>... {more} more rows</p>" if more > 0 else ""
    return f"<h5>{html.escape(title)}</h5>{table}{note}"


def result_html(result: Result) -> str:
    """The notebook display of one run."""
    summary = result.summary
    title = f"cnsim: {result.name} (seed {summary.get('seed')})"
    parts = [
        f"<h4>{html.escape(title)}</h4>",
        f"<table>{_rows(headline(summary))}</table>",
        _frame_html(result.per_source, SOURCE_COLUMNS, "per source (bit/s, frames)"),
        _frame_html(result.per_port, PORT_COLUMNS, "per switch port (bytes, frames)"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name in result.figure_names:
            try:
                fig = result.figure(name)
            except KeyError:
                continue
            parts.append(f"<div><b>{html.escape(name)}</b><br/>{figure_png(fig)}</div>")
    return "\n".join(part for part in parts if part)


def sweep_html(study: SweepResult) -> str:
    """The notebook display of a sweep: runs, per-point statistics, figures already drawn."""
    total, ok = len(study.runs), len(study.ok)
    title = f"cnsim sweep: {study.spec.name} ({ok}/{total} runs ok)"
    stats = study.aggregate()
    parts = [
        f"<h4>{html.escape(title)}</h4>",
        f"<p>{html.escape(str(study.out_dir))}/ runs.parquet, sweep.toml, runs/&lt;key&gt;/</p>",
        _frame_html(stats.set_index("point"), list(stats.columns), "per point"),
    ]
    for png in sorted((study.out_dir / "plots").glob("*.png")):
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        parts.append(
            f"<div><b>{html.escape(png.stem)}</b><br/>"
            f'<img src="data:image/png;base64,{data}" style="max-width:100%"/></div>'
        )
    return "\n".join(part for part in parts if part)


# ---------------------------------------------------------------- figures in Jupyter


def show_figures_inline() -> None:
    """Make a bare `matplotlib.figure.Figure` ending a cell display as a PNG. IPython does that
    only once pyplot's inline backend is active, and cnsim never imports pyplot."""
    from IPython import get_ipython
    from matplotlib.figure import Figure

    shell = get_ipython()
    if shell is None:
        return

    def png(fig: Figure) -> bytes:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=INLINE_DPI)
        return buffer.getvalue()

    shell.display_formatter.formatters["image/png"].for_type(Figure, png)
