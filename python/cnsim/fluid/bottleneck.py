"""The single bottleneck a fluid model describes, read from a resolved scenario: the senders of
the first traffic entry and the switch port into the receiver."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def traffic_senders(traffic: Mapping[str, Any]) -> list[str]:
    """The senders of a traffic entry: a `saturate` entry's hosts, else its flows' sources in
    order, each once."""
    if "hosts" in traffic:
        return list(traffic["hosts"])
    senders = list(dict.fromkeys(flow["src"] for flow in traffic.get("flows", [])))
    if not senders:
        raise ValueError("traffic[0]: no senders (the fluid model needs N long flows)")
    return senders


def bottleneck_port(scenario: Mapping[str, Any], dst: str) -> tuple[str, str]:
    """(switch, receiver) of `[report.steady].port`, else of the one link into `dst`."""
    port = scenario.get("report", {}).get("steady", {}).get("port") or ""
    if not port:
        into = [link["ends"] for link in scenario["links"] if dst in link["ends"]]
        if len(into) == 1:
            port = f"{next(end for end in into[0] if end != dst)}->{dst}"
    if "->" not in port:
        raise ValueError("report.steady.port: name the bottleneck port ('sw->recv')")
    switch, receiver = port.split("->")
    return switch, receiver


@dataclass(frozen=True)
class IncastPath:
    """senders - switch - receiver, as the fluid models see a resolved scenario: the first
    traffic entry's senders, the bottleneck port's switch and receiver, a sender's access link
    and the bottleneck link (the scenario's link tables), and the entry's data frame size."""

    senders: list[str]
    switch: str
    receiver: str
    access: Mapping[str, Any]
    bottleneck: Mapping[str, Any]
    frame_bytes: float

    def round_trip_s(self, reply_bytes: float) -> float:
        """The loop's propagation out and back, with one data frame's serialisation on each of
        the two data hops and one reply's (an ACK, a CNP) of `reply_bytes` on each return hop."""
        total = 0.0
        for link in (self.access, self.bottleneck):
            total += 2 * (link["delay_s"] + link.get("delay_line_s", 0.0))
            total += 8 * (self.frame_bytes + reply_bytes) / link["rate_bps"]
        return total


def incast_path(scenario: Mapping[str, Any], dst: str) -> IncastPath:
    """The path of the first traffic entry's senders into `dst` through one switch
    (`bottleneck_port`); a ValueError names the links when there is no such path."""
    traffic = scenario["traffic"][0]
    senders = traffic_senders(traffic)
    switch, receiver = bottleneck_port(scenario, dst)
    links = {frozenset(link["ends"]): link for link in scenario["links"]}
    bottleneck = links.get(frozenset((switch, receiver)))
    access = links.get(frozenset((senders[0], switch)))
    if bottleneck is None or access is None:
        raise ValueError(
            f"links: the fluid model needs {senders[0]} - {switch} - {receiver} links "
            "(one switch between the senders and the receiver)"
        )
    frame = float(traffic.get("frame_bytes", 1500))
    return IncastPath(senders, switch, receiver, access, bottleneck, frame)
