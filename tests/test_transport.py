"""End-host transports through the Python package: a roce flow workload under link loss, its
new flows.parquet columns and summary totals, written and read back (docs/transport.md)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import cnsim

SCENARIO = """
name = "roce-lossy"
duration_s = 0.02
seed = 3

[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[hosts]]
name = "c"
[[switches]]
name = "sw"

[[links]]
ends = ["a", "sw"]
rate_bps = 10e9
delay_s = 1e-6
loss_rate = 0.01
[[links]]
ends = ["b", "sw"]
rate_bps = 10e9
delay_s = 1e-6
loss_rate = 0.01
[[links]]
ends = ["c", "sw"]
rate_bps = 10e9
delay_s = 1e-6

[[traffic]]
kind = "flows"
hosts = ["a", "b"]
dst = "c"
load = 0.3
size = { dist = "fixed", bytes = 150000 }
stop_s = 0.004
transport = "roce"
"""


def test_roce_flows_complete_under_loss_and_report_their_retransmissions(tmp_path: Path) -> None:
    result = cnsim.run(SCENARIO)
    flows = result.flows
    assert len(flows) > 5
    assert flows["completed"].all()
    assert (flows["delivered_bytes"] == flows["size_bytes"]).all()
    assert (flows["sender_end_s"] > flows["end_s"]).all()
    np.testing.assert_allclose(flows["goodput_bps"], flows["size_bytes"] * 8 / flows["fct_s"])
    summary = result.summary
    assert summary["frames"]["dropped"]["link"] > 0
    assert summary["frames"]["conserved"]
    assert summary["flows"]["retransmitted_bytes"] == int(flows["retransmitted_bytes"].sum()) > 0
    assert summary["flows"]["timeouts"] == int(flows["timeouts"].sum())
    assert summary["control_frames"]["ack"] > 0
    assert "[transport.roce]" in result.scenario_toml
    result.save(tmp_path, plots=False)
    back = cnsim.Result.load(tmp_path)
    for column in ("retransmitted_bytes", "timeouts", "goodput_bps", "sender_end_s"):
        assert column in back.flows.columns
    assert back.flows["retransmitted_bytes"].sum() == flows["retransmitted_bytes"].sum()


def test_open_loop_flows_carry_empty_transport_columns() -> None:
    result = cnsim.run(SCENARIO.replace('transport = "roce"', "").replace("loss_rate = 0.01", ""))
    flows = result.flows
    assert (flows["retransmitted_bytes"] == 0).all()
    assert (flows["timeouts"] == 0).all()
    assert all(math.isnan(x) for x in flows["sender_end_s"])
    assert result.summary["control_frames"]["ack"] == 0
    assert result.summary["frames"]["dropped"]["link"] == 0


def _window_throughput_bps(result: cnsim.Result, source: str) -> float:
    return float(result.summary["window"]["per_source"][source]["throughput_bps"])


def test_dcqcn_qp_incast_shares_the_link_per_queue_pair() -> None:
    """Six long flows into one 40 Gb/s port, three from s1. Over roce each flow is a queue pair
    with its own DCQCN reaction point: the link is shared per QP (C/6 each), so s1 gets about
    three times s2. Open loop, s1's three flows share s1's one RP towards the receiver: a
    quarter of the link, as each other sender."""
    per_qp = cnsim.run("dcqcn-qp-incast")
    s1, s2 = (_window_throughput_bps(per_qp, s) for s in ("s1", "s2"))
    assert 2.5 < s1 / s2 < 4.0, (s1, s2)
    assert abs(s1 - 20e9) < 0.15 * 20e9, s1
    per_pair = cnsim.run("dcqcn-qp-incast", set={"traffic[0].transport": "none"})
    s1, s2 = (_window_throughput_bps(per_pair, s) for s in ("s1", "s2"))
    assert 0.7 < s1 / s2 < 1.4, (s1, s2)
