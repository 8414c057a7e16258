"""Long flows through the Python package: `saturate` and `cbr` sources over a transport, one
flow per source-destination pair written by its application as the run goes
(docs/transport.md, "Long flows"). Expected numbers are computed here from the topology."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import cnsim

GBPS10 = 10e9


def _star(traffic: str, duration_s: float = 0.004, extra: str = "") -> str:
    """a, b, c on one switch: 10 Gb/s links of 1 us, no switch latency."""
    links = "".join(
        f'[[links]]\nends = ["{h}", "sw"]\nrate_bps = 10e9\ndelay_s = 1e-6\n' for h in "abc"
    )
    hosts = "".join(f'[[hosts]]\nname = "{h}"\n' for h in "abc")
    return (
        f'name = "long"\nduration_s = {duration_s}\n{hosts}[[switches]]\nname = "sw"\n'
        f"{links}{traffic}\n{extra}"
    )


def test_two_saturating_tcp_flows_fill_the_shared_link_and_stay_in_flight(tmp_path: Path) -> None:
    """a and b saturate c over tcp: two long flows share sw -> c. With an unlimited buffer
    nothing is lost, so the link never idles once the first frame reached the switch: c gets
    the line rate's bytes less that start, and each flow is still in flight at the end."""
    traffic = '[[traffic]]\nkind = "saturate"\nhosts = ["a", "b"]\ndst = "c"\ntransport = "tcp"\n'
    t_end = 0.004
    result = cnsim.run(_star(traffic, t_end))
    flows = result.flows
    assert list(flows["src"]) == ["a", "b"]
    assert list(flows["dst"]) == ["c", "c"]
    assert not flows["completed"].any()
    assert all(math.isnan(x) for x in flows["end_s"])
    delivered = int(flows["delivered_bytes"].sum())
    first_arrival_s = 2 * (1500 * 8 / GBPS10) + 2e-6
    want = GBPS10 * (t_end - first_arrival_s) / 8
    # Frame k's last bit reaches c at 4.4 + 1.2 k us: whole frames, at most one ahead of the
    # fluid count from the first arrival.
    assert want - 1 <= delivered <= want + 1500, (delivered, want)
    # Each flow's size is what its sender took; the rest of it is in flight.
    assert (flows["size_bytes"] >= flows["delivered_bytes"]).all()
    assert int(flows["size_bytes"].sum()) == result.summary["frames"]["generated"] * 1500
    summary = result.summary
    assert summary["flows"]["started"] == 2
    assert summary["flows"]["incomplete"] == 2
    assert summary["frames"]["conserved"]
    assert summary["control_frames"]["ack"] > 0
    result.save(tmp_path, plots=False)
    back = cnsim.Result.load(tmp_path)
    assert list(back.flows["size_bytes"]) == list(flows["size_bytes"])


def test_a_cbr_roce_flow_with_a_stop_completes_with_its_rate_times_its_time() -> None:
    """2 Gb/s from 0.5 ms to 2.5 ms: a 1500 B packet every 6 us, the first at the start, the
    last at 2.498 ms (333 intervals later): 334 packets, within a packet of rate x time. The
    path is idle, so the flow completes one path delay (4.4 us) after its last write."""
    traffic = (
        '[[traffic]]\nkind = "cbr"\nhosts = ["a"]\ndst = "c"\nrate_bps = 2e9\n'
        'start_s = 0.0005\nstop_s = 0.0025\ntransport = "roce"\n'
    )
    result = cnsim.run(_star(traffic))
    flow = result.flows.iloc[0]
    interval = 1500 * 8 / 2e9
    packets = math.ceil((0.0025 - 0.0005) / interval - 1e-9)
    assert flow["size_bytes"] == packets * 1500 == 334 * 1500
    assert abs(flow["size_bytes"] * 8 - 2e9 * 0.002) <= 1500 * 8
    assert flow["completed"]
    assert flow["delivered_bytes"] == flow["size_bytes"]
    path_delay = 2 * (1500 * 8 / GBPS10 + 1e-6)
    want_end = 0.0005 + (packets - 1) * interval + path_delay
    assert flow["end_s"] == pytest.approx(want_end, abs=1e-12)
    assert flow["fct_s"] == pytest.approx(want_end - 0.0005, abs=1e-12)
    assert flow["goodput_bps"] == pytest.approx(flow["size_bytes"] * 8 / flow["fct_s"])
    assert flow["timeouts"] == 0
    assert flow["retransmitted_bytes"] == 0
    assert result.summary["flows"]["completed"] == 1
    assert result.summary["frames"]["conserved"]


def test_open_loop_saturate_and_cbr_make_no_flow() -> None:
    traffic = (
        '[[traffic]]\nkind = "saturate"\nhosts = ["a"]\ndst = "c"\n'
        '[[traffic]]\nkind = "cbr"\nhosts = ["b"]\ndst = "c"\nrate_bps = 1e9\n'
    )
    result = cnsim.run(_star(traffic, 0.001))
    assert len(result.flows) == 0
    assert result.summary["control_frames"]["ack"] == 0


def test_bad_long_flow_combinations_name_the_field() -> None:
    bern = '[[traffic]]\nkind = "bernoulli"\nhosts = ["a"]\ndst = "c"\nload = 0.5\n'
    with pytest.raises(cnsim.ScenarioError, match=r"^traffic\[0\]\.transport: .*bernoulli"):
        cnsim.run(_star(bern + 'transport = "tcp"\n'))
    cbr = '[[traffic]]\nkind = "cbr"\nhosts = ["a"]\ndst = ["b", "c"]\nrate_bps = 1e9\n'
    with pytest.raises(cnsim.ScenarioError, match=r"^traffic\[0\]\.dst: .*one destination"):
        cnsim.run(_star(cbr + 'transport = "irn"\n'))


def test_a_trace_leaves_long_flows_out(tmp_path: Path) -> None:
    traffic = (
        '[[traffic]]\nkind = "saturate"\nhosts = ["a"]\ndst = "c"\ntransport = "roce"\n'
        '[[traffic]]\nkind = "flow_trace"\ntransport = "roce"\n'
        'flows = [{ start_s = 0.0001, src = "b", dst = "c", size_bytes = 30000 }]\n'
    )
    out = tmp_path / "t.csv"
    assert cnsim.trace(_star(traffic, 0.001), out) == 1
    lines = out.read_text().splitlines()
    assert len(lines) == 2
    assert lines[1].split(",")[1:4] == ["b", "c", "30000.0"]
