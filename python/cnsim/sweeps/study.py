"""Running a sweep: plan every run, skip the finished ones, execute the rest, tabulate.

Planning resolves every point through the core before anything runs, so a wrong parameter
path or value is reported at once, naming the point. A run's key is the SHA-256 of its
point's resolved scenario, its seed and the cnsim version: the same run never executes twice
into the same store, and a new cnsim version never reuses an old one's numbers.
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from cnsim import api
from cnsim.status import SweepStatusLines
from cnsim.sweeps.errors import SweepError
from cnsim.sweeps.execute import RunTask, outcomes
from cnsim.sweeps.keep import Keep
from cnsim.sweeps.paths import extract, scalar_paths
from cnsim.sweeps.result import SweepResult
from cnsim.sweeps.spec import RUN_COLUMNS, Point, SweepSpec, load_sweep, replication_seed
from cnsim.sweeps.store import AGGREGATE_FILE, POINT_TABLE_FILE, Store
from cnsim.sweeps.transient import TABLE_FILE as TRANSIENT_TABLE_FILE
from cnsim.sweeps.transient import transient_rule
from cnsim.terminal import ProgressBar, progress_bar

KEY_HEX_DIGITS = 16


@dataclass(frozen=True)
class PlannedRun:
    """One run of the study: its point, replication, seed, overrides and store key."""

    point: Point
    replication: int
    seed: int
    overrides: tuple[str, ...]
    key: str

    def task(self, base_toml: str, keep: Keep, series: bool = False) -> RunTask:
        """What a worker needs to execute it."""
        return RunTask(
            self.key, base_toml, self.overrides, self.seed, keep == Keep.full, keep_series=series
        )


def sweep(
    spec: SweepSpec | str | Path | Mapping[str, Any],
    *,
    out: str | Path | None = None,
    jobs: int | None = None,
    client: Any = None,
    keep: Keep | str = Keep.summary,
    progress: bool | SweepStatusLines = True,
) -> SweepResult:
    """Run a sweep (a spec, a sweep preset, a file, TOML text or a dict) and return its table.

    Runs execute on `jobs` local processes (default: every core this process may use), or on
    the Dask cluster of `client`. Results go to `out` (default runs/<sweep name>), where a
    later call finds and skips every finished run. `keep` says what stays per run: "summary"
    (summary.json), "full" (plus timeseries.parquet, for `timeseries_mean`) or "none" (only
    runs.parquet survives). `progress`: the progress bar (drawn on a terminal or in Jupyter),
    or a `cnsim.status.SweepStatusLines(every_s)` for plain status lines on stderr instead
    (`cnsim sweep --status-every`, for logs).

    `out` must be new, empty or a study's store (OutputError otherwise). A script calls this
    under `if __name__ == "__main__":`: the local pool's workers re-import it (SweepError,
    before any worker starts, when the call is outside the guard).
    """
    if out is not None and not str(out).strip():
        raise SweepError("out: empty directory name (give --out DIR; --out . is this folder)")
    spec = spec if isinstance(spec, SweepSpec) else load_sweep(spec)
    keep = Keep.parse(keep)
    _check_options(jobs, client)
    store = Store(out if out is not None else default_out_dir(spec))
    store.check_out_dir()  # before planning: a directory it must not write into fails at once
    runs = plan(spec)
    store.prepare(spec.to_toml(header=_provenance(spec)), spec.base_toml)
    distinct = unique(runs)
    series = spec.transient is not None
    todo = [run for run in distinct if not store.is_done(run.key, keep, series)]
    check = MetricCheck(spec)
    check.against_store(store, runs)
    reused = len(distinct) - len(todo)
    try:
        shown = _progress(progress, f"sweep {spec.name}", len(todo), reused=reused)
        _execute(spec, todo, store, check, jobs=jobs, client=client, keep=keep, shown=shown)
    except BaseException:
        store.write_table(runs_table(spec, runs, store))  # what finished stays findable
        store.drop_stale_figures()
        raise
    table = runs_table(spec, runs, store)
    store.write_table(table)
    store.drop_stale_figures()  # drawn from other results; `plot()` draws the current ones
    result = SweepResult(
        spec, table, store.root, keep=keep.value, executed=len(todo), reused=reused
    )
    if series:
        store.write_text(TRANSIENT_TABLE_FILE, result.transient_table().to_csv(index=False))
    if spec.table:
        store.write_text(POINT_TABLE_FILE, result.point_table().to_csv(index=False))
    elif not series:  # the per-point means and CIs the printed table shows, every column
        store.write_text(AGGREGATE_FILE, result.aggregate().to_csv(index=False))
    if keep == Keep.none:
        store.drop_runs([run.key for run in runs])
    return result


def _check_options(jobs: int | None, client: Any) -> None:
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise SweepError(f"jobs: expected an integer >= 1 (got {jobs!r})")
    if jobs is not None and client is not None:
        raise SweepError("jobs and a Dask client exclude each other (the cluster decides)")


def default_out_dir(spec: SweepSpec) -> Path:
    """runs/<sweep name>, with the name made safe for a path (as `cnsim run` does)."""
    return Path("runs") / (re.sub(r"[^A-Za-z0-9_.-]+", "_", spec.name).strip("._") or "sweep")


def _provenance(spec: SweepSpec) -> str:
    origin = spec.base or "the sweep's [scenario] table"
    return (
        f"Sweep {spec.name!r} as it ran (cnsim {run_version()}); base.toml is its base scenario,\n"
        f"copied from {origin}. `cnsim sweep sweep.toml --out .` (in this folder) resumes it."
    )


# ---------------------------------------------------------------- planning


def plan(spec: SweepSpec) -> list[PlannedRun]:
    """Every run of the sweep in point order, replications innermost; resolves each point."""
    version = run_version()
    runs = []
    for point in spec.points():
        overrides = spec.overrides(point)
        resolved = _resolve_point(spec, point, overrides)
        for replication in range(spec.replications):
            seed = replication_seed(spec.seed, point.params, replication)
            key = run_key(resolved, seed, version)
            runs.append(PlannedRun(point, replication, seed, overrides, key))
    return runs


def _resolve_point(spec: SweepSpec, point: Point, overrides: Sequence[str]) -> str:
    try:
        resolved = api.resolve(spec.base_toml, set=list(overrides))
    except api.ScenarioError as exc:
        raise api.ScenarioError(f"sweep point {describe(point)}: {exc}") from None
    if spec.transient is not None:  # a transient study reads each point's rule
        try:
            transient_rule(tomllib.loads(resolved))
        except SweepError as exc:
            raise SweepError(f"sweep point {describe(point)}: {exc}") from None
    return resolved


def describe(point: Point) -> str:
    """'3 (a=1, b=2)', for messages."""
    values = ", ".join(f"{k}={api.toml_literal(v)}" for k, v in point.params.items())
    return f"{point.index} ({values})" if values else str(point.index)


def run_version() -> str:
    """The version a run's key includes: the package's and the core's."""
    from cnsim import __version__

    return f"{__version__}+core{api.native_version()}"


def run_key(resolved_toml: str, seed: int, version: str) -> str:
    """SHA-256 of the point's resolved scenario, the seed and the version, in hex, truncated."""
    material = f"{resolved_toml}\n# seed = {seed}\n# cnsim = {version}\n"
    return hashlib.sha256(material.encode()).hexdigest()[:KEY_HEX_DIGITS]


def unique(runs: Iterable[PlannedRun]) -> list[PlannedRun]:
    """Runs with distinct keys, first occurrence kept."""
    first: dict[str, PlannedRun] = {}
    for run in runs:
        first.setdefault(run.key, run)
    return list(first.values())


# ---------------------------------------------------------------- executing


class MetricCheck:
    """Checks the metric paths against the first finished summary, then stays quiet."""

    def __init__(self, spec: SweepSpec) -> None:
        self.uses = spec.metric_uses()
        self.done = not self.uses

    def __call__(self, summary: Mapping[str, Any]) -> None:
        """SweepError naming the key of the first path the summary lacks (with close names),
        or of a plot or table column whose metric is text (it cannot be averaged)."""
        if self.done:
            return
        for use in self.uses:
            try:
                value = extract(summary, use.path)
            except KeyError as exc:
                raise SweepError(f"{use.key}: {exc.args[0]}") from None
            if use.numeric and isinstance(value, str):
                raise SweepError(
                    f"{use.key}: metric path {use.path!r} is text ({value!r}), not a number;"
                    f" {use.numeric} needs a numeric metric"
                )
        self.done = True

    def against_store(self, store: Store, runs: Sequence[PlannedRun]) -> None:
        """Check before running when an earlier call left a finished run."""
        for run in runs:
            if store.is_done(run.key, Keep.summary):
                self(store.summary(run.key))
                return


def _execute(
    spec: SweepSpec,
    todo: Sequence[PlannedRun],
    store: Store,
    check: MetricCheck,
    *,
    jobs: int | None,
    client: Any,
    keep: Keep,
    shown: AbstractContextManager[ProgressBar | SweepStatusLines],
) -> None:
    series = spec.transient is not None
    tasks = {run.key: run.task(spec.base_toml, keep, series) for run in todo}
    with shown as bar:  # counts the outcomes of every backend alike
        stream = outcomes(list(tasks.values()), jobs=jobs, client=client)
        try:
            for outcome in stream:
                record = outcome.record(tasks[outcome.key])
                store.write_run(
                    record, outcome.summary, outcome.timeseries, outcome.series, outcome.flows
                )
                if outcome.summary is not None:
                    check(outcome.summary)
                bar.advance(failed=outcome.status != "ok")
        finally:
            stream.close()  # cancels what has not started


def _progress(
    progress: bool | SweepStatusLines, title: str, todo: int, *, reused: int
) -> AbstractContextManager[ProgressBar | SweepStatusLines]:
    """What counts the finished runs as outcomes come back (from this process, the local
    pool or Dask alike): the progress bar of the `todo` runs, or status lines counting all
    runs, the `reused` ones done from the start."""
    if isinstance(progress, SweepStatusLines):
        return progress.counting(todo + reused, reused=reused)
    return progress_bar(title, total=todo, enabled=progress)


# ---------------------------------------------------------------- the table


def runs_table(spec: SweepSpec, runs: Sequence[PlannedRun], store: Store) -> pd.DataFrame:
    """One row per run: point, parameters, replication, seed, bookkeeping, metrics."""
    summaries = {run.key: _summary(store, run.key) for run in runs}
    metrics = list(spec.collected()) or default_metrics(summaries.values())
    rows = [_row(spec, run, store.record(run.key), summaries[run.key], metrics) for run in runs]
    columns = ["point", *spec.parameters, *RUN_COLUMNS[1:], *metrics]
    table = pd.DataFrame(rows, columns=columns)
    return table.apply(tidy_column) if len(table) else table


def _summary(store: Store, key: str) -> dict[str, Any] | None:
    return store.summary(key) if store.is_done(key, Keep.summary) else None


def default_metrics(summaries: Iterable[dict[str, Any] | None]) -> list[str]:
    """Without a metrics list: every scalar of summary["metrics"] some run reported."""
    found: dict[str, None] = {}
    for summary in summaries:
        if summary is not None:
            found.update(dict.fromkeys(scalar_paths(summary.get("metrics", {}), ("metrics",))))
    return list(found)


def _row(
    spec: SweepSpec,
    run: PlannedRun,
    record: Mapping[str, Any] | None,
    summary: Mapping[str, Any] | None,
    metrics: Sequence[str],
) -> dict[str, Any]:
    record = record or {"status": "pending"}
    row: dict[str, Any] = {"point": run.point.index}
    row.update({path: _cell(run.point.params[path]) for path in spec.parameters})
    row.update(
        replication=run.replication,
        seed=run.seed,
        key=run.key,
        status=record.get("status"),
        error=record.get("error"),
        elapsed_s=record.get("elapsed_s", math.nan),
        worker=record.get("worker"),
        warnings="; ".join(record.get("warnings") or []),
    )
    row.update({path: _metric(summary, path) for path in metrics})
    return row


def _metric(summary: Mapping[str, Any] | None, path: str) -> Any:
    if summary is None:
        return None
    try:
        return extract(summary, path)
    except KeyError:
        return None  # checked on the first run; a later run may lack an optional entry


def _cell(value: Any) -> Any:
    """A parameter value as a table cell: scalars as they are, lists and tables as TOML."""
    return value if isinstance(value, int | float | str | bool) else api.toml_literal(value)


def tidy_column(column: pd.Series) -> pd.Series:
    """Numbers as a numeric column (None as NaN); a column mixing kinds as text for Parquet."""
    values = [v for v in column if v is not None and not _is_nan(v)]
    kinds = {type(v) for v in values}
    if kinds and kinds <= {int, float}:
        return pd.to_numeric(column)
    if len({bool if k is bool else (float if k in (int, float) else k) for k in kinds}) > 1:
        return column.map(lambda v: None if v is None else str(v))
    return column


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
