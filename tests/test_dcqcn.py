"""DCQCN end to end: the dcqcn-incast preset converges to fair rates, the fixed-point sweep writes
its table, and named parameter sets resolve (the fluid model: tests/test_fluid.py)."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

import cnsim
from cnsim import dcqcn_fluid
from cnsim.fluid import dcqcn as fluid_dcqcn

LINE_RATE_BPS = 40e9


@pytest.fixture(scope="module")
def incast() -> cnsim.Result:
    return cnsim.run("dcqcn-incast")


def test_incast_converges_to_fair_rates_without_loss(incast: cnsim.Result) -> None:
    s = incast.summary
    m = s["metrics"]
    n = m["steady_n_flows"]
    assert n == 8
    assert s["frames"]["dropped"]["total"] == 0
    assert s["control_frames"]["dcqcn_cnp"] > 0
    assert s["per_port"]["sw->recv"]["ecn_marked_frames"] > 0
    # Rates converge to C/N: the mean CR within 5 % of the fair share, Jain's index near 1.
    assert m["steady_rate_mean_bps"] == pytest.approx(LINE_RATE_BPS / n, rel=0.05)
    assert m["steady_fairness_index"] > 0.98
    # The link stays busy and the queue sits between Kmin and Kmax on average.
    assert m["steady_throughput_bps"] > 0.95 * LINE_RATE_BPS
    assert 5_000 < m["steady_queue_mean_bytes"] < 200_000
    assert s["variant"] == {
        "scheme": "dcqcn",
        "parameter_set": "sigcomm2015",
        "mark_on": "dequeue",  # the preset marks on egress (issue 26)
        "counters": "timer_and_bytes",
        "hai_step": "qcn",
    }


def test_kmin_and_kmax_per_link_rate_move_the_queue_with_them(incast: cnsim.Result) -> None:
    """`k_reference_rate_bps`: Kmin and Kmax for 10 Gb/s are four times as deep at the preset's
    40 Gb/s port; the fixed point's marking probability comes at four times the queue (the
    same p at Kmin' + 4 (q - Kmin)), the link still full."""
    scaled = cnsim.run("dcqcn-incast", set={"congestion.dcqcn.k_reference_rate_bps": 10e9})
    m, base = scaled.summary["metrics"], incast.summary["metrics"]
    assert m["steady_queue_mean_bytes"] == pytest.approx(
        4 * base["steady_queue_mean_bytes"], rel=0.15
    )
    assert m["steady_throughput_bps"] > 0.95 * LINE_RATE_BPS
    assert scaled.summary["frames"]["dropped"]["total"] == 0
    assert scaled.summary["variant"]["k_reference_rate_bps"] == 10e9


def test_parameter_set_is_laid_under_the_given_keys() -> None:
    text = cnsim.load_scenario("dcqcn-incast").replace(
        'parameter_set = "sigcomm2015"', 'parameter_set = "hpcc_ns3"\nkmin_bytes = 50_000'
    )
    dcqcn = tomllib.loads(cnsim.resolve(text))["congestion"]["dcqcn"]
    assert dcqcn["kmin_bytes"] == 50_000  # given
    assert dcqcn["kmax_bytes"] == 400_000  # the set's
    assert dcqcn["rate_timer_s"] == pytest.approx(900e-6)
    assert dcqcn["mark_on"] == "dequeue"
    bad = text.replace('"hpcc_ns3"', '"ns3"')
    with pytest.raises(cnsim.ScenarioError, match=r"^congestion\.dcqcn\.parameter_set"):
        cnsim.resolve(bad)
    with pytest.raises(cnsim.ScenarioError, match=r"^congestion\.dcqcn\.kmax_bytes"):
        cnsim.resolve(text.replace("kmin_bytes = 50_000", "kmin_bytes = 500_000"))


def test_fixed_point_sweep_writes_its_table(tmp_path: Path) -> None:
    spec = cnsim.load_sweep("dcqcn-fixed-point")
    lists = spec.grid["traffic[0].hosts"]
    short = replace(
        spec,
        grid={"traffic[0].hosts": lists[:2]},
        set={"duration_s": 0.03, "report.steady.start_s": 0.015},
    )
    cnsim.sweep(short, out=tmp_path, jobs=1, progress=False)
    table = pd.read_csv(tmp_path / "table.csv")
    for column in ("n_flows", "queue_mean_bytes", "queue_std_bytes", "rate_cv"):
        assert column in table.columns
    assert table["n_flows"].tolist() == [2, 4]
    assert table["n"].tolist() == [1, 1]
    assert (table["queue_mean_bytes"] > 0).all()
    assert (table["rate_cv"] >= 0).all()


def test_old_fluid_module_name_still_imports() -> None:
    # cnsim.dcqcn_fluid moved to cnsim.fluid.dcqcn (tests/test_fluid.py); the old name stays.
    assert dcqcn_fluid.fixed_point(8)["p"] == fluid_dcqcn.fixed_point(8)["p"]
    assert dcqcn_fluid.Model is fluid_dcqcn.DcqcnModel


def _fixed_point_run(n: int, **overrides: object) -> dict[str, float]:
    """One point of dcqcn-fixed-point (its preset settings) with N senders, 60 ms."""
    base = cnsim.load_sweep("dcqcn-fixed-point").base_toml
    hosts = [f"s{i}" for i in range(1, n + 1)]
    metrics: dict[str, float] = cnsim.run(
        base, set={"traffic[0].hosts": hosts, **overrides}
    ).summary["metrics"]
    return metrics


def test_fixed_point_preset_settles_at_n_10_with_egress_marking() -> None:
    # Issue 26: with marking at enqueue (the preset's setting before) the queue swung between
    # empty and Kmax (64 +- 73 KB, the link 2.2 % idle). Marking at dequeue, as the paper's
    # Broadcom-based switches do, it settles near the fluid fixed point (122.6 KB).
    m = _fixed_point_run(10)
    fluid_queue = fluid_dcqcn.fixed_point(10)["queue_bytes"]
    assert m["steady_throughput_bps"] > 0.995 * LINE_RATE_BPS
    assert m["steady_queue_std_bytes"] < 0.5 * m["steady_queue_mean_bytes"]
    assert m["steady_queue_mean_bytes"] == pytest.approx(fluid_queue, rel=0.25)


def test_the_enqueue_swing_is_the_queueing_delay_in_the_loop() -> None:
    # Marking at enqueue adds the marked frame's wait q/C (24 us at 120 KB) to the loop; the
    # same delay added to the links with marking at dequeue swings the same way.
    enqueue = _fixed_point_run(10, **{"congestion.dcqcn.mark_on": "enqueue"})
    delayed = _fixed_point_run(10, **{"links[64].delay_s": 21e-6})  # +40 us round trip
    for m in (enqueue, delayed):
        assert m["steady_queue_std_bytes"] > 0.8 * m["steady_queue_mean_bytes"]
        assert m["steady_throughput_bps"] < 0.99 * LINE_RATE_BPS


def test_stability_sweep_grid_and_fluid_columns(tmp_path: Path) -> None:
    spec = cnsim.load_sweep("dcqcn-stability")
    assert [len(hosts) for hosts in spec.grid["traffic[0].hosts"]] == [2, 10, 64]
    delays = [float(name) for name in spec.names["links[64].delay_s"]]
    assert delays[0] == pytest.approx(4.4256e-6)
    assert delays[-1] == pytest.approx(100e-6)
    # The extra loop delay sits on the bottleneck link, half each way.
    links = spec.grid["links[64].delay_s"]
    assert links[-1] == pytest.approx(1e-6 + (100e-6 - 4.4256e-6) / 2)
    # The fluid columns for two points of a table.csv (as `cnsim sweep` writes it): stable is
    # the local decay of the fixed point's oscillation (fidelity.md): N = 10 swings at 100 us.
    pd.DataFrame({"n_flows": [2, 10], "feedback_delay_s": [4.4256e-6, 100e-6]}).to_csv(
        tmp_path / "table.csv", index=False
    )
    fluid_dcqcn.add_stability_columns(str(tmp_path))
    table = pd.read_csv(tmp_path / "table.csv")
    assert table["fluid_stable"].tolist() == [True, False]
    assert (
        table["fluid_decay_per_period"].iloc[0]
        < 0.5
        < 1.0
        < table["fluid_decay_per_period"].iloc[1]
    )
    assert table["fluid_queue_bytes"].iloc[0] == pytest.approx(19_000, rel=0.02)
