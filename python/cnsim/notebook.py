"""Rich display in Jupyter: what `Result` and `SweepResult` show when they end a cell.

A result shows what `cnsim run` prints (the lines of `readout`, the one formatter the terminal
uses too: headline numbers first, then cost, frames, latency, control frames, PFC, flows,
metrics, warnings), the window, per-source and per-port tables and its figures inline; a sweep
shows the table `cnsim sweep` prints, with its figures when `plot()` has drawn them.
Everything is one self-contained HTML string (figures as base64 PNG), so a saved notebook keeps
them. Progress while a run or sweep works is the shared progress bar's
(`terminal.progress_bar`), which draws in the cell here.
"""

from __future__ import annotations

import base64
import html
import io
import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from cnsim import readout

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from cnsim.result import Result
    from cnsim.sweeps import SweepResult

# Figures inline at a screen resolution (the saved PNGs use plots.DPI).
INLINE_DPI = 80
PORT_COLUMNS = ["peak_queue_bytes", "mean_queue_bytes", "utilisation", "dropped_frames"]
SOURCE_COLUMNS = ["offered_bps", "throughput_bps", "rx_throughput_bps", "dropped_frames"]
ALERT_STYLE = "color:#c00;font-weight:bold"
HEADLINE_STYLE = "color:#036;font-weight:bold"


def figure_png(fig: Figure, dpi: int = INLINE_DPI) -> str:
    """A figure as an <img> tag with the PNG inline."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return png_img(buffer.getvalue())


def png_img(data: bytes, alt: str = "") -> str:
    """PNG bytes as an <img> tag holding them (base64), so the page needs no other file."""
    encoded = base64.b64encode(data).decode("ascii")
    alt_text = html.escape(alt, quote=True)
    return f'<img src="data:image/png;base64,{encoded}" alt="{alt_text}" style="max-width:100%"/>'


def lines_html(lines: Iterable[readout.Line]) -> str:
    """A run's lines (`readout.run_lines`) as a two-column table, faults in red."""
    rows = ""
    for line in lines:
        style = "text-align:left"
        style += ";" + ALERT_STYLE if line.alert else ";" + HEADLINE_STYLE if line.headline else ""
        rows += (
            f"<tr><th style='text-align:left'>{html.escape(line.label)}</th>"
            f"<td style='{style}'>{html.escape(line.text)}</td></tr>"
        )
    return f"<table>{rows}</table>"


def table_html(table: readout.TextTable | None, heading: str = "h5") -> str:
    """A `readout.TextTable` as HTML: its title as a heading, labels left, numbers right, faults
    in red, its caption below."""
    if table is None:
        return ""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = ""
    for row in table.rows:
        cells = ""
        for column, cell in zip(table.columns, row, strict=True):
            style = "text-align:left" if column in table.left else "text-align:right"
            if cell.alert:
                style += ";" + ALERT_STYLE
            cells += f"<td style='{style}'>{html.escape(cell.text)}</td>"
        body += f"<tr>{cells}</tr>"
    caption = f"<p><small>{html.escape(table.caption)}</small></p>" if table.caption else ""
    title = f"<{heading}>{html.escape(table.title)}</{heading}>" if table.title else ""
    return f"{title}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{caption}"


def run_tables(summary: Mapping[str, Any]) -> list[readout.TextTable]:
    """The tables a run shows below its lines: the report window's per-source table, then the
    whole run per source and per switch port (natural order, units as the terminal's)."""
    tables = [
        readout.window_table(summary),
        readout.summary_rows_table(
            summary.get("per_source"), SOURCE_COLUMNS, "per source, whole run", "host"
        ),
        readout.summary_rows_table(
            summary.get("per_port"), PORT_COLUMNS, "per switch port, whole run", "port"
        ),
    ]
    return [t for t in tables if t is not None]


def result_html(result: Result) -> str:
    """The notebook display of one run: everything `cnsim run` prints (the same lines, the
    same formatter), the per-source and per-port tables, and the run's figures."""
    summary = result.summary
    title = f"cnsim: {result.name} (seed {summary.get('seed')})"
    parts = [f"<h4>{html.escape(title)}</h4>", lines_html(readout.run_lines(result))]
    parts += [table_html(table) for table in run_tables(summary)]
    parts += [f"<div><b>{html.escape(n)}</b><br/>{img}</div>" for n, img in figure_imgs(result)]
    return "\n".join(part for part in parts if part)


def figure_imgs(result: Result, dpi: int = INLINE_DPI) -> list[tuple[str, str]]:
    """(name, <img> tag) of every figure the run can draw (a figure that cannot be drawn is
    left out; its warning is the saved run's to give)."""
    from cnsim.plots import drawable

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return [(name, figure_png(fig, dpi)) for name, fig in drawable(result)]


def sweep_html(study: SweepResult) -> str:
    """The notebook display of a sweep: the table `cnsim sweep` prints (the same formatter)
    and the figures already drawn from its current results (`SweepResult.figures`: never a
    stale one, nor a file the study did not draw)."""
    table = readout.sweep_table(study)
    parts = [f"<h4>{html.escape(table.title)}</h4>", table_html(table._replace(title=""))]
    for png in sorted(study.figures()):
        parts.append(
            f"<div><b>{html.escape(png.stem)}</b><br/>{png_img(png.read_bytes(), png.stem)}</div>"
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
