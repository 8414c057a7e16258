"""A sweep on the terminal: the progress bar while it runs, the per-point table after."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, cast

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from cnsim import notebook

if TYPE_CHECKING:
    from cnsim.sweeps.execute import RunOutcome
    from cnsim.sweeps.result import SweepResult

MAX_TABLE_ROWS = 40

Advance = Callable[["RunOutcome"], None]


class RateColumn(ProgressColumn):
    """Runs per second, over rich's sliding window (so a slow start does not stick)."""

    def render(self, task: Task) -> Text:
        """The rate, or a dash until two runs have finished."""
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} runs/s" if speed else "- runs/s", style="progress.data.speed")


@contextmanager
def run_progress(
    total: int, title: str, *, enabled: bool = True, console: Console | None = None
) -> Iterator[Advance]:
    """A callback to report each finished run; draws nothing off a terminal or when disabled."""
    console = console or Console(stderr=True)
    if enabled and total and not console.is_terminal and notebook.in_jupyter():
        with notebook.progress_bar(title) as update:
            done, failed = 0, 0

            def advance_cell(outcome: RunOutcome) -> None:
                nonlocal done, failed
                done, failed = done + 1, failed + (outcome.status != "ok")
                text = f" {done}/{total} runs" + (f", {failed} failed" if failed else "")
                update(done / total, text)

            yield advance_cell
        return
    if not enabled or total == 0 or not console.is_terminal:
        yield lambda outcome: None
        return
    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[failed]}", style="bold red", markup=False),
    )
    with Progress(*columns, console=console) as bar:
        task = bar.add_task(title, total=total, failed="")
        failed = 0

        def advance(outcome: RunOutcome) -> None:
            nonlocal failed
            failed += outcome.status != "ok"
            bar.update(task, advance=1, failed=f"{failed} failed" if failed else "")

        yield advance


def sweep_table(study: SweepResult) -> Table:
    """Per point: the swept values, runs ok, and each metric's mean +- 95 % CI half-width."""
    total, ok = len(study.runs), len(study.ok)
    title = f"cnsim sweep: {study.spec.name} ({ok}/{total} runs ok"
    title += f"; {study.executed} run now, {study.reused} reused)"
    stats = study.aggregate().set_index(["point", "metric"])
    metrics = list(dict.fromkeys(stats.index.get_level_values("metric")))
    table = Table(title=title)
    for header in (*study.parameters, "runs ok", *metrics):
        table.add_column(header, overflow="fold")  # paths are long; wrap, never cut
    for point, runs in study.runs.groupby("point", sort=True):
        if cast(int, point) >= MAX_TABLE_ROWS:  # the point column holds ints
            table.add_row(*["..."] * len(table.columns))
            break
        params = [Text(str(runs.iloc[0][p])) for p in study.parameters]
        n_ok = int((runs["status"] == "ok").sum())
        cells = [Text(_mean_ci(*stats.loc[(point, m), ["mean", "ci95"]])) for m in metrics]
        table.add_row(*params, f"{n_ok}/{len(runs)}", *cells)
    table.caption = f"{study.out_dir}/  runs.parquet, sweep.toml, runs/<key>/"
    return table


def _mean_ci(mean: float, ci: float) -> str:
    if mean != mean:  # NaN: no finished run reported it
        return "-"
    return f"{mean:.4g}" if ci != ci else f"{mean:.4g} +- {ci:.2g}"
