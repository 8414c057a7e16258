"""Seed 001's knee rule ("flat") on curves whose answers are known, without the native module."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cnsim import analysis


def rise_fall_flat(rise: int, fall: int, flat: int) -> np.ndarray:
    """A curve that rises linearly for `rise` points, falls back to 0 over `fall`, then is 0."""
    up = np.linspace(0.0, 1.0, rise + 1)
    down = np.linspace(1.0, 0.0, fall + 1)[1:]
    return np.concatenate([up, down, np.zeros(flat)])


def test_remaining_range_is_how_far_the_curve_still_moves():
    curve = np.array([0.0, 2.0, -1.0, 0.5, 0.5])
    np.testing.assert_allclose(analysis.remaining_range(curve), [3.0, 3.0, 1.5, 0.0, 0.0])
    np.testing.assert_allclose(analysis.remaining_range(curve, max_index=2), [3.0, 3.0, 0.0])


def test_flat_knee_equals_chord_knee_on_a_rise_then_flat_curve():
    rise_then_flat = np.minimum(np.arange(100), 30) / 30
    assert analysis.knee_chord(rise_then_flat) == 30
    assert analysis.knee_flat(rise_then_flat) == 30
    assert analysis.knee_flat(-rise_then_flat) == 30
    assert analysis.knee_flat(np.ones(40)) == 0


def test_flat_knee_waits_for_a_curve_that_rises_and_falls_back():
    # Up for 30 points, back down to 0 by point 70, flat after: the chord rule stops at the
    # turning point, the flat rule where the curve stops moving.
    curve = rise_fall_flat(30, 40, 130)
    assert analysis.knee_chord(curve) == 30
    assert analysis.knee_flat(curve) == 70


def dip_then_overshoot(n: int, dip: int, overshoot: int, dt: float = 1e-3) -> pd.Series:
    """Throughput 10 for `dip` samples, 40 for the next `overshoot`, 28 after (seed 001's shape:
    PAUSE spreads congestion, then backlogs drain above the steady state)."""
    x = np.full(n, 28.0)
    x[:dip] = 10.0
    x[dip : dip + overshoot] = 40.0
    return pd.Series(x, index=np.arange(n) * dt)


@pytest.mark.parametrize(("dip", "overshoot"), [(20, 30), (50, 20), (10, 100)])
def test_flat_transient_ends_after_the_overshoot(dip, overshoot):
    series = dip_then_overshoot(1000, dip, overshoot)
    found = analysis.transient_duration(series, method="flat")
    assert found.knee_index == dip + overshoot
    assert found.duration_s == pytest.approx((dip + overshoot) * 1e-3)


@pytest.mark.parametrize(("dip", "overshoot"), [(20, 30), (50, 20)])
def test_chord_transient_stops_at_a_deep_dip(dip, overshoot):
    # Where the dip moves the mean more than the overshoot, the relative-change curve turns at
    # the dip's end and the chord rule ends the transient there.
    series = dip_then_overshoot(1000, dip, overshoot)
    assert analysis.transient_duration(series, method="chord").knee_index == dip


def test_flat_transient_of_a_steady_series_is_zero():
    steady = pd.Series(np.full(100, 28.0), index=np.arange(100) * 1e-3)
    assert analysis.transient_duration(steady, method="flat").knee_index == 0


def test_settled_compares_the_mean_after_the_knee_with_the_unsearched_tail():
    # Steady after the transient: settled.
    done = analysis.transient_duration(dip_then_overshoot(1000, 20, 30), method="flat")
    assert done.settled
    assert done.searched_index == 499
    assert done.searched_s == pytest.approx(0.499)
    # A deficit that recovers only slowly, still climbing past the searched half (seed 001
    # without BCN-MAX): the tail's mean is higher than anything after the knee, not settled.
    t = np.arange(1000) * 1e-3
    climbing = pd.Series(10.0 + 20.0 * np.minimum(t / 0.8, 1.0), index=t)
    found = analysis.transient_duration(climbing, method="flat")
    assert not found.settled
    assert found.lower_bound_s == pytest.approx(0.249)
    # The same check with a tolerance wide enough for the difference passes.
    assert analysis.transient_duration(climbing, method="flat", tol=0.5).settled
