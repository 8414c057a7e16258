"""QCN's fluid model (Alizadeh, Atikoglu, Kabbani, Lakshmikantha, Pan, Prabhakar, Seaman, "Data
center transport mechanisms: congestion control theory and IEEE standardization", Allerton
2008, section IV): N flows through one congestion point, integrated with the feedback lag tau.

Rates in bits/s, q in bytes; p is the probability that a frame is sampled (one frame in
`sample_base_bytes`, 1 % for 1500 B frames and 150 KB), m the byte counter in frames (100 for
150 KB). With the delayed values R_d = R_C(t - tau), p_d = p 1{F_b(t - tau) > 0} and
F_d = F_b(t - tau):

    dq/dt   = N R_C - C                                                  (q >= 0)
    F_b(t)  = q - Q_eq + w/(C' p) (N R_C - C)      (C' = C in frames/s: the queue's change over
                                                    one sampling interval, w Q_delta)
    dR_T/dt = -(R_T - R_C) R_d p_d + R_AI R_d p_d (1 - p_d)^(5 m) / ((1 - p_d)^(-m) - 1)
    dR_C/dt = -G(F_d) R_C R_d p_d + (R_T - R_C)/2 R_d p_d / ((1 - p_d)^(-m) - 1)

(rates of events per second: R_d p_d sampled frames carry congestion feedback, each a CNM that
sets R_T = R_C and cuts R_C by the fraction G(F_b); a byte-counter cycle of m frames without a
CNM moves R_C halfway to R_T, the Averaging Principle; after 5 cycles R_T also grows by R_AI).
The cut G(F_b) = Gd x 64 F_b / (Q_eq (1 + 2 w)), at most 1 - `min_dec_factor`: the standard's
6-bit quantisation of F_b (F_b max = Q_eq (1 + 2 w) is 64 levels) without the rounding, as
cnsim's QCN CP and RP do it (`cc/qcn.rs`). Left out, as in the paper's model: the RP's timer
(and so hyper increase), the sampling jitter, the rate floor's effect on the averages.

Our reading, not found in a copy of the paper we could check equation by equation: the form
above is the model as the QCN and DCQCN papers describe it (the DCQCN model of CoNEXT 2016
extends it with alpha and a timer); the F_b units follow cnsim's QCN parameters. The fixed point
follows from the equations alone (`fixed_point`): N R_C = C, and

    R_T - R_C = R_AI (1 - p)^(5 m) / ((1 - p)^(-m) - 1),
    G* = R_AI (1 - p)^(5 m) / (2 R_C ((1 - p)^(-m) - 1)^2),
    q* = Q_eq + G* (Q_eq (1 + 2 w)) / (64 Gd)

so the queue settles a fraction of a byte above Q_eq.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from cnsim.fluid.timecourse import CapacitySteps, TimeCourse, capacity_at

__all__ = [
    "QcnModel",
    "Trajectory",
    "fixed_point",
    "is_stable",
    "link_capacity",
    "model_from_scenario",
    "replace",
    "settles",
    "simulate",
]


@dataclass(frozen=True)
class QcnModel:
    """The fluid model's parameters (defaults: 802.1Qau at 10 Gb/s with 1500 B frames)."""

    capacity_bps: float = 10e9
    line_rate_bps: float = 10e9
    frame_bytes: float = 1500.0
    qeq_bytes: float = 33_000.0
    w: float = 2.0
    gd: float = 1 / 128
    min_dec_factor: float = 0.5
    sample_base_bytes: float = 150_000.0
    byte_counter_bytes: float = 150_000.0
    fast_recovery: int = 5
    r_ai_bps: float = 5e6
    min_rate_bps: float = 0.0
    feedback_delay_s: float = 4e-6  # tau
    # Later changes of C, (at_s, rate_bps) in time order (a link's `schedule`, seed 004).
    capacity_schedule: tuple[tuple[float, float], ...] = ()

    def capacity_at(self, time_s: float) -> float:
        """C at `time_s`, after the schedule's changes up to then."""
        return capacity_at(self.capacity_bps, self.capacity_schedule, time_s)

    @property
    def p(self) -> float:
        """Probability that a frame is sampled."""
        return min(1.0, self.frame_bytes / self.sample_base_bytes)

    @property
    def m(self) -> float:
        """The byte counter in frames."""
        return self.byte_counter_bytes / self.frame_bytes

    def cut(self, fb_bytes: float) -> float:
        """The fraction a CNM with congestion measure F_b > 0 takes off R_C."""
        fb_max = self.qeq_bytes * (1 + 2 * self.w)
        return min(self.gd * 64 * max(fb_bytes, 0.0) / fb_max, 1 - self.min_dec_factor)


def _cycles(p: float, m: float) -> float:
    """p / ((1 - p)^(-m) - 1): byte-counter cycles ended per frame sent."""
    return p / math.expm1(-m * math.log1p(-p)) if p > 0 else 1.0 / m


def fixed_point(n_flows: int, m: QcnModel | None = None) -> dict[str, float]:
    """q*, R_C*, R_T* and the cut G* at the fixed point (formulas in the module docstring)."""
    m = m if m is not None else QcnModel()
    rc = m.capacity_bps / n_flows
    a_m = math.expm1(-m.m * math.log1p(-m.p))  # (1 - p)^(-m) - 1
    ai = math.exp(m.fast_recovery * m.m * math.log1p(-m.p))  # (1 - p)^(5 m)
    gap = m.r_ai_bps * ai / a_m
    cut = m.r_ai_bps * ai / (2 * rc * a_m**2)
    fb_max = m.qeq_bytes * (1 + 2 * m.w)
    return {
        "n_flows": n_flows,
        "queue_bytes": m.qeq_bytes + cut * fb_max / (64 * m.gd),
        "rate_bps": rc,
        "target_bps": rc + gap,
        "cut": cut,
    }


@dataclass(frozen=True)
class Trajectory(TimeCourse):
    rate_bps: npt.NDArray[np.float64]
    target_bps: npt.NDArray[np.float64]
    queue_bytes: npt.NDArray[np.float64]


def simulate(
    n_flows: int,
    m: QcnModel | None = None,
    *,
    duration_s: float = 0.05,
    step_s: float = 0.5e-6,
    sample_s: float = 10e-6,
    initial: Mapping[str, float] | None = None,
) -> Trajectory:
    """Integrates the model (explicit Euler, delayed values from the stored history; before
    t = 0 the initial state) from `initial` (default: line rate, empty queue, as QCN's RPs
    start)."""
    m = m if m is not None else QcnModel()
    init = {"rate_bps": m.line_rate_bps, "target_bps": m.line_rate_bps, "queue_bytes": 0.0}
    init.update(initial or {})
    rc, rt, q = init["rate_bps"], init["target_bps"], init["queue_bytes"]
    capacity = CapacitySteps(m.capacity_bps, m.capacity_schedule, step_s)
    steps = round(duration_s / step_s)
    every = max(1, round(sample_s / step_s))
    lag = round(m.feedback_delay_s / step_s)
    ai_factor = math.exp(m.fast_recovery * m.m * math.log1p(-m.p))
    hist_rc = [rc] * (steps + 1)
    hist_fb = [0.0] * (steps + 1)
    out: dict[str, list[float]] = {k: [] for k in ("t", "rc", "rt", "q")}
    for k in range(steps + 1):
        cap_bps = capacity.at_step(k)
        c_frames = cap_bps / (8 * m.frame_bytes)
        excess_bps = n_flows * rc - cap_bps
        hist_rc[k] = rc
        hist_fb[k] = q - m.qeq_bytes + m.w / (c_frames * m.p) * excess_bps / 8
        if k % every == 0:
            for key, value in zip(out, (k * step_s, rc, rt, q), strict=True):
                out[key].append(value)
        if k == steps:
            break
        j = max(k - lag, 0)
        rd, fb = hist_rc[j], hist_fb[j]
        pd = m.p if fb > 0 else 0.0
        cnms = rd * pd / (8 * m.frame_bytes)  # CNMs per second
        cycles = rd / (8 * m.frame_bytes) * _cycles(pd, m.m)  # byte-counter cycles per second
        d_rt = -(rt - rc) * cnms + m.r_ai_bps * cycles * (ai_factor if pd > 0 else 1.0)
        d_rc = -m.cut(fb) * rc * cnms + (rt - rc) / 2 * cycles
        rt = min(max(rt + step_s * d_rt, m.min_rate_bps), m.line_rate_bps)
        rc = min(max(rc + step_s * d_rc, m.min_rate_bps), m.line_rate_bps)
        q = max(q + step_s * excess_bps / 8, 0.0)
    return Trajectory(
        time_s=np.array(out["t"]),
        rate_bps=np.array(out["rc"]),
        target_bps=np.array(out["rt"]),
        queue_bytes=np.array(out["q"]),
    )


def settles(
    traj: Trajectory, n_flows: int, m: QcnModel, tail_s: float = 0.01, rel_tol: float = 0.02
) -> bool:
    """Stable: over the last `tail_s` every rate sample is within `rel_tol` of the fair share
    C/N (a limit cycle keeps swinging; a collapse to the rate floor is not a fixed point)."""
    tail = traj.window(traj.time_s[-1] - tail_s)
    fair = m.capacity_bps / n_flows
    return bool(np.max(np.abs(tail.rate_bps - fair)) <= rel_tol * fair)


def link_capacity(
    link: Mapping[str, Any], origin: str
) -> tuple[float, tuple[tuple[float, float], ...]]:
    """The rate of `link` from `origin` at t = 0 and its later changes (at_s, rate_bps), from
    the link's `schedule` (entries of that direction, in time order)."""
    rate = float(link["rate_bps"])
    later: list[tuple[float, float]] = []
    steps = [c for c in link.get("schedule", []) if c.get("from", origin) == origin]
    for change in sorted(steps, key=lambda c: float(c.get("at_s", 0.0))):
        if float(change.get("at_s", 0.0)) <= 0.0:
            rate = float(change["rate_bps"])
        else:
            later.append((float(change["at_s"]), float(change["rate_bps"])))
    return rate, tuple(later)


def model_from_scenario(scenario: Mapping[str, Any]) -> tuple[QcnModel, int]:
    """The model and N from a resolved scenario: `[congestion.qcn]`, the first traffic entry
    (senders, destination, frame size), the link into the destination as the bottleneck (its
    rate at t = 0, after a schedule) and tau = the loop's propagation (delay lines included)
    plus one frame's and one CNM's transmission on the two hops sender - switch - receiver."""
    congestion = scenario.get("congestion", {})
    qcn = congestion.get("qcn")
    if congestion.get("scheme") != "qcn" or qcn is None:
        raise ValueError("congestion.scheme: the QCN fluid model needs scheme = 'qcn'")
    traffic = scenario["traffic"][0]
    senders, dst = traffic["hosts"], traffic["dst"]
    into_dst = [link for link in scenario["links"] if dst in link["ends"]]
    if len(into_dst) != 1:
        raise ValueError(f"links: the fluid model needs one link into {dst}")
    bottleneck = into_dst[0]
    switch = next(end for end in bottleneck["ends"] if end != dst)
    access = next(
        (link for link in scenario["links"] if set(link["ends"]) == {senders[0], switch}), None
    )
    if access is None:
        raise ValueError(f"links: the fluid model needs {senders[0]} - {switch} - {dst}")
    frame = float(traffic.get("frame_bytes", 1500))
    delay = 0.0
    for link in (access, bottleneck):
        delay += 2 * (link["delay_s"] + link.get("delay_line_s", 0.0))
        delay += 8 * (frame + qcn["cnm_bytes"]) / link["rate_bps"]
    capacity_bps, schedule = link_capacity(bottleneck, switch)
    model = QcnModel(
        capacity_bps=capacity_bps,
        capacity_schedule=schedule,
        line_rate_bps=float(access["rate_bps"]),
        frame_bytes=frame,
        qeq_bytes=qcn["qeq_bytes"],
        w=qcn["w"],
        gd=qcn["gd"],
        min_dec_factor=qcn["min_dec_factor"],
        sample_base_bytes=qcn["sample_base_bytes"],
        byte_counter_bytes=qcn["bc_limit_bytes"],
        fast_recovery=int(qcn["fast_recovery_threshold"]),
        r_ai_bps=qcn["r_ai_bps"],
        min_rate_bps=qcn["min_rate_bps"],
        feedback_delay_s=delay,
    )
    return model, len(senders)


def is_stable(n_flows: int, m: QcnModel, *, duration_s: float = 0.1, kick: float = 0.05) -> bool:
    """Local stability of the fixed point: from every rate `kick` above C/N and the queue at
    Q_eq, does the loop come back (within 1 % of C/N over the last 10 ms) rather than swing?
    (From line rate the start-up transient of many flows lasts longer than a stability test
    needs: the increase events per second scale with R_C.)"""
    fp = fixed_point(n_flows, m)
    start = {
        "rate_bps": fp["rate_bps"] * (1 + kick),
        "target_bps": fp["target_bps"] * (1 + kick),
        "queue_bytes": fp["queue_bytes"],
    }
    traj = simulate(n_flows, m, duration_s=duration_s, step_s=1e-6, initial=start)
    return settles(traj, n_flows, m, rel_tol=0.01)
