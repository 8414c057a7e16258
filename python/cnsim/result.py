"""`Result`: one finished run as pandas tables, ready to analyse, plot and save.

The native module hands over columnar arrays; this class turns them into one long DataFrame
(categorical `metric`/`entity`, so a million rows cost little) and never into per-row Python
objects. A saved run directory loads back into the same class.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from cnsim import analysis

if TYPE_CHECKING:
    from matplotlib.figure import Figure

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
)


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
        timeseries: pd.DataFrame,
        *,
        flows: pd.DataFrame | None = None,
        add_metrics: bool = True,
    ) -> None:
        self.summary: dict[str, Any] = dict(summary)
        self.scenario_toml = scenario_toml
        self.timeseries = timeseries
        #: One row per started flow (FLOW_COLUMNS); empty when the run had no flow workload.
        self.flows = flows if flows is not None else flows_frame(None, [])
        self.summary.setdefault("metrics", {})
        if add_metrics:
            computed = analysis.compute_metrics(self)
            for name, value in computed.items():
                # The core's own metrics win: one definition per name.
                self.summary["metrics"].setdefault(name, value)

    @classmethod
    def from_native(cls, raw: Mapping[str, Any]) -> Result:
        """Build from the dict `cnsim._native.run` returns."""
        summary = json.loads(raw["summary_json"])
        resolved = raw["resolved_toml"]
        hosts = [h["name"] for h in tomllib.loads(resolved).get("hosts", [])]
        flows = flows_frame(raw.get("flows"), hosts)
        return cls(summary, resolved, timeseries_frame(raw["timeseries"]), flows=flows)

    @classmethod
    def load(cls, run_dir: str | Path) -> Result:
        """Read a run directory written by `save` (metrics are already in its summary)."""
        run_dir = Path(run_dir)
        summary = json.loads((run_dir / "summary.json").read_text())
        scenario_toml = (run_dir / "scenario.toml").read_text()
        timeseries = pd.read_parquet(run_dir / "timeseries.parquet")
        flows_file = run_dir / "flows.parquet"
        flows = pd.read_parquet(flows_file) if flows_file.exists() else None
        return cls(summary, scenario_toml, timeseries, flows=flows, add_metrics=False)

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
        """Wide table of one metric: index time_s, one column per entity (glob patterns ok)."""
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

    @property
    def figure_names(self) -> list[str]:
        """The figures this run has (`figure(name)`, the PNGs `save` writes)."""
        from cnsim import plots

        return plots.figure_names(self)

    def figure(self, name: str) -> Figure:
        """One of the run's figures as a matplotlib Figure (no file written); in a notebook
        it displays itself. KeyError names the figures there are."""
        from cnsim import notebook, plots

        if notebook.in_jupyter():
            notebook.show_figures_inline()
        return plots.figure(self, name)

    def _repr_html_(self) -> str:
        """The notebook view: headline numbers, the per-source and per-port tables and the
        figures inline."""
        from cnsim import notebook

        return notebook.result_html(self)

    def save(self, out_dir: str | Path, plots: bool = True) -> Path:
        """Write the output contract (architecture.md, Outputs) to `out_dir` and return it."""
        from cnsim import report

        return report.write_run(self, out_dir, plots=plots)

    def __repr__(self) -> str:
        sim = self.summary.get("sim_time_s")
        return (
            f"<cnsim.Result {self.name!r} seed={self.summary.get('seed')} sim_time_s={sim} "
            f"rows={len(self.timeseries)} metrics={self.metric_names}>"
        )


def _table(rows: Any, index_name: str) -> pd.DataFrame:
    """A summary map {name: {field: value}} as a DataFrame, one row per name."""
    if not isinstance(rows, Mapping) or not rows:
        return pd.DataFrame(index=pd.Index([], name=index_name, dtype=object))
    frame = pd.DataFrame.from_dict(dict(rows), orient="index")
    frame.index.name = index_name
    return frame


def timeseries_frame(native: Mapping[str, Any]) -> pd.DataFrame:
    """Long DataFrame from the native columns; metric/entity codes become categoricals."""
    columns = {name: np.asarray(native[name]) for name in TIMESERIES_COLUMNS}
    lengths = {name: len(col) for name, col in columns.items()}
    if len(set(lengths.values())) != 1:
        raise RuntimeError(f"native time series columns differ in length: {lengths}")
    return pd.DataFrame(
        {
            "time_s": columns["time_s"].astype(np.float64, copy=False),
            "metric": _categorical(columns["metric"], native["metrics"]),
            "entity": _categorical(columns["entity"], native["entities"]),
            "value": columns["value"].astype(np.float64, copy=False),
        }
    )


def _categorical(codes: np.ndarray, names: list[str]) -> pd.Categorical:
    """Codes into `names` as a Categorical; an out-of-range code is a native bug, so raise."""
    codes = codes.astype(np.int64, copy=False)
    if codes.size and (codes.min() < 0 or codes.max() >= len(names)):
        raise RuntimeError(f"native code out of range 0..{len(names) - 1}")
    return pd.Categorical.from_codes(codes, categories=pd.Index(list(names), dtype=object))


def flows_frame(native: Mapping[str, Any] | None, hosts: list[str]) -> pd.DataFrame:
    """One row per flow from the native columns; src/dst become host names, and slowdown =
    FCT / the FCT alone on an idle network (NaN for a flow that did not complete)."""
    if native is None:
        empty = {c: pd.Series(dtype="float64") for c in FLOW_COLUMNS}
        return pd.DataFrame(empty)
    frame = pd.DataFrame({c: np.asarray(native[c]) for c in FLOW_COLUMNS if c in native})
    names = pd.Categorical.from_codes
    frame["src"] = names(frame["src"].astype(np.int64), categories=hosts)
    frame["dst"] = names(frame["dst"].astype(np.int64), categories=hosts)
    frame["slowdown"] = frame["fct_s"] / frame["ideal_fct_s"]
    return frame[list(FLOW_COLUMNS)]
