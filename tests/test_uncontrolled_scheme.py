"""A scheme that acts on a transport's ACKs (dctcp, timely, hpcc, swift) with only open-loop
traffic controls nothing: the run says so, and says nothing when a transport carries the flows."""

from __future__ import annotations

import cnsim
from cnsim.analysis import uncontrolled_scheme_warning

PAIR = """
name = "pair"
duration_s = 0.0005
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
[[links]]
ends = ["a", "sw"]
rate_bps = 10e9
delay_s = 1e-6
[[links]]
ends = ["sw", "b"]
rate_bps = 10e9
delay_s = 1e-6
[[traffic]]
kind = "saturate"
hosts = ["a"]
dst = "b"
{transport}
[congestion]
scheme = "dctcp"
"""


def test_an_ack_driven_scheme_over_open_loop_traffic_warns() -> None:
    result = cnsim.run(PAIR.format(transport=""))
    assert any('congestion.scheme = "dctcp" acts on' in w for w in result.warnings), result.warnings


def test_no_warning_when_a_transport_carries_the_traffic() -> None:
    result = cnsim.run(PAIR.format(transport='transport = "roce"'))
    assert not any("acts on a transport" in w for w in result.warnings), result.warnings


def test_only_ack_driven_schemes_and_all_open_loop_entries_warn() -> None:
    open_loop = {"traffic": [{"kind": "bernoulli"}, {"kind": "flows"}]}
    mixed = {"traffic": [{"kind": "bernoulli"}, {"kind": "flows", "transport": "roce"}]}
    for scheme in ["dctcp", "timely", "hpcc", "swift"]:
        assert uncontrolled_scheme_warning({**open_loop, "congestion": {"scheme": scheme}})
        assert uncontrolled_scheme_warning({**mixed, "congestion": {"scheme": scheme}}) is None
    for scheme in ["qcn", "dcqcn", "none"]:
        assert uncontrolled_scheme_warning({**open_loop, "congestion": {"scheme": scheme}}) is None
