"""A scheme that acts on a transport's ACKs (dctcp, timely, hpcc, swift) with only open-loop
traffic controls nothing: the run says so, and says nothing when a transport carries the flows."""

from __future__ import annotations

import cnsim
from cnsim.analysis import uncontrolled_scheme_warning
from conftest import TWO_HOST_SATURATE


def pair(transport: str) -> str:
    """Host a saturating b for 1 ms (conftest's scenario) under DCTCP, over `transport`."""
    return f'{TWO_HOST_SATURATE}transport = "{transport}"\n[congestion]\nscheme = "dctcp"\n'


def test_an_ack_driven_scheme_over_open_loop_traffic_warns() -> None:
    result = cnsim.run(pair("none"))
    assert any('congestion.scheme = "dctcp" acts on' in w for w in result.warnings), result.warnings


def test_no_warning_when_a_transport_carries_the_traffic() -> None:
    result = cnsim.run(pair("roce"))
    assert not any("acts on a transport" in w for w in result.warnings), result.warnings


def test_only_ack_driven_schemes_and_all_open_loop_entries_warn() -> None:
    open_loop = {"traffic": [{"kind": "bernoulli"}, {"kind": "flows"}]}
    mixed = {"traffic": [{"kind": "bernoulli"}, {"kind": "flows", "transport": "roce"}]}
    for scheme in ["dctcp", "timely", "hpcc", "swift"]:
        assert uncontrolled_scheme_warning({**open_loop, "congestion": {"scheme": scheme}})
        assert uncontrolled_scheme_warning({**mixed, "congestion": {"scheme": scheme}}) is None
    for scheme in ["qcn", "dcqcn", "none"]:
        assert uncontrolled_scheme_warning({**open_loop, "congestion": {"scheme": scheme}}) is None
