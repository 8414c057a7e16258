"""PFC end to end: the two presets of the DCQCN paper's section 2 run from the CLI, drop nothing
in their lossless class, conserve frames, and show the unfairness and the victim flow; DCQCN on
top gives the victim its fair rate back."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import cnsim

LINK_BPS = 40e9


def run_cli(name: str, out: Path, *args: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "cnsim.cli", "run", name, "--out", str(out), "--quiet", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def window_bps(summary: dict[str, Any], host: str) -> float:
    return float(summary["window"]["per_source"][host]["throughput_bps"])


def assert_lossless_and_conserved(summary: dict[str, Any]) -> None:
    frames = summary["frames"]
    assert frames["dropped"]["total"] == 0
    assert frames["conserved"] is True
    assert frames["generated"] == frames["delivered"] + frames["in_flight"]
    c3 = summary["pfc"]["classes"]["3"]
    assert c3["lossless"] is True
    assert c3["headroom_overflow_drops"] == 0
    assert c3["xoff_sent"] > 0
    assert c3["why"].startswith("fired:")
    assert summary["control_frames"]["pfc_xoff"] == c3["xoff_sent"]


@pytest.fixture(scope="module")
def unfairness(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("pfc") / "unfairness"
    summary = run_cli("pfc-unfairness", out)
    assert sorted(p.name for p in (out / "plots").glob("*.png")) == [
        "host_throughput.png",
        "per_source_throughput.png",
        "pfc_paused.png",
        "switch_queue.png",
    ]
    return summary


def test_unfairness_gives_the_local_sender_half_the_link(unfairness: dict[str, Any]) -> None:
    assert_lossless_and_conserved(unfairness)
    # T4 pauses its two inputs in turn: H4 alone on one, H1-H3 sharing the other.
    assert window_bps(unfairness, "H4") == pytest.approx(LINK_BPS / 2, rel=0.01)
    for host in ("H1", "H2", "H3"):
        assert window_bps(unfairness, host) == pytest.approx(LINK_BPS / 6, rel=0.02), host
    assert window_bps(unfairness, "R") == 0.0
    received = unfairness["window"]["per_source"]["R"]["rx_throughput_bps"]
    assert received == pytest.approx(LINK_BPS, rel=0.001)


@pytest.fixture(scope="module")
def victim(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_cli("pfc-victim-flow", tmp_path_factory.mktemp("pfc") / "victim")


def test_the_victim_flow_is_held_to_its_neighbours_rate(victim: dict[str, Any]) -> None:
    assert_lossless_and_conserved(victim)
    vs = window_bps(victim, "VS")
    # Fair: 20 Gb/s (T1->S1 minus the two 10 Gb/s flows to R). PFC holds it with H11/H12.
    assert vs < 0.5 * 20e9
    assert vs == pytest.approx(window_bps(victim, "H11"), rel=0.02)
    # VS never crosses the congested port, yet it is paused at T1 for most of the time.
    paused = victim["pfc"]["classes"]["3"]["paused_s_by_port"]
    assert paused["VS->T1"] > 0.5 * victim["sim_time_s"]
    assert "S1->T2" not in paused


def test_dcqcn_on_top_gives_the_victim_its_fair_rate() -> None:
    result = cnsim.run(
        "pfc-victim-flow",
        set={
            "congestion.scheme": "dcqcn",
            "duration_s": 0.06,
            "report.window_s": [0.03, 0.06],
        },
    )
    s = result.summary
    assert s["frames"]["dropped"]["total"] == 0
    assert s["control_frames"]["dcqcn_cnp"] > 0
    vs = float(s["window"]["per_source"]["VS"]["throughput_bps"])
    assert vs == pytest.approx(20e9, rel=0.1)


def test_dcqcn_on_top_makes_the_unfairness_go_because_ecn_acts_before_pfc() -> None:
    # Issue 26: XOFF (per ingress port) above Kmax (on the egress queue), as the DCQCN paper's
    # buffer guideline asks. With XOFF 40 KB, below Kmax, PFC paused T4's inputs long before the
    # queue was fully marked (1,840 XOFF in 60 ms) and H4 kept 12.3 Gb/s, Jain 0.979.
    # H4's share over the 30 ms window scatters with the run seed (DCQCN's rates oscillate:
    # 8.8-10.5 Gb/s over seeds 1-3, any source 8.1-11.4), so its mean over three seeds is checked.
    h4 = []
    for seed in (1, 2, 3):
        result = cnsim.run(
            "pfc-unfairness",
            seed=seed,
            set={
                "congestion.scheme": "dcqcn",
                "congestion.dcqcn.mark_on": "dequeue",
                "duration_s": 0.06,
                "report.window_s": [0.03, 0.06],
            },
        )
        s = result.summary
        assert s["frames"]["dropped"]["total"] == 0
        assert s["control_frames"]["pfc_xoff"] < 50
        assert s["metrics"]["fairness_index"] > 0.99
        h4.append(float(s["window"]["per_source"]["H4"]["throughput_bps"]))
    assert sum(h4) / len(h4) == pytest.approx(10e9, rel=0.1)


def test_auto_headroom_changes_no_frame_where_the_fixed_one_held() -> None:
    # `headroom_bytes = "auto"` only moves the point of overflow: where 30 KB never overflowed,
    # every frame's fate is the same, and each port's own bound is what the summary reports.
    fixed = cnsim.run("pfc-unfairness", set={"duration_s": 0.02}).summary
    auto = cnsim.run("pfc-unfairness", set={"duration_s": 0.02, "pfc.headroom_bytes": "auto"})
    s = auto.summary
    assert s["pfc"]["headroom_auto"] is True
    assert "headroom_auto" not in fixed["pfc"]
    assert s["frames"] == fixed["frames"]
    assert s["per_source"] == fixed["per_source"]
    c3, f3 = s["pfc"]["classes"]["3"], fixed["pfc"]["classes"]["3"]
    for key in ("xoff_sent", "xon_sent", "paused_s_by_port", "max_headroom_bytes"):
        assert c3[key] == f3[key], key
    # 40 Gb/s, 1 us links, 1000 B frames: 40e9 x (2 us + 1,064 B / 40 Gb/s) / 8 + 2,000 B.
    assert c3["headroom_bytes"] == 10_000 + 1_064 + 2_000
    assert 0 < c3["max_headroom_bytes"] <= c3["headroom_bytes"] < f3["headroom_bytes"]


def test_victim_ecmp_sweep_shows_the_victim_slowed_as_t3_senders_join(tmp_path: Path) -> None:
    """Points 0 and 2 of the sweep (no sender and two senders under T3), 40 ECMP placements
    each: with none the victim never drops to 10 Gb/s; with two it usually does."""
    spec = cnsim.load_sweep("pfc-victim-ecmp")
    lists = spec.grid["traffic[0].hosts"]
    names = spec.names["traffic[0].hosts"]
    short = replace(
        spec,
        grid={"traffic[0].hosts": [lists[0], lists[2]]},
        names={"traffic[0].hosts": [names[0], names[2]]},
        replications=40,
    )
    study = cnsim.sweep(short, out=tmp_path, jobs=2, progress=False)
    table = pd.read_csv(tmp_path / "table.csv")
    assert table["n"].tolist() == [40, 40]
    assert table["t3_senders"].tolist() == [0, 2]
    assert (table["dropped_frames"] == 0).all()
    runs = study.ok
    victim = runs["window.per_source.VS.throughput_bps"]
    slowed = (victim <= 10.01e9).groupby(runs["point"]).mean()
    assert slowed.iloc[0] == 0.0
    assert slowed.iloc[1] > 0.5
