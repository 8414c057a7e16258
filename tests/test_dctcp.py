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
    # No rate limiter in a window-based scheme: no rate statistics.
    assert metrics["steady_n_flows"] == 0
    assert metrics["steady_rate_mean_bps"] is None  # NaN, written as null
