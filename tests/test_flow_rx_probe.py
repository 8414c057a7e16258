"""The per-flow delivered rate (`flow_rx_bps`) of transported flows with a congestion
controller: it adds up to each flow's delivered bytes, and the steady metrics use it when a run
has no rate limiter (a window scheme: DCTCP), so its rates and fairness are no longer empty."""

from __future__ import annotations

import numpy as np
import pytest

import cnsim


def test_delivered_rates_add_up_to_each_flows_bytes() -> None:
    r = cnsim.run("dctcp-incast")  # 8 long flows, 2 ms, probes every 1 us, the last at 2 ms
    rates = r.series("flow_rx_bps")
    assert list(rates.columns) == list(r.series("cc_window_bytes").columns)
    interval_s = r.scenario["report"]["probe_interval_s"]
    assert rates.index[-1] == pytest.approx(r.summary["sim_time_s"])
    by_flow = (rates.fillna(0.0).sum() * interval_s / 8).round()
    delivered = r.flows.set_index("flow_id")["delivered_bytes"]
    frame = 1500
    late = []
    for entity, total in by_flow.items():
        flow_id = int(str(entity).rsplit("#", 1)[1])
        late.append(int(delivered[flow_id]) - int(total))
    # Exact up to the last probe; a frame delivered at that same instant may be handled after
    # the probe's event (one frame at most: the bottleneck delivers one at a time).
    assert all(0 <= b <= frame for b in late), late
    assert sum(late) <= frame, late


def test_a_window_scheme_gets_steady_rates_and_fairness() -> None:
    r = cnsim.run("dctcp-incast")
    m = r.summary["metrics"]
    assert m["steady_n_flows"] == 8
    # The 8 flows share the 100 Gb/s port: 12.5 Gb/s each, within the start-up's leftovers.
    assert m["steady_rate_mean_bps"] == pytest.approx(100e9 / 8, rel=0.01)
    assert m["steady_fairness_index"] > 0.99
    steady = r.series("flow_rx_bps").loc[0.001:]  # [report.steady] starts at 1 ms
    assert np.isclose(steady.mean().sum(), m["steady_throughput_bps"], rtol=0.01)
