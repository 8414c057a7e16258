"""The numbers an experiment is about, read from its resolved scenario: reference lines.

A figure of a queue means more with the thresholds the scheme acts on drawn in it (DCQCN's
Kmin/Kmax, QCN's and BCN's Qeq, a queue limit, PAUSE's and PFC's XOFF/XON), and a rate figure
with the fair share the senders should converge to. Every value here comes from the resolved
scenario (and, for which ports have a congestion point, the summary); nothing is hard-coded per
preset.

The fair share is the max-min share of the receiver's link: all the plotted senders send to one
host D (saturating, Bernoulli or constant-rate sources), the capacity C(t) is the rate into D
(the link's direction towards D with its schedule, and D's receive rate if lower), and the share
is C(t) water-filled over the senders active at t (each gets at most what it offers). It is the
fair share whenever D's link is the bottleneck; it is drawn only when it binds (some sender
offers more), and is labelled as the receiver link's share, so it never claims more.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cnsim.readout import rate_text

# Traffic kinds whose offered rate is known from the scenario.
STEADY_KINDS = frozenset({"saturate", "bernoulli", "cbr"})
QEQ_SCHEMES = {"qcn": "qcn", "bcn": "bcn", "ecm": "bcn", "e2cm": "bcn"}


@dataclass(frozen=True)
class Reference:
    """A horizontal reference: `values[i]` holds from `times_s[i]` (one value: all the time)."""

    label: str
    times_s: tuple[float, ...]
    values: tuple[float, ...]

    @property
    def constant(self) -> bool:
        """True when it never changes."""
        return len(set(self.values)) == 1 and not math.isnan(self.values[0])

    @property
    def peak(self) -> float:
        """Its largest value (NaN where it does not apply: no sender active yet)."""
        return max((v for v in self.values if not math.isnan(v)), default=math.nan)


def constant(label: str, value: float) -> Reference:
    """A reference that holds all the time."""
    return Reference(label, (0.0,), (float(value),))


def plot_references(
    scenario: Mapping[str, Any],
    summary: Mapping[str, Any],
    metric: str,
    entities: Sequence[str],
    *,
    summed: bool = False,
) -> list[Reference]:
    """The references of one time-series figure of `metric` over `entities` (the plotted
    columns), `summed` when the figure draws their sum."""
    if metric in ("queue_bytes", "class_queue_bytes"):
        return _queue_references(scenario, summary, [e.split(":")[0] for e in entities])
    if metric == "switch_memory_bytes":
        return _memory_references(scenario, entities)
    if metric in ("rp_rate_bps", "host_tx_bps", "host_offered_bps") and not summed:
        share = fair_share(scenario, [_sender(e) for e in entities])
        return [share] if share is not None else []
    if metric in ("host_tx_bps", "host_rx_bps") and summed:
        capacity = _common_capacity(scenario, entities, metric)
        return [capacity] if capacity is not None else []
    if metric == "port_tx_bps" and len(entities) == 1:
        sender, _, peer = entities[0].partition("->")
        capacity = _capacity(scenario, sender, peer, f"capacity of {entities[0]}")
        return [] if math.isinf(capacity.peak) else [_with_value(capacity)]
    return []


# ---------------------------------------------------------------- queues and memory


def _queue_references(
    scenario: Mapping[str, Any], summary: Mapping[str, Any], ports: Sequence[str]
) -> list[Reference]:
    """Thresholds on a switch output queue: the scheme's (Kmin/Kmax, Qeq) where the port has
    a congestion point, the switch's queue limit, and XOFF/XON of an egress-triggered PAUSE."""
    switches = {sw["name"]: sw for sw in scenario.get("switches", [])}
    per_port = summary.get("per_port", {})
    congestion = scenario.get("congestion", {})
    scheme = congestion.get("scheme", "none")
    out: list[Reference] = []
    if any(per_port.get(p, {}).get("congestion_point") for p in ports):
        if scheme == "dcqcn":
            params = congestion.get("dcqcn", {})
            out += [
                constant(f"Kmin {_kb(params['kmin_bytes'])}", params["kmin_bytes"]),
                constant(f"Kmax {_kb(params['kmax_bytes'])}", params["kmax_bytes"]),
            ]
        elif scheme in QEQ_SCHEMES and "qeq_bytes" in congestion.get(QEQ_SCHEMES[scheme], {}):
            qeq = congestion[QEQ_SCHEMES[scheme]]["qeq_bytes"]
            out.append(constant(f"Qeq {_kb(qeq)}", qeq))
    for name in dict.fromkeys(p.split("->")[0] for p in ports):
        switch = switches.get(name, {})
        if switch.get("output_buffer_bytes") is not None:
            limit = switch["output_buffer_bytes"]
            out.append(constant(f"queue limit {_kb(limit)}", limit))
        out += _pause_lines(switch, "egress")
    if any(name in switches for name in (p.split("->")[0] for p in ports)):
        out += _pfc_lines(scenario)
    return _unique(out)


def _memory_references(scenario: Mapping[str, Any], names: Sequence[str]) -> list[Reference]:
    """A switch's memory: XOFF/XON of a global PAUSE (on total memory), the memory size."""
    switches = {sw["name"]: sw for sw in scenario.get("switches", [])}
    out: list[Reference] = []
    for name in names:
        switch = switches.get(name, {})
        out += _pause_lines(switch, "global")
        if switch.get("shared_buffer_bytes") is not None:
            size = switch["shared_buffer_bytes"]
            out.append(constant(f"memory {_kb(size)}", size))
    return _unique(out)


def _pause_lines(switch: Mapping[str, Any], trigger: str) -> list[Reference]:
    pause = switch.get("pause")
    if not isinstance(pause, Mapping) or not pause.get("enabled", True):
        return []
    if pause.get("trigger") != trigger:
        return []
    return [
        constant(f"PAUSE XOFF {_kb(pause['xoff_bytes'])}", pause["xoff_bytes"]),
        constant(f"PAUSE XON {_kb(pause['xon_bytes'])}", pause["xon_bytes"]),
    ]


def _pfc_lines(scenario: Mapping[str, Any]) -> list[Reference]:
    """PFC's static XOFF/XON. They bound the bytes one ingress port holds of one lossless class,
    not an output queue, so the label says so: a queue fed by one input pauses it near XOFF, a
    queue fed by several may hold more (docs/pfc.md). A dynamic threshold moves, so it has none."""
    pfc = scenario.get("pfc")
    if not isinstance(pfc, Mapping) or pfc.get("threshold", "static") != "static":
        return []
    classes = ", ".join(str(c) for c in pfc.get("lossless_classes", []))
    where = f"per ingress port, class {classes}" if classes else "per ingress port and class"
    return [
        constant(f"PFC XOFF {_kb(pfc['xoff_bytes'])} ({where})", pfc["xoff_bytes"]),
        constant(f"PFC XON {_kb(pfc['xon_bytes'])}", pfc["xon_bytes"]),
    ]


def pfc_cycle_s(scenario: Mapping[str, Any], metric: str, entities: Sequence[str]) -> float | None:
    """The time a plotted switch queue takes to cross PFC's XOFF-XON hysteresis at its port's
    line rate: the shortest half-cycle of PFC's pause oscillation there. Probes further apart
    than this see the oscillation at arbitrary phases, so a slow pattern in their samples can be
    aliasing (pfc-unfairness: a 26 us cycle sampled every 100 us draws a 1 ms sawtooth). None
    without static PFC or for another metric."""
    if metric not in ("queue_bytes", "class_queue_bytes") or not _pfc_lines(scenario):
        return None
    pfc = scenario["pfc"]
    band_bits = 8.0 * (float(pfc["xoff_bytes"]) - float(pfc["xon_bytes"]))
    switches = {sw["name"] for sw in scenario.get("switches", [])}
    times = []
    for entity in entities:
        sender, _, peer = entity.split(":")[0].partition("->")
        if sender in switches:
            rate = _capacity(scenario, sender, peer, "").peak
            if math.isfinite(rate) and rate > 0:
                times.append(band_bits / rate)
    return min(times) if times and band_bits > 0 else None


def _unique(references: list[Reference]) -> list[Reference]:
    return list({(r.label, r.values): r for r in references}.values())


def _kb(n_bytes: float) -> str:
    return f"{n_bytes / 1e6:g} MB" if n_bytes >= 1e6 else f"{n_bytes / 1e3:g} KB"


# ---------------------------------------------------------------- rates


def _sender(entity: str) -> str:
    """The sending host of a host entity ("h1") or a rate limiter ("h1->h5")."""
    return entity.split("->")[0]


@dataclass(frozen=True)
class _Source:
    host: str
    dst: str
    demand_bps: float
    start_s: float
    stop_s: float


def _sources(scenario: Mapping[str, Any]) -> list[_Source]:
    """Every steady source with one destination host; none when another kind of source exists
    (its load on the receiver is unknown)."""
    rates = _host_rates(scenario)
    out = []
    for entry in scenario.get("traffic", []):
        dst = entry.get("dst")
        if entry.get("kind") not in STEADY_KINDS or not isinstance(dst, str) or dst not in rates:
            return []
        for host in entry.get("hosts", []):
            line = rates.get(host, math.inf)
            demand = {
                "saturate": line,
                "bernoulli": line * float(entry.get("load") or 0.0),
                "cbr": float(entry.get("rate_bps") or 0.0),
            }[entry["kind"]]
            stop = entry.get("stop_s")
            out.append(
                _Source(host, dst, demand, float(entry.get("start_s", 0.0)), stop or math.inf)
            )
    return out


def _host_rates(scenario: Mapping[str, Any]) -> dict[str, float]:
    """Each host's access link rate (a host has one link)."""
    hosts = {h["name"] for h in scenario.get("hosts", [])}
    rates: dict[str, float] = {}
    for link in scenario.get("links", []):
        for end in link["ends"]:
            if end in hosts:
                rates[end] = float(link["rate_bps"])
    return rates


def fair_share(scenario: Mapping[str, Any], senders: Sequence[str]) -> Reference | None:
    """The max-min fair share of the receiver's link for `senders`, when they all send to one
    host and it binds (see the module's docstring); None otherwise."""
    sources = _sources(scenario)
    mine = [s for s in sources if s.host in set(senders)]
    dsts = {s.dst for s in mine}
    if not mine or len(dsts) != 1:
        return None
    dst = dsts.pop()
    into = [s for s in sources if s.dst == dst]
    capacity = _capacity(scenario, _peer(scenario, dst), dst, "")
    times = sorted(
        {0.0, *capacity.times_s, *(s.start_s for s in into), *(s.stop_s for s in into)} - {math.inf}
    )
    levels = []
    for t in times:
        active = [s.demand_bps for s in into if s.start_s <= t < s.stop_s]
        c = _value_at(capacity, t)
        levels.append(_water_level(c, active))
    binding = any(
        level < max((s.demand_bps for s in into if s.start_s <= t < s.stop_s), default=0.0)
        for t, level in zip(times, levels, strict=True)
        if not math.isnan(level)
    )
    if not binding:
        return None
    counts = {sum(s.start_s <= t < s.stop_s for s in into) for t in times} - {0}
    n = f" (N = {counts.pop()})" if len(counts) == 1 else ""
    return _with_value(
        Reference(f"fair share of {dst}'s link, C/N{n}", tuple(times), tuple(levels))
    )


def _with_value(reference: Reference) -> Reference:
    """The reference with its value in its label when it never changes ("... = 5 Gb/s")."""
    if not reference.constant:
        return Reference(reference.label + ", over time", reference.times_s, reference.values)
    value = rate_text(reference.values[0])
    return Reference(f"{reference.label} = {value}", reference.times_s, reference.values)


def _water_level(capacity: float, demands: list[float]) -> float:
    """Max-min fair level: each demand gets min(demand, level), the levels filling capacity."""
    remaining = capacity
    for i, demand in enumerate(sorted(demands)):
        share = remaining / (len(demands) - i)
        if demand >= share:
            return share
        remaining -= demand
    return math.nan if not demands else max(demands)  # NaN: no sender, no share


def _peer(scenario: Mapping[str, Any], host: str) -> str:
    for link in scenario.get("links", []):
        if host in link["ends"]:
            a, b = link["ends"]
            return str(b if a == host else a)
    return ""


def _capacity(scenario: Mapping[str, Any], sender: str, peer: str, label: str) -> Reference:
    """The rate of the link direction sender -> peer over time (its schedule), and the peer's
    receive rate when it is a host with a lower one."""
    rate, steps = math.inf, []
    for link in scenario.get("links", []):
        if set(link["ends"]) == {sender, peer}:
            rate = float(link["rate_bps"])
            steps = [
                (float(s["at_s"]), float(s["rate_bps"]))
                for s in link.get("schedule", [])
                if s["from"] == sender
            ]
    link_ref = _steps(label, rate, steps)
    host = next((h for h in scenario.get("hosts", []) if h["name"] == peer), None)
    if host is None or (host.get("rx_rate_bps") is None and not host.get("rx_schedule")):
        return link_ref
    rx_rate = host.get("rx_rate_bps")
    rx_steps = [(float(s["at_s"]), float(s["rate_bps"])) for s in host.get("rx_schedule", [])]
    rx_ref = _steps(label, math.inf if rx_rate is None else float(rx_rate), rx_steps)
    times = sorted({*link_ref.times_s, *rx_ref.times_s})
    values = [min(_value_at(link_ref, t), _value_at(rx_ref, t)) for t in times]
    return Reference(label, tuple(times), tuple(values))


def _steps(label: str, initial: float, steps: list[tuple[float, float]]) -> Reference:
    times, values = [0.0], [initial]
    for at_s, rate in sorted(steps):
        if at_s <= 0.0:
            values[0] = rate
        else:
            times.append(at_s)
            values.append(rate)
    return Reference(label, tuple(times), tuple(values))


def _value_at(reference: Reference, t: float) -> float:
    value = reference.values[0]
    for at_s, v in zip(reference.times_s, reference.values, strict=True):
        if at_s <= t:
            value = v
    return value


def _common_capacity(
    scenario: Mapping[str, Any], entities: Sequence[str], metric: str
) -> Reference | None:
    """The capacity into the one host that the summed entities send to (host_tx_bps) or that
    they are (host_rx_bps)."""
    if metric == "host_rx_bps":
        if len(entities) != 1:
            return None
        dst = entities[0]
    else:
        dsts = {s.dst for s in _sources(scenario) if s.host in set(entities)}
        if len(dsts) != 1:
            return None
        dst = dsts.pop()
    peer = _peer(scenario, dst)
    capacity = _capacity(scenario, peer, dst, f"capacity into {dst}")
    return None if math.isinf(capacity.peak) else _with_value(capacity)
