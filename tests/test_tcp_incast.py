"""The tcp-incast preset (docs/transport.md): goodput collapses with a 200 ms minimum RTO once
blocks lose their tails, and stays near the link rate with 1 ms (Vasudevan et al., SIGCOMM
2009)."""

from __future__ import annotations

import pandas as pd
import pytest

import cnsim

pytest.importorskip("cnsim._native")

LINK_BPS = 1e9


def test_incast_collapses_with_a_200ms_min_rto_and_not_with_1ms(tmp_path):
    spec = cnsim.load_sweep("tcp-incast")
    done = cnsim.sweep(spec, out=tmp_path / "incast", jobs=2, progress=False)
    assert (done.runs["status"] == "ok").all()
    table = pd.read_csv(tmp_path / "incast" / "table.csv")
    assert list(table.columns[1:5]) == ["n_senders", "min_rto_s", "goodput_bps", "timeouts"]
    by = {(int(r.n_senders), float(r.min_rto_s)): r for r in table.itertuples()}
    # One sender alone: no loss, the same either way, near the link rate.
    assert by[(1, 0.2)].goodput_bps == by[(1, 0.001)].goodput_bps
    assert by[(1, 0.2)].goodput_bps > 0.9 * LINK_BPS
    assert by[(1, 0.2)].timeouts == 0
    for n in (8, 16, 32, 64):
        slow, fast = by[(n, 0.2)], by[(n, 0.001)]
        assert slow.timeouts > 0, n
        # Collapse: a 200 ms stall against N x 2.1 ms of data.
        assert slow.goodput_bps < 0.4 * LINK_BPS, n
        assert slow.goodput_bps < 0.4 * fast.goodput_bps, n
    for n in (1, 2, 4, 8, 16, 32, 64):
        assert by[(n, 0.001)].goodput_bps > 0.8 * LINK_BPS, n
    drawn = done.plot()
    assert [p.name for p in drawn] == ["goodput.png"]
