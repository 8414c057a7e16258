"""DCTCP's fluid model (Alizadeh, Javanmard, Prabhakar, "Analysis of DCTCP: Stability,
Convergence, and Fairness", SIGMETRICS 2011, section 3): its limit cycle for N identical long
flows through one bottleneck of capacity C with a step marker at K, beside the sawtooth of the
SIGCOMM 2010 paper's section 3.3.

Inside this module windows and the queue are in packets, C in packets/s (bytes and bits/s at
its interface). With p_d = p(t - R*), the marks as the senders receive them:

    (1)  dW/dt     = 1/R(t) - W(t) alpha(t) / (2 R(t)) p_d
    (2)  dalpha/dt = g / R(t) (p_d - alpha(t))
    (3)  dq/dt     = N W(t) / R(t) - C                       (q >= 0)
    (4)  p(t)      = 1 if q(t) > K else 0,   R(t) = d + q(t) / C

(1): a window grows by one packet per round trip and, while the marks come back, is cut at the
rate that takes W alpha / 2 off per round trip (DCTCP's cut, once per window); (2): alpha is
DCTCP's moving average of the marked fraction, one update of weight g per round trip; (3): the N
windows' rates W / R fill the queue, which C drains. d is the round trip without queueing.

Eq. (3) makes the queue a first-order lag of the windows: dq/dt = (N W - C d - q) / R, so q
approaches N W - C d with the time constant R, a round trip. Window-limited senders are
ACK-clocked instead: each ACK releases one packet plus the window's growth, and while the queue
holds packets the ACKs return at C, so the N windows are exactly the pipe C d plus the queue
(the relation the SIGCOMM 2010 paper's section 3.3 writes as Q(t) = N W(t) - C x RTT):

    (3') q(t) = max(0, N W(t) - C d)         (dq/dt = N dW/dt while q > 0)

A cut stops the sender until its packets in flight fall to the new window, so the queue falls by
the cut within N dW / C, not over a round trip. `queue_law = "window"` integrates (1), (2), (3')
(and (4)); the default, `"rate"`, is the paper's (3). The marks' loop delay is R* in both.

**Source.** The paper's text past its abstract was not reachable when this was written (the
abstract: "We develop a fluid model of DCTCP ... the DCTCP fluid model exhibits limit cycle
behavior ... we undertake a direct analysis of the limit cycles"). The equations above are the
form the abstract and the later literature that cites the model describe; the feedback delay
R* is taken as d + K/C, the round trip with the queue at K, the delay of a mark decided when the
queue crosses K on a frame's arrival (`mark_on = "enqueue"`, the paper's switch): the frame
waits K/C, then the rest of the loop. With marking at dequeue the frame has already waited, so
R* = d. The paper's closed forms for the limit cycle's amplitude and period are not reproduced
here (their text was not at hand); the limit cycle is measured on the integrated model, and
beside it `sawtooth_analysis` gives the SIGCOMM 2010 section 3.3 closed forms, the sawtooth the
2011 paper starts from (no feedback delay: the window grows for D round trips, then one cut).

**Against the packet runs** (`beside_packets`, docs/dctcp.md "Fluid model"): the packet queue
follows its windows a forward trip later (q = N W - C d within about a packet), as (3') says;
with (3) the model's queue lags them by a round trip, stays above K longer, collects more marks
and cuts further, and its cycle is much longer than the packet queue's. With (3') the amplitude
and the period are within 25% of the packet runs' (docs/dctcp.md's table); what remains is that
(1) spreads the cut over the round trip the marks arrive, where the packet sender cuts at once.

**Measurement** (`sawtooth`): as `crates/cnsim-core/src/cc/dctcp/tests/long_flows.rs` measures
the packet runs: a cycle starts where the queue rises through its mean by more than a packet;
the amplitude is the mean peak-to-trough per cycle, the period the mean cycle length.

Integration: explicit Euler on a fixed step (default R*/400), p(t - R*) read from the stored
history (before t = 0 the history is p of the initial queue).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from cnsim.fluid.bottleneck import incast_path
from cnsim.fluid.timecourse import TimeCourse

MarkOn = Literal["enqueue", "dequeue"]
# How the queue follows the windows: "rate", the paper's eq. (3); "window", ACK-clocked senders
# (eq. (3'), module doc).
QueueLaw = Literal["rate", "window"]


@dataclass(frozen=True)
class DctcpModel:
    """The fluid model's parameters (defaults: the 10 Gb/s case of `long_flows.rs`: 25 us
    links, base round trip 102.5 us, K = 13 packets of 1500 B, g = 1/16)."""

    capacity_bps: float = 10e9
    base_rtt_s: float = 102.5024e-6  # d
    k_bytes: float = 19_500.0
    g: float = 1 / 16
    packet_bytes: float = 1500.0
    mark_on: MarkOn = "enqueue"
    # R* when given; None: d + K/C at enqueue (the paper's), d at dequeue (`r_star_s`).
    feedback_delay_override_s: float | None = None
    # "rate": eq. (3), the paper's; "window": eq. (3'), the queue of ACK-clocked windows.
    queue_law: QueueLaw = "rate"

    def __post_init__(self) -> None:
        for name in ("capacity_bps", "base_rtt_s", "packet_bytes"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: must be > 0 (got {getattr(self, name)})")
        if not self.k_bytes >= 0:
            raise ValueError(f"k_bytes: must be >= 0 (got {self.k_bytes})")
        if not 0 < self.g <= 1:
            raise ValueError(f"g: must be in (0, 1] (got {self.g})")
        if self.mark_on not in ("enqueue", "dequeue"):
            raise ValueError(f"mark_on: {self.mark_on!r} is neither 'enqueue' nor 'dequeue'")
        if self.queue_law not in ("rate", "window"):
            raise ValueError(f"queue_law: {self.queue_law!r} is neither 'rate' nor 'window'")
        override = self.feedback_delay_override_s
        if override is not None and not override >= 0:
            raise ValueError(f"feedback_delay_override_s: must be >= 0 (got {override})")

    def capacity_at(self, time_s: float) -> float:
        """C at `time_s` (constant: the model has no capacity schedule)."""
        return self.capacity_bps

    @property
    def capacity_schedule(self) -> tuple[tuple[float, float], ...]:
        """No later changes of C (the other models' field, for `cnsim.fluid.beside`)."""
        return ()

    @property
    def capacity_pps(self) -> float:
        """C in packets/s."""
        return self.capacity_bps / (8.0 * self.packet_bytes)

    @property
    def k_packets(self) -> float:
        return self.k_bytes / self.packet_bytes

    @property
    def bdp_packets(self) -> float:
        """C x d in packets."""
        return self.capacity_pps * self.base_rtt_s

    @property
    def r_star_s(self) -> float:
        """R*: the delay of the marks (d + K/C for marks decided on arrival, d at dequeue)."""
        if self.feedback_delay_override_s is not None:
            return self.feedback_delay_override_s
        if self.mark_on == "dequeue":
            return self.base_rtt_s
        return self.base_rtt_s + self.k_packets / self.capacity_pps

    @property
    def feedback_delay_s(self) -> float:
        """R*, under the other models' name (`cnsim.fluid.beside`, `show`)."""
        return self.r_star_s


def derivatives(
    window: float, alpha: float, queue: float, p_delayed: float, n_flows: int, m: DctcpModel
) -> tuple[float, float, float]:
    """dW/dt, dalpha/dt, dq/dt of eqs. (1)-(3) (packets, per second), with the queue's
    boundary: at q = 0 it does not fall. With `queue_law = "window"`, dq/dt is eq. (3')'s
    N dW/dt (the queue holds what the N windows put beyond the pipe C d)."""
    rtt = m.base_rtt_s + queue / m.capacity_pps
    d_window = 1.0 / rtt - window * alpha / (2.0 * rtt) * p_delayed
    d_alpha = m.g / rtt * (p_delayed - alpha)
    if m.queue_law == "window":
        d_queue = n_flows * d_window if n_flows * window >= m.bdp_packets else 0.0
    else:
        d_queue = n_flows * window / rtt - m.capacity_pps
    if queue <= 0.0 and d_queue < 0.0:
        d_queue = 0.0
    return d_window, d_alpha, d_queue


@dataclass(frozen=True)
class Trajectory(TimeCourse):
    """A fluid time course, sampled: the per-flow window (packets) and rate W / R (bits/s),
    alpha, the queue (bytes), the marking p(t), and the bottleneck's departures (bits/s: C
    while the queue holds packets, else what arrives)."""

    window_packets: npt.NDArray[np.float64]
    rate_bps: npt.NDArray[np.float64]
    alpha: npt.NDArray[np.float64]
    queue_bytes: npt.NDArray[np.float64]
    p: npt.NDArray[np.float64]
    departures_bps: npt.NDArray[np.float64]


def simulate(
    n_flows: int,
    m: DctcpModel | None = None,
    *,
    duration_s: float,
    step_s: float | None = None,
    sample_s: float = 2e-6,
    initial: Mapping[str, float] | None = None,
) -> Trajectory:
    """Integrates eqs. (1)-(4) for `duration_s` from `initial` (`window_packets`, `alpha`,
    `queue_bytes`; default: the SIGCOMM 2010 operating point, W* = (C d + K) / N,
    alpha = sqrt(2 / W*), q = K, near which the limit cycle lies)."""
    m = m if m is not None else DctcpModel()
    if n_flows < 1:
        raise ValueError(f"n_flows: need at least one flow (got {n_flows})")
    r_star = m.r_star_s
    step = step_s if step_s is not None else (r_star / 400 if r_star > 0 else 1e-8)
    if not step > 0:
        raise ValueError(f"step_s: must be > 0 (got {step})")
    w_star = (m.bdp_packets + m.k_packets) / n_flows
    init = {
        "window_packets": w_star,
        "alpha": math.sqrt(2.0 / w_star),
        "queue_bytes": m.k_bytes,
        **(initial or {}),
    }
    w, alpha = init["window_packets"], init["alpha"]
    q = init["queue_bytes"] / m.packet_bytes
    k_pkts, cap = m.k_packets, m.capacity_pps
    steps = round(duration_s / step)
    every = max(1, round(sample_s / step))
    lag = round(r_star / step)
    hist_p = np.zeros(steps + 1)
    p_before = 1.0 if q > k_pkts else 0.0  # the history before t = 0
    out: dict[str, list[float]] = {k: [] for k in ("t", "w", "r", "alpha", "q", "p", "dep")}
    for k in range(steps + 1):
        p_now = 1.0 if q > k_pkts else 0.0
        hist_p[k] = p_now
        rtt = m.base_rtt_s + q / cap
        arriving = n_flows * w / rtt
        if k % every == 0:
            departing = cap if q > 0 else min(arriving, cap)
            sample = (k * step, w, w / rtt, alpha, q, p_now, departing)
            for key, value in zip(out, sample, strict=True):
                out[key].append(value)
        if k == steps:
            break
        p_d = hist_p[k - lag] if k >= lag else p_before
        d_w, d_alpha, d_q = derivatives(w, alpha, q, p_d, n_flows, m)
        w += step * d_w
        alpha += step * d_alpha
        if m.queue_law == "window":  # eq. (3'), exactly rather than by its derivative
            q = max(n_flows * w - m.bdp_packets, 0.0)
        else:
            q = max(q + step * d_q, 0.0)
    pkt_bits = 8.0 * m.packet_bytes
    return Trajectory(
        time_s=np.array(out["t"]),
        window_packets=np.array(out["w"]),
        rate_bps=np.array(out["r"]) * pkt_bits,
        alpha=np.array(out["alpha"]),
        queue_bytes=np.array(out["q"]) * m.packet_bytes,
        p=np.array(out["p"]),
        departures_bps=np.array(out["dep"]) * pkt_bits,
    )


@dataclass(frozen=True)
class Sawtooth:
    """A queue's sawtooth, in packets: its mean, the mean peak-to-trough per cycle, the mean
    cycle length, the number of whole cycles."""

    mean_packets: float
    amplitude_packets: float
    period_s: float
    cycles: int


def sawtooth(time_s: npt.ArrayLike, queue_packets: npt.ArrayLike) -> Sawtooth:
    """The measure of `long_flows.rs`: cycles start where the queue rises through its mean by
    more than a packet (after being more than a packet below it), so that one frame's coming
    and going is not a cycle; per cycle the peak-to-trough; their mean, the mean cycle."""
    t = np.asarray(time_s, dtype=float)
    q = np.asarray(queue_packets, dtype=float)
    if q.size == 0 or q.shape != t.shape:
        raise ValueError("queue_packets: need one sample per time, at least one")
    mean = float(np.mean(q))
    starts: list[int] = []
    below = False
    for i, v in enumerate(q.tolist()):
        if v < mean - 1.0:
            below = True
        elif below and v > mean + 1.0:
            below = False
            starts.append(i)
    cycles = max(len(starts) - 1, 0)
    if cycles == 0:
        return Sawtooth(mean, 0.0, math.nan, 0)
    swings = [float(np.ptp(q[a:b])) for a, b in itertools.pairwise(starts)]
    period = float(t[starts[-1]] - t[starts[0]]) / cycles
    return Sawtooth(mean, float(np.mean(swings)), period, cycles)


@dataclass(frozen=True)
class LimitCycle:
    """The fluid model's limit cycle over the measured window: the queue's sawtooth, its
    extremes (packets), the bottleneck's use and alpha's mean."""

    saw: Sawtooth
    q_max_packets: float
    q_min_packets: float
    utilisation: float
    alpha_mean: float


def limit_cycle(
    n_flows: int,
    m: DctcpModel | None = None,
    *,
    window_s: tuple[float, float] | None = None,
    sample_s: float = 2e-6,
    step_s: float | None = None,
) -> LimitCycle:
    """Integrates from the operating point (`simulate`'s default start) and measures over
    `window_s` (default: from 100 R* to 400 R*, long after the start's transient)."""
    m = m if m is not None else DctcpModel()
    start, end = window_s if window_s is not None else (100 * m.r_star_s, 400 * m.r_star_s)
    traj = simulate(n_flows, m, duration_s=end, step_s=step_s, sample_s=sample_s)
    tail = traj.window(start, end)
    q = tail.queue_bytes / m.packet_bytes
    return LimitCycle(
        saw=sawtooth(tail.time_s, q),
        q_max_packets=float(np.max(q)),
        q_min_packets=float(np.min(q)),
        utilisation=float(np.mean(tail.departures_bps)) / m.capacity_bps,
        alpha_mean=float(np.mean(tail.alpha)),
    )


def sawtooth_analysis(n_flows: int, m: DctcpModel | None = None) -> dict[str, float]:
    """SIGCOMM 2010 section 3.3 (packets): W* = (C d + K) / N, alpha = sqrt(2 / W*),
    D = (W* + 1) alpha / 2 (the window's cut), amplitude A = N D, period T_C = D round trips
    of (C d + K) / C, Q_max = K + N, Q_min = Q_max - A."""
    m = m if m is not None else DctcpModel()
    w_star = (m.bdp_packets + m.k_packets) / n_flows
    alpha = math.sqrt(2.0 / w_star)
    cut = (w_star + 1.0) * alpha / 2.0
    round_trip = (m.bdp_packets + m.k_packets) / m.capacity_pps
    q_max = m.k_packets + n_flows
    return {
        "w_star_packets": w_star,
        "alpha": alpha,
        "d_round_trips": cut,
        "amplitude_packets": n_flows * cut,
        "period_s": cut * round_trip,
        "q_max_packets": q_max,
        "q_min_packets": q_max - n_flows * cut,
    }


def model_from_scenario(scenario: Mapping[str, Any]) -> tuple[DctcpModel, int]:
    """The model and N from a resolved scenario (`tomllib.loads(cnsim.resolve(...))`): the
    `[congestion.dctcp]` table (the step marker: `marking = "step"`, or `"red"` configured as
    the step, kmin = kmax, pmax = 1), the bottleneck (the `[report.steady].port`, else the one
    link into the first traffic entry's destination) and its rate, the first traffic entry's
    frame size and senders, and d: the propagation of sender - switch - receiver and back, one
    data frame's serialisation on the two data hops and one ACK's on the two return hops."""
    congestion = scenario.get("congestion", {})
    params = congestion.get("dctcp")
    if congestion.get("scheme") != "dctcp" or params is None:
        raise ValueError("congestion.scheme: the DCTCP fluid model needs scheme = 'dctcp'")
    k_bytes = float(params["k_bytes"])
    if params.get("marking", "step") == "red":
        kmin, kmax = float(params["kmin_bytes"]), float(params["kmax_bytes"])
        if kmin != kmax or float(params["pmax"]) != 1.0:
            raise ValueError(
                "congestion.dctcp.marking = 'red': the fluid model has the step marker "
                "(kmin_bytes = kmax_bytes, pmax = 1)"
            )
        k_bytes = kmin
    traffic = scenario["traffic"][0]
    path = incast_path(scenario, _receiver(traffic))
    senders, switch, receiver = path.senders, path.switch, path.receiver
    bottleneck, frame = path.bottleneck, path.frame_bytes
    transport = str(traffic.get("transport", "roce"))
    ack = float(scenario.get("transport", {}).get(transport, {}).get("ack_bytes", 64))
    base = path.round_trip_s(ack)
    if bottleneck.get("schedule"):
        raise ValueError(
            f"links: the {switch} - {receiver} link has a schedule; the DCTCP fluid model "
            "has a constant capacity"
        )
    model = DctcpModel(
        capacity_bps=float(bottleneck["rate_bps"]),
        base_rtt_s=base,
        k_bytes=k_bytes,
        g=float(params["g"]),
        packet_bytes=frame,
        mark_on=params.get("mark_on", "enqueue"),
    )
    return model, len(senders)


def _receiver(traffic: Mapping[str, Any]) -> str:
    """The entry's `dst`, else its flows' one destination ('' when they have several)."""
    if "dst" in traffic:
        return str(traffic["dst"])
    destinations = {str(flow["dst"]) for flow in traffic.get("flows", [])}
    return destinations.pop() if len(destinations) == 1 else ""


# The packet runs the model is compared with (docs/dctcp.md "Fluid model"): long_flows.rs's
# scenario (N long roce flows into one 10 Gb/s port, 25 us links, K = 13 packets: the smallest
# whole K above the guideline C x RTT / 7 = 12.2; 40 ms, measured from 10 ms, probed every
# 2 us) and dctcp-incast (measured from 1 ms, probed every 1 us).
LONG_FLOWS_K_BYTES = 13 * 1500


def long_flows_scenario(n_flows: int) -> str:
    """The TOML of `crates/cnsim-core/src/cc/dctcp/tests/long_flows.rs`'s run for N flows."""
    hosts = "".join(f'[[hosts]]\nname = "s{i}"\n' for i in range(n_flows))
    links = "".join(
        f'[[links]]\nends = ["s{i}", "sw"]\nrate_bps = 10e9\ndelay_s = 25e-6\n'
        for i in range(n_flows)
    )
    flows = "".join(
        f'  {{ start_s = 0.0, src = "s{i}", dst = "recv", size_bytes = 1_000_000_000 }},\n'
        for i in range(n_flows)
    )
    return (
        'name = "dctcp-long-flows"\nduration_s = 0.04\nseed = 1\n'
        + hosts
        + '[[hosts]]\nname = "recv"\n[[switches]]\nname = "sw"\n'
        + links
        + '[[links]]\nends = ["sw", "recv"]\nrate_bps = 10e9\ndelay_s = 25e-6\n'
        + '[[traffic]]\nkind = "flow_trace"\ntransport = "roce"\nflows = [\n'
        + flows
        + "]\n[report]\nprobe_interval_s = 2e-6\n"
        + f'[congestion]\nscheme = "dctcp"\n[congestion.dctcp]\nk_bytes = {LONG_FLOWS_K_BYTES}\n'
    )


# name: (scenario, measured from (s), probe interval (s)).
PACKET_CASES: dict[str, tuple[str, float, float]] = {
    "N=2, 10 Gb/s": (long_flows_scenario(2), 0.01, 2e-6),
    "N=10, 10 Gb/s": (long_flows_scenario(10), 0.01, 2e-6),
    "dctcp-incast (N=8, 100 Gb/s)": ("dctcp-incast", 0.001, 1e-6),
}


@dataclass(frozen=True)
class Beside:
    """One packet run beside the fluid model's limit cycle and the SIGCOMM 2010 sawtooth."""

    case: str
    n_flows: int
    model: DctcpModel
    packet: Sawtooth
    packet_utilisation: float
    packet_time_s: npt.NDArray[np.float64]
    packet_queue_packets: npt.NDArray[np.float64]
    fluid: LimitCycle
    fluid_window: LimitCycle  # the same model with eq. (3') (`queue_law = "window"`)
    analysis: dict[str, float]


def beside_packets(case: str) -> Beside:
    """Runs `PACKET_CASES[case]` (the native module), measures its queue's sawtooth and the
    receiver's throughput from the case's start on, and the fluid model read from the same
    resolved scenario (its limit cycle over 100-400 R*, sampled at the run's probe interval),
    with the paper's eq. (3) and with eq. (3')."""
    import tomllib

    import cnsim

    scenario, from_s, probe_s = PACKET_CASES[case]
    model, n = model_from_scenario(tomllib.loads(cnsim.resolve(scenario)))
    run = cnsim.run(scenario)
    queue = run.series("queue_bytes", ["sw->recv"])
    t = queue.index.to_numpy(dtype=float)
    keep = t >= from_s
    q = queue.to_numpy(dtype=float)[keep, 0] / model.packet_bytes
    rx = run.series("host_rx_bps", ["recv"])
    rx_keep = rx.index.to_numpy(dtype=float) >= from_s
    utilisation = float(np.mean(rx.to_numpy(dtype=float)[rx_keep])) / model.capacity_bps
    return Beside(
        case=case,
        n_flows=n,
        model=model,
        packet=sawtooth(t[keep], q),
        packet_utilisation=utilisation,
        packet_time_s=t[keep],
        packet_queue_packets=q,
        fluid=limit_cycle(n, model, sample_s=probe_s),
        fluid_window=limit_cycle(n, replace(model, queue_law="window"), sample_s=probe_s),
        analysis=sawtooth_analysis(n, model),
    )


TABLE_HEAD = (
    "case,packet_amplitude_pkts,fluid_amplitude_pkts,window_fluid_amplitude_pkts,"
    "sawtooth_amplitude_pkts,packet_period_us,fluid_period_us,window_fluid_period_us,"
    "sawtooth_period_us,packet_mean_pkts,fluid_mean_pkts,window_fluid_mean_pkts,"
    "fluid_max_pkts,fluid_min_pkts,packet_utilisation,fluid_utilisation,"
    "window_fluid_utilisation,fluid_alpha_mean,window_fluid_alpha_mean"
)


def table_row(b: Beside) -> str:
    """One line of `TABLE_HEAD`'s CSV ("fluid": eq. (3), "window_fluid": eq. (3'))."""
    fluid, window = b.fluid, b.fluid_window
    values = (
        b.packet.amplitude_packets,
        fluid.saw.amplitude_packets,
        window.saw.amplitude_packets,
        b.analysis["amplitude_packets"],
        b.packet.period_s * 1e6,
        fluid.saw.period_s * 1e6,
        window.saw.period_s * 1e6,
        b.analysis["period_s"] * 1e6,
        b.packet.mean_packets,
        fluid.saw.mean_packets,
        window.saw.mean_packets,
        fluid.q_max_packets,
        fluid.q_min_packets,
    )
    use = (
        f"{b.packet_utilisation:.4f},{fluid.utilisation:.4f},{window.utilisation:.4f},"
        f"{fluid.alpha_mean:.3f},{window.alpha_mean:.3f}"
    )
    return f"{b.case}," + ",".join(f"{v:.1f}" for v in values) + "," + use


def draw(b: Beside, path: str, span_s: float | None = None) -> None:
    """The packet queue and the two fluid limit cycles (eq. (3), eq. (3')) over the same span
    (default: three periods of eq. (3)'s), each from a rising crossing of its mean, K and the
    SIGCOMM 2010 extremes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = b.model
    span = span_s if span_s is not None else 3 * b.fluid.saw.period_s
    start = 100 * m.r_star_s
    fig, ax = plt.subplots(figsize=(10, 3.6))
    p0 = _first_rise(b.packet_queue_packets, b.packet.mean_packets)
    pt = b.packet_time_s[p0:] - b.packet_time_s[p0]
    ax.plot(pt[pt <= span] * 1e6, b.packet_queue_packets[p0:][pt <= span], lw=1, label="packet")
    laws: tuple[tuple[QueueLaw, LimitCycle, str], ...] = (
        ("rate", b.fluid, "k--"),
        ("window", b.fluid_window, "g-."),
    )
    for law, cycle, style in laws:
        traj = simulate(b.n_flows, replace(m, queue_law=law), duration_s=start + 2 * span)
        traj = traj.window(start)
        fq = traj.queue_bytes / m.packet_bytes
        f0 = _first_rise(fq, cycle.saw.mean_packets)
        ft = traj.time_s[f0:] - traj.time_s[f0]
        label = "fluid model, eq. (3)" if law == "rate" else "fluid model, eq. (3') (ACK clock)"
        ax.plot(ft[ft <= span] * 1e6, fq[f0:][ft <= span], style, lw=1.3, label=label)
    ax.axhline(m.k_packets, color="0.5", ls=":", lw=1, label="K")
    for level in (b.analysis["q_max_packets"], b.analysis["q_min_packets"]):
        ax.axhline(level, color="tab:red", ls=":", lw=1)
    ax.plot([], [], color="tab:red", ls=":", lw=1, label="SIGCOMM 2010 Q_max, Q_min")
    ax.set_xlabel("time from a rising crossing of the mean (us)")
    ax.set_ylabel("queue (packets)")
    ax.set_title(f"DCTCP, {b.case}: bottleneck queue")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _first_rise(q: npt.NDArray[np.float64], mean: float) -> int:
    """The first sample where q rises through its mean by more than a packet (`sawtooth`)."""
    below = False
    for i, v in enumerate(q.tolist()):
        if v < mean - 1.0:
            below = True
        elif below and v > mean + 1.0:
            return i
    return 0


def main(argv: list[str] | None = None) -> None:
    """The packet runs of `PACKET_CASES` beside the fluid limit cycle and the SIGCOMM 2010
    sawtooth, as CSV (docs/dctcp.md's table); `--plot DIR`: a queue figure per case."""
    import sys
    from pathlib import Path

    args = sys.argv[1:] if argv is None else argv
    if args not in ([],) and not (len(args) == 2 and args[0] == "--plot"):
        raise SystemExit("usage: python -m cnsim.fluid.dctcp [--plot DIR]")
    out = Path(args[1]) if args else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    print(TABLE_HEAD)
    for i, case in enumerate(PACKET_CASES):
        b = beside_packets(case)
        print(table_row(b))
        if out is not None:
            draw(b, str(out / f"dctcp_fluid_{i}.png"))


if __name__ == "__main__":
    main()
