"""A recovery the run ends too early to see is "not measured", said in a warning, never a
silent null that reads as "never recovered" (the synthetic runs are 100 ms of 1 ms probes)."""

from __future__ import annotations

import warnings

import pytest

import cnsim

NOT_MEASURED = r"\[report\]\.recovery: not measured: after_s = .* past the run's last probe"


@pytest.mark.parametrize("after_s", [6.0, 0.098])  # past the end; a hold past the end
def test_a_recovery_window_past_the_run_warns(make_result, after_s: float) -> None:
    with pytest.warns(UserWarning, match=NOT_MEASURED):
        result = make_result(recovery={"after_s": after_s, "capacity_bps": 9.5e9})
    assert result.metrics["recovery_time_s"] is None
    assert any("not measured" in w for w in result.warnings)


def test_never_recovering_within_the_run_is_null_without_that_warning(make_result) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = make_result(recovery={"after_s": 0.06, "capacity_bps": 20e9})
    assert result.metrics["recovery_time_s"] is None
    assert not [w for w in caught if "not measured" in str(w.message)]


def test_a_recovering_run_does_not_warn(make_result) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = make_result(recovery={"after_s": 0.06, "capacity_bps": 9.5e9})
    assert result.metrics["recovery_time_s"] == pytest.approx(0.010)
    assert not [w for w in caught if "not measured" in str(w.message)]


def test_seed004_cut_short_says_recovery_was_not_measured() -> None:
    with pytest.warns(UserWarning, match=NOT_MEASURED):
        result = cnsim.run("seed004-qcn", set={"duration_s": 0.5})
    assert result.metrics["recovery_time_s"] is None
