"""Analysis definitions on synthetic series whose answers are known by construction."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cnsim import analysis


def step_series(n: int, k: int, low: float = 0.0, high: float = 1.0, dt: float = 1e-3):
    """`low` for the first k samples, `high` after: a transient of exactly k samples."""
    times = dt * np.arange(1, n + 1)
    values = np.where(np.arange(n) < k, low, high)
    return pd.Series(values, index=pd.Index(times, name="time_s"))


# ---------------------------------------------------------------- selecting


def test_select_entities_globs_keep_original_order():
    names = ["ep1", "ep0", "core->ep4", "es0->core"]
    assert analysis.select_entities(names, ["ep*"]) == ["ep1", "ep0"]
    assert analysis.select_entities(names, "*->core") == ["es0->core"]
    assert analysis.select_entities(names, ["core->ep4", "ep0"]) == ["ep0", "core->ep4"]
    assert analysis.select_entities(names, []) == names
    assert analysis.select_entities(names, None) == names


def test_wide_one_column_per_entity_in_topology_order(make_result):
    result = make_result()
    table = result.series("host_tx_bps")
    assert list(table.columns) == ["ep0", "ep1", "ep2", "ep3"]
    assert table.index.name == "time_s"
    assert table.shape == (100, 4)
    assert list(result.series("host_tx_bps", ["ep[12]"]).columns) == ["ep1", "ep2"]


def test_wide_errors_name_what_exists(make_result):
    result = make_result()
    with pytest.raises(KeyError, match="available: host_tx_bps"):
        result.series("nope_bps")
    with pytest.raises(KeyError, match="available: ep0, ep1"):
        result.series("host_tx_bps", ["sw*"])


def test_aggregate_sums_entities(make_result):
    result = make_result()
    total = analysis.aggregate(result.timeseries, "host_tx_bps")
    assert total.iloc[0] == pytest.approx(9.5e9)
    assert total.iloc[39] == pytest.approx(2e9)  # t = 40 ms, in the 2 Gb/s phase


def test_peak_and_mean_over_a_window():
    series = step_series(10, 5, low=1.0, high=3.0)
    assert analysis.peak(series) == 3.0
    assert analysis.mean(series) == 2.0
    assert analysis.mean(series, (0.001, 0.005)) == 1.0
    assert math.isnan(analysis.peak(series, (1.0, 2.0)))


# ---------------------------------------------------------------- fairness


def test_jain_fairness_known_values():
    assert analysis.jain_fairness([5, 5, 5, 5]) == pytest.approx(1.0)
    assert analysis.jain_fairness([1, 0, 0, 0]) == pytest.approx(0.25)
    assert analysis.jain_fairness([1, 2, 3]) == pytest.approx(36 / 42)
    assert math.isnan(analysis.jain_fairness([]))
    assert math.isnan(analysis.jain_fairness([0, 0]))


# ---------------------------------------------------------------- recovery


def test_recovery_time_of_a_ramp(make_result):
    # Ramp 2 -> 9.5 Gb/s over [60, 70) ms: the 5 % band (>= 9.025) is first met at 70 ms.
    total = analysis.aggregate(make_result().timeseries, "host_tx_bps")
    elapsed = analysis.recovery_time(total, after_s=0.06, capacity_bps=9.5e9)
    assert elapsed == pytest.approx(0.010)
    wider = analysis.recovery_time(total, after_s=0.06, capacity_bps=9.5e9, band=0.15)
    assert wider == pytest.approx(0.009)  # 8.75 Gb/s at 69 ms is within 15 %


def test_recovery_needs_the_band_held():
    # A one-sample excursion into the band at 4 ms does not count; the level from 7 ms does.
    values = [0, 0, 0, 10, 0, 0, 10, 10, 10, 10, 10, 10]
    series = pd.Series(values, index=1e-3 * np.arange(1, 13), dtype=float)
    assert analysis.recovery_time(series, after_s=0.0, capacity_bps=10) == pytest.approx(0.007)
    short_hold = analysis.recovery_time(series, after_s=0.0, capacity_bps=10, hold_s=0.0)
    assert short_hold == pytest.approx(0.004)


def test_recovery_none_when_never_or_unconfirmed():
    series = pd.Series([0.0, 5.0, 5.0, 5.0, 10.0, 10.0], index=1e-3 * np.arange(1, 7))
    assert analysis.recovery_time(series, after_s=0.0, capacity_bps=20) is None
    # In band from 5 ms, but the 3-interval hold would run past the last sample (6 ms).
    assert analysis.recovery_time(series, after_s=0.0, capacity_bps=10) is None


def test_recovery_rejects_zero_capacity():
    with pytest.raises(ValueError, match="capacity_bps"):
        analysis.recovery_time(step_series(5, 1), after_s=0, capacity_bps=0)


# ---------------------------------------------------------------- transient


def test_relative_change_curve_of_a_step():
    # x = 0 for l < k, 1 after: mean(x[l:]) = (n-k)/(n-l), so R_l = l/(n-l) up to k, flat after.
    n, k = 100, 20
    curve = analysis.relative_change_curve(step_series(n, k).to_numpy())
    ells = np.arange(k + 1)
    np.testing.assert_allclose(curve[: k + 1], ells / (n - ells), atol=1e-12)
    np.testing.assert_allclose(curve[k:], k / (n - k), atol=1e-12)


def test_relative_change_curve_rejects_zero_mean():
    with pytest.raises(ValueError, match="mean 0"):
        analysis.relative_change_curve([0.0, 0.0])


def test_knee_chord_finds_where_a_curve_flattens():
    rise_then_flat = np.concatenate([np.linspace(0, 1, 31), np.ones(70)])
    assert analysis.knee_chord(rise_then_flat) == 30
    fall_then_flat = -rise_then_flat
    assert analysis.knee_chord(fall_then_flat) == 30
    assert analysis.knee_chord(np.ones(50)) == 0


def test_knee_settle_is_first_point_staying_within_tol():
    curve = np.array([0.0, 0.5, 0.8, 0.95, 0.99, 1.0, 1.0, 1.0])
    assert analysis.knee_settle(curve, tol=0.0) == 5
    assert analysis.knee_settle(curve, tol=0.06) == 3
    assert analysis.knee_settle(curve, tol=2.0) == 0


@pytest.mark.parametrize("method", ["chord", "settle"])
def test_transient_duration_of_a_step(method):
    n, k, dt = 400, 60, 1e-3
    found = analysis.transient_duration(step_series(n, k, dt=dt), method=method, tol=1e-9)
    assert found.knee_index == k
    assert found.duration_s == pytest.approx(k * dt)
    assert found.end_s == pytest.approx((k + 1) * dt)


def test_transient_duration_averages_noisy_replications():
    # Ten replications, each a 10 ms dip (0.5) then 1.0, with 5 % noise: the average is clean
    # enough for the knee to land within two probe intervals of the truth.
    rng = np.random.default_rng(2024)
    n, k = 500, 100
    base = step_series(n, k, low=0.5, high=1.0)
    reps = [base + rng.normal(0, 0.05, n) for _ in range(10)]
    found = analysis.transient_duration(reps)
    assert abs(found.knee_index - k) <= 2
    assert found.mean_series.size == n


def test_transient_duration_window_and_flat_series():
    # Onset at 100 ms: the window starts there, so the 30-sample dip after it is the transient.
    series = step_series(300, 130, low=0.2, high=1.0)
    series.iloc[:100] = 1.0
    found = analysis.transient_duration(series, start_s=0.1005)
    assert found.knee_index == 30
    assert found.duration_s == pytest.approx(0.030)
    flat = analysis.transient_duration(pd.Series(np.ones(50), index=np.arange(50) * 1e-3))
    assert flat.knee_index == 0
    assert flat.duration_s == 0.0


def test_transient_duration_errors():
    with pytest.raises(ValueError, match="knee method"):
        analysis.transient_duration(step_series(50, 5), method="elbow")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 3"):
        analysis.transient_duration(step_series(50, 5), start_s=1.0)
    with pytest.raises(ValueError, match="at least one"):
        analysis.transient_duration([])


# ---------------------------------------------------------------- summary metrics


def test_compute_metrics_from_report_tables(make_result):
    result = make_result(
        recovery={"after_s": 0.06, "capacity_bps": 9.5e9, "metric": "host_tx_bps"},
        transient={"metric": "host_tx_bps", "start_s": 0.03, "end_s": 0.1, "rtt_s": 0.001},
    )
    metrics = result.metrics
    assert metrics["recovery_time_s"] == pytest.approx(0.010)
    assert metrics["recovered_at_s"] == pytest.approx(0.070)
    assert metrics["peak_queue_bytes"] == 90_000
    assert metrics["peak_queue_port"] == "core->ep4"
    assert metrics["fairness_index"] == 0.875  # the core's value
    assert metrics["transient_duration_s"] > 0
    assert metrics["transient_duration_rtt"] == pytest.approx(
        metrics["transient_duration_s"] / 0.001
    )


def test_compute_metrics_never_recovered_is_none(make_result):
    result = make_result(recovery={"after_s": 0.06, "capacity_bps": 20e9})
    assert result.metrics["recovery_time_s"] is None
    assert result.metrics["recovered_at_s"] is None


def test_compute_metrics_warns_on_missing_metric(make_result):
    with pytest.warns(UserWarning, match=r"\[report\].recovery: .*no metric"):
        result = make_result(recovery={"after_s": 0.06, "capacity_bps": 1e9, "metric": "x_bps"})
    assert "recovery_time_s" not in result.metrics


def test_core_metrics_win_over_python_ones(make_result):
    result = make_result(core_metrics={"peak_queue_bytes": 1})
    assert result.metrics["peak_queue_bytes"] == 1
    assert result.metrics["peak_queue_port"] == "core->ep4"


def test_fairness_fallback_counts_senders_only(make_result):
    result = make_result()
    del result.summary["window"]["fairness_index"]
    expected = analysis.jain_fairness([2.44e9, 3.54e9, 1.44e9, 2.58e9])  # not the sink ep4
    assert analysis.compute_metrics(result)["fairness_index"] == pytest.approx(expected)


def test_no_window_means_no_fairness_metric(make_result):
    assert "fairness_index" not in make_result(window=False).metrics


def test_json_scalar():
    assert analysis.json_scalar(np.float64(1.5)) == 1.5
    assert type(analysis.json_scalar(np.int64(3))) is int
    assert analysis.json_scalar(math.nan) is None
    assert analysis.json_scalar("x") == "x"
