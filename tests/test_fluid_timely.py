"""TIMELY's fluid model (cnsim.fluid.timely, docs/timely.md "Fluid model"): the fixed points
worked by hand, one update of each rule as cc/timely's unit tests work it, the parameters read
from timely-incast, and the time course: patched TIMELY's flows meet at their share, the
original's keep the split they start with (CoNEXT 2016: "arbitrary unfairness")."""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pytest

import cnsim
from cnsim.fluid import timely

PATCHED = timely.TimelyModel(variant="patched")
ORIGINAL = timely.TimelyModel(variant="sigcomm2015")


def test_the_patched_fixed_point_at_n_8_is_timely_incasts() -> None:
    # e = delta N / (beta' C) = 10e6 * 8 / (0.008 * 100e9) = 0.1; RTT = 50 us * 1.1 = 55 us;
    # the queue waits 55 - 4.25 = 50.75 us at 12.5 GB/s: 634 375 B (timely-incast's comment).
    fp = timely.fixed_point(8, PATCHED)
    assert fp["unique"] is True
    assert fp["error"] == pytest.approx(0.1)
    assert fp["rtt_s"] == pytest.approx(55e-6)
    assert fp["queue_bytes"] == pytest.approx(634_375)
    assert fp["rate_bps"] == pytest.approx(12.5e9)


def test_the_patched_queue_grows_linearly_with_n() -> None:
    # N = 40: e = 0.5, RTT 75 us, (75 - 4.25) us * 12.5 GB/s = 884 375 B; N = 2: e = 0.025,
    # RTT 51.25 us, 587 500 B. Each flow adds delta / (beta' C) RTT_ref = 0.625 us: 7 812.5 B.
    assert timely.fixed_point(40, PATCHED)["queue_bytes"] == pytest.approx(884_375)
    assert timely.fixed_point(2, PATCHED)["queue_bytes"] == pytest.approx(587_500)
    queues = [timely.fixed_point(n, PATCHED)["queue_bytes"] for n in (2, 3, 4)]
    assert np.diff(queues) == pytest.approx([7_812.5, 7_812.5])


def test_the_original_has_a_band_of_equilibria_not_one_point() -> None:
    # Any RTT from T_low to T_high: (50 - 4.25) us and (500 - 4.25) us at 12.5 GB/s.
    fp = timely.fixed_point(8, ORIGINAL)
    assert fp["unique"] is False
    assert math.isnan(fp["queue_bytes"])
    assert fp["queue_low_bytes"] == pytest.approx(571_875)
    assert fp["queue_high_bytes"] == pytest.approx(6_196_875)
    assert fp["rate_bps"] == pytest.approx(12.5e9)


def test_one_update_of_each_rule_as_cc_timely_works_it() -> None:
    rate = 10e9
    assert timely.rate_step(rate, 30e-6, 0.0, ORIGINAL) == pytest.approx(10e6)  # below T_low
    assert timely.rate_step(rate, 1000e-6, 0.0, ORIGINAL) == pytest.approx(-0.4 * rate)  # x 0.6
    assert timely.rate_step(rate, 110e-6, 0.4375, ORIGINAL) == pytest.approx(-0.35 * rate)
    assert timely.rate_step(rate, 110e-6, -0.1, ORIGINAL) == pytest.approx(10e6)
    # Patched, g = 0.4375 (w = 1), RTT 110 us (e = 1.2): x (1 - 0.008 * 1.2) = x 0.9904.
    assert rate + timely.rate_step(rate, 110e-6, 0.4375, PATCHED) == pytest.approx(9.904e9)
    # Patched, g = 0 (w = 1/2), RTT 100 us (e = 1): 10e9 (1 - 0.004) + 5e6 = 9.965 Gb/s.
    assert rate + timely.rate_step(rate, 100e-6, 0.0, PATCHED) == pytest.approx(9.965e9)


def test_the_patch_weight_at_its_corners() -> None:
    assert timely.patch_weight(-0.25) == 0.0
    assert timely.patch_weight(-1.0) == 0.0
    assert timely.patch_weight(0.0) == 0.5
    assert timely.patch_weight(0.25) == 1.0
    assert timely.patch_weight(2.0) == 1.0


def test_the_model_is_read_from_timely_incast() -> None:
    scenario = tomllib.loads(cnsim.resolve(cnsim.api.load_scenario("timely-incast")))
    model, n = timely.model_from_scenario(scenario)
    assert n == 8
    assert model.variant == "patched"
    assert model.capacity_bps == 100e9
    # 4 x 1 us links, 1500 B data and 64 B ACK serialised twice each at 100 Gb/s.
    assert model.base_rtt_s == pytest.approx(4e-6 + 2 * 8 * (1500 + 64) / 100e9)
    assert model.rtt_ref_s == 50e-6  # rtt_ref_s = 0 means T_low
    assert timely.fixed_point(n, model)["queue_bytes"] == pytest.approx(634_375, rel=1e-4)


def test_bad_input_names_its_field() -> None:
    with pytest.raises(ValueError, match=r"^variant"):
        timely.TimelyModel(variant="dctcp")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^base_rtt_s, t_low_s, t_high_s"):
        timely.TimelyModel(base_rtt_s=60e-6)
    with pytest.raises(ValueError, match=r"^n_flows"):
        timely.fixed_point(0, PATCHED)
    with pytest.raises(ValueError, match="outside"):  # e* > 9 needs N > 720 at 100 Gb/s
        timely.fixed_point(1000, PATCHED)
    scenario = tomllib.loads(cnsim.resolve(cnsim.api.load_scenario("dcqcn-incast")))
    with pytest.raises(ValueError, match=r"^congestion\.scheme"):
        timely.model_from_scenario(scenario)


def test_patched_flows_settle_at_the_fixed_point_at_n_40() -> None:
    # From C / N, the patched fluid model stays at its fixed point at N = 40 (the packet runs'
    # 885 KB, docs/timely.md); at small N the same model swings about it (a limit cycle).
    traj = timely.simulate([2.5e9] * 40, PATCHED, duration_s=0.02)
    tail = traj.window(0.01)
    assert np.mean(tail.queue_bytes) == pytest.approx(884_375, rel=0.01)
    assert np.std(tail.queue_bytes) < 0.01 * 884_375


def test_original_keeps_an_unequal_start_and_patched_evens_it() -> None:
    # Two flows from 75 and 45 Gb/s: the original rule's increase (delta per Seg / R) and
    # decrease (beta g R per Seg / R) act alike on log R, so the split stays; the patched rule
    # pulls both to C / 2.
    start = [75e9, 45e9]
    ratios = {}
    for model in (ORIGINAL, PATCHED):
        tail = timely.simulate(start, model, duration_s=0.02).window(0.015)
        mean = tail.rate_bps.mean(axis=0)
        ratios[model.variant] = mean.max() / mean.min()
    assert ratios["sigcomm2015"] > 1.5
    assert ratios["patched"] < 1.2
