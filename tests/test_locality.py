"""Traffic matrices by locality (`locality = { rack, pod }` with `dst = "uniform"`): the share of
flows that stays in the sender's rack, in its pod, or leaves it, on a generated fabric; the
resolved scenario carries the rack and pod sizes and repeats the run; bad input names the
field."""

from __future__ import annotations

import pytest

import cnsim

CLOS = """
name = "clos-local"
duration_s = 0.005
[topology]
kind = "clos3"
pods = 2
racks_per_pod = 2
hosts_per_rack = 4
fabric_planes = 2
spines_per_plane = 2
[[traffic]]
kind = "flows"
hosts = "all"
dst = "uniform"
load = 0.3
size = { dist = "exponential", mean_bytes = 10000 }
locality = { rack = 0.5, pod = 0.3 }
"""


def parts(result: cnsim.Result) -> tuple[float, float, float]:
    """Shares of the flows that stay in the rack (4 hosts), in the pod (8), or leave it."""
    index = {h["name"]: i for i, h in enumerate(result.scenario["hosts"])}
    src = result.flows["src"].astype(str).map(index)
    dst = result.flows["dst"].astype(str).map(index)
    rack = (src // 4 == dst // 4).mean()
    pod = ((src // 8 == dst // 8) & (src // 4 != dst // 4)).mean()
    return float(rack), float(pod), float(1.0 - rack - pod)


def test_flows_follow_the_locality_fractions() -> None:
    result = cnsim.run(CLOS)
    n = len(result.flows)
    assert n > 2000
    rack, pod, beyond = parts(result)
    # Binomial standard deviation at n > 2000 is below 0.012: 0.05 is four of them.
    assert rack == pytest.approx(0.5, abs=0.05)
    assert pod == pytest.approx(0.3, abs=0.05)
    assert beyond == pytest.approx(0.2, abs=0.05)
    assert (result.flows["src"].astype(str) != result.flows["dst"].astype(str)).all()
    # The resolved scenario names the sizes the fabric gave, and repeats the run exactly.
    locality = result.scenario["traffic"][0]["locality"]
    assert (locality["hosts_per_rack"], locality["racks_per_pod"]) == (4, 2)
    again = cnsim.run(cnsim.resolve(CLOS))
    assert again.flows.equals(result.flows)


def test_rack_local_traffic_never_leaves_the_rack() -> None:
    result = cnsim.run(CLOS.replace("rack = 0.5, pod = 0.3", "rack = 1.0"))
    assert parts(result)[0] == 1.0
    ports = result.per_port
    uplinks = ports[ports.index.astype(str).str.match(r"rsw\d+_\d+->fsw")]
    assert len(uplinks) == 8
    assert (uplinks["tx_frames"] == 0).all()
    assert ports["tx_frames"].sum() > 0


def test_a_leaf_spine_is_one_pod() -> None:
    leaf_spine = (
        CLOS.split("[topology]")[0]
        + """
[topology]
kind = "leaf_spine"
leaves = 4
spines = 2
hosts_per_leaf = 4
[[traffic]]
kind = "bernoulli"
hosts = "all"
dst = "uniform"
load = 0.1
locality = { rack = 0.25, pod = 0.75 }
"""
    )
    assert cnsim.run(leaf_spine, set={"duration_s": 1e-4}).summary["frames"]["delivered"] > 0
    no_pod = r"traffic\[0\]\.locality\.pod: there is no other pod"
    with pytest.raises(cnsim.ScenarioError, match=no_pod):
        cnsim.run(leaf_spine.replace("pod = 0.75", "pod = 0.5"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('dst = "uniform"', 'dst = ["h0", "h1"]'), r"traffic\[0\]\.locality: needs dst"),
        (("rack = 0.5", "rack = 1.5"), r"traffic\[0\]\.locality\.rack: a fraction in \[0, 1\]"),
        (("pod = 0.3", "pod = 0.6"), r"traffic\[0\]\.locality\.pod: rack \+ pod is at most 1"),
        (("rack = 0.5,", "rack = 0.5, hosts_per_rack = 3,"), r"locality\.hosts_per_rack: the 16"),
    ],
)
def test_bad_localities_name_the_field(change: tuple[str, str], message: str) -> None:
    with pytest.raises(cnsim.ScenarioError, match=message):
        cnsim.run(CLOS.replace(*change))


def test_a_hand_written_network_gives_the_sizes() -> None:
    hand = """
name = "hand"
duration_s = 1e-4
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s"
[[links]]
ends = ["a", "s"]
rate_bps = 10e9
[[links]]
ends = ["b", "s"]
rate_bps = 10e9
[[traffic]]
kind = "bernoulli"
hosts = ["a"]
dst = "uniform"
load = 0.1
locality = { rack = 1.0 }
"""
    with pytest.raises(cnsim.ScenarioError, match=r"locality\.hosts_per_rack: required without"):
        cnsim.run(hand)
    sized = "rack = 1.0, hosts_per_rack = 2, racks_per_pod = 1"
    done = cnsim.run(hand.replace("rack = 1.0", sized))
    assert done.summary["frames"]["delivered"] > 0
