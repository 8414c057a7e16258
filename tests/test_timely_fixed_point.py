"""The sweep dcqcn-timely-fixed-point (docs/timely.md, "Queue against N"): the packet runs'
queue beside each scheme's fluid fixed point ([sweep.fluid], cnsim.sweeps.fluid), as the
CoNEXT 2016 paper compares them: DCQCN and patched TIMELY at their unique fixed points,
original TIMELY at none of its own and unfair at N = 40."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

import cnsim
from cnsim.sweeps import SweepError

pytest.importorskip("cnsim._native")

SWEEP = "dcqcn-timely-fixed-point"
SOME_N = ("4", "16", "40")
# The factors the docs state: DCQCN's queue within 1.5x of its fixed point (measured 1.13-1.31
# below Pmax, 0.88 of Kmax at N = 40); patched TIMELY's within 3 % once it settles (N >= 16:
# measured 0.998-1.0002); below that it swings about the fixed point, mean 0.35-0.65 of it.
DCQCN_FACTOR = 1.5
PATCHED_SETTLED_REL = 0.03


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """Three of the sweep's N for every scheme (9 runs of 60 ms, a few seconds)."""
    spec = cnsim.load_sweep(SWEEP)
    names = spec.names["traffic[0].flows"]
    keep = [names.index(n) for n in SOME_N]
    short = replace(
        spec,
        zip={path: [values[i] for i in keep] for path, values in spec.zip.items()},
        names={**spec.names, "traffic[0].flows": list(SOME_N)},
    )
    out = tmp_path_factory.mktemp("fixed-point")
    cnsim.sweep(short, out=out, jobs=2, progress=False).plot()
    assert (out / "plots" / "fluid_queue.png").is_file()
    assert (out / "plots" / "fluid_rates.png").is_file()
    return pd.read_csv(out / "table.csv").set_index(["scheme", "n_flows"])


def test_every_run_is_lossless_and_the_table_has_the_fluid_columns(table: pd.DataFrame) -> None:
    for column in ("queue_mean_bytes", "rate_mean_bps", "fairness_index", "fluid_queue_bytes",
                   "fluid_rate_bps", "queue_over_fluid", "link_utilisation"):  # fmt: skip
        assert column in table.columns
    assert (table["dropped_frames"] == 0).all()
    assert table["fluid_rate_bps"].to_numpy() == pytest.approx([100e9 / n for _, n in table.index])


def test_dcqcn_sits_near_its_fixed_point(table: pd.DataFrame) -> None:
    for n in (4, 16):
        row = table.loc[("dcqcn", n)]
        assert 1 / DCQCN_FACTOR < row["queue_over_fluid"] < DCQCN_FACTOR, n
    # N = 40: p* > Pmax, the fixed point on RED's jump at Kmax (200 KB).
    at_jump = table.loc[("dcqcn", 40)]
    assert at_jump["fluid_queue_bytes"] == 200_000
    assert 0.75 < at_jump["queue_over_fluid"] <= 1.0
    assert (table.loc["dcqcn", "link_utilisation"] > 0.99).all()


def test_patched_timely_settles_at_its_fixed_point_once_n_is_large(table: pd.DataFrame) -> None:
    for n in (16, 40):
        row = table.loc[("timely-patched", n)]
        assert row["queue_over_fluid"] == pytest.approx(1.0, abs=PATCHED_SETTLED_REL), n
        assert row["link_utilisation"] > 0.99
    # N = 4: the unique fixed point does not attract (a limit cycle about it, the fluid model's
    # too): the queue swings by more than half its mean, and its mean is below q*.
    small = table.loc[("timely-patched", 4)]
    assert small["queue_std_bytes"] > 0.5 * small["queue_mean_bytes"]
    assert 0.3 < small["queue_over_fluid"] < 1.0
    assert (table.loc["timely-patched", "fairness_index"] > 0.999).all()


def test_original_timely_has_no_fixed_point_and_is_unfair_at_n_40(table: pd.DataFrame) -> None:
    original = table.loc["timely"]
    assert original["fluid_queue_bytes"].isna().all()
    assert original["fluid_queue_low_bytes"].to_numpy() == pytest.approx([571_872] * 3, rel=1e-4)
    # The packet runs sit below the band (T_low's 572 KB): their queue is set by the noisy
    # gradient, not by a fixed point; at N = 40 the rates spread (Jain 0.94 measured).
    assert (original["queue_mean_bytes"] < original["fluid_queue_low_bytes"]).all()
    assert original.loc[40, "fairness_index"] < 0.97
    assert original.loc[40, "rate_max_bps"] > 1.5 * original.loc[40, "rate_min_bps"]


def test_a_fluid_column_that_is_not_in_the_table_is_named() -> None:
    spec = cnsim.load_sweep(SWEEP)
    assert spec.fluid is not None
    with pytest.raises(SweepError, match=r"sweep\.fluid\.queue: no \[sweep\.table\] column"):
        replace(spec, fluid=replace(spec.fluid, queue="queue_bytes"))


def test_a_scheme_without_a_fluid_model_is_refused() -> None:
    from cnsim.sweeps.fluid import fixed_point_columns

    with pytest.raises(SweepError, match=r"congestion\.scheme = 'dctcp'"):
        fixed_point_columns({"congestion": {"scheme": "dctcp"}})
