"""The incast recipe (`kind = "incast"`), the summary's slowdown by flow size
(`[report] slowdown_size_edges_bytes`) against `cnsim.flow_sizes`, and a reduced
`schemes-incast-mix` sweep (docs/flows.md, docs/hpcc.md)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cnsim
from cnsim.flow_sizes import slowdown_by_size
from cnsim.plots.sweep_sizes import bucket_labels, bucket_metrics

EDGES = [10_000, 100_000, 1_000_000]

SMALL = """
name = "incast-small"
duration_s = 0.006
seed = 3
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_rate_bps = 25e9
[[traffic]]
kind = "flows"
hosts = "all"
dst = "uniform"
load = 0.4
size = { cdf = "fb_hadoop" }
stop_s = 0.002
transport = "roce"
seed = 5
[[traffic]]
kind = "incast"
hosts = "all"
dst = "uniform"
fan_in = 5
interval_s = 0.0005
start_s = 0.0001
stop_s = 0.002
size = { bytes = 60_000 }
transport = "roce"
seed = 5
[report]
probe_interval_s = 1e-4
slowdown_size_edges_bytes = [10_000, 100_000, 1_000_000]
"""


@pytest.fixture(scope="module")
def small() -> cnsim.Result:
    return cnsim.run(SMALL)


def test_incasts_start_together_from_distinct_senders(small: cnsim.Result) -> None:
    flows = small.flows
    incast = flows[flows["size_bytes"] == 60_000]
    # Incasts at 0.1, 0.6, 1.1 and 1.6 ms, five flows each (a background flow of exactly
    # 60,000 B would be a coincidence the counts below would show).
    starts = sorted(set(incast["start_s"].round(12)))
    assert starts == pytest.approx([1e-4, 6e-4, 1.1e-3, 1.6e-3])
    for _, group in incast.groupby(incast["start_s"].round(12)):
        assert len(group) == 5
        assert group["src"].nunique() == 5
        assert group["dst"].nunique() == 1
        assert group["dst"].iloc[0] not in set(group["src"])


def test_the_summary_table_matches_flow_sizes_at_nearest_rank(small: cnsim.Result) -> None:
    table = small.summary["flows"]["slowdown_by_size"]
    assert list(table) == ["b0", "b1", "b2", "b3"]
    python = slowdown_by_size(small.flows, [0, *EDGES, math.inf], method="inverted_cdf")
    assert len(python) == 4
    for i, row in python.iterrows():
        bucket = table[f"b{i}"]
        assert bucket["started"] == row["started"]
        assert bucket["completed"] == row["flows"]
        assert bucket["min_bytes"] == ([0, *EDGES])[int(i)]
        assert bucket["max_bytes"] == ([*EDGES, None])[int(i)]
        for p in (50, 95, 99):
            value = bucket[f"p{p}"]
            if row["flows"] == 0:
                assert value is None
            else:
                assert value == row[f"slowdown_p{p}"], (i, p)
    # Every bucket of this run has completed flows; the incasts are in b1 (10-100 KB).
    assert all(b["completed"] > 0 for b in table.values())
    assert table["b1"]["started"] >= 20


def test_linear_percentiles_differ_from_nearest_rank() -> None:
    flows = pd.DataFrame(
        {"size_bytes": [1.0] * 4, "completed": [True] * 4, "slowdown": [1.0, 2.0, 3.0, 4.0]}
    )
    linear = slowdown_by_size(flows, [0, 10])
    rank = slowdown_by_size(flows, [0, 10], method="inverted_cdf")
    assert linear["slowdown_p50"].iloc[0] == 2.5
    assert rank["slowdown_p50"].iloc[0] == 2.0


def test_bucket_metrics_and_labels() -> None:
    metrics = ["flows.slowdown_by_size.b1.p99", "flows.started", "flows.slowdown_by_size.b0.p99"]
    found = bucket_metrics("flows.slowdown_by_size.*.p99", metrics)
    assert found == [(0, metrics[2]), (1, metrics[0])]
    labels = bucket_labels("[report]\nslowdown_size_edges_bytes = [10000, 1000000]\n", 3)
    assert labels == ["<= 10 KB", "10 KB-1 MB", "> 1 MB"]
    assert bucket_labels("", 2) == ["b0", "b1"]


def test_a_reduced_schemes_incast_mix_sweep(tmp_path: Path) -> None:
    spec = cnsim.load_sweep("schemes-incast-mix")
    short = replace(
        spec,
        grid={"congestion.scheme": ["dcqcn", "hpcc"], "traffic[0].load": [0.3]},
        set={
            "topology.leaves": 2,
            "topology.hosts_per_leaf": 8,
            "topology.spines": 2,
            "duration_s": 0.002,
            "traffic[0].stop_s": 0.001,
            "traffic[1].stop_s": 0.001,
            "traffic[1].fan_in": 8,
        },
    )
    study = cnsim.sweep(short, out=tmp_path, jobs=1, progress=False)
    table = pd.read_csv(tmp_path / "table.csv")
    assert table["scheme"].tolist() == ["dcqcn", "hpcc"]
    for column in ("le10KB_p99", "KB10_100_p99", "KB100_MB1_p50", "pfc_xoff_frames"):
        assert column in table.columns
    assert table["le10KB_p50"].notna().all()
    assert (table["le10KB_p50"] >= 1.0).all()
    assert (table["flows_started"] > 0).all()
    from cnsim.plots.sweep import make_sweep_plots, sweep_figure

    p99 = next(p for p in study.spec.plots if p.y.endswith(".p99"))
    fig = sweep_figure(study, p99)
    assert fig is not None
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "<= 10 KB",
        "10 KB-100 KB",
        "100 KB-1 MB",
        "> 1 MB",
    ]
    assert [c.get_label() for c in ax.containers] == ["scheme dcqcn", "scheme hpcc"]
    b0 = table.set_index("scheme")["le10KB_p99"]
    hpcc_line = ax.containers[1].lines[0]
    assert hpcc_line.get_ydata()[0] == pytest.approx(b0["hpcc"])
    figures = sorted(p.name for p in make_sweep_plots(study, tmp_path / "plots"))
    assert figures == ["slowdown_p50_by_size.png", "slowdown_p99_by_size.png"]
    # Without [[sweep.plots]], the buckets are drawn as the by-size figure (p50, p95, p99), not
    # as a figure per bucket and percentile.
    from cnsim.sweeps.result import SweepResult

    bare = SweepResult(replace(study.spec, plots=()), study.runs, study.out_dir)
    drawn = [p.name for p in make_sweep_plots(bare, tmp_path / "bare")]
    assert drawn[:3] == [f"slowdown_p{p}_by_size.png" for p in (50, 95, 99)]
    assert not any("slowdown_by_size" in name for name in drawn[3:])
    assert "fct_slowdown_by_size.png" not in drawn


def test_the_incast_is_in_the_trace(tmp_path: Path) -> None:
    out = tmp_path / "trace.csv"
    cnsim.trace(SMALL, out)
    rows = pd.read_csv(out)
    incast = rows[rows["size_bytes"] == 60_000]
    assert len(incast) == 20
    assert np.allclose(sorted(set(incast["start_s"])), [1e-4, 6e-4, 1.1e-3, 1.6e-3])
