"""`Result.fct_slowdown_by_size(edges=...)` cuts the sizes as `[report]
slowdown_size_edges_bytes` does: k edges, k + 1 buckets covering every flow, the summary's
`flows.slowdown_by_size` bucket for bucket."""

from __future__ import annotations

import math

import pytest

import cnsim
from cnsim.flow_sizes import summary_edges
from cnsim.plots.flows import compare_slowdown_by_size

EDGES = [10_000, 100_000]


@pytest.fixture(scope="module")
def run() -> cnsim.Result:
    return cnsim.run(
        "flows-16-exp",
        set={"duration_s": 0.02, "report.slowdown_size_edges_bytes": EDGES},
    )


def test_the_api_and_the_summary_give_the_same_buckets(run: cnsim.Result) -> None:
    summary = run.summary["flows"]["slowdown_by_size"]
    table = run.fct_slowdown_by_size(edges=EDGES, method="inverted_cdf")
    assert len(table) == len(summary) == len(EDGES) + 1
    assert table["started"].sum() == len(run.flows), "every flow is in a bucket"
    for i, row in table.iterrows():
        bucket = summary[f"b{i}"]
        assert row["size_lo_bytes"] == bucket["min_bytes"]
        hi = bucket["max_bytes"]
        assert row["size_hi_bytes"] == (math.inf if hi is None else hi)
        assert row["started"] == bucket["started"]
        assert row["flows"] == bucket["completed"]
        for p in (50, 95, 99):
            assert row[f"slowdown_p{p}"] == pytest.approx(bucket[f"p{p}"], rel=1e-12)


def test_one_edge_makes_two_buckets(run: cnsim.Result) -> None:
    table = run.fct_slowdown_by_size(edges=[10_000])
    assert table["size_hi_bytes"].tolist() == [10_000, math.inf]
    assert table["started"].sum() == len(run.flows)
    assert (table["started"] > 0).all()


def test_equal_count_buckets_still_cover_every_flow(run: cnsim.Result) -> None:
    table = run.fct_slowdown_by_size(buckets=4)
    assert len(table) == 4
    assert table["started"].sum() == len(run.flows)
    assert table["started"].min() >= len(run.flows) // 4 - 1


def test_bad_edges_are_refused() -> None:
    for bad in ([], [0, 10], [100, 10], [10, math.inf]):
        with pytest.raises(ValueError, match="edges"):
            summary_edges(bad)


def test_runs_side_by_side_on_edges_draw_every_bucket(run: cnsim.Result) -> None:
    fig = compare_slowdown_by_size({"a": run, "b": run}, edges=EDGES)
    for ax in fig.get_axes():
        lines = [line for line in ax.get_lines() if line.get_label() in ("a", "b")]
        assert [len(line.get_xdata()) for line in lines] == [3, 3]
        assert all(math.isfinite(x) for line in lines for x in line.get_xdata())
