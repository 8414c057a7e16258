"""What cnsim shows while and after it works: the one progress bar, and the lines and tables of
a run and of a sweep (`readout`'s, drawn with rich).

The progress bar is the same for `cnsim run`, `cnsim.run(..., progress=True)`, sweeps and
notebooks: a run reports the simulated fraction done, a sweep counts finished runs. It is drawn
by rich on a terminal (stderr), as an HTML bar in a Jupyter cell (whose stderr is no terminal),
and not at all elsewhere, so logs and captured output stay clean.

This module imports rich (about 15 ms) at the top: `cnsim run -q` and `cnsim --version` draw
nothing and never import it (tests/test_cli_manners.py).
"""

from __future__ import annotations

import html
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from cnsim import readout
from cnsim.readout import Line, summary_lines

if TYPE_CHECKING:
    from cnsim.result import Result
    from cnsim.sweeps.result import SweepResult

__all__ = [
    "Line",
    "ProgressBar",
    "in_jupyter",
    "progress_bar",
    "rich_table",
    "summary_lines",
    "summary_table",
    "sweep_table",
    "window_table",
]

# ---------------------------------------------------------------- the progress bar


def in_jupyter() -> bool:
    """True inside a Jupyter kernel (where stderr is no terminal, so rich's bar draws nothing).

    A kernel has imported IPython before any cell runs; when it is not loaded this is no
    kernel, and IPython (about 0.3 s to import) is not imported to find that out."""
    if "IPython" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:  # a module entry that is no IPython (a blocked import)
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


class _Surface(Protocol):
    """Where a bar is drawn: `show` gets the fraction done and (a sweep) runs done and failed."""

    def show(self, fraction: float, done: int, failed: int) -> None: ...

    def describe(self, title: str) -> None: ...

    def __enter__(self) -> object: ...

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class ProgressBar:
    """Progress of a run (`update`, the simulated fraction done: the native run's callback) or
    of a sweep (`advance`, once per finished run out of `total`, failures counted beside).

    Drawn on its surface (a terminal or a Jupyter cell), or nowhere when there is none."""

    def __init__(self, surface: _Surface | None, total: int | None = None) -> None:
        self._surface = surface
        self.total = total
        self.done = 0
        self.failed = 0

    def update(self, fraction: float) -> None:
        """The fraction done, clamped to [0, 1]."""
        if self._surface is not None:
            self._surface.show(min(max(fraction, 0.0), 1.0), self.done, self.failed)

    def describe(self, title: str) -> None:
        """What the work is doing now (a run: "building the network", then "simulating")."""
        if self._surface is not None:
            self._surface.describe(title)

    def advance(self, *, failed: bool = False) -> None:
        """One more of `total` finished (`failed` when it did not end well)."""
        self.done += 1
        self.failed += failed
        self.update(self.done / self.total if self.total else 1.0)


@contextmanager
def progress_bar(
    title: str = "simulating",
    *,
    total: int | None = None,
    enabled: bool = True,
    console: Console | None = None,
) -> Iterator[ProgressBar]:
    """The progress bar of a run (`total` None) or of `total` runs, titled `title`.

    In a Jupyter kernel an HTML bar in the cell's output; else, when `console` (default: stderr)
    is a terminal, rich's bar, erased after a run (its summary follows) and kept after a sweep
    (its count and rate stay readable); else, or when not `enabled` or there is nothing to count,
    a bar that draws nothing."""
    surface: _Surface | None = None
    if enabled and total != 0:
        if in_jupyter():
            surface = _CellBar(title, total)
        else:
            console = console or Console(stderr=True)
            surface = _TerminalBar(console, title, total) if console.is_terminal else None
    if surface is None:
        yield ProgressBar(None, total)
        return
    with surface:
        yield ProgressBar(surface, total)


class RateColumn(ProgressColumn):
    """Runs per second, over rich's sliding window (so a slow start does not stick)."""

    def render(self, task: Task) -> Text:
        """The rate, or a dash until two runs have finished."""
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} runs/s" if speed else "- runs/s", style="progress.data.speed")


class _TerminalBar:
    """rich's bar: title, bar, percent and elapsed time for a run; title, bar, done/total, rate,
    elapsed time, eta and failures for a sweep."""

    def __init__(self, console: Console, title: str, total: int | None) -> None:
        self.counting = total is not None
        columns: tuple[ProgressColumn, ...] = (
            TextColumn("{task.description}", markup=False),
            BarColumn(),
        )
        if self.counting:
            columns += (
                MofNCompleteColumn(),
                RateColumn(),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[failed]}", style="bold red", markup=False),
            )
        else:
            columns += (TaskProgressColumn(), TimeElapsedColumn())
        self.progress = Progress(*columns, console=console, transient=not self.counting)
        self.title, self.total = title, total

    def show(self, fraction: float, done: int, failed: int) -> None:
        if not self.counting:
            self.progress.update(self.task, completed=fraction)
            return
        self.progress.update(self.task, completed=done, failed=f"{failed} failed" if failed else "")

    def describe(self, title: str) -> None:
        self.progress.update(self.task, description=title)

    def __enter__(self) -> _TerminalBar:
        self.progress.start()
        self.task = self.progress.add_task(self.title, total=self.total or 1.0, failed="")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.progress.stop()


class _CellBar:
    """An HTML <progress> in the notebook's output, updated in place (no widget library needed),
    redrawn at most once per percent; "done" when the work ended without an error."""

    def __init__(self, title: str, total: int | None) -> None:
        self.title = title
        self.total = total
        self.shown = -1
        self.handle: Any = None
        self.start = time.perf_counter()

    def show(self, fraction: float, done: int, failed: int) -> None:
        percent = int(100 * fraction)
        if percent == self.shown or self.handle is None:
            return
        self.shown = percent
        extra = ""
        if self.total is not None:
            extra = f" {done}/{self.total} runs" + (f", {failed} failed" if failed else "")
        self._draw(self.title, fraction, extra)

    def describe(self, title: str) -> None:
        self.title = title
        if self.handle is not None:
            self._draw(title, max(self.shown, 0) / 100)

    def _draw(self, title: str, fraction: float, extra: str = "") -> None:
        from IPython.display import HTML

        elapsed_s = time.perf_counter() - self.start
        self.handle.update(HTML(_bar_html(title, fraction, elapsed_s, extra)))

    def __enter__(self) -> _CellBar:
        from IPython.display import HTML, display

        self.start = time.perf_counter()
        self.handle = display(HTML(_bar_html(self.title, 0.0, 0.0)), display_id=True)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None and self.handle is not None:
            self._draw(f"{self.title}: done", 1.0)


def _bar_html(title: str, fraction: float, elapsed_s: float, extra: str = "") -> str:
    percent = 100.0 * fraction
    return (
        f"<div><progress value='{percent:.0f}' max='100' style='width:50%'></progress> "
        f"{html.escape(title)} {percent:.0f}% ({elapsed_s:.1f} s){html.escape(extra)}</div>"
    )


# ---------------------------------------------------------------- a run and a sweep
# The lines and tables are `readout`'s (shared with the notebook and the HTML report); here
# they are drawn with rich.


def summary_table(result: Result, out_dir: Path | None = None) -> Table:
    """A run's lines (`readout.run_lines`) as a two-column table, faults in red."""
    s = result.summary
    table = Table(title=f"cnsim: {result.name} (seed {s.get('seed')})", show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for line in readout.run_lines(result, out_dir):
        # Text, not markup: entity names and values may hold brackets.
        style = "bold red" if line.alert else "bold cyan" if line.headline else ""
        table.add_row(
            Text(line.label, style="cyan" if line.headline else ""), Text(line.text, style=style)
        )
    return table


def rich_table(text_table: readout.TextTable) -> Table:
    """A `readout.TextTable` drawn by rich: labels left, numbers right, faults in red."""
    table = Table(title=text_table.title)
    for column in text_table.columns:
        left = column in text_table.left
        table.add_column(column, justify="left" if left else "right", overflow="fold")
    for row in text_table.rows:
        table.add_row(*[Text(c.text, style="bold red" if c.alert else "") for c in row])
    if text_table.caption:
        table.caption = text_table.caption
    return table


def window_table(summary: Mapping[str, Any]) -> Table | None:
    """The window table (window_per_source.csv) with the window's totals as a caption."""
    table = readout.window_table(summary)
    return None if table is None else rich_table(table)


def sweep_table(study: SweepResult, width: int | None = None) -> Table:
    """A sweep's table (`readout.sweep_table`): its [sweep.table], its transient table, or per
    point the swept values, runs ok and each metric's mean +- 95 % CI half-width; the columns
    that fit a terminal `width` characters wide (None: the console's), the rest named as in
    the CSV."""
    width = Console().width if width is None else width
    return rich_table(fit_width(readout.sweep_table(study), width, study_csv(study)))


def study_csv(study: SweepResult) -> str:
    """The CSV holding every column of the sweep's printed table (cnsim.sweeps.study writes it)."""
    from cnsim.sweeps.store import AGGREGATE_FILE, POINT_TABLE_FILE
    from cnsim.sweeps.transient import TABLE_FILE

    if study.spec.transient is not None:
        return TABLE_FILE
    return POINT_TABLE_FILE if study.spec.table else AGGREGATE_FILE


# A column's border and padding in a rich table.
COLUMN_FRAME_CHARS = 3


def fit_width(table: readout.TextTable, width: int, csv: str = "the CSV") -> readout.TextTable:
    """`table` with as many of its columns, from the left, as fit `width` characters at their
    widest cell (rich would otherwise squeeze every column to a character or two); the ones
    left out are counted in the caption, as they are all in the CSV the sweep writes."""

    def need(i: int) -> int:
        cells = [len(table.columns[i]), *(len(row[i].text) for row in table.rows)]
        return max(cells) + COLUMN_FRAME_CHARS

    used, keep = 1, 0
    while keep < len(table.columns) and used + need(keep) <= width:
        used += need(keep)
        keep += 1
    keep = max(keep, 1)
    if keep == len(table.columns):
        return table
    left_out = len(table.columns) - keep
    columns = "column" if left_out == 1 else "columns"
    note = f"{left_out} more {columns} ({', '.join(table.columns[keep:])}) in {csv}"
    caption = f"{table.caption}; {note}" if table.caption else note
    rows = [row[:keep] for row in table.rows]
    return table._replace(columns=table.columns[:keep], rows=rows, caption=caption)
