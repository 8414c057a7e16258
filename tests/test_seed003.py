"""Seed 003 (IBM Zurich, May 2007), "Impact of memory size on ECM and E2CM": the study
`seed003-ecm-e2cm` run on its two flow workloads (exponential and Pareto flows; the Bernoulli
points carry none of the findings tested here), and each of the seed's findings that cnsim
reproduces checked on its DIR/table.csv. The points and seeds are the study's own (a run's
seed derives from its point's values, not from the grid it sits in), so these are the numbers
of docs/seed003.md. What is not reproduced is stated there with the numbers, not tested.

192 runs (48 points x 4 replications) of 150 ms simulated, about a minute on two cores.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

import cnsim

pytest.importorskip("cnsim._native")

WORKLOADS = ("exponential", "pareto")
M_SMALL, M_LARGE = 75_000, 300_000


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    spec = cnsim.load_sweep("seed003-ecm-e2cm")
    names = spec.names["traffic"]
    keep = [i for i, name in enumerate(names) if name in WORKLOADS]
    grid = {**spec.grid, "traffic": [spec.grid["traffic"][i] for i in keep]}
    flows_only = replace(
        spec,
        grid=grid,
        names={**spec.names, "traffic": [names[i] for i in keep]},
        plots=tuple(p for p in spec.plots if "traffic" not in p.where),
    )
    out: Path = tmp_path_factory.mktemp("seed003") / "study"
    result = cnsim.sweep(flows_only, out=out, jobs=2, progress=False)
    assert len(result.failed) == 0
    t = pd.read_csv(out / "table.csv")
    assert (t["n"] == spec.replications).all()
    return t


def cell(t: pd.DataFrame, **where: object) -> pd.DataFrame:
    rows = t
    for column, value in where.items():
        rows = rows[rows[column] == value]
    return rows


def one(t: pd.DataFrame, column: str, **where: object) -> float:
    rows = cell(t, **where)
    assert len(rows) == 1, where
    return float(rows[column].iloc[0])


def test_the_flow_traces_are_the_same_in_every_point(table: pd.DataFrame) -> None:
    for workload in WORKLOADS:
        rows = cell(table, workload=workload)
        for column in ("flows_started", "flow_size_mean_bytes", "flow_load"):
            assert rows[column].nunique() == 1, (workload, column)
    # Realised: the exponential trace is close to what was asked; the Pareto one (shape 1.1)
    # falls short of its 60 KB mean and so of its load, as the seed's did (17.2 KB, 57%).
    exp = cell(table, workload="exponential").iloc[0]
    assert abs(exp["flow_size_mean_bytes"] / 60_000 - 1) < 0.02
    assert abs(exp["flow_load"] / 0.75 - 1) < 0.02
    pareto = cell(table, workload="pareto").iloc[0]
    assert pareto["flow_size_mean_bytes"] < 0.8 * 60_000
    assert pareto["flow_load"] < 0.8 * 0.75


def test_e2cm_drops_fewer_frames_without_pause(table: pd.DataFrame) -> None:
    """Seed: "E2CM drops fewer frames" (the no-PAUSE figure): in every cell without BCN(0,0)
    (1.6-4.5 times fewer), and with BCN(0,0) over the three memories together. (One BCN(0,0) cell
    goes the other way, exponential at 300 KB: 5,592 against 3,801 frames, each the mean of
    four replications that spread from 1,202 to 10,474: docs/seed003.md.)"""
    for workload in WORKLOADS:
        at = {"workload": workload, "pause": "PAUSE off"}
        for memory in (75_000, 150_000, 300_000):
            e2cm = one(
                table,
                "frames_dropped",
                scheme="E2CM",
                bcn00="BCN(0,0) off",
                memory_bytes=memory,
                **at,
            )
            ecm = one(
                table,
                "frames_dropped",
                scheme="ECM",
                bcn00="BCN(0,0) off",
                memory_bytes=memory,
                **at,
            )
            assert e2cm < ecm, (workload, memory, e2cm, ecm)
        with_bcn00 = cell(table, bcn00="BCN(0,0) on", **at)
        e2cm_total = with_bcn00[with_bcn00["scheme"] == "E2CM"]["frames_dropped"].sum()
        ecm_total = with_bcn00[with_bcn00["scheme"] == "ECM"]["frames_dropped"].sum()
        assert e2cm_total < ecm_total, (workload, e2cm_total, ecm_total)


def test_flows_completed_alike_with_bcn00_and_e2cm_ahead_without_pause_and_bcn00(
    table: pd.DataFrame,
) -> None:
    """Seed: "When either PAUSE or BCN(0,0) are enabled numbers are virtually identical;
    without PAUSE and BCN(0,0) E2CM tends to do somewhat better". Reproduced with BCN(0,0) on
    (within 6% of the flows started, PAUSE on or off) and, with PAUSE alone, for Pareto flows
    (within 2%); with PAUSE alone and exponential flows E2CM completes up to 12% more
    (docs/seed003.md). Without either, E2CM completes at least 10% of the flows more."""
    for workload in WORKLOADS:
        for memory in (75_000, 150_000, 300_000):
            at = {"workload": workload, "memory_bytes": memory}
            assert abs(completed_gap(table, "PAUSE on", "BCN(0,0) on", at)) < 0.06, at
            assert abs(completed_gap(table, "PAUSE off", "BCN(0,0) on", at)) < 0.06, at
            if workload == "pareto":
                assert abs(completed_gap(table, "PAUSE on", "BCN(0,0) off", at)) < 0.02, at
            assert completed_gap(table, "PAUSE off", "BCN(0,0) off", at) > 0.10, at


def completed_gap(t: pd.DataFrame, pause: str, bcn00: str, at: dict[str, object]) -> float:
    """(E2CM's flows completed - ECM's) / flows started, in one cell."""
    e2cm = one(t, "flows_completed", scheme="E2CM", pause=pause, bcn00=bcn00, **at)
    ecm = one(t, "flows_completed", scheme="ECM", pause=pause, bcn00=bcn00, **at)
    started = one(t, "flows_started", scheme="ECM", pause=pause, bcn00=bcn00, **at)
    return (e2cm - ecm) / started


def test_larger_memory_gives_shorter_fct(table: pd.DataFrame) -> None:
    """Seed: "Larger memory -> shorter flow completion time": M = 300 KB against 75 KB, in
    every cell with PAUSE, and for E2CM in every cell. (Without PAUSE, ECM's mean FCT is over
    the few flows that lost nothing and grows with M: docs/seed003.md.)"""
    for workload in WORKLOADS:
        for scheme in ("ECM", "E2CM"):
            for pause in ("PAUSE on", "PAUSE off"):
                if scheme == "ECM" and pause == "PAUSE off":
                    continue
                for bcn00 in ("BCN(0,0) off", "BCN(0,0) on"):
                    at = {"workload": workload, "scheme": scheme, "pause": pause, "bcn00": bcn00}
                    small = one(table, "fct_mean_s", memory_bytes=M_SMALL, **at)
                    large = one(table, "fct_mean_s", memory_bytes=M_LARGE, **at)
                    assert large < small, (at, small, large)


def test_ecm_with_pause_is_slowest_without_bcn00(table: pd.DataFrame) -> None:
    """Seed: "ECM with PAUSE tends to perform worst": the longest mean FCT of the four
    scheme x PAUSE variants in every cell without BCN(0,0). (With BCN(0,0) on it is not:
    docs/seed003.md.)"""
    for workload in WORKLOADS:
        for memory in (75_000, 150_000, 300_000):
            rows = cell(table, workload=workload, memory_bytes=memory, bcn00="BCN(0,0) off")
            slowest = rows.loc[rows["fct_mean_s"].idxmax()]
            assert (slowest["scheme"], slowest["pause"]) == ("ECM", "PAUSE on"), (workload, memory)


def test_e2cm_has_a_clearly_lower_fct_at_the_largest_memory_with_pause(
    table: pd.DataFrame,
) -> None:
    """Seed: "With largest memory, E2CM has about 20% lower FCT than ECM". At M = 300 KB with
    PAUSE (BCN(0,0) off): 23% lower for exponential flows, 35% for Pareto (docs/seed003.md);
    checked as 10-50% lower. (With BCN(0,0) on E2CM's FCT is higher: docs/seed003.md.)"""
    for workload in WORKLOADS:
        at = {"workload": workload, "memory_bytes": M_LARGE, "pause": "PAUSE on"}
        e2cm = one(table, "fct_mean_s", scheme="E2CM", bcn00="BCN(0,0) off", **at)
        ecm = one(table, "fct_mean_s", scheme="ECM", bcn00="BCN(0,0) off", **at)
        assert 0.10 < 1 - e2cm / ecm < 0.50, (workload, e2cm, ecm)
