"""What cnsim shows while and after it works: the one progress bar, and the tables of a run and
of a sweep.

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
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

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

from cnsim.outputs import (
    FLOWS_FILE,
    PLOTS_DIR,
    SCENARIO_FILE,
    SUMMARY_FILE,
    TIMESERIES_FILE,
    window_rows,
)

if TYPE_CHECKING:
    from cnsim.result import Result
    from cnsim.sweeps.result import SweepResult

MAX_TABLE_ROWS = 40
MAX_VALUE_CHARS = 40


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


# ---------------------------------------------------------------- a run


class Line(NamedTuple):
    """One line of a run's summary: what it is, its value as text, and whether it reports a
    fault (drawn in red)."""

    label: str
    text: str
    alert: bool = False


def summary_table(result: Result, out_dir: Path | None = None) -> Table:
    """Short run summary: cost, frame accounting by place, control frames, metrics, outputs."""
    s = result.summary
    table = Table(title=f"cnsim: {result.name} (seed {s.get('seed')})", show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for line in summary_lines(s, out_dir):
        # Text, not markup: entity names and values may hold brackets.
        table.add_row(line.label, Text(line.text, style="bold red" if line.alert else ""))
    return table


def summary_lines(s: Mapping[str, Any], out_dir: Path | None = None) -> list[Line]:
    """The lines of `summary_table`, as plain text (the table's rows, without rich)."""
    lines = _cost_lines(s) + _frame_lines(s) + _control_lines(s) + _pfc_lines(s) + _flow_lines(s)
    lines += _metric_lines(s.get("metrics", {}))
    if out_dir is not None:
        lines.append(Line("outputs", _outputs_text(out_dir)))
    return lines


def _cost_lines(s: Mapping[str, Any]) -> list[Line]:
    return [
        Line("simulated", f"{_num(s.get('sim_time_s'))} s"),
        Line("wall time", f"{_num(s.get('wall_time_s'))} s"),
        Line("events", f"{_count(s.get('events'))} ({_rate(s.get('events_per_s'))} events/s)"),
    ]


def _frame_lines(s: Mapping[str, Any]) -> list[Line]:
    frames = s.get("frames", {})
    dropped = dict(frames.get("dropped", {}))
    total = dropped.pop("total", sum(v for v in dropped.values() if isinstance(v, int | float)))
    places = ", ".join(f"{k} {_count(v)}" for k, v in dropped.items() if v)
    lines = [
        Line("frames generated", _count(frames.get("generated"))),
        Line("frames delivered", _count(frames.get("delivered"))),
        Line("frames dropped", _count(total) + (f" ({places})" if places else "")),
        Line("frames in flight", _count(frames.get("in_flight"))),
    ]
    if frames.get("conserved") is False:  # the core's own check failed: say so loudly
        broken = "VIOLATED: generated != delivered + dropped + in flight"
        lines.append(Line("conservation", broken, alert=True))
    latency = s.get("latency_s")
    if isinstance(latency, Mapping) and latency:
        text = f"mean {_num(latency.get('mean'))} s, max {_num(latency.get('max'))} s"
        lines.append(Line("latency", text))
    return lines


def _control_lines(s: Mapping[str, Any]) -> list[Line]:
    control = dict(s.get("control_frames", {}))
    bandwidth = control.pop("bandwidth_bps", None)
    control.pop("bytes", None)
    kinds = ", ".join(f"{k} {_count(v)}" for k, v in control.items() if v) or "none"
    if isinstance(bandwidth, int | float) and bandwidth:
        kinds += f" ({_rate(bandwidth)}b/s)"
    return [Line("control frames", kinds)]


def _pfc_lines(s: Mapping[str, Any]) -> list[Line]:
    """One line per PFC class: why it fired or not (the core words it)."""
    pfc = s.get("pfc")
    if not isinstance(pfc, Mapping):
        return []
    classes = pfc.get("classes", {})
    return [Line(f"pfc class {c}", str(v.get("why", ""))) for c, v in classes.items()]


def _flow_lines(s: Mapping[str, Any]) -> list[Line]:
    """Flows started/completed and FCT, with the realised size and load beside the asked."""
    f = s.get("flows")
    if not f:
        return []
    lines = [
        Line("flows", f"{_count(f.get('completed'))} of {_count(f.get('started'))} completed"),
        Line(
            "flow completion",
            f"mean {_seconds(f.get('fct_mean_s'))}, p50 {_seconds(f.get('fct_p50_s'))}, "
            f"p99 {_seconds(f.get('fct_p99_s'))}; slowdown {_num(f.get('slowdown_mean'))}",
        ),
    ]
    asked = f.get("requested_size_mean_bytes")
    if asked is not None:
        lines.append(
            Line(
                "flow workload",
                f"mean size {_num(f.get('size_mean_bytes'))} B (asked {_num(asked)}), "
                f"load {_num(f.get('load'))} (asked {_num(f.get('requested_load'))})",
            )
        )
    return lines


def _metric_lines(metrics: Mapping[str, Any]) -> list[Line]:
    lines = []
    for name, value in metrics.items():
        if isinstance(value, Mapping | list):
            continue  # tables belong in summary.json, not in a one-line summary
        lines.append(Line(name, "-" if value is None else _num(value)))
    return lines


def _outputs_text(out_dir: Path) -> str:
    names = [SCENARIO_FILE, SUMMARY_FILE, TIMESERIES_FILE]
    if (out_dir / FLOWS_FILE).exists():
        names.append(FLOWS_FILE)
    n_plots = len(list((out_dir / PLOTS_DIR).glob("*.png")))
    if n_plots:
        names.append(f"{PLOTS_DIR}/ ({n_plots} PNG)")
    return f"{out_dir}/  " + ", ".join(names)


def window_table(summary: Mapping[str, Any]) -> Table | None:
    """The window table (window_per_source.csv) with the window's totals as a caption."""
    rows = window_rows(summary)
    if not rows:
        return None
    w = summary["window"]
    title = f"window {w['start_s'] * 1e3:g}-{w['end_s'] * 1e3:g} ms, per source"
    table = Table(title=title)
    for column in ["source", "throughput (Gb/s)", "generated", "transmitted", "dropped at source"]:
        table.add_column(column, justify="left" if column == "source" else "right")
    for row in rows:
        table.add_row(
            str(row["source"]),
            f"{row['throughput_gbps']:.2f}",
            _count(row["frames_generated"]),
            _count(row["frames_transmitted"]),
            _count(row["frames_dropped_at_source"]),
        )
    table.caption = (
        f"frames generated {_count(w.get('frames_generated'))}, "
        f"received {_count(w.get('frames_received'))}; "
        f"fairness index {_num(w.get('fairness_index'))}"
    )
    return table


def _seconds(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value * 1e6:.1f} us" if value < 1e-3 else f"{value * 1e3:.3f} ms"


def _num(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return _count(value)
    return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3e}"


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _rate(value: Any) -> str:
    if not isinstance(value, int | float):
        return str(value)
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g}"


# ---------------------------------------------------------------- a sweep


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
        table.add_row(*[_table_number(row[c]) for c in shown])
    table.caption = f"{study.out_dir}/  table.csv, runs.parquet, sweep.toml, runs/<key>/"
    return table


def _table_number(value: Any) -> str:
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
