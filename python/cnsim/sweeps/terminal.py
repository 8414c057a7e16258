"""A sweep on the terminal: the progress bar while it runs, the per-point table after."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

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
MAX_VALUE_CHARS = 40

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
    """Per point: the swept values, runs ok, and each metric's mean +- 95 % CI half-width.

    A sweep with a [sweep.table] shows that table (the columns of DIR/table.csv, swept values
    by their [sweep.names]); a transient study shows its transient table (`transient_table`).
    """
    if study.spec.transient is not None:
        return transient_table(study)
    if study.spec.table:
        return _point_table(study)
    stats = study.aggregate().set_index(["point", "metric"])
    metrics = list(dict.fromkeys(stats.index.get_level_values("metric")))
    table = Table(title=_title(study))
    for header in (*study.parameters, "runs ok", *metrics):
        table.add_column(header, overflow="fold")  # paths are long; wrap, never cut
    params_of = {point.index: point.params for point in study.spec.points()}
    for point, runs in study.runs.groupby("point", sort=True):
        if cast(int, point) >= MAX_TABLE_ROWS:  # the point column holds ints
            table.add_row(*["..."] * len(table.columns))
            break
        values = params_of[cast(int, point)]
        params = [Text(_value(study, p, values.get(p))) for p in study.parameters]
        n_ok = int((runs["status"] == "ok").sum())
        cells = [Text(_mean_ci(*stats.loc[(point, m), ["mean", "ci95"]])) for m in metrics]
        table.add_row(*params, f"{n_ok}/{len(runs)}", *cells)
    table.caption = f"{study.out_dir}/  runs.parquet, sweep.toml, runs/<key>/"
    return table


def _title(study: SweepResult) -> str:
    title = f"cnsim sweep: {study.spec.name} ({len(study.ok)}/{len(study.runs)} runs ok"
    return title + f"; {study.executed} run now, {study.reused} reused)"


def _value(study: SweepResult, parameter: str, value: Any) -> str:
    """A swept value as a cell: its [sweep.names] name, or the value cut to a readable length
    (a list-valued parameter, such as a traffic list, would fill the screen)."""
    text = str(study.spec.value_name(parameter, value))
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


def _point_table(study: SweepResult) -> Table:
    """The [sweep.table] as DIR/table.csv holds it: replication means per point, `n` runs."""
    data = study.point_table()
    shown = [c for c in data.columns if c != "point"]
    table = Table(title=_title(study))
    for column in shown:
        table.add_column(column, justify="right", overflow="fold")
    for i, (_, row) in enumerate(data.iterrows()):
        if i >= MAX_TABLE_ROWS:
            table.add_row(*["..."] * len(shown))
            break
        table.add_row(*[_number(row[c]) for c in shown])
    table.caption = f"{study.out_dir}/  table.csv, runs.parquet, sweep.toml, runs/<key>/"
    return table


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):  # a swept value as given (memory sizes, counts)
        return f"{value:,}"
    if value != value:  # NaN: no finished run reported it
        return "-"
    return f"{value:.4g}"


def _mean_ci(mean: float, ci: float) -> str:
    if mean != mean:  # NaN: no finished run reported it
        return "-"
    return f"{mean:.4g}" if ci != ci else f"{mean:.4g} +- {ci:.2g}"


def transient_table(study: SweepResult) -> Table:
    """A transient study (seed 001): per point its label columns, the replications averaged,
    the transient found on their mean (ms and RTTs), and any reference columns beside it.

    Durations (columns ending in `_s`) are shown in ms, sizes (`_bytes`) in KB.
    """
    table_data = study.transient_table()
    title = _title(study)
    shown = [c for c in table_data.columns if c not in ("point", "transient_end_s", "method")]
    table = Table(title=title)
    for column in shown:
        header = column
        if column.endswith("_s"):
            header = f"{column[:-2]} (ms)"
        elif column.endswith("_bytes"):
            header = f"{column[:-6]} (KB)"
        table.add_column(header, justify="left" if column in ("case",) else "right")
    for _, row in table_data.iterrows():
        cells = [_cell(column, row[column]) for column in shown]
        if row["settled"] is False:  # a lower bound: the series had not settled
            for column in ("transient_s", "transient_rtt"):
                cells[shown.index(column)] = ">= " + cells[shown.index(column)]
        table.add_row(*cells)
    method = table_data["method"].iloc[0] if len(table_data) else "-"
    table.caption = (
        f"initial data deletion on the replication mean, knee rule {method!r}; "
        f"{study.out_dir}/transient.csv"
    )
    return table


def _cell(column: str, value: object) -> str:
    if column.endswith("_bytes") and isinstance(value, int | float) and value == value:
        return f"{value / 1e3:g}"
    if isinstance(value, float):
        if value != value:  # NaN: not measured (no run finished, or no reference)
            return "-"
        if column.endswith("_s"):
            ms = value * 1e3
            return f"{ms:.0f}" if abs(ms) >= 100 else f"{ms:.3g}"
        return f"{value:.4g}"
    return str(value)
