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
from typing import Any

import numpy as np
import pandas as pd

from cnsim import analysis

TIMESERIES_COLUMNS = ("time_s", "metric", "entity", "value")


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
        add_metrics: bool = True,
    ) -> None:
        self.summary: dict[str, Any] = dict(summary)
        self.scenario_toml = scenario_toml
        self.timeseries = timeseries
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
        return cls(summary, raw["resolved_toml"], timeseries_frame(raw["timeseries"]))

    @classmethod
    def load(cls, run_dir: str | Path) -> Result:
        """Read a run directory written by `save` (metrics are already in its summary)."""
        run_dir = Path(run_dir)
        summary = json.loads((run_dir / "summary.json").read_text())
        scenario_toml = (run_dir / "scenario.toml").read_text()
        timeseries = pd.read_parquet(run_dir / "timeseries.parquet")
        return cls(summary, scenario_toml, timeseries, add_metrics=False)

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
        return self.summary["metrics"]

    @property
    def metric_names(self) -> list[str]:
        """Metrics present in the time series."""
        return analysis.observed(self.timeseries["metric"])

    def series(self, metric: str, entities: analysis.Patterns = None) -> pd.DataFrame:
        """Wide table of one metric: index time_s, one column per entity (glob patterns ok)."""
        return analysis.wide(self.timeseries, metric, entities)

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
    return pd.Categorical.from_codes(codes, categories=list(names))
