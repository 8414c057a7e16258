"""`cnsim trace` on a workload without flows writes a valid empty trace (CSV header, Parquet
columns), and names the sources a trace cannot hold (saturate, cbr, bernoulli)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest
import tomli_w

import cnsim

COLUMNS = ["start_s", "src", "dst", "size_bytes", "priority"]
NO_FLOWS = {"duration_s": 1e-7}  # flows-16-exp's first flow starts later


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "cnsim.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def replay(tmp_path: Path, trace: Path) -> cnsim.Result:
    """flows-16-exp with its workload replaced by `trace`."""
    scenario = tomllib.loads(cnsim.load_scenario("flows-16-exp"))
    scenario["duration_s"] = 1e-4
    scenario["traffic"] = [{"kind": "flow_trace", "trace": str(trace)}]
    file = tmp_path / "replay.toml"
    file.write_text(tomli_w.dumps(scenario))
    return cnsim.run(file)


@pytest.mark.parametrize("name", ["t.csv", "t.parquet"])
def test_a_workload_without_flows_gives_an_empty_trace_that_replays(
    tmp_path: Path, name: str
) -> None:
    out = tmp_path / name
    proc = cli("trace", "flows-16-exp", "--set", "duration_s=1e-7", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    said = " ".join(proc.stdout.split())  # rich wraps lines at the terminal's width
    assert "0 flows written" in said
    assert "(an empty trace: the columns only)" in said
    table = pd.read_csv(out) if name.endswith(".csv") else pd.read_parquet(out)
    assert list(table.columns) == COLUMNS
    assert table.empty
    if name.endswith(".parquet"):  # typed columns, not Parquet's null type
        assert table["start_s"].dtype == "float64"
        assert table["priority"].dtype == "int64"
    assert replay(tmp_path, out).flows.empty


def test_sources_that_are_not_flows_are_named(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    with pytest.warns(UserWarning, match=r"traffic\[0\] \(kind = saturate\) is not in the trace"):
        assert cnsim.trace("seed004-qcn", out) == 0
    assert out.read_text() == ",".join(COLUMNS) + "\n"
    proc = cli("trace", "seed004-qcn", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "warning: traffic[0] (kind = saturate) is not in the trace" in proc.stderr


def test_a_pure_flow_workload_warns_about_nothing(tmp_path: Path, recwarn) -> None:
    assert cnsim.trace("flows-16-exp", tmp_path / "t.csv", set={"duration_s": 1e-3}) > 0
    assert not [w for w in recwarn if "not in the trace" in str(w.message)]
