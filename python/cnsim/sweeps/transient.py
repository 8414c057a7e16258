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
from typing import Any

import pandas as pd

from cnsim import analysis
from cnsim.sweeps.errors import SweepError
from cnsim.sweeps.spec import TRANSIENT_RESULT_COLUMNS, TransientStudy

SERIES_FILE = "transient_series.parquet"
TABLE_FILE = "transient.csv"
RESULT_COLUMNS = TRANSIENT_RESULT_COLUMNS[1:]  # after `point`


# ---------------------------------------------------------------- in the worker


def run_series(scenario: Mapping[str, Any], timeseries: pd.DataFrame) -> bytes:
    """The aggregate a run's `[report.transient]` names, as Parquet (time_s, value)."""
    rule = transient_rule(scenario)
    series = analysis.aggregate(timeseries, rule["metric"], rule["entities"] or None)
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
    """A resolved scenario's `[report.transient]` (the core filled its defaults); SweepError
    when it has none."""
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
        start_s=rule.get("start_s"),  # optional fields: absent = the whole run
        end_s=rule.get("end_s"),
        method=rule["method"],
        max_fraction=rule["max_fraction"],
        tol=rule["tol"],
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
        "method": rule["method"],
    }


def table_columns(study: TransientStudy) -> list[str]:
    """Column order of transient.csv."""
    return ["point", *study.columns, *RESULT_COLUMNS]
