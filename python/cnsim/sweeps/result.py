"""`SweepResult`: a study's runs table and the statistics the seeds plot from it.

The table (one row per run) is the primary result; everything else is derived from it or
from the per-run files of the store, so a study loaded from disk (`SweepResult.load`) answers
the same questions as the one just run.
"""

from __future__ import annotations

import math
import shlex
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from cnsim import analysis, api
from cnsim.sweeps import transient
from cnsim.sweeps.errors import SweepError
from cnsim.sweeps.spec import RUN_COLUMNS, Point, SweepSpec, TransientStudy, load_sweep
from cnsim.sweeps.store import BASE_FILE, PLOTS_DIR, SPEC_FILE, TABLE_FILE, Store

# Student's t, 97.5 % quantile, for 1..30 degrees of freedom (the 95 % two-sided interval).
T975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)  # fmt: skip
Z975 = 1.959963984540054

# The [report] windows whose statistics need enough probe samples (analysis.few_sample_warnings).
WINDOW_SPECS = ("steady", "transient")
# A transient study's point: its [report.transient] rule, replications averaged, the transient.
PointTransient = tuple[dict[str, Any], int, "analysis.Transient | None"]


def t975(dof: int) -> float:
    """Student's t 97.5 % quantile; Cornish-Fisher expansion beyond the table (error < 1e-4)."""
    if dof < 1:
        return math.nan
    if dof <= len(T975):
        return T975[dof - 1]
    z = Z975
    return (
        z
        + (z**3 + z) / (4 * dof)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * dof**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * dof**3)
    )


def ci95(std: float, n: int) -> float:
    """Half-width of the 95 % confidence interval of a mean of n samples: t * std / sqrt(n)."""
    return t975(n - 1) * std / math.sqrt(n) if n > 1 else math.nan


class SweepResult:
    """A study: `runs` (one row per run), the `spec` it came from and its store `out_dir`."""

    def __init__(
        self,
        spec: SweepSpec,
        runs: pd.DataFrame,
        out_dir: str | Path,
        *,
        keep: str | None = None,
        executed: int = 0,
        reused: int = 0,
    ) -> None:
        self.spec = spec
        self.runs = runs
        self.out_dir = Path(out_dir)
        self.keep = keep
        self.executed = executed  # runs this call executed
        self.reused = reused  # runs this call found finished in the store
        self._transients: dict[int, PointTransient] | None = None

    @classmethod
    def load(cls, out_dir: str | Path) -> SweepResult:
        """Read a study directory written by `cnsim.sweep` (its sweep.toml and runs.parquet).

        FileNotFoundError saying so when `out_dir` is no study, or one interrupted before it
        wrote its table (killed, say): the same `cnsim sweep` command resumes that one."""
        out_dir = Path(out_dir)
        check_study_dir(out_dir)
        spec = load_sweep(out_dir / SPEC_FILE)
        return cls(spec, pd.read_parquet(out_dir / TABLE_FILE), out_dir)

    # ------------------------------------------------------------ the table

    @property
    def parameters(self) -> list[str]:
        """Swept parameter paths (columns of `runs`)."""
        return self.spec.parameters

    @property
    def metrics(self) -> list[str]:
        """Collected metric paths (the remaining columns of `runs`)."""
        fixed = {"point", *RUN_COLUMNS, *self.parameters}
        return [c for c in self.runs.columns if c not in fixed]

    @property
    def ok(self) -> pd.DataFrame:
        """Rows of the runs that finished."""
        return self.runs[self.runs["status"] == "ok"]

    @property
    def failed(self) -> pd.DataFrame:
        """Rows of the runs that raised; `error` says why."""
        return self.runs[self.runs["status"] == "error"]

    def few_samples(self) -> dict[int, tuple[int, frozenset[str]]]:
        """Per point with any: how many of its finished runs had a steady or transient window
        of too few probe samples (`cnsim.analysis.FEW_SAMPLES` in their warnings), and which
        windows ("steady", "transient")."""
        found: dict[int, tuple[int, frozenset[str]]] = {}
        for point, group in self.ok.groupby("point", sort=True):
            texts = [str(w) for w in group["warnings"].fillna("") if analysis.FEW_SAMPLES in w]
            if texts:
                marks = {key: f"[report].{key}: {analysis.FEW_SAMPLES}" for key in WINDOW_SPECS}
                keys = frozenset(key for key, mark in marks.items() for t in texts if mark in t)
                found[cast(int, point)] = (len(texts), keys)  # the point column holds ints
        return found

    def aggregate(self, metrics: Sequence[str] | None = None) -> pd.DataFrame:
        """Per point and numeric metric: n, mean, std (n-1) and ci95 over the finished runs.

        Long format, one row per (point, metric), with the point's parameters as columns;
        ci95 is the half-width of the 95 % confidence interval of the mean (Student's t).
        """
        names = [m for m in (metrics or self.metrics) if _numeric(self.runs, m)]
        rows = []
        for point, group in self.runs.groupby("point", sort=True):
            params = {str(k): v for k, v in group.iloc[0][self.parameters].to_dict().items()}
            ok = group[group["status"] == "ok"]
            for metric in names:
                rows.append({"point": point, **params, "metric": metric, **_stats(ok[metric])})
        columns = ["point", *self.parameters, "metric", "n", "mean", "std", "ci95"]
        return pd.DataFrame(rows, columns=columns)

    def point_table(self) -> pd.DataFrame:
        """The [sweep.table] (what DIR/table.csv holds): one row per point, `point`, then each
        column's metric averaged over the point's finished replications (or, for a column that
        names a swept parameter, the point's value or its [sweep.names] name), then `n`; with
        a [sweep.fluid] table, then the senders' rates and the fluid fixed point's columns
        (`cnsim.sweeps.fluid.add_columns`).
        """
        rows = []
        ok = self.ok
        for point in self.spec.points():
            runs = ok[ok["point"] == point.index]
            row: dict[str, Any] = {"point": point.index}
            for column, path in self.spec.table.items():
                if path in point.params:
                    row[column] = self.spec.value_name(path, point.params[path])
                    continue
                values = pd.to_numeric(runs[path], errors="coerce") if len(runs) else runs[path]
                row[column] = float(values.mean()) if len(values) else math.nan
            row["n"] = len(runs)
            rows.append(row)
        table = pd.DataFrame(rows, columns=["point", *self.spec.table, "n"])
        if self.spec.fluid is not None:
            from cnsim.sweeps.fluid import add_columns  # the fluid models only when asked

            table = add_columns(self, table)
        return table

    # ------------------------------------------------------------ time series

    def timeseries_mean(self, metric: str, entities: analysis.Patterns = None) -> pd.DataFrame:
        """Per point, the replication mean of `metric` summed over `entities` (globs ok).

        Index time_s, one column per point: the averaged series that seed 001's initial data
        deletion works on. Needs the runs' time series (`keep="full"`).
        """
        columns = {}
        for point, group in self.ok.groupby("point", sort=True):
            series = [self._aggregate_series(key, metric, entities) for key in group["key"]]
            columns[point] = analysis.replication_mean(series)
        table = pd.DataFrame(columns)
        table.columns.name = "point"
        return table

    def fct_slowdown_by_size(
        self, edges: Sequence[float] | None = None, buckets: int = 10
    ) -> pd.DataFrame:
        """Per point (its replications' flows pooled) and flow-size bucket, the slowdown table
        of `cnsim.flow_sizes` with `point`, `label` (the point's parameters) and the
        parameters as columns; every point on the same buckets: `edges` (bytes, cut as
        `Result.fct_slowdown_by_size` and `[report] slowdown_size_edges_bytes` cut them: k
        edges make k + 1 buckets and every flow is in one), or equal-count buckets of all the
        points' flow sizes. Needs the runs' flows (`keep="full"`)."""
        from cnsim.flow_sizes import size_edges, slowdown_by_size, summary_edges

        pooled = {}
        for point, group in self.ok.groupby("point", sort=True):
            frames = [self._flows(key) for key in group["key"]]
            pooled[cast(int, point)] = pd.concat(frames, ignore_index=True)
        if edges is None:
            sizes = [f["size_bytes"] for f in pooled.values()]
            edges = list(size_edges(pd.concat(sizes) if sizes else [], buckets))
        else:
            edges = summary_edges(edges)
        tables = []
        for point, flows in pooled.items():
            params = self._params(point)
            label = ", ".join(f"{k}={v}" for k, v in params.items() if k != "point")
            table = slowdown_by_size(flows, edges).reset_index()
            table.insert(0, "label", label or f"point {point}")
            for name, value in reversed(list(params.items())):
                table.insert(0, name, value)
            tables.append(table)
        return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()

    def _flows(self, key: str) -> pd.DataFrame:
        path = Store(self.out_dir).flows_path(key)
        if not path.is_file():
            raise SweepError(
                f"run {key} kept no flows; run the sweep with keep='full' (--keep full) on a"
                " scenario with a flow workload"
            )
        return pd.read_parquet(path)

    def transient_durations(
        self, metric: str = "host_rx_bps", entities: analysis.Patterns = None, **kwargs: Any
    ) -> pd.DataFrame:
        """Per point, the transient of the replication-averaged series (seed 001's method).

        `kwargs` go to `cnsim.analysis.transient_duration` (start_s, end_s, method...).
        """
        means = self.timeseries_mean(metric, entities)
        rows = []
        for point in means.columns:
            found = analysis.transient_duration(means[point].dropna(), **kwargs)
            rows.append(
                {
                    **self._params(int(point)),
                    "n": int((self.ok["point"] == point).sum()),
                    "transient_duration_s": found.duration_s,
                    "transient_end_s": found.end_s,
                }
            )
        columns = ["point", *self.parameters, "n", "transient_duration_s", "transient_end_s"]
        return pd.DataFrame(rows, columns=columns)

    # ------------------------------------------------------------ transient study (seed 001)

    def transient_table(self) -> pd.DataFrame:
        """A transient study's table (what DIR/transient.csv holds): one row per point.

        Columns: point, the [sweep.transient] columns, n (finished replications averaged),
        transient_s, transient_rtt, settled, knee_s, flat_s, transient_end_s, rtt_s and the
        knee method (`cnsim.sweeps.transient.table_row` defines each). Each point's series are
        averaged over its replications and analysed with the point's own [report.transient]
        rule (`cnsim.analysis.transient_duration`).
        """
        study = self._transient_study()
        rows = [
            transient.table_row(study, point, rule, n, found)
            for point, (rule, n, found) in self.transients().items()
        ]
        return pd.DataFrame(rows, columns=transient.table_columns(study))

    def transients(self) -> dict[int, PointTransient]:
        """Per point: its [report.transient] rule, replications averaged, and the transient
        found on their mean (None when no run of the point finished). Computed once."""
        if self._transients is None:
            self._transient_study()
            found: dict[int, PointTransient] = {}
            ok = self.ok
            for point in self.spec.points():
                rule = transient.transient_rule(self._point_scenario(point))
                keys = ok.loc[ok["point"] == point.index, "key"].tolist()
                series = [self._transient_series(key, rule) for key in keys]
                result = transient.find_transient(rule, series) if series else None
                found[point.index] = (rule, len(series), result)
            self._transients = found
        return self._transients

    def _transient_study(self) -> TransientStudy:
        if self.spec.transient is None:
            raise SweepError("not a transient study: the sweep has no [sweep.transient] table")
        return self.spec.transient

    def _point_scenario(self, point: Point) -> dict[str, Any]:
        return tomllib.loads(api.resolve(self.spec.base_toml, set=list(self.spec.overrides(point))))

    def _transient_series(self, key: str, rule: dict[str, Any]) -> pd.Series:
        """A run's stored aggregate series, else the sum from its full time series."""
        store = Store(self.out_dir)
        if store.series_path(key).is_file():
            return transient.read_series(str(store.series_path(key)))
        return self._aggregate_series(key, rule["metric"], rule["entities"] or None)

    def _aggregate_series(self, key: str, metric: str, entities: analysis.Patterns) -> pd.Series:
        path = Store(self.out_dir).timeseries_path(key)
        if not path.is_file():
            raise SweepError(
                f"run {key} kept no time series; run the sweep with keep='full' (--keep full)"
            )
        return analysis.aggregate(pd.read_parquet(path), metric, entities)

    def _params(self, point: int) -> dict[str, Any]:
        row = self.runs[self.runs["point"] == point].iloc[0]
        return {"point": point, **{str(k): v for k, v in row[self.parameters].to_dict().items()}}

    # ------------------------------------------------------------ runs one by one

    def summary(self, key: str) -> dict[str, Any]:
        """A run's summary.json (kept unless keep="none")."""
        return Store(self.out_dir).summary(key)

    def command(self, key: str) -> str:
        """The `cnsim run` command line that repeats one run of the study exactly."""
        row = self.runs[self.runs["key"] == key]
        if row.empty:
            raise KeyError(f"no run {key!r} in this study")
        point = self.spec.points()[int(row.iloc[0]["point"])]
        return run_command(self.out_dir / BASE_FILE, int(row.iloc[0]["seed"]), self.spec, point)

    # ------------------------------------------------------------ figures

    def plot(self, out_dir: str | Path | None = None, *, dpi: int | None = None) -> list[Path]:
        """Draw the [[sweep.plots]] (or one mean plot per metric) as PNGs; return their paths.

        Into the study's own `plots/` (no `out_dir`), the figures are recorded in
        plots/figures.json, and those an earlier call drew and this one does not are removed
        (other files there are left alone), so the folder never shows a stale figure of the
        study as current. `dpi` defaults to the run figures' (`cnsim.plots.DPI`).
        """
        from cnsim.plots import DPI
        from cnsim.plots.sweep import make_sweep_plots

        if out_dir is not None:
            return make_sweep_plots(self, Path(out_dir), dpi=dpi or DPI)
        drawn = make_sweep_plots(self, self.out_dir / PLOTS_DIR, dpi=dpi or DPI)
        Store(self.out_dir).record_figures(drawn)  # and drops the figures it drew before
        return drawn

    def figures(self) -> list[Path]:
        """The PNGs `plot()` drew into the study's plots/ from its current sweep.toml and
        runs.parquet; [] when there are none or the results changed since (a re-run with
        --no-plots). Files in plots/ the study did not draw are never among them."""
        return Store(self.out_dir).current_figures()

    def _repr_html_(self) -> str:
        """The notebook view: runs, per-point statistics and the figures `plot()` drew."""
        from cnsim import notebook

        return notebook.sweep_html(self)

    def __repr__(self) -> str:
        counts = self.runs["status"].value_counts().to_dict()
        return f"<cnsim.SweepResult {self.spec.name!r} runs={counts} out_dir={str(self.out_dir)!r}>"


def check_study_dir(folder: Path) -> None:
    """FileNotFoundError with what to do, when `folder` holds no study's table."""
    if (folder / TABLE_FILE).is_file():
        return
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such directory")
    if not ((folder / SPEC_FILE).is_file() and (folder / BASE_FILE).is_file()):
        raise FileNotFoundError(f"{folder}: not a cnsim sweep directory (no {TABLE_FILE})")
    raise FileNotFoundError(
        f"{folder}: the sweep was interrupted before it wrote {TABLE_FILE}; run the same "
        f"`cnsim sweep` command again (or `cnsim sweep {folder / SPEC_FILE} --out {folder}`) "
        "to resume it: its finished runs are kept"
    )


def run_command(base: Path, seed: int, spec: SweepSpec, point: Point) -> str:
    """`cnsim run BASE --seed S --set PATH=VALUE ...`, quoted for a POSIX shell."""
    sets = " ".join(f"--set {shlex.quote(item)}" for item in spec.overrides(point))
    return f"cnsim run {shlex.quote(str(base))} --seed {seed} {sets}".rstrip()


def _numeric(runs: pd.DataFrame, column: str) -> bool:
    return column in runs and pd.api.types.is_numeric_dtype(runs[column])


def _stats(values: pd.Series) -> dict[str, Any]:
    x = values.dropna().to_numpy(dtype=float)
    n = int(x.size)
    mean = float(np.mean(x)) if n else math.nan
    std = float(np.std(x, ddof=1)) if n > 1 else math.nan
    return {"n": n, "mean": mean, "std": std, "ci95": ci95(std, n)}
