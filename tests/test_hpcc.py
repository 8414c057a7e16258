"""HPCC end to end (docs/hpcc.md): on the hpcc-incast preset (8 long roce flows into one
100 Gb/s port) the switch's in-band telemetry holds the bottleneck near eta = 95 % of the link
with the queue near zero after the first round trips (HPCC, SIGCOMM 2019, section 3 and its
incast figures), and the window's start is the bandwidth-delay product of T."""

from __future__ import annotations

import pytest

import cnsim

pytest.importorskip("cnsim._native")

LINK_BPS = 100e9
N_FLOWS = 8
ETA = 0.95
MTU_BYTES = 1500
# T computed from the topology: two 1500 B and two 64 B serialisations at 100 Gb/s plus four
# 1 us links (the same base round trip as test_timely's).
BASE_RTT_S = 2 * (MTU_BYTES + 64) * 8 / LINK_BPS + 4e-6


@pytest.fixture(scope="module")
def incast() -> cnsim.Result:
    return cnsim.run("hpcc-incast")


def test_hpcc_runs_with_t_from_the_topology(incast: cnsim.Result) -> None:
    variant = incast.summary["variant"]
    assert variant["scheme"] == "hpcc"
    assert variant["parameter_set"] == "sigcomm2019"
    assert variant["base_rtt_s"] == pytest.approx(BASE_RTT_S, rel=1e-9)


def test_every_window_starts_at_the_bdp_of_t(incast: cnsim.Result) -> None:
    w = incast.series("cc_window_bytes")
    assert len(w.columns) == N_FLOWS
    first = w.iloc[0]
    # One probe interval in, no ACK has come back yet (T = 4.25 us > 2 us).
    assert first.tolist() == pytest.approx([LINK_BPS * BASE_RTT_S / 8] * N_FLOWS)


def test_the_queue_drains_within_the_first_round_trips_and_stays_near_zero(
    incast: cnsim.Result,
) -> None:
    q = incast.series("queue_bytes", "sw->recv")["sw->recv"]
    # The first RTT at line rate queues about 7 windows (380 KB); HPCC drains it at once.
    assert q.max() > 300e3
    after = q[q.index >= 0.5e-3]
    assert after.max() < 10 * MTU_BYTES
    assert incast.summary["metrics"]["steady_queue_mean_bytes"] < 2 * MTU_BYTES


def test_the_link_runs_near_eta_and_nothing_is_dropped(incast: cnsim.Result) -> None:
    # U counts the standing queue too (min(qLen) / (B T), about 0.02 per queued frame), so
    # the throughput sits a little under eta C.
    thr = incast.summary["metrics"]["steady_throughput_bps"]
    assert 0.92 * LINK_BPS < thr < ETA * LINK_BPS
    assert incast.summary["frames"]["dropped"]["total"] == 0
    assert incast.summary["pfc"]["classes"]["3"]["xoff_sent"] == 0
