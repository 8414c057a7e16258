"""`Result`: one finished run as pandas tables, ready to analyse, plot and save.

The native module hands over columnar arrays; this class turns them into one long DataFrame
(categorical `metric`/`entity`, so a million rows cost little) and never into per-row Python
objects. A saved run directory loads back into the same class.

The DataFrames are built on first use: a run that is only saved (`cnsim run`) writes its Parquet
files from the native columns through pyarrow and never imports pandas, which costs more start-up
time than a small simulation (performance.md, issue 12).
"""

from __future__ import annotations

import json
import tomllib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from cnsim import analysis

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from matplotlib.figure import Figure

    from cnsim.fluid.beside import Fluid
    from cnsim.stream import StoredTable

TIMESERIES_COLUMNS = ("time_s", "metric", "entity", "value")
FLOW_COLUMNS = (
    "flow_id",
    "src",
    "dst",
    "size_bytes",
    "priority",
    "start_s",
    "end_s",
    "fct_s",
    "ideal_fct_s",
    "slowdown",
    "completed",
    "frames_dropped",
    "delivered_bytes",
    "retransmitted_bytes",
    "timeouts",
    "goodput_bps",
    "sender_end_s",
)
CATEGORICAL_FLOW_COLUMNS = ("src", "dst")


class Result:
    """A finished run: `summary` (dict), `scenario_toml` (resolved) and `timeseries`.

    `timeseries` is long format with columns time_s, metric, entity, value; `series()` gives
    the wide view of one metric. `summary["metrics"]` holds the scalar results (Rust's plus
    those of `cnsim.analysis.compute_metrics`).
    """

    def __init__(
        self,
        summary: Mapping[str, Any],
        scenario_toml: str,
        timeseries: pd.DataFrame | NativeTimeseries | StoredTable,
        *,
        flows: pd.DataFrame | NativeFlows | StoredTable | None = None,
        add_metrics: bool = True,
    ) -> None:
        self.summary: dict[str, Any] = dict(summary)
        self.scenario_toml = scenario_toml
        # Each table is held as a DataFrame, or as the native columns until the DataFrame is
        # first asked for (`from_native`); once built, the DataFrame is what `save` writes.
        self._timeseries: pd.DataFrame | None = None
        # A streamed run's tables are its files (`cnsim.stream.StoredTable`), read on first use.
        self._native_timeseries: NativeTimeseries | StoredTable | None = None
        if _is_native(timeseries):
            self._native_timeseries = timeseries  # type: ignore[assignment]
        else:
            self._timeseries = timeseries  # type: ignore[assignment]
        self._flows: pd.DataFrame | None = None
        self._native_flows: NativeFlows | StoredTable | None = None
        if _is_native(flows):
            self._native_flows = flows  # type: ignore[assignment]
        else:
            self._flows = flows if flows is not None else flows_frame(None, [])  # type: ignore[assignment]
        self.summary.setdefault("metrics", {})
        # What the analysis warned about (a skipped spec, a window of too few samples): shown
        # with the run's lines (terminal, notebook) as well as raised as Python warnings.
        self.warnings: list[str] = []
        if add_metrics:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                computed = analysis.compute_metrics(self)
            self.warnings = [str(w.message) for w in caught]
            for w in caught:  # to the caller's filters, as if never caught
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            for name, value in computed.items():
                # The core's own metrics win: one definition per name.
                self.summary["metrics"].setdefault(name, value)

    @classmethod
    def from_native(
        cls,
        raw: Mapping[str, Any],
        streamed: tuple[StoredTable, StoredTable | None, list[str]] | None = None,
    ) -> Result:
        """Build from the dict `cnsim._native.run` returns; `streamed`: the time series and
        flows of a streamed run, as written (`cnsim.stream`), and the host names."""
        summary = json.loads(raw["summary_json"])
        resolved = raw["resolved_toml"]
        if streamed is not None:
            return cls(summary, resolved, streamed[0], flows=_streamed_flows(raw, *streamed[1:]))
        timeseries = NativeTimeseries.from_native(raw["timeseries"])
        native_flows = raw.get("flows")
        flows = None
        parsed: dict[str, Any] | None = None
        if native_flows is not None:
            # Parsed once, for the host names and as `scenario` (a 100k-host fabric's resolved
            # TOML is 18 MB: seconds of tomllib each time).
            parsed = tomllib.loads(resolved)
            hosts = [h["name"] for h in parsed.get("hosts", [])]
            flows = NativeFlows.from_native(native_flows, hosts)
        result = cls.__new__(cls)
        if parsed is not None:
            result.__dict__["scenario"] = parsed  # the cached_property's slot
        result.__init__(summary, resolved, timeseries, flows=flows)  # type: ignore[misc]
        return result

    @classmethod
    def load(cls, run_dir: str | Path) -> Result:
        """Read a run directory written by `save` (metrics are already in its summary)."""
        import pandas as pd

        run_dir = Path(run_dir)
        summary = json.loads((run_dir / "summary.json").read_text())
        scenario_toml = (run_dir / "scenario.toml").read_text()
        timeseries = _as_built(pd.read_parquet(run_dir / "timeseries.parquet"))
        flows_file = run_dir / "flows.parquet"
        flows = _as_built(pd.read_parquet(flows_file)) if flows_file.exists() else None
        loaded = cls(summary, scenario_toml, timeseries, flows=flows, add_metrics=False)
        loaded.warnings = analysis.few_sample_warnings(loaded)  # the summary cannot hold them
        return loaded

    @property
    def timeseries(self) -> pd.DataFrame:
        """Long format: time_s, metric (categorical), entity (categorical), value."""
        if self._timeseries is None:
            assert self._native_timeseries is not None  # one of the two is always set
            self._timeseries = self._native_timeseries.frame()
        return self._timeseries

    @timeseries.setter
    def timeseries(self, frame: pd.DataFrame) -> None:
        self._timeseries, self._native_timeseries = frame, None

    @property
    def flows(self) -> pd.DataFrame:
        """One row per started flow (FLOW_COLUMNS); empty when the run had no flow workload."""
        if self._flows is None:
            assert self._native_flows is not None  # one of the two is always set
            self._flows = self._native_flows.frame()
        return self._flows

    @flows.setter
    def flows(self, frame: pd.DataFrame) -> None:
        self._flows, self._native_flows = frame, None

    def timeseries_table(self) -> pa.Table:
        """The time series as a pyarrow Table, as `save` writes it (metric and entity
        dictionary-encoded, so pandas reads them back as categoricals). Built from the native
        columns unless the DataFrame exists: then the DataFrame, as the user may have seen or
        changed it, is what is written."""
        if self._timeseries is None and self._native_timeseries is not None:
            return self._native_timeseries.arrow()
        return _arrow_from_pandas(self.timeseries)

    def stored_in(self, folder: Path) -> set[str]:
        """The files of `folder` this result's tables were streamed to (`outputs` does not
        write them again)."""
        from cnsim.stream import StoredTable

        stored = (self._native_timeseries, self._native_flows)
        return {t.name for t in stored if isinstance(t, StoredTable) and t.path.parent == folder}

    def flows_table(self) -> pa.Table | None:
        """The flows as a pyarrow Table (src and dst dictionary-encoded), or None when the run
        started no flow; built like `timeseries_table`."""
        if self._flows is None and self._native_flows is not None:
            return self._native_flows.arrow() if len(self._native_flows) else None
        return _arrow_from_pandas(self.flows) if len(self.flows) else None

    @cached_property
    def scenario(self) -> dict[str, Any]:
        """The resolved scenario as a dict (parsed once)."""
        return tomllib.loads(self.scenario_toml)

    @property
    def name(self) -> str:
        """Scenario name, as the summary reports it."""
        return str(self.summary.get("scenario") or self.scenario.get("name") or "run")

    @property
    def metrics(self) -> dict[str, Any]:
        """Scalar results: fairness index, recovery time, transient duration, peaks..."""
        metrics: dict[str, Any] = self.summary["metrics"]
        return metrics

    @property
    def metric_names(self) -> list[str]:
        """Metrics present in the time series."""
        return analysis.observed(self.timeseries["metric"])

    def series(self, metric: str, entities: analysis.Patterns = None) -> pd.DataFrame:
        """Wide table of one metric: index time_s, one column per entity. `entities`: a glob
        pattern (`"ep*"`) or a list of them (`["ep1", "core->*"]`); none: every entity."""
        return analysis.wide(self.timeseries, metric, entities)

    @property
    def per_source(self) -> pd.DataFrame:
        """One row per host over the whole run (summary `per_source`), index `host`."""
        return _table(self.summary.get("per_source"), "host")

    @property
    def per_port(self) -> pd.DataFrame:
        """One row per switch output port over the whole run (summary `per_port`), index
        `port`."""
        return _table(self.summary.get("per_port"), "port")

    @property
    def per_switch(self) -> pd.DataFrame:
        """One row per switch (summary `per_switch`), index `switch`."""
        return _table(self.summary.get("per_switch"), "switch")

    @property
    def window_per_source(self) -> pd.DataFrame:
        """Per host over `[report].window_s` (summary `window.per_source`); empty without a
        window."""
        window = self.summary.get("window") or {}
        return _table(window.get("per_source"), "host")

    def fct_slowdown_by_size(
        self,
        edges: Sequence[float] | None = None,
        buckets: int = 10,
        method: Literal["linear", "inverted_cdf"] = "linear",
    ) -> pd.DataFrame:
        """FCT slowdown per flow-size bucket: edges, flows started and completed, p50/p95/p99
        (`cnsim.flow_sizes`). `edges` (bytes) cut the sizes as `[report]
        slowdown_size_edges_bytes` does: k edges make k + 1 buckets, from 0 to above the last
        edge, so every flow is in one (the summary's `flows.slowdown_by_size`). Without
        `edges`: `buckets` buckets of equal flow counts. `method` is the percentile's:
        "inverted_cdf" is the summary's nearest rank, and then the numbers are the summary's."""
        from cnsim.flow_sizes import slowdown_by_size, summary_edges

        cuts = None if edges is None else summary_edges(edges)
        return slowdown_by_size(self.flows, cuts, buckets, method)

    @property
    def figure_names(self) -> list[str]:
        """The figures this run has (`figure(name)`, the PNGs `save` writes)."""
        from cnsim import plots

        return plots.figure_names(self)

    def figure(self, name: str) -> Figure:
        """One of the run's figures as a matplotlib Figure (no file written); in a notebook
        it displays itself. KeyError names the figures there are."""
        from cnsim import notebook, plots, terminal

        if terminal.in_jupyter():
            notebook.show_figures_inline()
        return plots.figure(self, name)

    def fluid(self, duration_s: float | None = None) -> Fluid:
        """The scheme's fluid model beside this run (`cnsim.fluid.beside`): parameters read
        from the resolved scenario, fixed point, time course over the run, the comparison
        (`.comparison(result)`), figures with it drawn (`cnsim.fluid.show.figure`).
        `cnsim.fluid.beside.FluidUnsupported` names why a scenario is not covered."""
        from cnsim.fluid.beside import fluid_of

        return fluid_of(self.scenario, duration_s=duration_s)

    def _repr_html_(self) -> str:
        """The notebook view: headline numbers, the per-source and per-port tables and the
        figures inline."""
        from cnsim import notebook

        return notebook.result_html(self)

    def save(self, out_dir: str | Path, plots: bool = True) -> Path:
        """Write the output contract (architecture.md, Outputs) to `out_dir` and return it."""
        from cnsim import outputs

        return outputs.write_run(self, out_dir, plots=plots)

    def __repr__(self) -> str:
        sim = self.summary.get("sim_time_s")
        return (
            f"<cnsim.Result {self.name!r} seed={self.summary.get('seed')} sim_time_s={sim} "
            f"rows={len(self.timeseries)} metrics={self.metric_names}>"
        )


def _streamed_flows(
    raw: Mapping[str, Any], stored: StoredTable | None, hosts: list[str]
) -> StoredTable | NativeFlows | None:
    """A streamed run's flows: its file, or when no flow started the native columns, empty,
    as an in-memory run has them (no pandas needed for an empty table)."""
    native = raw.get("flows")
    if stored is None and native is not None:
        return NativeFlows.from_native(native, hosts)
    return stored


def _is_native(table: object) -> bool:
    """Columns not yet a DataFrame: the native module's, or a streamed run's file."""
    from cnsim.stream import StoredTable

    return isinstance(table, NativeTimeseries | NativeFlows | StoredTable)


def _table(rows: Any, index_name: str) -> pd.DataFrame:
    """A summary map {name: {field: value}} as a DataFrame, one row per name."""
    import pandas as pd

    if not isinstance(rows, Mapping) or not rows:
        return pd.DataFrame(index=pd.Index([], name=index_name, dtype=object))
    frame = pd.DataFrame.from_dict(dict(rows), orient="index")
    frame.index.name = index_name
    return frame


def _as_built(frame: pd.DataFrame) -> pd.DataFrame:
    """A table read from Parquet with its categoricals as a run builds them (categories of
    object dtype; pandas reads them back as its string dtype), so that a loaded run's tables
    `.equals()` the ones the run had."""
    import pandas as pd

    for column in frame.columns:
        dtype = frame[column].dtype
        if isinstance(dtype, pd.CategoricalDtype) and dtype.categories.dtype != object:
            codes = frame[column].cat.codes.to_numpy()
            frame[column] = _categorical(codes, [str(c) for c in dtype.categories])
    return frame


def _arrow_from_pandas(frame: pd.DataFrame) -> pa.Table:
    """A DataFrame as `DataFrame.to_parquet(index=False)` converts it before writing."""
    import pyarrow as pa

    return pa.Table.from_pandas(frame, preserve_index=False)


@dataclass(frozen=True)
class NativeTimeseries:
    """The time series as the native module hands it over: numpy columns TIMESERIES_COLUMNS,
    `metric` and `entity` as codes into `metrics` and `entities`. `frame()` and `arrow()` give
    the same table (a test compares them through Parquet)."""

    columns: Mapping[str, np.ndarray]
    metrics: list[str]
    entities: list[str]

    @classmethod
    def from_native(cls, native: Mapping[str, Any]) -> NativeTimeseries:
        """Checked columns: unequal lengths or an out-of-range code are native bugs, so raise."""
        columns = {name: np.asarray(native[name]) for name in TIMESERIES_COLUMNS}
        lengths = {name: len(col) for name, col in columns.items()}
        if len(set(lengths.values())) != 1:
            raise RuntimeError(f"native time series columns differ in length: {lengths}")
        metrics, entities = list(native["metrics"]), list(native["entities"])
        columns["time_s"] = columns["time_s"].astype(np.float64, copy=False)
        columns["metric"] = _codes(columns["metric"], metrics)
        columns["entity"] = _codes(columns["entity"], entities)
        columns["value"] = columns["value"].astype(np.float64, copy=False)
        return cls(columns, metrics, entities)

    def __len__(self) -> int:
        return len(self.columns["time_s"])

    def frame(self) -> pd.DataFrame:
        """Long DataFrame; metric/entity codes become categoricals."""
        import pandas as pd

        c = self.columns
        return pd.DataFrame(
            {
                "time_s": c["time_s"],
                "metric": _categorical(c["metric"], self.metrics),
                "entity": _categorical(c["entity"], self.entities),
                "value": c["value"],
            }
        )

    def arrow(self) -> pa.Table:
        """The pyarrow Table `frame()` converts to, built without pandas."""
        import pyarrow as pa

        c = self.columns
        return pa.table(
            {
                "time_s": _arrow_array(c["time_s"]),
                "metric": _dictionary(c["metric"], self.metrics),
                "entity": _dictionary(c["entity"], self.entities),
                "value": _arrow_array(c["value"]),
            }
        )


@dataclass(frozen=True)
class NativeFlows:
    """The flows as the native module hands them over: numpy columns (FLOW_COLUMNS but
    `slowdown`), `src` and `dst` as codes into `hosts` (scenario order)."""

    columns: Mapping[str, np.ndarray]
    hosts: list[str]

    @classmethod
    def from_native(cls, native: Mapping[str, Any], hosts: list[str]) -> NativeFlows:
        """Checked columns, with `slowdown` = FCT / the FCT alone on an idle network (NaN for a
        flow that did not complete)."""
        columns = {c: np.asarray(native[c]) for c in FLOW_COLUMNS if c in native}
        lengths = {name: len(col) for name, col in columns.items()}
        if len(set(lengths.values())) > 1:
            raise RuntimeError(f"native flow columns differ in length: {lengths}")
        for name in CATEGORICAL_FLOW_COLUMNS:
            columns[name] = _codes(columns[name], hosts)
        with np.errstate(divide="ignore", invalid="ignore"):  # as pandas divides: inf, NaN
            columns["slowdown"] = columns["fct_s"] / columns["ideal_fct_s"]
        return cls({c: columns[c] for c in FLOW_COLUMNS}, list(hosts))

    def __len__(self) -> int:
        return len(self.columns["flow_id"])

    def frame(self) -> pd.DataFrame:
        """One row per flow; src/dst become categoricals of host names."""
        import pandas as pd

        return pd.DataFrame(
            {
                c: _categorical(col, self.hosts) if c in CATEGORICAL_FLOW_COLUMNS else col
                for c, col in self.columns.items()
            }
        )

    def arrow(self) -> pa.Table:
        """The pyarrow Table `frame()` converts to, built without pandas."""
        import pyarrow as pa

        columns = {
            c: _dictionary(col, self.hosts) if c in CATEGORICAL_FLOW_COLUMNS else _arrow_array(col)
            for c, col in self.columns.items()
        }
        return pa.table(columns)


def timeseries_frame(native: Mapping[str, Any]) -> pd.DataFrame:
    """Long DataFrame from the native columns; metric/entity codes become categoricals."""
    return NativeTimeseries.from_native(native).frame()


def flows_frame(native: Mapping[str, Any] | None, hosts: list[str]) -> pd.DataFrame:
    """One row per flow from the native columns; src/dst become host names, and slowdown =
    FCT / the FCT alone on an idle network (NaN for a flow that did not complete)."""
    if native is None:
        import pandas as pd

        empty = {c: pd.Series(dtype="float64") for c in FLOW_COLUMNS}
        return pd.DataFrame(empty)
    return NativeFlows.from_native(native, hosts).frame()


def _codes(codes: np.ndarray, names: list[str]) -> np.ndarray:
    """Codes into `names` as pandas stores a Categorical's (the smallest signed integer type
    that holds them); an out-of-range code is a native bug, so raise."""
    codes = codes.astype(np.int64, copy=False)
    if codes.size and (codes.min() < 0 or codes.max() >= len(names)):
        raise RuntimeError(f"native code out of range 0..{len(names) - 1}")
    return codes.astype(_code_dtype(len(names)), copy=False)


def _code_dtype(n_names: int) -> type[np.signedinteger[Any]]:
    """pandas' choice of codes type for `n_names` categories (`coerce_indexer_dtype`): the
    dictionary index type `DataFrame.to_parquet` writes."""
    for dtype in (np.int8, np.int16, np.int32):
        if n_names < np.iinfo(dtype).max:
            return dtype
    return np.int64


def _categorical(codes: np.ndarray, names: list[str]) -> pd.Categorical:
    """Checked codes into `names` as a Categorical."""
    import pandas as pd

    return pd.Categorical.from_codes(codes, categories=pd.Index(list(names), dtype=object))


def _dictionary(codes: np.ndarray, names: list[str]) -> pa.Array:
    """Checked codes into `names` as the arrow array pyarrow makes of `_categorical`: a
    dictionary of strings, or, with no names at all (so no rows), a null column (pyarrow
    infers no type from empty object categories)."""
    import pyarrow as pa

    if not names:
        return pa.nulls(len(codes))
    encoded = [name.encode() for name in names]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    strings = pa.Array.from_buffers(pa.string(), len(encoded), buffers)
    return pa.DictionaryArray.from_arrays(_arrow_array(codes), strings)


def _arrow_array(values: np.ndarray) -> pa.Array:
    """A 1-D numpy array as the arrow array `pa.Table.from_pandas` makes of it (NaN becomes
    null), from its buffers: `pa.array` first imports pandas to look for pandas objects,
    which is what a run that is only saved must not pay."""
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:  # arrow packs booleans into bits, least significant first
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, data])
    validity = None
    if values.dtype.kind == "f":
        missing = np.isnan(values)
        if missing.any():
            validity = pa.py_buffer(np.packbits(~missing, bitorder="little"))
    arrow_type = pa.from_numpy_dtype(values.dtype)
    return pa.Array.from_buffers(arrow_type, len(values), [validity, pa.py_buffer(values)])
