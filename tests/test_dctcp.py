"""DCTCP end to end: the dctcp-incast preset keeps the 100 Gb/s port full with the queue sawing
around K (docs/dctcp.md), and a run without rate limiters still has its steady queue metrics."""

from __future__ import annotations

import pytest

import cnsim

K_BYTES = 30_000
LINK_BPS = 100e9


@pytest.fixture(scope="module")
def incast() -> cnsim.Result:
    return cnsim.run("dctcp-incast")


def test_the_port_stays_full_and_nothing_is_dropped(incast: cnsim.Result) -> None:
    metrics = incast.summary["metrics"]
    assert metrics["steady_throughput_bps"] > 0.95 * LINK_BPS
    assert incast.summary["frames"]["dropped"]["total"] == 0


def test_the_queue_saws_around_k(incast: cnsim.Result) -> None:
    metrics = incast.summary["metrics"]
    # The paper's analysis (section 3.3) for N = 8, C x RTT = 35.4 packets, K = 20 packets: an
    # amplitude of 17 packets (25.6 KB) between K + N - A and K + N.
    assert abs(metrics["steady_queue_mean_bytes"] - K_BYTES) < 25_600 / 2
    assert 0 < metrics["steady_queue_std_bytes"] < 25_600 / 2
    # No rate limiter in a window-based scheme: the rate statistics are the flows' delivered
    # rates (`flow_rx_bps`), 8 flows sharing the port (what leaves the port arrives a link
    # later: the window's edges differ by the frames on that link).
    assert metrics["steady_n_flows"] == 8
    sent_bps = metrics["steady_throughput_bps"]
    assert metrics["steady_rate_mean_bps"] * 8 == pytest.approx(sent_bps, rel=1e-3)


def test_over_tcp_with_delayed_acks_the_echo_state_machine_keeps_the_queue_at_k() -> None:
    """DCTCP over tcp with 20 us delayed ACKs: about half the ACKs of one per packet, and
    with the receiver's ECN-echo state machine (a change of CE mark flushes the pending ACK
    with the old mark, docs/dctcp.md) the sender still counts marked bytes exactly, so the
    queue saws around K as with an ACK per packet."""
    runs = {
        delay: cnsim.run(
            "dctcp-incast",
            set={
                "traffic[0].transport": "tcp",
                "transport.tcp.delayed_ack_s": delay,
                "duration_s": 0.01,
            },
        ).summary
        for delay in (0.0, 20e-6)
    }
    per_packet, delayed = runs[0.0], runs[20e-6]
    assert delayed["control_frames"]["ack"] < 0.6 * per_packet["control_frames"]["ack"]
    for s in (per_packet, delayed):
        assert s["metrics"]["steady_throughput_bps"] > 0.99 * LINK_BPS
        assert abs(s["metrics"]["steady_queue_mean_bytes"] - K_BYTES) < 25_600 / 2
    delayed_q = delayed["metrics"]["steady_queue_mean_bytes"]
    assert delayed_q == pytest.approx(per_packet["metrics"]["steady_queue_mean_bytes"], rel=0.1)


def test_k_per_link_rate_and_a_window_cap_act_on_the_queue(incast: cnsim.Result) -> None:
    """`k_reference_rate_bps`: K = 30 KB at 50 Gb/s is 60 KB at the preset's 100 Gb/s port, so
    the queue saws around twice as high; `max_cwnd_packets`: eight windows of 2 packets (24 KB
    in all, under C x RTT) cannot fill the port, so no queue builds and the link runs short."""
    scaled = cnsim.run("dctcp-incast", set={"congestion.dctcp.k_reference_rate_bps": 50e9})
    mean = scaled.summary["metrics"]["steady_queue_mean_bytes"]
    assert abs(mean - 2 * K_BYTES) < 25_600 / 2, mean
    assert mean > incast.summary["metrics"]["steady_queue_mean_bytes"] + 20_000
    capped = cnsim.run(
        "dctcp-incast",
        set={
            "congestion.dctcp.max_cwnd_packets": 2,
            "congestion.dctcp.initial_cwnd_packets": 2,
        },
    )
    metrics = capped.summary["metrics"]
    assert metrics["steady_queue_mean_bytes"] < 3_000
    assert metrics["steady_throughput_bps"] < 0.8 * LINK_BPS
