"""Streamed outputs (`cnsim.stream`, `api.run_to_dir`, `cnsim run`): the files a streamed run
writes are those of an in-memory run (tables, dtypes, row order, summary), in several row
groups; a failed or interrupted streamed run leaves nothing that looks complete."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import cnsim
from cnsim import api, cli, stream
from cnsim.result import Result
from cnsim.stream import patch_frames_dropped

WALL_CLOCK = {"wall_time_s", "wall_s_per_sim_s", "events_per_s", "frame_hops_per_s"}


def stable(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in WALL_CLOCK}


def in_memory_and_streamed(tmp_path, name: str, overrides: dict) -> tuple[Result, Result, Result]:
    """The in-memory run saved and loaded, the streamed run loaded, and the streamed Result."""
    memory = cnsim.run(name, set=overrides)
    memory.save(tmp_path / "memory", plots=False)
    streamed = api.run_to_dir(name, tmp_path / "streamed", set=overrides, plots=False)
    return Result.load(tmp_path / "memory"), Result.load(tmp_path / "streamed"), streamed


def test_streamed_flows_and_series_equal_the_in_memory_files(tmp_path, monkeypatch):
    # 10 ms of the 128-host leaf-spine at 50% WebSearch load: ~460 flows, ~100k probe rows.
    # Each hand-over its own row group: the files show the rows came in several batches.
    monkeypatch.setattr(stream, "ROW_GROUP_ROWS", 1)
    memory, streamed, result = in_memory_and_streamed(
        tmp_path, "leafspine-websearch", {"duration_s": 0.01}
    )
    assert len(memory.flows) > 300
    assert len(memory.timeseries) > 50_000
    assert streamed.flows.equals(memory.flows)
    assert streamed.timeseries.equals(memory.timeseries)
    assert list(streamed.flows.dtypes) == list(memory.flows.dtypes)
    # The summary's numbers over all flows (percentiles, slowdown by size) come out the same
    # from the core's digest of the batches.
    assert stable(streamed.summary) == stable(memory.summary)
    assert streamed.summary["flows"]["fct_p99_s"] is not None
    # Streamed for real: several row groups, and the Result reads its tables from the files.
    folder = tmp_path / "streamed"
    assert pq.ParquetFile(folder / "timeseries.parquet").num_row_groups > 1
    assert pq.ParquetFile(folder / "flows.parquet").num_row_groups > 1
    assert result.flows.equals(memory.flows)
    assert result.timeseries.equals(memory.timeseries)
    assert pq.read_schema(folder / "flows.parquet").equals(
        pq.read_schema(tmp_path / "memory" / "flows.parquet")
    )


def test_streamed_frame_level_run_with_late_named_entities(tmp_path):
    # seed 004's QCN: rate limiters get their series (and entity names) as they start.
    memory, streamed, _ = in_memory_and_streamed(tmp_path, "seed004-qcn", {"duration_s": 0.3})
    assert streamed.timeseries.equals(memory.timeseries)
    assert stable(streamed.summary) == stable(memory.summary)
    assert not (tmp_path / "streamed" / "flows.parquet").exists()
    assert "rp_rate_bps" in streamed.metric_names


@pytest.mark.filterwarnings("ignore:.*no metric")
def test_streamed_run_without_probe_rows(tmp_path):
    # Shorter than one probe interval: no row at all, the file is the in-memory run's.
    memory, streamed, _ = in_memory_and_streamed(tmp_path, "seed004-qcn", {"duration_s": 1e-4})
    assert len(memory.timeseries) == 0
    assert streamed.timeseries.equals(memory.timeseries)


def test_interrupted_streamed_run_leaves_nothing(tmp_path):
    out = tmp_path / "run"
    api.run_to_dir("seed004-qcn", out, set={"duration_s": 0.01}, plots=False)
    before = (out / "summary.json").read_text()

    def stop(fraction: float) -> None:
        if fraction < 1.0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        api.run_to_dir("seed004-qcn", out, set={"duration_s": 0.5}, progress=stop, plots=False)
    assert (out / "summary.json").read_text() == before  # the earlier run, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no temporary directory
    with pytest.raises(KeyboardInterrupt):
        api.run_to_dir("seed004-qcn", tmp_path / "new", progress=stop, plots=False)
    assert not (tmp_path / "new").exists()


def test_a_bad_scenario_leaves_no_directory(tmp_path):
    with pytest.raises(cnsim.ScenarioError, match="duration_s"):
        api.run_to_dir("seed004-qcn", tmp_path / "runs" / "x", set={"duration_s": -1.0})
    assert list(tmp_path.iterdir()) == []


def test_a_failing_sink_stops_the_run_and_leaves_nothing(tmp_path, monkeypatch):
    from cnsim import stream

    def full(self, series, flows):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(stream.StreamWriter, "batch", full)
    with pytest.raises(OSError, match="No space left"):
        api.run_to_dir("seed004-qcn", tmp_path / "run", set={"duration_s": 0.01}, plots=False)
    assert list(tmp_path.iterdir()) == []


def test_cli_run_streams_into_its_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = CliRunner().invoke(
        cli.app, ["run", "leafspine-websearch", "--set", "duration_s=0.01", "-q", "--no-plots"]
    )
    assert got.exit_code == 0, got.output
    folder = tmp_path / "runs" / "leafspine-websearch"
    # Row groups of at least ROW_GROUP_ROWS rows but the last.
    series = pq.ParquetFile(folder / "timeseries.parquet").metadata
    groups = [series.row_group(i).num_rows for i in range(series.num_row_groups)]
    assert len(groups) > 1
    assert min(groups[:-1]) >= stream.ROW_GROUP_ROWS
    memory = cnsim.run("leafspine-websearch", set={"duration_s": 0.01})
    loaded = Result.load(folder)
    assert loaded.flows.equals(memory.flows)
    assert loaded.timeseries.equals(memory.timeseries)


def test_scenario_name_follows_a_name_override():
    assert api.scenario_name("seed004-qcn") == "seed004-qcn"
    assert api.scenario_name("seed004-qcn", set={"name": "other"}) == "other"
    assert api.scenario_name("seed004-qcn", set=["name=plain"]) == "plain"


def test_patch_frames_dropped_rewrites_only_the_listed_flows(tmp_path):
    path = tmp_path / "flows.parquet"
    schema = pa.schema([("flow_id", pa.uint32()), ("frames_dropped", pa.uint32())])
    with pq.ParquetWriter(path, schema) as writer:
        for ids in ([0, 1, 2], [3, 4]):
            table = {"flow_id": ids, "frames_dropped": [0] * len(ids)}
            writer.write_table(pa.table(table, schema=schema))
    patch_frames_dropped(path, {4: 7, 1: 2})
    table = pq.read_table(path)
    assert table.schema == schema
    assert table.column("frames_dropped").to_pylist() == [0, 2, 0, 0, 7]
    assert pq.ParquetFile(path).num_row_groups == 2
    assert np.array_equal(table.column("flow_id").to_numpy(), np.arange(5))
