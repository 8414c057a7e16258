"""Transient studies (seed 001): initial data deletion on replication-averaged throughput.

A sweep with a `[sweep.transient]` table is a transient study. Every run keeps one small
series, the aggregate its scenario's `[report.transient]` names (`metric` summed over
`entities`), in `runs/<key>/transient_series.parquet`; after the runs, each point's series are
averaged over its replications and `cnsim.analysis.transient_duration` finds the knee with the
point's own `[report.transient]` rule (window, knee method, RTT). The result is one row per
point, written to `DIR/transient.csv`:

    [sweep.transient]
    label = "case"                    # column naming a point in legends (default: the first)
    panel = "buffer_bytes"            # column splitting the figures into panels (optional)
    reference = "seed_transient_s"    # column with a published duration to plot beside ours
    [sweep.transient.columns]         # extra columns, one value per point, in point order
    case = ["1", "2"]
    buffer_bytes = [600_000, 600_000]
    seed_transient_s = [0.462, 0.052]
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from cnsim import analysis
from cnsim.sweeps.errors import SweepError

TRANSIENT_KEYS = ("columns", "label", "panel", "reference")
SERIES_FILE = "transient_series.parquet"
TABLE_FILE = "transient.csv"
RESULT_COLUMNS = (
    "n",
    "transient_s",
    "transient_rtt",
    "settled",
    "knee_s",
    "flat_s",
    "transient_end_s",
    "rtt_s",
    "method",
)
DEFAULT_REFERENCE = "seed_transient_s"


@dataclass(frozen=True)
class TransientStudy:
    """The `[sweep.transient]` table: per-point label columns and how to draw them."""

    columns: dict[str, list[Any]] = field(default_factory=dict)
    label: str | None = None
    panel: str | None = None
    reference: str | None = None

    @property
    def label_column(self) -> str | None:
        """The column naming a point in legends: `label`, else the first column."""
        return self.label or next(iter(self.columns), None)

    @property
    def reference_column(self) -> str | None:
        """The column of published durations: `reference`, else seed_transient_s if given."""
        if self.reference:
            return self.reference
        return DEFAULT_REFERENCE if DEFAULT_REFERENCE in self.columns else None

    def to_table(self) -> dict[str, Any]:
        """As written in a sweep file."""
        table: dict[str, Any] = {"columns": self.columns}
        for key in ("label", "panel", "reference"):
            if getattr(self, key) is not None:
                table[key] = getattr(self, key)
        return table


def parse_transient(table: Any) -> TransientStudy:
    """A `[sweep.transient]` table; SweepError naming the first wrong key."""
    where = "sweep.transient"
    if not isinstance(table, Mapping):
        raise SweepError(f"{where}: expected a table")
    for key in table:
        if key not in TRANSIENT_KEYS:
            raise SweepError(f"{where}: unknown key {key!r} (expected {', '.join(TRANSIENT_KEYS)})")
    columns = table.get("columns", {})
    if not isinstance(columns, Mapping):
        raise SweepError(f"{where}.columns: expected a table of lists (one value per point)")
    for name, values in columns.items():
        if not isinstance(values, list):
            raise SweepError(f"{where}.columns.{name}: expected a list (one value per point)")
        if name in RESULT_COLUMNS or name == "point":
            raise SweepError(f"{where}.columns.{name}: a column of the transient table already")
    study = TransientStudy(
        columns={str(k): list(v) for k, v in columns.items()},
        label=table.get("label"),
        panel=table.get("panel"),
        reference=table.get("reference"),
    )
    for key in ("label", "panel", "reference"):
        name = getattr(study, key)
        if name is not None and name not in study.columns:
            known = ", ".join(study.columns) or "none"
            raise SweepError(f"{where}.{key}: no column {name!r} (columns: {known})")
    return study


def check_points(study: TransientStudy, n_points: int) -> None:
    """Every column has one value per point."""
    for name, values in study.columns.items():
        if len(values) != n_points:
            raise SweepError(
                f"sweep.transient.columns.{name}: expected {n_points} values, one per point "
                f"(got {len(values)})"
            )


# ---------------------------------------------------------------- in the worker


def run_series(scenario: Mapping[str, Any], timeseries: pd.DataFrame) -> bytes:
    """The aggregate a run's `[report.transient]` names, as Parquet (time_s, value)."""
    rule = transient_rule(scenario)
    entities = rule.get("entities") or None
    series = analysis.aggregate(timeseries, rule.get("metric", "host_rx_bps"), entities)
    frame = pd.DataFrame({"time_s": series.index.to_numpy(), "value": series.to_numpy()})
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def read_series(data: bytes | str) -> pd.Series:
    """A stored aggregate series, indexed by time_s."""
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    frame = pd.read_parquet(source)
    return pd.Series(frame["value"].to_numpy(), index=frame["time_s"].to_numpy(), name="value")


def transient_rule(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """A resolved scenario's `[report.transient]`; SweepError when it has none."""
    rule = scenario.get("report", {}).get("transient")
    if not isinstance(rule, Mapping):
        raise SweepError(
            "sweep.transient: the base scenario needs a [report.transient] table "
            "(metric, window, knee rule)"
        )
    return dict(rule)


# ---------------------------------------------------------------- the table


def find_transient(rule: Mapping[str, Any], replications: list[pd.Series]) -> analysis.Transient:
    """Initial data deletion on the replication mean, with the point's own rule."""
    return analysis.transient_duration(
        analysis.replication_mean(replications),
        start_s=rule.get("start_s"),
        end_s=rule.get("end_s"),
        method=rule.get("method", "chord"),
        max_fraction=rule.get("max_fraction", 0.5),
        tol=rule.get("tol", 0.005),
    )


def table_row(
    study: TransientStudy,
    point: int,
    rule: Mapping[str, Any],
    n: int,
    found: analysis.Transient | None,
) -> dict[str, Any]:
    """One row of transient.csv (NaN durations when the point has no finished run).

    transient_s is the knee by the point's rule when the series settled, else a lower bound
    (settled = False): the larger of the knee (knee_s, always given) and t[L/2] - t[0]
    (`Transient.lower_bound_s`).
    flat_s is the "flat" knee of the same curve (`analysis.knee_flat`), where the curve stops
    moving for good: it counts the overshoot after the deficit too, but slow oscillations of
    the steady state move it.
    """
    rtt = rule.get("rtt_s")
    duration = knee = flat = end = math.nan
    settled = None
    if found is not None:
        settled = found.settled
        duration = found.duration_s if settled else max(found.duration_s, found.lower_bound_s)
        end = found.end_s
        knee = found.duration_s
        flat_knee = analysis.knee_flat(found.relative_change, found.searched_index)
        flat = round(float(found.times_s[flat_knee] - found.times_s[0]), 12)
    return {
        "point": point,
        **{name: values[point] for name, values in study.columns.items()},
        "n": n,
        "transient_s": duration,
        "transient_rtt": duration / rtt if rtt else math.nan,
        "settled": settled,
        "knee_s": knee,
        "flat_s": flat,
        "transient_end_s": end,
        "rtt_s": rtt if rtt else math.nan,
        "method": rule.get("method", "chord"),
    }


def table_columns(study: TransientStudy) -> list[str]:
    """Column order of transient.csv."""
    return ["point", *study.columns, *RESULT_COLUMNS]
