"""TIMELY's fluid model (Zhu, Ghobadi, Misra, Padhye, "ECN or Delay: Lessons Learnt from Analysis
of DCQCN and TIMELY", CoNEXT 2016, section 4) for the original rule (Mittal et al., SIGCOMM 2015,
Algorithm 1) and the patched one: the fixed point(s) for N flows at capacity C and the time
course with the feedback delay.

N flows share one bottleneck of capacity C (bits/s here; queue in bytes at the interface). A
flow updates its rate R_i once per completion event, every Seg bytes acknowledged, so every
tau*_i = Seg / R_i. The RTT a sample carries is base + q(t - tau')/C, where tau' = q(t)/C +
base is the age of the queue it saw (the frame's wait plus the loop) and base is the round trip
without queueing. In words of the model:

    dq/dt     = sum_i R_i - C                                    (q >= 0)
    dg_i/dt   = alpha / tau*_i (-g_i + (q(t - tau') - q(t - tau' - tau*_i)) / (C minRTT))
    dR_i/dt   = Delta_i / tau*_i, with Delta_i the change of one update (Algorithm 1):
                RTT < T_low : + delta
                RTT > T_high: - beta (1 - T_high / RTT) R_i
                otherwise, original: + delta (g_i <= 0),  - beta g_i R_i (g_i > 0)
                           patched : + delta (1 - w(g_i)) - beta' w(g_i) e R_i,
                                     e = (RTT - RTT_ref) / RTT_ref,
                                     w(g) = 0 (g <= -1/4), 2 g + 1/2, 1 (g >= 1/4)

Rates are held to [min_rate, line rate]. Hyper-active increase (N delta after 5 negative
gradients) is left out, as in the paper's model: it only speeds the increase.

**Fixed points** (dq/dt = 0 and dg_i/dt = 0 give sum R_i = C and g_i = 0):

- *Original TIMELY has no unique fixed point.* With g = 0 the gradient rule's decrease,
  beta g R, vanishes: every split of C among the flows and every queue whose RTT lies between
  T_low and T_high is an equilibrium of the decrease, so where the flows settle (their queue,
  their shares) depends on where they start (the paper: "TIMELY can converge to stable regime
  with arbitrary unfairness"). Read strictly, Algorithm 1 adds delta at g = 0, so the fluid
  state cannot rest anywhere in that band: it creeps up at a small positive gradient. Both
  readings give no single queue; `fixed_point` returns the band, [C (T_low - base),
  C (T_high - base)], and the mean share C / N.
- *Patched TIMELY has one.* With g = 0 (w = 1/2) a flow is still only if beta' e R_i = delta:
  every flow sees the same e, so R_i = delta / (beta' e) for all i, and sum R_i = C gives
  R* = C / N and e* = delta N / (beta' C): RTT* = RTT_ref (1 + e*), q* = C (RTT* - base). The
  queue grows linearly with N.

**What follows cnsim rather than the paper.** The error term e is of the whole RTT against
RTT_ref, as `cc/timely.rs` computes it from the samples (the paper's model writes the queueing
delay against T_low, which differs by base / RTT_ref, 8.5 % at base 4.25 us); w(g),
RTT_ref = T_low and beta' = 0.008 are cnsim's reconstruction (docs/timely.md), the same as the
constants of the authors' public fluid model. Parameters are read from the resolved scenario
(`model_from_scenario`), as `cnsim.fluid.dcqcn` does.

Integration: explicit Euler on a fixed step (default 0.25 us, a tenth of the shortest
update interval at 100 Gb/s), the delayed queue read from the stored history.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from cnsim.fluid.bottleneck import incast_path
from cnsim.fluid.timecourse import TimeCourse

Variant = Literal["sigcomm2015", "patched"]
VARIANTS: tuple[Variant, ...] = ("sigcomm2015", "patched")


@dataclass(frozen=True)
class TimelyModel:
    """The fluid model's parameters (defaults: cnsim's [congestion.timely] defaults at
    100 Gb/s, and timely-incast's base round trip)."""

    variant: Variant = "sigcomm2015"
    capacity_bps: float = 100e9
    line_rate_bps: float = 100e9
    base_rtt_s: float = 4.25e-6
    segment_bytes: float = 16384.0
    alpha: float = 0.875
    beta: float = 0.8
    delta_bps: float = 10e6
    t_low_s: float = 50e-6
    t_high_s: float = 500e-6
    min_rtt_s: float = 20e-6
    min_rate_bps: float = 10e6
    rtt_ref_s: float = 50e-6
    beta_patched: float = 0.008

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant: {self.variant!r} is none of {VARIANTS}")
        for name in ("capacity_bps", "segment_bytes", "min_rtt_s", "rtt_ref_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: must be > 0 (got {getattr(self, name)})")
        if not 0 <= self.base_rtt_s < self.t_low_s < self.t_high_s:
            raise ValueError(
                "base_rtt_s, t_low_s, t_high_s: need 0 <= base < T_low < T_high "
                f"(got {self.base_rtt_s}, {self.t_low_s}, {self.t_high_s})"
            )

    def queue_of_rtt(self, rtt_s: float) -> float:
        """The queue (bytes) whose waiting time makes the round trip `rtt_s`."""
        return max(rtt_s - self.base_rtt_s, 0.0) * self.capacity_bps / 8


def patch_weight(gradient: float) -> float:
    """w(g) of the patched rule: 0 below g = -1/4, 1 above 1/4, linear between."""
    return min(max(2.0 * gradient + 0.5, 0.0), 1.0)


def rate_step(rate_bps: float, rtt_s: float, gradient: float, m: TimelyModel) -> float:
    """Delta: the change of one update (Algorithm 1; the patched middle rule), unclamped."""
    if rtt_s < m.t_low_s:
        return m.delta_bps
    if rtt_s > m.t_high_s:
        return -m.beta * (1.0 - m.t_high_s / rtt_s) * rate_bps
    if m.variant == "patched":
        w = patch_weight(gradient)
        error = (rtt_s - m.rtt_ref_s) / m.rtt_ref_s
        return m.delta_bps * (1.0 - w) - m.beta_patched * w * error * rate_bps
    return m.delta_bps if gradient <= 0 else -m.beta * gradient * rate_bps


def _rate_steps(
    rates: npt.NDArray[np.float64], rtt_s: float, grads: npt.NDArray[np.float64], m: TimelyModel
) -> npt.NDArray[np.float64]:
    """`rate_step` for every flow at once (they share the RTT)."""
    if rtt_s < m.t_low_s:
        return np.full_like(rates, m.delta_bps)
    if rtt_s > m.t_high_s:
        return -m.beta * (1.0 - m.t_high_s / rtt_s) * rates
    if m.variant == "patched":
        w = np.clip(2.0 * grads + 0.5, 0.0, 1.0)
        error = (rtt_s - m.rtt_ref_s) / m.rtt_ref_s
        return m.delta_bps * (1.0 - w) - m.beta_patched * w * error * rates
    return np.where(grads <= 0, m.delta_bps, -m.beta * grads * rates)


def fixed_point(n_flows: int, m: TimelyModel | None = None) -> dict[str, Any]:
    """The fixed point for N flows: `unique`, the per-flow rate, and the queue. Patched: the
    one point (`queue_bytes`, `rtt_s`, `error`); original: no single queue (`queue_bytes`
    NaN), the band of equilibria [`queue_low_bytes`, `queue_high_bytes`] from T_low to
    T_high, `rate_bps` the mean share C / N (any split of C is one)."""
    m = m if m is not None else TimelyModel()
    if n_flows < 1:
        raise ValueError(f"n_flows: need at least one flow (got {n_flows})")
    share = m.capacity_bps / n_flows
    if m.variant == "sigcomm2015":
        return {
            "n_flows": n_flows,
            "unique": False,
            "rate_bps": share,
            "queue_bytes": math.nan,
            "queue_low_bytes": m.queue_of_rtt(m.t_low_s),
            "queue_high_bytes": m.queue_of_rtt(m.t_high_s),
        }
    error = m.delta_bps / (m.beta_patched * share)
    rtt = m.rtt_ref_s * (1.0 + error)
    if not m.t_low_s <= rtt <= m.t_high_s:
        raise ValueError(
            f"N = {n_flows}: the patched fixed point's RTT {rtt * 1e6:.1f} us is outside "
            f"[T_low, T_high] = [{m.t_low_s * 1e6:g}, {m.t_high_s * 1e6:g}] us, where its rule runs"
        )
    queue = m.queue_of_rtt(rtt)
    return {
        "n_flows": n_flows,
        "unique": True,
        "rate_bps": share,
        "rtt_s": rtt,
        "error": error,
        "queue_bytes": queue,
        "queue_low_bytes": queue,
        "queue_high_bytes": queue,
    }


@dataclass(frozen=True)
class Trajectory(TimeCourse):
    """A fluid time course, sampled: per-flow rates (bits/s, one column per flow) and
    gradients, the queue (bytes)."""

    rate_bps: npt.NDArray[np.float64]
    gradient: npt.NDArray[np.float64]
    queue_bytes: npt.NDArray[np.float64]


def simulate(
    initial_rates_bps: Sequence[float],
    m: TimelyModel | None = None,
    *,
    duration_s: float = 0.02,
    step_s: float = 0.25e-6,
    sample_s: float = 5e-6,
    initial_queue_bytes: float = 0.0,
) -> Trajectory:
    """Integrates the model from the given rates (one per flow; gradients 0, the queue
    `initial_queue_bytes` and its history before t = 0 the same) for `duration_s`."""
    m = m if m is not None else TimelyModel()
    rates = np.array(initial_rates_bps, dtype=float)
    if rates.ndim != 1 or rates.size == 0:
        raise ValueError("initial_rates_bps: one rate per flow, at least one")
    cap = m.capacity_bps / 8  # bytes/s
    seg = m.segment_bytes
    floor = min(m.min_rate_bps, m.line_rate_bps)
    steps = round(duration_s / step_s)
    every = max(1, round(sample_s / step_s))
    history = np.full(steps + 1, float(initial_queue_bytes))
    grads = np.zeros_like(rates)
    q = float(initial_queue_bytes)
    out_t: list[float] = []
    out_r: list[npt.NDArray[np.float64]] = []
    out_g: list[npt.NDArray[np.float64]] = []
    out_q: list[float] = []
    for k in range(steps + 1):
        history[k] = q
        if k % every == 0:
            out_t.append(k * step_s)
            out_r.append(rates.copy())
            out_g.append(grads.copy())
            out_q.append(q)
        if k == steps:
            break
        age = round((q / cap + m.base_rtt_s) / step_s)  # tau': the sample's age
        seen = history[max(k - age, 0)]
        interval = seg * 8 / rates  # tau*_i, per flow
        before = history[np.maximum(k - age - np.rint(interval / step_s).astype(int), 0)]
        rtt = m.base_rtt_s + seen / cap
        sample = (seen - before) / cap / m.min_rtt_s  # the new RTT difference over minRTT
        d_grad = m.alpha * (sample - grads) / interval
        d_rate = _rate_steps(rates, rtt, grads, m) / interval
        d_q = float(np.sum(rates)) / 8 - cap
        grads = grads + step_s * d_grad
        rates = np.clip(rates + step_s * d_rate, floor, m.line_rate_bps)
        q = max(q + step_s * d_q, 0.0)
    return Trajectory(
        time_s=np.array(out_t),
        rate_bps=np.array(out_r),
        gradient=np.array(out_g),
        queue_bytes=np.array(out_q),
    )


def model_from_scenario(scenario: Mapping[str, Any]) -> tuple[TimelyModel, int]:
    """The model and N from a resolved scenario (`tomllib.loads(cnsim.resolve(...))`): the
    `[congestion.timely]` table, the bottleneck (the `[report.steady].port`, else the one link
    into the first traffic entry's destination) and its rate, the senders' line rate, and the
    base round trip: the propagation of sender - switch - receiver and back, one data frame's
    serialisation on the two data hops and one ACK's on the two return hops."""
    congestion = scenario.get("congestion", {})
    params = congestion.get("timely")
    if congestion.get("scheme") != "timely" or params is None:
        raise ValueError("congestion.scheme: the TIMELY fluid model needs scheme = 'timely'")
    traffic = scenario["traffic"][0]
    path = incast_path(scenario, str(traffic.get("dst", "")))
    senders, access, bottleneck = path.senders, path.access, path.bottleneck
    ack = float(scenario.get("transport", {}).get("roce", {}).get("ack_bytes", 64))
    base = path.round_trip_s(ack)
    rtt_ref = params["rtt_ref_s"] or params["t_low_s"]  # 0 means T_low (docs/timely.md)
    model = TimelyModel(
        variant=params["variant"],
        capacity_bps=float(bottleneck["rate_bps"]),
        line_rate_bps=float(access["rate_bps"]),
        base_rtt_s=base,
        segment_bytes=float(params["segment_bytes"]),
        alpha=params["alpha"],
        beta=params["beta"],
        delta_bps=params["delta_bps"],
        t_low_s=params["t_low_s"],
        t_high_s=params["t_high_s"],
        min_rtt_s=params["min_rtt_s"],
        min_rate_bps=params["min_rate_bps"],
        rtt_ref_s=rtt_ref,
        beta_patched=params["beta_patched"],
    )
    return model, len(senders)


SWEEP_N = (2, 4, 8, 16, 24, 40)  # dcqcn-timely-fixed-point's


def main(argv: list[str] | None = None) -> None:
    """No argument: both variants' fixed points for the dcqcn-timely-fixed-point N (defaults).
    `timecourse`: beside them, the time course from C / N and an empty queue, 60 ms, its queue
    mean and std and the link's use over 30-60 ms (the sweep's steady window; about a minute)."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["timecourse"]):
        raise SystemExit("usage: python -m cnsim.fluid.timely [timecourse]")
    course = args == ["timecourse"]
    head = "n_flows,variant,rate_bps,queue_bytes,queue_low_bytes,queue_high_bytes"
    print(head + (",course_queue_mean_bytes,course_queue_std_bytes,course_utilisation" * course))
    for variant in VARIANTS:
        m = TimelyModel(variant=variant)
        for n in SWEEP_N:
            fp = fixed_point(n, m)
            line = (
                f"{n},{variant},{fp['rate_bps']:.6g},{fp['queue_bytes']:.6g},"
                f"{fp['queue_low_bytes']:.6g},{fp['queue_high_bytes']:.6g}"
            )
            if course:
                tail = simulate([m.capacity_bps / n] * n, m, duration_s=0.06).window(0.03)
                arriving = np.minimum(tail.rate_bps.sum(axis=1), m.capacity_bps)
                use = float(np.mean(np.where(tail.queue_bytes > 0, m.capacity_bps, arriving)))
                line += (
                    f",{np.mean(tail.queue_bytes):.6g},{np.std(tail.queue_bytes):.6g},"
                    f"{use / m.capacity_bps:.4g}"
                )
            print(line)


if __name__ == "__main__":
    main()
