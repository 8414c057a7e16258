"""The fixed point of DCQCN's fluid model (Zhu et al., "ECN or Delay: Lessons Learnt from
Analysis of DCQCN and TIMELY", CoNEXT 2016, section 3), for N flows sharing one bottleneck.

At the fixed point every flow sends R_C = C/N, and the model's equations for alpha, R_T and R_C
have zero derivative. With a = 1 - p (p the marking probability) and rates in packets/s:

    alpha = 1 - a^(tau' R_C)
    (R_T - R_C)/tau (1 - a^(tau R_C))
        = R_AI R_C p [a^(F B)/(a^-B - 1) + a^(F T R_C)/(a^(-T R_C) - 1)]
    R_C alpha/(2 tau) (1 - a^(tau R_C)) = (R_T - R_C)/2 R_C p [1/(a^-B - 1) + 1/(a^(-T R_C) - 1)]

The last line gives R_T - R_C; the middle one is then an equation in p alone, solved by
bisection. The queue follows from the RED curve: q = Kmin + p (Kmax - Kmin)/Pmax.

    python -m cnsim.dcqcn_fluid            # the dcqcn-fixed-point table's N values

Rates are in packets/s and B in packets of `packet_bytes`. Above Pmax the RED curve jumps to 1,
so a fixed point with p > Pmax sits at Kmax: `queue_bytes` is then inf ("at or above Kmax").
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Model:
    capacity_bps: float = 40e9
    packet_bytes: float = 1000.0
    kmin_bytes: float = 5_000.0
    kmax_bytes: float = 200_000.0
    pmax: float = 0.01
    g: float = 1 / 256
    tau_s: float = 50e-6  # CNP interval
    tau_alpha_s: float = 55e-6  # alpha timer
    timer_s: float = 55e-6  # rate-increase timer T
    byte_counter_bytes: float = 10e6  # B
    fast_recovery: int = 5  # F
    r_ai_bps: float = 40e6


def _pow_minus_one(p: float, exponent: float) -> float:
    """a^(-exponent) - 1 with a = 1 - p, accurate for small p (inf when it overflows)."""
    x = -exponent * math.log1p(-p)
    return math.expm1(x) if x < 700 else math.inf


def _pow(p: float, exponent: float) -> float:
    return math.exp(exponent * math.log1p(-p))


def residual(p: float, n: int, m: Model) -> float:
    """dR_T/dt at the fixed point of alpha and R_C, for marking probability p (zero: fixed)."""
    pkt_bits = 8 * m.packet_bytes
    rc = m.capacity_bps / n / pkt_bits  # packets/s
    b = m.byte_counter_bytes / m.packet_bytes  # packets
    r_ai = m.r_ai_bps / pkt_bits
    alpha = 1 - _pow(p, m.tau_alpha_s * rc)
    cut = 1 - _pow(p, m.tau_s * rc)  # probability of a CNP in one interval
    inc_b = 1 / _pow_minus_one(p, b)
    inc_t = 1 / _pow_minus_one(p, m.timer_s * rc)
    gap = alpha * cut / (m.tau_s * p * (inc_b + inc_t))  # R_T - R_C
    decrease = gap / m.tau_s * cut
    f = m.fast_recovery
    increase = r_ai * rc * p * (_pow(p, f * b) * inc_b + _pow(p, f * m.timer_s * rc) * inc_t)
    return increase - decrease


def fixed_point(n: int, m: Model | None = None) -> dict[str, float]:
    """The marking probability, queue and alpha at the fixed point for N flows."""
    m = m if m is not None else Model()
    lo, hi = 1e-12, 0.5
    # increase - decrease is positive for tiny p (almost no CNPs) and negative for large p.
    if residual(lo, n, m) <= 0 or residual(hi, n, m) >= 0:
        raise ValueError(f"no sign change for N = {n}")
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if residual(mid, n, m) > 0:
            lo = mid
        else:
            hi = mid
    p = math.sqrt(lo * hi)
    # Above Pmax the RED curve jumps to 1: such a fixed point sits at Kmax (inf here).
    q = m.kmin_bytes + p * (m.kmax_bytes - m.kmin_bytes) / m.pmax if p <= m.pmax else math.inf
    rc = m.capacity_bps / n / (8 * m.packet_bytes)
    return {
        "n_flows": n,
        "p": p,
        "queue_bytes": q,
        "alpha": 1 - _pow(p, m.tau_alpha_s * rc),
    }


if __name__ == "__main__":
    print("n_flows,p,queue_bytes,alpha")
    for n in (2, 4, 8, 10, 16, 32, 64):
        fp = fixed_point(n)
        print(f"{n},{fp['p']:.6g},{fp['queue_bytes']:.6g},{fp['alpha']:.4g}")
