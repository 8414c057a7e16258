"""DCQCN's fluid model (Zhu, Ghobadi, Misra, Padhye, "ECN or Delay: Lessons Learnt from Analysis
of DCQCN and TIMELY", CoNEXT 2016, section 3.1, the figure "DCQCN fluid model"): its fixed point
and its time course, integrated with the feedback delay.

N flows share one bottleneck of capacity C. Rates are in packets/s, B in packets, q in packets
inside this module (bytes and bits/s at its interface). With p_d = p(t - tau*) and
R_d = R_C(t - tau*), the feedback as the reaction point receives it:

    (1)  p(q)      = 0 (q <= Kmin), Pmax (q - Kmin)/(Kmax - Kmin) (q <= Kmax), 1 (q > Kmax)
    (2)  dq/dt     = N R_C - C                                     (q >= 0)
    (3)  dalpha/dt = g/tau' ((1 - (1 - p_d)^(tau' R_d)) - alpha)
    (4)  dR_T/dt   = -(R_T - R_C)/tau a + R_AI R_d (c + e)
    (5)  dR_C/dt   = -R_C alpha/(2 tau) a + (R_T - R_C)/2 R_d (b + d)

    a = 1 - (1 - p_d)^(tau R_d)          (a CNP in one CNP interval tau)
    b = p_d / ((1 - p_d)^(-B) - 1)       (byte-counter expiries per packet)
    c = b (1 - p_d)^(F B)                (... past F of them: additive increase)
    d = p_d / ((1 - p_d)^(-T R_d) - 1)   (timer expiries per packet)
    e = d (1 - p_d)^(F T R_d)

(numbers as in the paper: (1) eq:mark, (2) eq:q, (3) eq:alpha, (4) eq:rt, (5) eq:rc). The flows
are identical (the paper's per-flow model with equal initial states). Where the paper has
R_C(t - tau*) in a and alpha's exponent, so do we (R_d).

**Fixed point** (the paper's Theorem "unique fixed point"): N R_C = C, and eliminating R_T from
(4) = (5) = 0 gives the paper's equation for p*:

    a^2 alpha / ((b + d)(c + e)) = tau^2 R_AI R_C,   alpha = 1 - (1 - p)^(tau' R_C)

solved here exactly (bisection on p). The paper then approximates it by a Taylor series around
p = 0, p* ~ cbrt(R_AI N^2/(tau' C^2) (1/B + N/(T C))^2) (`approx_fixed_point`), which drops
the factors (1 - p)^(F B) and (1 - p)^(F T R_C) of c and e and linearises a and alpha: at the
SIGCOMM 2015 parameters, 40 Gb/s and 1 KB packets, it overestimates p* by 19 % (N = 2) to
58 % (N = 64), so its queue is higher than the exact fixed point's (`docs/fidelity.md`).

**Feedback delay.** `feedback_delay_s` is tau*, the time from the marking decision to the CNP's
arrival at the reaction point. With marking at dequeue it is the propagation and transmission
delay of the loop (the paper's assumption: "ECN marking is not affected by the queuing delay");
with `mark_on = "enqueue"` the marked frame also waits its turn in the queue, so the feedback
that arrives at t was decided at the t_m with t_m + q(t_m)/C + tau* = t (a delay that grows with
the queue; t_m + q(t_m)/C never decreases because dq/dt >= -C).

Integration: explicit Euler on a fixed step (default 0.25 us, small against tau* and the 50 us
CNP interval), the delayed values read from the stored history; before t = 0 the history is
the initial state. The rates are held to [min_rate, line rate].
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from cnsim.fluid.bottleneck import incast_path
from cnsim.fluid.qcn import link_capacity
from cnsim.fluid.timecourse import CapacitySteps, TimeCourse, capacity_at

MarkOn = Literal["enqueue", "dequeue"]


@dataclass(frozen=True)
class DcqcnModel:
    """The fluid model's parameters (defaults: SIGCOMM 2015 at 40 Gb/s, 1 KB packets)."""

    capacity_bps: float = 40e9
    line_rate_bps: float = 40e9
    packet_bytes: float = 1000.0
    kmin_bytes: float = 5_000.0
    kmax_bytes: float = 200_000.0
    pmax: float = 0.01
    g: float = 1 / 256
    cnp_interval_s: float = 50e-6  # tau
    alpha_timer_s: float = 55e-6  # tau'
    rate_timer_s: float = 55e-6  # T
    byte_counter_bytes: float = 10e6  # B
    fast_recovery: int = 5  # F
    r_ai_bps: float = 40e6
    min_rate_bps: float = 0.0
    alpha_init: float = 1.0
    feedback_delay_s: float = 4e-6  # tau*
    mark_on: MarkOn = "dequeue"
    # Later changes of C, (at_s, rate_bps) in time order (a link's `schedule`).
    capacity_schedule: tuple[tuple[float, float], ...] = ()

    def capacity_at(self, time_s: float) -> float:
        """C at `time_s`, after the schedule's changes up to then."""
        return capacity_at(self.capacity_bps, self.capacity_schedule, time_s)

    @property
    def _pkt_bits(self) -> float:
        return 8.0 * self.packet_bytes

    def mark_probability(self, queue_bytes: float) -> float:
        """RED, eq. (1)."""
        if queue_bytes <= self.kmin_bytes:
            return 0.0
        if queue_bytes <= self.kmax_bytes:
            return self.pmax * (queue_bytes - self.kmin_bytes) / (self.kmax_bytes - self.kmin_bytes)
        return 1.0

    def queue_of_p(self, p: float) -> float:
        """The queue on the RED line for marking probability p; inf above Pmax (the fixed
        point then sits on the jump at Kmax)."""
        if p > self.pmax:
            return math.inf
        return self.kmin_bytes + p / self.pmax * (self.kmax_bytes - self.kmin_bytes)


def _pow(p: float, exponent: float) -> float:
    """(1 - p)^exponent, accurate for small p."""
    return math.exp(exponent * math.log1p(-p))


def _expiries(p: float, count: float) -> float:
    """p / ((1 - p)^(-count) - 1): expiries of a counter of `count` packets per packet sent
    (1/count at p = 0)."""
    if p <= 0.0:
        return 1.0 / count if count > 0 else 0.0
    x = -count * math.log1p(-p)
    return p / math.expm1(x) if x < 700 else 0.0


def _terms(p: float, rc: float, m: DcqcnModel) -> tuple[float, float, float, float, float]:
    """a, b, c, d, e of eqs. (4)-(5) for delayed p and R_C (packets/s)."""
    if p >= 1.0:
        return 1.0, 0.0, 0.0, 0.0, 0.0
    b_pkts = m.byte_counter_bytes / m.packet_bytes
    t_pkts = m.rate_timer_s * rc
    f = m.fast_recovery
    a = 1.0 - _pow(p, m.cnp_interval_s * rc) if p > 0 else 0.0
    b = _expiries(p, b_pkts) if b_pkts > 0 else 0.0
    c = b * _pow(p, f * b_pkts) if p > 0 else b
    d = _expiries(p, t_pkts)
    e = d * _pow(p, f * t_pkts) if p > 0 else d
    return a, b, c, d, e


def fixed_point_residual(p: float, n_flows: int, m: DcqcnModel) -> float:
    """a^2 alpha/((b + d)(c + e)) - tau^2 R_AI R_C at marking probability p: zero at p*."""
    rc = m.capacity_bps / n_flows / m._pkt_bits
    a, b, c, d, e = _terms(p, rc, m)
    alpha = 1.0 - _pow(p, m.alpha_timer_s * rc)
    r_ai = m.r_ai_bps / m._pkt_bits
    increase = (b + d) * (c + e)
    lhs = a * a * alpha / increase if increase > 0 else math.inf
    return lhs - m.cnp_interval_s**2 * r_ai * rc


def fixed_point(n_flows: int, m: DcqcnModel | None = None) -> dict[str, float]:
    """The exact fixed point for N flows: p*, the queue on the RED curve, alpha*, R_T*, R_C*."""
    m = m if m is not None else DcqcnModel()
    lo, hi = 1e-12, 0.5
    if fixed_point_residual(lo, n_flows, m) >= 0 or fixed_point_residual(hi, n_flows, m) <= 0:
        raise ValueError(f"no fixed point for N = {n_flows} (no sign change of the residual)")
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if fixed_point_residual(mid, n_flows, m) < 0:
            lo = mid
        else:
            hi = mid
    p = math.sqrt(lo * hi)
    rc = m.capacity_bps / n_flows / m._pkt_bits
    a, b, _, d, _ = _terms(p, rc, m)
    alpha = 1.0 - _pow(p, m.alpha_timer_s * rc)
    rt = rc + alpha * a / (m.cnp_interval_s * (b + d))
    return {
        "n_flows": n_flows,
        "p": p,
        "queue_bytes": m.queue_of_p(p),
        "alpha": alpha,
        "rate_bps": rc * m._pkt_bits,
        "target_bps": rt * m._pkt_bits,
    }


def approx_fixed_point(n_flows: int, m: DcqcnModel | None = None) -> dict[str, float]:
    """The paper's Taylor approximation of p* (CoNEXT 2016, eq. fixedp) and its queue."""
    m = m if m is not None else DcqcnModel()
    c = m.capacity_bps / m._pkt_bits
    r_ai = m.r_ai_bps / m._pkt_bits
    b = m.byte_counter_bytes / m.packet_bytes
    inner = (1.0 / b if b > 0 else 0.0) + n_flows / (m.rate_timer_s * c)
    p = (r_ai * n_flows**2 / (m.alpha_timer_s * c**2) * inner**2) ** (1.0 / 3.0)
    return {"n_flows": n_flows, "p": p, "queue_bytes": m.queue_of_p(p)}


@dataclass(frozen=True)
class Trajectory(TimeCourse):
    """A fluid time course: per-flow rates (bits/s), alpha, queue (bytes), p, sampled."""

    rate_bps: npt.NDArray[np.float64]
    target_bps: npt.NDArray[np.float64]
    alpha: npt.NDArray[np.float64]
    queue_bytes: npt.NDArray[np.float64]
    p: npt.NDArray[np.float64]


def simulate(
    n_flows: int,
    m: DcqcnModel | None = None,
    *,
    duration_s: float = 0.06,
    step_s: float = 0.25e-6,
    sample_s: float = 5e-6,
    initial: Mapping[str, float] | None = None,
) -> Trajectory:
    """Integrates eqs. (1)-(5) from `initial` (default: every flow at line rate, R_T at line
    rate, alpha = alpha_init, empty queue, as DCQCN flows start) for `duration_s`."""
    m = m if m is not None else DcqcnModel()
    pkt = m._pkt_bits
    capacity = CapacitySteps(m.capacity_bps, m.capacity_schedule, step_s)
    line = m.line_rate_bps / pkt
    floor = m.min_rate_bps / pkt
    init = {
        "rate_bps": m.line_rate_bps,
        "target_bps": m.line_rate_bps,
        "alpha": m.alpha_init,
        "queue_bytes": 0.0,
        **(initial or {}),
    }
    rc = init["rate_bps"] / pkt
    rt = init["target_bps"] / pkt
    alpha = init["alpha"]
    q = init["queue_bytes"] / m.packet_bytes
    steps = round(duration_s / step_s)
    every = max(1, round(sample_s / step_s))
    lag = round(m.feedback_delay_s / step_s)
    enqueue = m.mark_on == "enqueue"
    # History of (R_C, p, departure step of a frame marked then) for the delayed terms.
    hist_rc = [rc] * (steps + 1)
    hist_p = [m.mark_probability(q * m.packet_bytes)] * (steps + 1)
    hist_due = [0.0] * (steps + 1)
    seen = -1  # enqueue: the latest marking step whose feedback has arrived
    out: dict[str, list[float]] = {k: [] for k in ("t", "rc", "rt", "alpha", "q", "p")}
    g, tau, tau_a, r_ai = m.g, m.cnp_interval_s, m.alpha_timer_s, m.r_ai_bps / pkt
    for k in range(steps + 1):
        cap = capacity.at_step(k) / pkt
        p_now = m.mark_probability(q * m.packet_bytes)
        hist_rc[k], hist_p[k] = rc, p_now
        hist_due[k] = k + q / cap / step_s + lag  # the step its CNP reaches the source
        if k % every == 0:
            for key, value in zip(out, (k * step_s, rc, rt, alpha, q, p_now), strict=True):
                out[key].append(value)
        if k == steps:
            break
        if enqueue:
            while seen + 1 <= k and hist_due[seen + 1] <= k:
                seen += 1
            j = seen
        else:
            j = k - lag
        rd, pd = (hist_rc[j], hist_p[j]) if j >= 0 else (hist_rc[0], hist_p[0])
        a, b, c, d, e = _terms(pd, rd, m)
        marked = 1.0 - _pow(pd, tau_a * rd) if pd < 1.0 else 1.0
        d_alpha = g / tau_a * (marked - alpha)
        d_rt = -(rt - rc) / tau * a + r_ai * rd * (c + e)
        d_rc = -rc * alpha / (2 * tau) * a + (rt - rc) / 2 * rd * (b + d)
        d_q = n_flows * rc - cap
        alpha += step_s * d_alpha
        rt = min(max(rt + step_s * d_rt, floor), line)
        rc = min(max(rc + step_s * d_rc, floor), line)
        q = max(q + step_s * d_q, 0.0)
    return Trajectory(
        time_s=np.array(out["t"]),
        rate_bps=np.array(out["rc"]) * pkt,
        target_bps=np.array(out["rt"]) * pkt,
        alpha=np.array(out["alpha"]),
        queue_bytes=np.array(out["q"]) * m.packet_bytes,
        p=np.array(out["p"]),
    )


def settles(traj: Trajectory, tail_s: float = 0.01, rel_tol: float = 0.02) -> bool:
    """Stable: over the last `tail_s` the flow rate stays within `rel_tol` of its mean (a limit
    cycle keeps swinging; a stable fixed point damps out)."""
    tail = traj.window(traj.time_s[-1] - tail_s)
    mean = float(np.mean(tail.rate_bps))
    return bool(np.max(np.abs(tail.rate_bps - mean)) <= rel_tol * mean)


@dataclass(frozen=True)
class Oscillation:
    """The fixed point's slowest oscillatory mode, measured on the integrated model."""

    period_s: float
    decay_per_period: float  # ratio of successive queue peaks: < 1 damped, > 1 growing

    @property
    def stable(self) -> bool:
        return self.decay_per_period < 1.0


def oscillation(
    n_flows: int, m: DcqcnModel, *, kick: float = 0.02, duration_s: float = 0.03
) -> Oscillation:
    """Local stability of the fixed point: start at it with every rate `kick` above C/N and
    measure the queue's swing: its period and the ratio of successive peaks above q* (the
    geometric mean over peaks 2-5, while the swing is still small: a growing swing later
    saturates into a limit cycle, ratio 1). Unlike `settles` on a run from line rate,
    this sees a slowly growing swing that starts small (N = 10 at 65-75 us: the start-up
    approaches the fixed point so slowly, through alpha's 14 ms time constant, that a swing
    growing 3-12 % per period stays within 2 % of the rate for 100 ms)."""
    fp = fixed_point(n_flows, m)
    if not math.isfinite(fp["queue_bytes"]):
        raise ValueError(f"N = {n_flows}: the fixed point sits on RED's jump at Kmax")
    start = {
        "rate_bps": fp["rate_bps"] * (1 + kick),
        "target_bps": fp["target_bps"],
        "alpha": fp["alpha"],
        "queue_bytes": fp["queue_bytes"],
    }
    traj = simulate(n_flows, m, duration_s=duration_s, initial=start)
    above = traj.queue_bytes - fp["queue_bytes"]
    peaks = _separated_peaks(traj.time_s, above, min_gap_s=3e-4)
    if len(peaks) < 3:
        return Oscillation(period_s=math.nan, decay_per_period=0.0)  # no swing: damped out
    times, heights = traj.time_s[peaks[:5]], above[peaks[:5]]
    ratios = heights[2:] / heights[1:-1]
    return Oscillation(
        period_s=float(np.mean(np.diff(times))),
        decay_per_period=float(np.exp(np.mean(np.log(ratios)))),
    )


def _separated_peaks(
    time_s: npt.NDArray[np.float64], values: npt.NDArray[np.float64], min_gap_s: float
) -> list[int]:
    """Indices of the positive local maxima, the highest kept within `min_gap_s`."""
    inner = (values[1:-1] > values[:-2]) & (values[1:-1] >= values[2:]) & (values[1:-1] > 0)
    kept: list[int] = []
    for i in (np.flatnonzero(inner) + 1).tolist():
        if kept and time_s[i] - time_s[kept[-1]] <= min_gap_s:
            if values[i] > values[kept[-1]]:
                kept[-1] = i
            continue
        kept.append(i)
    return kept


def model_from_scenario(scenario: Mapping[str, Any]) -> tuple[DcqcnModel, int]:
    """The model and N from a resolved scenario (`tomllib.loads(cnsim.resolve(...))`): the
    `[congestion.dcqcn]` table, the bottleneck's link rate (the `[report.steady].port`, else
    the link into the first traffic entry's destination; its rate at t = 0 and its schedule's
    later changes), the first traffic entry's frame size and number of senders, and tau* = the
    loop's propagation plus one data frame's transmission on the two data hops and one CNP's on
    the two return hops (sender - switch - receiver, as in the dcqcn presets)."""
    dcqcn = scenario.get("congestion", {}).get("dcqcn")
    if scenario.get("congestion", {}).get("scheme") != "dcqcn" or dcqcn is None:
        raise ValueError("congestion.scheme: the DCQCN fluid model needs scheme = 'dcqcn'")
    traffic = scenario["traffic"][0]
    # A saturate entry's hosts or a flow trace's sources, into the bottleneck port.
    path = incast_path(scenario, str(traffic.get("dst", "")))
    senders, switch, access, bottleneck = path.senders, path.switch, path.access, path.bottleneck
    frame = path.frame_bytes
    delay = path.round_trip_s(float(dcqcn["cnp_bytes"]))
    # The model's b term is the byte counter; "timer_only" turns it off (b = 0).
    counters = dcqcn.get("counters", "timer_and_bytes")
    byte_counter = 0.0 if counters == "timer_only" else float(dcqcn["byte_counter_bytes"])
    capacity_bps, schedule = link_capacity(bottleneck, switch)
    model = DcqcnModel(
        capacity_bps=capacity_bps,
        capacity_schedule=schedule,
        line_rate_bps=access["rate_bps"],
        packet_bytes=frame,
        kmin_bytes=dcqcn["kmin_bytes"],
        kmax_bytes=dcqcn["kmax_bytes"],
        pmax=dcqcn["pmax"],
        g=dcqcn["g"],
        cnp_interval_s=dcqcn["cnp_interval_s"],
        alpha_timer_s=dcqcn["alpha_timer_s"],
        rate_timer_s=dcqcn["rate_timer_s"],
        byte_counter_bytes=byte_counter,
        fast_recovery=int(dcqcn["fast_recovery_threshold"]),
        r_ai_bps=dcqcn["r_ai_bps"],
        min_rate_bps=dcqcn["min_rate_bps"],
        alpha_init=dcqcn["alpha_init"],
        feedback_delay_s=delay,
        mark_on=dcqcn["mark_on"],
    )
    return model, len(senders)


def with_delay(m: DcqcnModel, feedback_delay_s: float) -> DcqcnModel:
    return replace(m, feedback_delay_s=feedback_delay_s)


def fluid_columns(
    n_flows: int,
    feedback_delay_s: float,
    m: DcqcnModel,
    *,
    window_s: tuple[float, float] = (0.03, 0.06),
    duration_s: float = 0.1,
) -> dict[str, float | bool]:
    """The fluid model beside one packet run that starts at line rate: the mean queue over
    `window_s` (the packet presets' steady window) and whether the fixed point is stable: the
    decay per period of its oscillation (`oscillation`) below 1 where the fixed point is on
    the RED line; on RED's jump at Kmax (no local analysis), whether the run from line rate
    settles by `duration_s`."""
    delayed = replace(m, feedback_delay_s=feedback_delay_s)
    traj = simulate(n_flows, delayed, duration_s=duration_s)
    tail = traj.window(*window_s)
    on_line = math.isfinite(fixed_point(n_flows, delayed)["queue_bytes"])
    decay = oscillation(n_flows, delayed).decay_per_period if on_line else math.nan
    return {
        "fluid_queue_bytes": float(np.mean(tail.queue_bytes)),
        "fluid_decay_per_period": decay,
        "fluid_stable": decay < 1.0 if on_line else settles(traj),
    }


def add_stability_columns(out_dir: str) -> None:
    """Adds fluid_queue_bytes, fluid_decay_per_period and fluid_stable to a `cnsim sweep
    dcqcn-stability` table.csv,
    the model read from that sweep's scenario (its mark_on, parameters, links)."""
    import tomllib
    from pathlib import Path

    import pandas as pd

    import cnsim

    path = Path(out_dir) / "table.csv"
    table = pd.read_csv(path)
    base = cnsim.load_sweep("dcqcn-stability").base_toml
    model, _ = model_from_scenario(tomllib.loads(cnsim.resolve(base)))
    rows = [
        fluid_columns(int(n), float(d), model)
        for n, d in zip(table["n_flows"], table["feedback_delay_s"], strict=True)
    ]
    for column in ("fluid_queue_bytes", "fluid_decay_per_period", "fluid_stable"):
        table[column] = [row[column] for row in rows]
    table.to_csv(path, index=False)
    print(table.to_string(index=False))


def main(argv: list[str] | None = None) -> None:
    """No argument: the exact and the paper's approximate fixed point for the
    dcqcn-fixed-point N. `stability DIR`: add the fluid columns to DIR/table.csv."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["stability"] and len(args) == 2:
        add_stability_columns(args[1])
        return
    if args:
        raise SystemExit("usage: python -m cnsim.fluid.dcqcn [stability DIR]")
    print("n_flows,p,queue_bytes,alpha,approx_p,approx_queue_bytes")
    for n in (2, 4, 8, 10, 16, 32, 64):
        fp, ap = fixed_point(n), approx_fixed_point(n)
        print(
            f"{n},{fp['p']:.6g},{fp['queue_bytes']:.6g},{fp['alpha']:.4g},"
            f"{ap['p']:.6g},{ap['queue_bytes']:.6g}"
        )


if __name__ == "__main__":
    main()
