"""Fabrics at scale, as a user meets them: a run says what it is doing while the network is
built, a bar figure of thousands of hosts is drawn ranked (fast) while a small one keeps its
bars, and the fabric presets run."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import Rectangle

import cnsim
from cnsim import _native
from cnsim.plots.ranked import MANY_BARS
from cnsim.readout import summary_lines

ROOT = Path(__file__).resolve().parent.parent


def script_module(folder: str, name: str) -> ModuleType:
    """The repository's script `folder/name.py` as a module (scripts and benchmarks are not
    in the package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FAT_TREE_8 = """
name = "ft8"
duration_s = 0.0005
[topology]
kind = "fat_tree"
k = 8
[[traffic]]
kind = "bernoulli"
hosts = "all"
dst = "uniform"
load = 0.3
"""


def test_a_run_names_its_stages() -> None:
    stages: list[str] = []
    fractions: list[float] = []
    _native.run(FAT_TREE_8, progress=fractions.append, stage=stages.append)
    assert stages == ["building the network", "simulating"]
    assert fractions, "the run reported progress once simulating"


def test_many_sources_are_drawn_ranked_and_few_as_bars() -> None:
    many = cnsim.run(FAT_TREE_8)
    senders = len(many.per_source)
    assert senders == 128 > MANY_BARS
    start = time.perf_counter()
    fig = many.figure("per_source_throughput")
    assert time.perf_counter() - start < 10.0
    (ax,) = fig.get_axes()
    assert not [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() < 1]
    (line,) = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == senders]
    heights = np.asarray(line.get_ydata(), dtype=float)
    assert (np.diff(heights) <= 0).all(), "ranked, largest first"
    assert "ranked" in ax.get_xlabel()
    few = cnsim.run(FAT_TREE_8, set={"topology.k": 4})
    (ax,) = few.figure("per_source_throughput").get_axes()
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(bars) == len(few.per_source) == 16, "one bar per source, as before"


def test_the_fabric_as_parsimons_ns3_ran_it_is_lossless_and_acks_every_frame() -> None:
    run = cnsim.run("meta-fabric-6144-dctcp", set={"duration_s": 0.0005})
    s = run.summary
    assert len(s["per_source"]) == 6144
    assert s["frames"]["conserved"] is True
    assert s["frames"]["dropped"]["total"] == 0, "PFC: one lossless class"
    # RoCE acknowledges every data frame it accepts, in order here (nothing lost).
    assert s["control_frames"]["ack"] == s["frames"]["delivered"] > 0
    assert s["control_frames"]["nack"] == 0
    # K per link rate and the window cap of Parsimon's runs, said in the summary.
    assert s["variant"] == {
        "scheme": "dctcp",
        "marking": "step",
        "mark_on": "enqueue",
        "k_reference_rate_bps": 10e9,
        "max_cwnd_packets": 18,
    }
    assert s["pfc"]["classes"]["3"]["lossless"] is True
    assert s["flows"]["completed"] > 0
    assert s["flows"]["with_drops"] == 0
    # The same fabric and load as meta-fabric-6144: hosts at 0.2857 of their line rate.
    (scaling,) = s["load_scaling"]
    assert scaling["host_load"] == pytest.approx(0.2857, abs=1e-4)


def test_the_fabric_presets_run_briefly() -> None:
    small = cnsim.run("leafspine-websearch", set={"duration_s": 0.003})
    assert small.summary["flows"]["started"] > 0
    assert len(small.summary["per_source"]) == 128
    big = cnsim.run("meta-fabric-6144", set={"duration_s": 0.0002})
    assert len(big.summary["per_source"]) == 6144
    assert big.summary["frames"]["conserved"] is True
    # 50% on the busiest link, Parsimon's "max load": a spine-fabric link carries
    # 48 x 16 x 10 / 4 x (6144 - 768) / 6143 / (24 x 40) = 1.7503 x a host's rate.
    (scaling,) = big.summary["load_scaling"]
    at_full = 48 * 16 * 10 / 4 * (6144 - 768) / 6143 / (24 * 40)
    assert scaling["busiest_link_load_at_full_rate"] == pytest.approx(at_full, rel=1e-12)
    assert scaling["host_load"] == pytest.approx(0.5 / at_full, rel=1e-12)
    assert big.summary["flows"]["requested_load"] == scaling["host_load"]
    lines = {line.label: line.text for line in summary_lines(big.summary)}
    assert "hosts at 0.2857 of their line rate" in lines["traffic[0] load"]


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "benchmarks").glob("*.toml")),
    ids=lambda p: p.name,
)
def test_the_benchmark_scenarios_resolve(path: Path) -> None:
    # benchmarks/bench_speed.py runs these files; one that the format has left behind would
    # fail only when someone benchmarks.
    resolved = cnsim.resolve(path)
    assert "[[traffic]]" in resolved or "[[hosts]]" in resolved


def test_the_pgo_training_runs_resolve(tmp_path: Path) -> None:
    # scripts/build-pgo trains on these runs; one that no longer resolves (a preset renamed, a
    # duration shorter than its report window) would fail only in someone's PGO build.
    pgo_train = script_module("scripts", "pgo_train")
    runs = pgo_train.training_runs(tmp_path)
    assert len(runs) == len(pgo_train.TRAINING) + len(pgo_train.PRESETS)
    for scenario, overrides in runs:
        cnsim.resolve(scenario, set=overrides)


def test_a_fat_tree_trace_becomes_the_htsim_connection_matrix_of_the_same_flows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # benchmarks/to_htsim_cm.py: the side-by-side with csg-htsim (docs/performance.md,
    # "Session 28") runs the same flows only if each host keeps its place: htsim numbers a fat
    # tree's hosts pod by pod and edge switch by edge switch, cnsim names them h{pod}_{edge}_{i}.
    to_htsim_cm = script_module("benchmarks", "to_htsim_cm")
    k = 4
    scenario = tmp_path / "ft4.toml"
    scenario.write_text(
        'name = "ft4"\nduration_s = 0.001\n[topology]\nkind = "fat_tree"\nk = 4\n'
        '[[traffic]]\nkind = "flows"\nhosts = "all"\ndst = "uniform"\nload = 0.3\n'
        'size = { dist = "exponential", mean_bytes = 20000 }\n'
    )
    trace, matrix = tmp_path / "flows.csv", tmp_path / "flows.cm"
    cnsim.trace(scenario, trace)
    monkeypatch.setattr(
        sys, "argv", ["to_htsim_cm.py", str(trace), "--k", str(k), "--out", str(matrix)]
    )
    to_htsim_cm.main()
    hosts = [f"h{p}_{e}_{i}" for p in range(k) for e in range(k // 2) for i in range(k // 2)]
    lines = matrix.read_text().splitlines()
    flows = pd.read_csv(trace)
    assert lines[:2] == ["Nodes 16", f"Connections {len(flows)}"]
    assert len(flows) > 10
    for line, flow in zip(lines[2:], flows.itertuples(), strict=True):
        pair, _, start_ps, _, size = line.split()
        src, dst = (int(n) for n in pair.split("->"))
        assert (hosts[src], hosts[dst]) == (flow.src, flow.dst)
        assert int(start_ps) == round(flow.start_s * 1e12)
        assert int(size) == round(flow.size_bytes)
    with pytest.raises(SystemExit, match="not a host of the k = 4 fat tree"):
        to_htsim_cm.htsim_node("h4_0_0", k)
    with pytest.raises(SystemExit, match="not a fat_tree host name"):
        to_htsim_cm.htsim_node("rack0", k)


def test_the_flows_line_counts_the_flows_that_lost_a_frame() -> None:
    # Without a transport a flow that lost a frame never completes (meta-fabric-6144 at 30 ms:
    # 31,194 of 38,412 completed, 5,613 lost a frame): the line says so beside the count.
    flows = {"started": 38_412, "completed": 31_194, "with_drops": 5_613}
    lines = {line.label: line.text for line in summary_lines({"flows": flows})}
    assert lines["flows"] == "31,194 of 38,412 completed; 5,613 lost a frame"
    flows["with_drops"] = 0
    lines = {line.label: line.text for line in summary_lines({"flows": flows})}
    assert lines["flows"] == "31,194 of 38,412 completed"


def test_the_workload_line_compares_what_the_flows_entries_drew_with_what_they_asked() -> None:
    # An incast's 1 MB flows beside a 10 KB-mean flows entry: the realised mean of every flow
    # (28.2 KB) is not what the entry asked; the line sets its own draws beside its ask.
    flows = {
        "started": 1_100,
        "generated": 1_000,
        "size_mean_bytes": 28_200.0,
        "generated_size_mean_bytes": 8_900.0,
        "requested_size_mean_bytes": 10_000.0,
        "load": 0.2689,
        "requested_load": 0.3,
    }
    lines = {line.label: line.text for line in summary_lines({"flows": flows})}
    assert lines["flow workload"] == (
        "mean size 8.9 KB (asked 10 KB), load 0.2689 (asked 0.3); "
        "with the other flows, mean size 28.2 KB"
    )
    flows["started"] = 1_000
    lines = {line.label: line.text for line in summary_lines({"flows": flows})}
    assert lines["flow workload"] == "mean size 8.9 KB (asked 10 KB), load 0.2689 (asked 0.3)"
