"""The fluid models (`cnsim.fluid`) against numbers worked by hand from the papers' equations.

DCQCN: Zhu et al., "ECN or Delay", CoNEXT 2016, section 3.1 (fluid model, fixed point, the
Taylor approximation of p*, and the stability findings of its section 3.2 text).
"""

from __future__ import annotations

import math
import tomllib

import pytest

import cnsim
from cnsim.fluid import dcqcn, qcn

# SIGCOMM 2015 parameters at 40 Gb/s with 1 KB packets, in the model's units:
# C = 40e9 / 8000 = 5e6 packets/s, R_AI = 40e6 / 8000 = 5000 packets/s, B = 10 MB / 1 KB = 1e4
# packets, T = tau' = 55 us, tau = 50 us, F = 5, g = 1/256.
SIGCOMM = dcqcn.DcqcnModel()


def test_approximate_fixed_point_is_the_papers_cube_root() -> None:
    # N = 2: 1/B + N/(T C) = 1e-4 + 2/(55e-6 * 5e6) = 1e-4 + 2/275 = 0.0073727; squared 5.4357e-5;
    # R_AI N^2/(tau' C^2) = 5000 * 4/(55e-6 * 2.5e13) = 1.45455e-5; product 7.9065e-10;
    # cube root p* = 9.2469e-4; q* = 5 KB + p*/1 % * 195 KB = 5000 + 18031 = 23031 B.
    ap = dcqcn.approx_fixed_point(2, SIGCOMM)
    assert ap["p"] == pytest.approx(9.2469e-4, rel=1e-4)
    assert ap["queue_bytes"] == pytest.approx(23_031, rel=1e-4)


def test_exact_fixed_point_solves_the_papers_equation_for_p() -> None:
    # N = 2, R_C = 2.5e6 packets/s. At p = 7.770e-4 (1 - p)^x = exp(-7.773e-4 x):
    #   a = 1 - (1-p)^(tau R_C = 125)        = 0.0925
    #   alpha = 1 - (1-p)^(tau' R_C = 137.5) = 0.1014
    #   b = p/((1-p)^-1e4 - 1) = 7.77e-4/2370 = 3.3e-7, c = b (1-p)^(5e4) ~ 1e-24 (negligible)
    #   d = p/((1-p)^-137.5 - 1) = 7.77e-4/0.1128 = 6.89e-3
    #   e = d (1-p)^(5 * 137.5) = 6.89e-3 * 0.586 = 4.04e-3
    #   a^2 alpha/((b + d)(c + e)) = 8.676e-4/2.784e-5 = 31.2
    #   tau^2 R_AI R_C = 2.5e-9 * 5000 * 2.5e6 = 31.25
    fp = dcqcn.fixed_point(2, SIGCOMM)
    assert fp["p"] == pytest.approx(7.770e-4, rel=2e-3)
    assert fp["alpha"] == pytest.approx(0.1014, rel=2e-3)
    assert fp["queue_bytes"] == pytest.approx(5_000 + 7.770e-4 / 0.01 * 195_000, rel=2e-3)
    assert dcqcn.fixed_point_residual(fp["p"], 2, SIGCOMM) == pytest.approx(0.0, abs=1e-6)
    # R_T* = R_C* + alpha a/(tau (b + d)) = 2.5e6 + 0.1014 * 0.0925/(50e-6 * 6.89e-3) packets/s
    #      = 2.5e6 + 2.72e4 packets/s: 20.218 Gb/s.
    assert fp["target_bps"] == pytest.approx(20.218e9, rel=1e-3)


def test_the_approximation_overestimates_p_and_agrees_as_p_goes_to_zero() -> None:
    # The Taylor series drops (1-p)^(F B) and (1-p)^(F T R_C) (both < 1) and linearises a and
    # alpha: it overestimates p*, by 19 % at N = 2 and 30 % at N = 10 here...
    for n, ratio in ((2, 1.190), (10, 1.301)):
        exact = dcqcn.fixed_point(n, SIGCOMM)["p"]
        approx = dcqcn.approx_fixed_point(n, SIGCOMM)["p"]
        assert approx / exact == pytest.approx(ratio, rel=2e-3)
    # ...and becomes exact as p* -> 0 (a tiny R_AI, so tau R_C p* << 1 and F T R_C p* << 1).
    gentle = dcqcn.DcqcnModel(r_ai_bps=4e3)
    exact, approx = dcqcn.fixed_point(2, gentle)["p"], dcqcn.approx_fixed_point(2, gentle)["p"]
    assert approx / exact == pytest.approx(1.0, abs=0.02)


def test_fixed_point_queue_grows_with_n_and_sits_at_kmax_past_pmax() -> None:
    queues = [dcqcn.fixed_point(n, SIGCOMM)["queue_bytes"] for n in (2, 4, 8, 10)]
    assert queues == sorted(queues)
    assert math.isinf(dcqcn.fixed_point(16, SIGCOMM)["queue_bytes"])  # p* = 1.09 % > Pmax


def test_time_course_settles_at_the_fixed_point() -> None:
    fp = dcqcn.fixed_point(4, SIGCOMM)
    traj = dcqcn.simulate(4, dcqcn.replace(SIGCOMM, feedback_delay_s=4e-6), duration_s=0.15)
    tail = traj.window(0.14)
    assert dcqcn.settles(traj)
    # alpha's time constant is tau'/g = 14 ms: after 10 of them the state is at the fixed point.
    assert tail.queue_bytes.mean() == pytest.approx(fp["queue_bytes"], rel=0.01)
    assert tail.rate_bps.mean() == pytest.approx(10e9, rel=1e-3)
    assert tail.alpha.mean() == pytest.approx(fp["alpha"], rel=0.01)
    assert tail.target_bps.mean() == pytest.approx(fp["target_bps"], rel=1e-3)


@pytest.mark.parametrize(
    ("n", "delay_s", "stable"),
    [
        # CoNEXT 2016, section 3.2: "When the feedback delay is small (4 us), DCQCN is stable
        # ... regardless of the number of flows. However, when the delay is large (85 us), the
        # protocol is unstable for 10 flows. It is, however, stable for 2 ... flows."
        (2, 4e-6, True),
        (10, 4e-6, True),
        (2, 85e-6, True),
        (10, 85e-6, False),
    ],
)
def test_stability_against_delay_as_the_paper_finds(n: int, delay_s: float, stable: bool) -> None:
    m = dcqcn.replace(SIGCOMM, feedback_delay_s=delay_s)
    assert dcqcn.settles(dcqcn.simulate(n, m, duration_s=0.08, step_s=0.5e-6)) is stable


def test_enqueue_marking_adds_the_queueing_delay_to_the_loop() -> None:
    # Identical runs but for where the mark is decided: at enqueue the feedback is older by
    # the marked frame's wait q/C, so the start-up spike's cut comes later and the queue peaks
    # higher (4.36 MB against 3.61 MB here).
    base = dcqcn.replace(SIGCOMM, feedback_delay_s=4e-6)
    deq = dcqcn.simulate(10, base, duration_s=0.002)
    enq = dcqcn.simulate(10, dcqcn.replace(base, mark_on="enqueue"), duration_s=0.002)
    assert enq.queue_bytes.max() > 1.15 * deq.queue_bytes.max()


def test_model_reads_the_resolved_scenario() -> None:
    scenario = tomllib.loads(cnsim.resolve("dcqcn-incast"))
    m, n = dcqcn.model_from_scenario(scenario)
    assert n == 8
    assert (m.capacity_bps, m.line_rate_bps, m.packet_bytes) == (40e9, 40e9, 1000.0)
    assert (m.kmin_bytes, m.kmax_bytes, m.pmax) == (5_000, 200_000, 0.01)
    assert m.mark_on == scenario["congestion"]["dcqcn"]["mark_on"]
    # tau* = 2 (1 us + 1 us) of propagation + (1000 B + 64 B) * 8 / 40 Gb/s on each of the two
    # hops = 4 us + 2 * 0.2128 us = 4.4256 us.
    assert m.feedback_delay_s == pytest.approx(4.4256e-6, rel=1e-9)
    with pytest.raises(ValueError, match=r"^congestion\.scheme"):
        dcqcn.model_from_scenario(tomllib.loads(cnsim.resolve("seed004-qcn")))


# QCN: Alizadeh et al., Allerton 2008, section IV, as cnsim.fluid.qcn reads it (module docstring).


def _seed004_qcn() -> tuple[qcn.QcnModel, int]:
    return qcn.model_from_scenario(tomllib.loads(cnsim.resolve("seed004-qcn")))


def test_qcn_model_reads_the_resolved_scenario() -> None:
    m, n = _seed004_qcn()
    assert n == 4
    # The bottleneck's rate at t = 0 comes from its schedule (9.5 Gb/s), not its 10 Gb/s.
    assert (m.capacity_bps, m.line_rate_bps) == (9.5e9, 10e9)
    assert (m.qeq_bytes, m.w, m.gd, m.p, m.m) == (33_000, 2.0, 1 / 128, 0.01, 100)
    # tau = 2 (1 us + 1 us) + (1500 B + 64 B) * 8 / 10 Gb/s on each of two hops = 6.5024 us;
    # seed004-qcn-delay adds its delay line, 100 us each way on the RP links: 206.5024 us.
    assert m.feedback_delay_s == pytest.approx(6.5024e-6, rel=1e-9)
    delayed, _ = qcn.model_from_scenario(tomllib.loads(cnsim.resolve("seed004-qcn-delay")))
    assert delayed.feedback_delay_s == pytest.approx(206.5024e-6, rel=1e-9)
    with pytest.raises(ValueError, match=r"^congestion\.scheme"):
        qcn.model_from_scenario(tomllib.loads(cnsim.resolve("dcqcn-incast")))


def test_qcn_fixed_point_worked_by_hand() -> None:
    # p = 1500/150000 = 0.01, m = 100 frames: (1-p)^-100 - 1 = e^1.00503 - 1 = 1.7320,
    # (1-p)^500 = e^-5.02517 = 0.0065705. R_C* = 9.5 Gb/s / 4 = 2.375 Gb/s.
    # R_T* - R_C* = 5 Mb/s * 0.0065705 / 1.7320 = 18,968 b/s
    # G* = 5e6 * 0.0065705 / (2 * 2.375e9 * 1.7320^2) = 2.3056e-6
    # q* = 33,000 + G* * 165,000 / (64/128) = 33,000.76 B: the queue settles at Q_eq.
    m, n = _seed004_qcn()
    fp = qcn.fixed_point(n, m)
    assert fp["rate_bps"] == 2.375e9
    assert fp["target_bps"] - fp["rate_bps"] == pytest.approx(18_968, rel=1e-3)
    assert fp["cut"] == pytest.approx(2.3056e-6, rel=1e-3)
    assert fp["queue_bytes"] == pytest.approx(33_000.76, abs=0.01)


def test_qcn_time_course_settles_at_the_fixed_point() -> None:
    m, n = _seed004_qcn()
    # From line rate the start-up cut is deep and the byte-counter recovery slow: 0.1 s after
    # the start the rates are still 1-5 % under C/N with an empty queue; by 0.25 s they are back.
    traj = qcn.simulate(n, m, duration_s=0.25, step_s=1e-6)
    tail = traj.window(0.24)
    assert qcn.settles(traj, n, m)
    assert tail.queue_bytes.mean() == pytest.approx(33_000.76, rel=0.01)
    assert tail.rate_bps.mean() == pytest.approx(2.375e9, rel=1e-3)


@pytest.mark.parametrize(("delay_s", "stable"), [(6.5e-6, True), (200e-6, True), (300e-6, False)])
def test_qcn_stability_against_the_lag(delay_s: float, stable: bool) -> None:
    # The model's own region at seed 004's 9.5 Gb/s and N = 4 (docs/fidelity.md): stable up
    # to a lag between 250 and 300 us; seed004-qcn-delay's 206.5 us is inside it.
    m, n = _seed004_qcn()
    assert qcn.is_stable(n, qcn.replace(m, feedback_delay_s=delay_s)) is stable


# The fixed point's oscillation (`dcqcn.oscillation`): a damped focus with a period of about
# 2.4 ms at N = 10 (the packet runs swing with 1.7-2.4 ms), which loses its damping as the
# delay grows; the edge lies near 60-65 us for N = 8-10 and near 90 us for N = 2 (fidelity.md).
@pytest.mark.parametrize(
    ("n", "delay_s", "stable"),
    [(10, 4.4256e-6, True), (10, 45e-6, True), (10, 75e-6, False), (2, 85e-6, True)],
)
def test_fixed_point_oscillation_decays_or_grows_with_the_delay(
    n: int, delay_s: float, stable: bool
) -> None:
    model = dcqcn.DcqcnModel(min_rate_bps=10e6, feedback_delay_s=delay_s)
    osc = dcqcn.oscillation(n, model)
    assert osc.stable is stable
    if n == 10:
        assert 2.2e-3 < osc.period_s < 2.6e-3


def test_local_decay_sees_a_swing_the_run_from_line_rate_calls_settled() -> None:
    # N = 10 at 75 us: from line rate the rate stays within 2 % over the last 10 ms of 100 ms
    # (the swing starts small and grows 11 % per period), yet the fixed point is unstable.
    model = dcqcn.DcqcnModel(min_rate_bps=10e6, feedback_delay_s=75e-6)
    assert dcqcn.settles(dcqcn.simulate(10, model, duration_s=0.1))
    assert dcqcn.oscillation(10, model).decay_per_period > 1.05
