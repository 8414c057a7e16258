"""The single bottleneck a fluid model describes, read from a resolved scenario: the senders of
the first traffic entry and the switch port into the receiver."""

from __future__ import annotations

from collections.abc import Mapping
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
