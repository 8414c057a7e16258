"""`Result.series(metric, entities)`: one string is one glob pattern, as a list of them is."""

from __future__ import annotations

import pytest


def test_a_string_is_one_pattern(make_result) -> None:
    result = make_result()
    one = result.series("host_tx_bps", "ep[01]")
    assert list(one.columns) == ["ep0", "ep1"]
    assert one.equals(result.series("host_tx_bps", ["ep[01]"]))
    assert list(result.series("host_tx_bps", ["ep0", "ep3"]).columns) == ["ep0", "ep3"]


def test_no_match_names_the_pattern_not_its_characters(make_result) -> None:
    result = make_result()
    with pytest.raises(KeyError) as caught:
        result.series("host_tx_bps", "zz*")
    message = str(caught.value)
    assert "matches ['zz*']" in message
    assert "available: ep0" in message
    with pytest.raises(KeyError, match=r"matches \['zz\*', 'yy'\]"):
        result.series("host_tx_bps", ["zz*", "yy"])
