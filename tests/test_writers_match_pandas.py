"""The files `cnsim run` writes without pandas hold what pandas wrote before: timeseries.parquet
and flows.parquet from the native columns through pyarrow (the same arrow table: types,
dictionary-encoded categoricals, NaN as null; the same DataFrame through `pd.read_parquet`), and
window_per_source.csv through the csv module (the same text as `DataFrame.to_csv`)."""

from __future__ import annotations

import io
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from cnsim import api, outputs
from cnsim.result import NativeTimeseries, Result, flows_frame, timeseries_frame
from conftest import small_run

SMALL = small_run("probe_interval_s = 1e-4")


def native_run(scenario: str, **overrides: Any) -> dict[str, Any]:
    """The dict the native module returns for a preset name or TOML text."""
    pairs = api.override_pairs(overrides)
    text = api.scenario_text(scenario)
    raw: dict[str, Any] = api.native().run(text, overrides=pairs, base_dir=api.base_dir(scenario))
    return raw


def old_route(frame: pd.DataFrame) -> io.BytesIO:
    """The file as cnsim wrote it before: pandas' own Parquet writer."""
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    buffer.seek(0)
    return buffer


def assert_same_parquet(new: Path, old: io.BytesIO) -> None:
    new_table, old_table = pq.read_table(new), pq.read_table(old)
    # Types and values, nulls included; pandas' metadata block is not part of the comparison
    # (the new writer has no DataFrame to describe).
    assert new_table.schema.remove_metadata() == old_table.schema.remove_metadata()
    assert new_table.equals(old_table)
    old.seek(0)
    pd.testing.assert_frame_equal(pd.read_parquet(new), pd.read_parquet(old))


def saved(raw: dict[str, Any], tmp_path: Path) -> Path:
    """A native run saved straight away (no DataFrame built), as `cnsim run` does."""
    result = Result.from_native(raw)
    # Built from the native columns, not by pyarrow from a DataFrame (which adds its metadata).
    assert result.timeseries_table().schema.metadata is None
    return result.save(tmp_path / "run", plots=False)


def test_time_series_of_a_run(tmp_path: Path) -> None:
    raw = native_run(SMALL)
    assert len(raw["timeseries"]["time_s"]) > 0
    out = saved(raw, tmp_path)
    assert_same_parquet(out / "timeseries.parquet", old_route(timeseries_frame(raw["timeseries"])))
    assert not (out / "flows.parquet").exists()  # a run without flows has no flows file


def test_empty_time_series(tmp_path: Path) -> None:
    raw = native_run(SMALL, **{"report.probe_interval_s": 1.0})  # no probe within the run
    assert len(raw["timeseries"]["time_s"]) == 0
    out = saved(raw, tmp_path)
    assert_same_parquet(out / "timeseries.parquet", old_route(timeseries_frame(raw["timeseries"])))


def test_flows_with_incomplete_flows(tmp_path: Path) -> None:
    raw = native_run("flows-16-exp", **{"duration_s": 0.004, "traffic[0].stop_s": 0.004})
    hosts = [h["name"] for h in tomllib.loads(raw["resolved_toml"])["hosts"]]
    old = flows_frame(raw["flows"], hosts)
    assert len(old) > 0
    assert old["slowdown"].isna().any()  # NaN must arrive as null, as pandas writes it
    out = saved(raw, tmp_path)
    assert_same_parquet(out / "flows.parquet", old_route(old))
    assert_same_parquet(out / "timeseries.parquet", old_route(timeseries_frame(raw["timeseries"])))


@pytest.mark.parametrize(
    ("n_metrics", "n_entities"),
    [(2, 3), (0, 0), (1, 200), (1, 40_000)],  # codes of int8, none, int16 and int32
)
def test_synthetic_time_series(tmp_path: Path, n_metrics: int, n_entities: int) -> None:
    rows = 0 if n_entities == 0 else 2 * n_entities
    values = np.linspace(0.0, 1.0, rows)
    values[::7] = np.nan  # a probe with no value
    native = {
        "time_s": np.arange(rows) * 1e-3,
        "metric": (np.arange(rows) % max(n_metrics, 1)).astype(np.uint32),
        "entity": (np.arange(rows) % max(n_entities, 1)).astype(np.uint32),
        "value": values,
        "metrics": [f"m{i}" for i in range(n_metrics)],
        "entities": [f"node{i}->peer" for i in range(n_entities)],
    }
    path = tmp_path / "timeseries.parquet"
    pq.write_table(NativeTimeseries.from_native(native).arrow(), path)
    assert_same_parquet(path, old_route(timeseries_frame(native)))


def window_summary(per_source: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"window": {"start_s": 0.01, "end_s": 0.03, "per_source": per_source}}


@pytest.mark.parametrize(
    "per_source",
    [
        {
            "ep0": {"throughput_bps": 2.502e9 + 0.7, "generated_frames": 8409, "tx_frames": 4170},
            "ep1": {"throughput_bps": 0.0, "generated_frames": 3, "dropped_frames": 2},
            "sink": {"throughput_bps": 0.0, "generated_frames": 0},  # not a source: left out
        },
        {  # names a CSV must quote; floats printed in scientific notation or at their limits
            "a,b": {"throughput_bps": 1e-3, "generated_frames": 10**15},
            'q"x': {"throughput_bps": 1e25, "generated_frames": 1},
            "h 1": {"throughput_bps": 5e-315, "generated_frames": 1},
            "h2": {"throughput_bps": 2 / 3 * 1e9, "generated_frames": 1},
        },
        {"sink": {"generated_frames": 0}},  # a window without a sending host
    ],
)
def test_window_table_csv(per_source: dict[str, dict[str, Any]]) -> None:
    summary = window_summary(per_source)
    frame = outputs.window_per_source(summary)
    assert frame is not None
    rows = outputs.window_rows(summary)
    assert rows is not None
    assert outputs.window_csv(rows) == frame.to_csv(index=False)


def test_a_dataframe_once_built_is_what_save_writes(tmp_path: Path) -> None:
    """After `result.timeseries` was looked at (and maybe changed), `save` writes that
    DataFrame, not the columns it came from."""
    result = Result.from_native(native_run(SMALL))
    result.timeseries["value"] *= 2
    out = result.save(tmp_path / "run", plots=False)
    written = pd.read_parquet(out / "timeseries.parquet")
    np.testing.assert_array_equal(written["value"], result.timeseries["value"])
