"""FCT slowdown by flow size (cnsim.flow_sizes, Result.fct_slowdown_by_size, the figure): the
buckets and percentiles on hand-made flows, a fat tree with the WebSearch workload in one
command, runs and sweep points side by side on the same buckets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cnsim
from cnsim.flow_sizes import size_edges, slowdown_by_size
from cnsim.plots.flows import compare_slowdown_by_size, sweep_slowdown_by_size_figure

FAT_TREE = """
name = "ft4-websearch"
duration_s = 0.02
[topology]
kind = "fat_tree"
k = 4
[[traffic]]
kind = "flows"
hosts = "all"
dst = "uniform"
load = 0.5
size = { cdf = "websearch" }
"""


def flows(sizes: list[float], slowdowns: list[float], completed: list[bool]) -> pd.DataFrame:
    return pd.DataFrame({"size_bytes": sizes, "slowdown": slowdowns, "completed": completed})


def test_buckets_are_half_open_and_percentiles_of_completed_flows() -> None:
    table = flows(
        [100, 200, 200, 300, 1000, 1000, 5000],
        [1.0, 2.0, 4.0, 3.0, 10.0, 50.0, 7.0],
        [True, True, True, True, True, False, True],
    )
    got = slowdown_by_size(table, edges=[100, 200, 1000, 5000])
    assert got["size_hi_bytes"].tolist() == [200, 1000, 5000]
    # (.., 200] holds 100 (the first bucket includes its low edge) and both 200s.
    assert got["started"].tolist() == [3, 3, 1]
    assert got["flows"].tolist() == [3, 2, 1], "the incomplete 1000-byte flow is not counted"
    assert got.loc[0, "slowdown_p50"] == 2.0
    assert got.loc[1, "slowdown_p50"] == pytest.approx(np.percentile([3.0, 10.0], 50))
    assert got.loc[1, "slowdown_p99"] == pytest.approx(np.percentile([3.0, 10.0], 99))
    assert got.loc[2, "slowdown_p95"] == 7.0


def test_default_buckets_hold_equal_counts_and_merge_repeated_sizes() -> None:
    sizes = np.arange(1, 1001, dtype=float)
    edges = size_edges(sizes, 4)
    assert len(edges) == 5
    got = slowdown_by_size(flows(list(sizes), [1.0] * 1000, [True] * 1000), buckets=4)
    assert got["started"].tolist() == [250, 250, 250, 250]
    one_size = slowdown_by_size(flows([500.0] * 3, [1.0, 2.0, 3.0], [True] * 3))
    assert len(one_size) == 1
    assert one_size.loc[0, "flows"] == 3
    with pytest.raises(ValueError, match="edges"):
        slowdown_by_size(flows([1.0], [1.0], [True]), edges=[5, 5])


def test_fat_tree_websearch_in_one_command(tmp_path: Path) -> None:
    """A new user's first study: a k=4 fat tree with WebSearch flows gets its run, the
    slowdown-by-size figure and the table in one command."""
    scenario = tmp_path / "ft.toml"
    scenario.write_text(FAT_TREE)
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "cnsim.cli", "run", str(scenario), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "plots" / "fct_slowdown_by_size.png").stat().st_size > 10_000
    result = cnsim.Result.load(out)
    table = result.fct_slowdown_by_size()
    assert table["started"].sum() == len(result.flows)
    assert table["flows"].sum() == int(result.flows["completed"].sum()) > 50
    done = table[table["flows"] > 0]
    assert (done["slowdown_p50"] <= done["slowdown_p95"]).all()
    assert (done["slowdown_p95"] <= done["slowdown_p99"]).all()
    assert (done["slowdown_p50"] >= 1.0 - 1e-9).all(), "no flow beats the idle network"


def test_runs_and_sweep_points_share_buckets(tmp_path: Path) -> None:
    low = cnsim.run(FAT_TREE, set={"traffic[0].load": 0.2})
    high = cnsim.run(FAT_TREE, set={"traffic[0].load": 0.6})
    fig = compare_slowdown_by_size({"20%": low, "60%": high}, buckets=5)
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == ["p50", "p95", "p99"]
    assert all(len(ax.get_lines()) == 2 + 1 for ax in axes), "two runs and the line at 1"
    base = tmp_path / "ft.toml"
    base.write_text(FAT_TREE)
    spec = {
        "sweep": {
            "name": "ft-load",
            "base": str(base),
            "replications": 1,
            "metrics": ["flows.slowdown_mean"],
            "grid": {"traffic[0].load": [0.2, 0.6]},
        }
    }
    study = cnsim.sweep(spec, out=tmp_path / "study", jobs=1, keep="full", progress=False)
    table = study.fct_slowdown_by_size(buckets=5)
    assert sorted(table["point"].unique()) == [0, 1]
    per_point = [g["size_hi_bytes"].tolist() for _, g in table.groupby("point")]
    assert per_point[0] == per_point[1], "every point on the same buckets"
    assert set(table["label"]) == {"traffic[0].load=0.2", "traffic[0].load=0.6"}
    fig = sweep_slowdown_by_size_figure(study, buckets=5)
    assert all(len(ax.get_lines()) == 3 for ax in fig.get_axes())
    fig.savefig(tmp_path / "sweep.png")
    # A sweep that kept its flows draws the by-size figure among its default figures.
    assert "fct_slowdown_by_size.png" in [p.name for p in study.plot(tmp_path / "full")]
    lean = cnsim.sweep(spec, out=tmp_path / "lean", jobs=1, keep="summary", progress=False)
    with pytest.raises(cnsim.SweepError, match="keep='full'"):
        lean.fct_slowdown_by_size()
    assert "fct_slowdown_by_size.png" not in [p.name for p in lean.plot(tmp_path / "lean_plots")]
