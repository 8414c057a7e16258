"""Flow workloads end to end: the flows-16-exp preset, flows.parquet and the summary's flows
object, `cnsim trace` and a trace that repeats the run exactly, memory on large trees."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomli_w

import cnsim
from cnsim.result import FLOW_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
SHORT = {"duration_s": 0.02, "traffic[0].stop_s": 0.015}


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "cnsim.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def flows16(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("flows16") / "run"
    proc = cli("run", "flows-16-exp", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "completed" in proc.stdout
    return out


def test_preset_writes_flow_records_and_summary(flows16: Path) -> None:
    summary = json.loads((flows16 / "summary.json").read_text())
    f = summary["flows"]
    flows = pd.read_parquet(flows16 / "flows.parquet")
    assert list(flows.columns) == list(FLOW_COLUMNS)
    assert f["started"] == len(flows) > 5000
    assert f["completed"] + f["incomplete"] == f["started"]
    done = flows[flows["completed"]]
    assert f["completed"] == len(done)
    assert f["fct_mean_s"] == pytest.approx(done["fct_s"].mean(), rel=1e-12)
    assert f["slowdown_mean"] == pytest.approx(done["slowdown"].mean(), rel=1e-12)
    # No flow beats the idle network; the realised size and load are near the asked ones.
    assert (done["fct_s"] >= done["ideal_fct_s"] - 1e-12).all()
    assert f["requested_size_mean_bytes"] == 60_000
    assert f["size_mean_bytes"] == pytest.approx(60_000, rel=0.05)
    assert f["load"] == pytest.approx(0.3, rel=0.05)
    assert set(flows["src"].astype(str)) <= {f"h{i}" for i in range(1, 17)}
    for png in ["fct_cdf.png", "fct_by_size.png"]:
        assert (flows16 / "plots" / png).stat().st_size > 10_000
    # A saved run loads back with its flows, categoricals as a run builds them (object
    # categories; pandas reads them back as strings: test_e2e's round trip).
    loaded = cnsim.Result.load(flows16)
    as_read = {
        c: pd.CategoricalDtype(flows[c].cat.categories.astype(object)) for c in ("src", "dst")
    }
    pd.testing.assert_frame_equal(loaded.flows, flows.astype(as_read))


def test_trace_repeats_the_run_exactly(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    sets = [arg for k, v in SHORT.items() for arg in ("--set", f"{k}={v}")]
    proc = cli("trace", "flows-16-exp", "--out", str(trace), *sets)
    assert proc.returncode == 0, proc.stderr
    header = trace.read_text().splitlines()[0]
    assert header == "start_s,src,dst,size_bytes,priority"
    generated = cnsim.run("flows-16-exp", set=SHORT)
    scenario = tomllib.loads(cnsim.load_scenario("flows-16-exp"))
    scenario["duration_s"] = SHORT["duration_s"]
    scenario["traffic"] = [{"kind": "flow_trace", "trace": "t.csv"}]
    file = tmp_path / "replay.toml"
    file.write_text(tomli_w.dumps(scenario))
    replayed = cnsim.run(file)  # the trace path is relative to the scenario file
    pd.testing.assert_frame_equal(generated.flows, replayed.flows)
    a, b = generated.summary, replayed.summary
    assert a["frames"] == b["frames"]
    assert a["events"] == b["events"]
    for key in ["started", "completed", "fct_mean_s", "fct_p99_s", "slowdown_mean"]:
        assert a["flows"][key] == b["flows"][key], key
    # The resolved scenario names the trace by its absolute path, so it runs from anywhere.
    assert str(trace) in cnsim.resolve(file)
    # The same trace as Parquet drives the same run.
    assert cnsim.trace("flows-16-exp", tmp_path / "t.parquet", set=SHORT) == len(generated.flows)
    scenario["traffic"] = [{"kind": "flow_trace", "trace": "t.parquet"}]
    file.write_text(tomli_w.dumps(scenario))
    from_parquet = cnsim.run(file)
    pd.testing.assert_frame_equal(generated.flows, from_parquet.flows)
    assert from_parquet.summary["events"] == a["events"]


def test_flow_trace_errors_name_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("start_s,src,dst,size_bytes\n0.0,h1,h99,1000\n")
    scenario = tomllib.loads(cnsim.load_scenario("flows-16-exp"))
    scenario["traffic"] = [{"kind": "flow_trace", "trace": str(bad)}]
    with pytest.raises(
        cnsim.ScenarioError, match=r"^traffic\[0\]\.trace: .*line 2: unknown host 'h99'"
    ):
        cnsim.run(scenario)
    bad = tmp_path / "bad.parquet"
    pd.DataFrame({"start_s": [0.0], "src": ["h1"], "dst": ["h2"], "size": [10]}).to_parquet(bad)
    scenario["traffic"] = [{"kind": "flow_trace", "trace": str(bad)}]
    with pytest.raises(
        cnsim.ScenarioError, match=r"^traffic\[0\]\.trace: .*row 1: unknown column 'size'"
    ):
        cnsim.run(scenario)


def _tree(tmp_path: Path, hosts: int, *extra: str) -> Path:
    out = tmp_path / f"tree{hosts}.toml"
    gen = [sys.executable, str(ROOT / "benchmarks" / "gen_tree.py"), str(hosts), "--out", str(out)]
    subprocess.run([*gen, *extra], check=True, timeout=120)
    return out


def test_memory_grows_with_hosts_not_host_pairs(tmp_path: Path) -> None:
    # 2048 hosts, uniform Bernoulli at 60%, 1 ms, through the CLI: under 400 MB at its peak.
    # Measured in a child of a fresh, small process: a child forked from this test process
    # counts this process's resident pages (grown by the in-process runs of earlier tests, as
    # the 6,144-host preset's) in its peak, and RUSAGE_CHILDREN is the peak of every child yet.
    wrapper = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    run = [sys.executable, "-m", "cnsim.cli", "run", str(_tree(tmp_path, 2048))]
    run += ["--out", str(tmp_path / "r"), "--no-plots", "-q"]
    proc = subprocess.run(
        [sys.executable, "-c", wrapper, *run], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    peak_kb = int(proc.stdout.split()[-1])
    assert peak_kb < 400_000, f"peak {peak_kb / 1e3:.0f} MB"
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    # 2048 x 0.6 x 1 ms / 1.2 us = 1.02 M frames offered over a non-blocking ECMP fabric,
    # all accounted for.
    assert summary["frames"]["conserved"]
    assert summary["frames"]["generated"] > 1_000_000


def test_an_8192_host_tree_builds_and_runs(tmp_path: Path) -> None:
    scenario = _tree(
        tmp_path, 8192, "--hosts-per-leaf", "64", "--spines", "8", "--duration-s", "1e-4"
    )
    result = cnsim.run(scenario)
    assert result.summary["frames"]["conserved"]
    assert np.isclose(result.summary["sim_time_s"], 1e-4)
    assert result.summary["frames"]["generated"] > 300_000
