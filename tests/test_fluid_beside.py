"""The fluid models beside the packet runs (`cnsim.fluid.beside`, `cnsim run --fluid`,
`Result.fluid()`): parameters from the resolved scenario, the comparison over the run's steady
window, the time course drawn on the run's figures, and a named refusal for scenarios no model
covers."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cnsim
from cnsim.fluid import beside, dcqcn, qcn, show


def resolved(name: str, *overrides: str) -> dict[str, Any]:
    return tomllib.loads(cnsim.resolve(name, set=list(overrides)))


def fixed_point_base(n_flows: int) -> tuple[str, list[str]]:
    """The dcqcn-fixed-point sweep's scenario with its first n_flows senders sending."""
    hosts = ", ".join(f'"s{i}"' for i in range(1, n_flows + 1))
    return cnsim.load_sweep("dcqcn-fixed-point").base_toml, [f"traffic[0].hosts=[{hosts}]"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "cnsim", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


# ---------------------------------------------------------------- what the models cover


@pytest.mark.parametrize(
    ("name", "overrides", "field", "why"),
    [
        ("pfc-unfairness", [], "congestion.scheme = 'none'", "DCQCN, QCN and DCTCP only"),
        ("seed003-flows-exp", [], "congestion.scheme = 'ecm'", "DCQCN, QCN and DCTCP only"),
        (
            "dcqcn-incast",
            ['congestion.dcqcn.parameter_set="hpcc_ns3"'],
            "congestion.dcqcn.counters = 'single_counter'",
            "timer and byte counter",
        ),
    ],
)
def test_a_scenario_no_model_covers_is_refused_with_the_reason(
    name: str, overrides: list[str], field: str, why: str
) -> None:
    with pytest.raises(beside.FluidUnsupported) as caught:
        beside.covered(resolved(name, *overrides))
    assert field in str(caught.value)
    assert why in str(caught.value)


def test_more_than_one_hop_to_the_receiver_is_not_a_single_bottleneck() -> None:
    scenario = resolved("dcqcn-incast")
    # s1 behind a second switch: its flow crosses two queues.
    scenario["switches"].append({"name": "sw2"})
    scenario["links"][0]["ends"] = ["s1", "sw2"]
    scenario["links"].append({"ends": ["sw2", "sw"], "rate_bps": 40e9, "delay_s": 1e-6})
    with pytest.raises(beside.FluidUnsupported, match=r"links: not a single bottleneck.*s1"):
        beside.covered(scenario)
    other = resolved("dcqcn-incast")
    other["links"].append({"ends": ["recv", "sw2"], "rate_bps": 40e9, "delay_s": 1e-6})
    with pytest.raises(beside.FluidUnsupported, match=r"receiver recv has 2 links"):
        beside.covered(other)


def test_workloads_other_than_one_saturate_entry_are_refused() -> None:
    scenario = resolved("dcqcn-incast")
    scenario["traffic"].append(copy.deepcopy(scenario["traffic"][0]))
    with pytest.raises(beside.FluidUnsupported, match=r"traffic: .*'saturate', 'saturate'"):
        beside.covered(scenario)


def test_senders_on_links_of_different_rates_are_refused() -> None:
    scenario = resolved("dcqcn-incast")
    scenario["links"][0]["rate_bps"] = 10e9
    with pytest.raises(beside.FluidUnsupported, match="senders' links differ"):
        beside.covered(scenario)


def test_cli_refuses_before_running_and_names_the_reason(tmp_path: Path) -> None:
    done = cli("run", "pfc-unfairness", "--fluid", "--out", str(tmp_path / "x"))
    assert done.returncode == 2
    assert (
        "error: congestion.scheme = 'none': the fluid models cover DCQCN, QCN and DCTCP"
        in done.stderr
    )
    assert not (tmp_path / "x").exists()  # nothing ran, nothing written


# ---------------------------------------------------------------- parameters from the scenario


def test_qcn_model_takes_the_bottleneck_schedule() -> None:
    model, n = qcn.model_from_scenario(resolved("seed004-qcn"))
    assert (n, model.capacity_bps) == (4, 9.5e9)
    assert model.capacity_schedule == ((3.0, 2e9), (6.0, 9.5e9))
    assert model.capacity_at(2.9) == 9.5e9
    assert model.capacity_at(4.0) == 2e9


def test_a_capacity_step_moves_the_fluid_queue_and_departures() -> None:
    # 4 flows at 2.375 Gb/s on a 9.5 Gb/s link that drops to 2 Gb/s at 1 ms: before, the queue
    # stays within a few bytes of its start (the additive increase drifts it); right after, it
    # grows at (9.5 - 2) Gb/s = 0.9375 bytes/ns until the feedback (6.5 us later) cuts the rates.
    model = qcn.QcnModel(capacity_bps=9.5e9, capacity_schedule=((1e-3, 2e9),))
    start = {"rate_bps": 2.375e9, "target_bps": 2.375e9, "queue_bytes": 33_000.0}
    traj = qcn.simulate(4, model, duration_s=1.005e-3, sample_s=1e-6, initial=start)
    before = traj.window(0.99e-3, 0.999e-3)
    assert np.allclose(before.queue_bytes, 33_000.0, atol=10.0)
    at_4us = traj.window(1.004e-3, 1.004e-3).queue_bytes[0]
    assert at_4us == pytest.approx(33_000 + 7.5e9 / 8 * 4e-6, rel=0.01)


def test_dcqcn_bottleneck_found_without_report_steady() -> None:
    scenario = resolved("dcqcn-incast")
    with_steady, _ = dcqcn.model_from_scenario(scenario)
    del scenario["report"]["steady"]
    without, n = dcqcn.model_from_scenario(scenario)
    assert n == 8
    assert without == with_steady


# ---------------------------------------------------------------- beside a run


def test_result_fluid_at_n10_reads_the_run_and_compares_over_its_window() -> None:
    toml_text, overrides = fixed_point_base(10)
    result = cnsim.run(toml_text, set=overrides)
    fluid = result.fluid()
    assert (fluid.scheme, fluid.n_flows, fluid.topology.port) == ("dcqcn", 10, "sw->recv")
    assert fluid.window_s == (0.03, 0.06)
    # The model of the scenario: the preset's constants, tau* = 4 x 1 us + the data frame's
    # and the CNP's transmission on the two hops = 4 us + 2 x 8 x 1064 B / 40 Gb/s = 4.4256 us.
    assert fluid.model.feedback_delay_s == pytest.approx(4.4256e-6)
    assert fluid.fixed_point == dcqcn.fixed_point(10, fluid.model)
    assert fluid.fixed_point["queue_bytes"] == pytest.approx(122_600, rel=0.01)  # fidelity.md
    rows = {row["quantity"]: row for row in fluid.comparison(result)}
    metrics = result.metrics
    # The packet column is the run's own steady statistics, over the same window.
    assert rows["queue mean"]["packet"] == pytest.approx(metrics["steady_queue_mean_bytes"])
    assert rows["queue std"]["packet"] == pytest.approx(metrics["steady_queue_std_bytes"])
    assert rows["rate per flow (CR)"]["packet"] == pytest.approx(metrics["steady_rate_mean_bps"])
    assert rows["bottleneck throughput"]["packet"] == pytest.approx(
        metrics["steady_throughput_bps"]
    )
    # At 4.4 us the model settles near its fixed point by 30-60 ms (alpha's 14 ms time
    # constant: within 10 %).
    assert fluid.settles
    assert fluid.stable is True
    assert fluid.stability.startswith("fixed point stable (swing x0.6")  # 0.62 per 2.4 ms
    assert rows["queue mean"]["fluid"] == pytest.approx(rows["queue mean"]["fixed_point"], rel=0.1)
    assert rows["rate per flow (CR)"]["fluid"] == pytest.approx(4e9, rel=0.01)
    # The default figures (no [[report.plots]]): the queue figure over every port shows only
    # the bottleneck (the others are all zero), the throughput sums the ten senders.
    drawn = {name: show.figure(result, name, fluid)[1] for name in result.figure_names}
    assert drawn == {
        "aggregate_throughput": True,
        "queues": True,
        "rp_rate": True,
        "per_source_throughput": False,
    }


def test_the_time_course_is_drawn_on_the_queue_and_rate_figures() -> None:
    result = cnsim.run("dcqcn-incast", set=["duration_s=0.04"])
    fluid = result.fluid()
    drawn = {}
    for name in result.figure_names:
        fig, ok = show.figure(result, name, fluid)
        drawn[name] = ok
        if not ok:
            continue
        for ax in show.panels(fig):
            lines = [line for line in ax.get_lines() if line.get_label().startswith("fluid model")]
            assert len(lines) == 1, name
            x, y = (np.asarray(v, dtype=float) for v in lines[0].get_data())
            # The run's axes: ms on x; the model's values in the panel's unit.
            assert x[-1] == pytest.approx(40.0, rel=0.01)
            if name == "rp_rates":  # Gb/s, per flow, from line rate at t = 0
                assert y[0] == pytest.approx(40.0)
            if name == "switch_queue":  # KB
                assert y[-1] == pytest.approx(fluid.trajectory.queue_bytes[-1] / 1e3)
    assert drawn == {
        "rp_rates": True,
        "switch_queue": True,
        "host_throughput": True,
        "aggregate_throughput": True,
    }


def test_cli_fluid_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = cli("run", "dcqcn-incast", "--fluid", "--set", "duration_s=0.04", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "DCQCN fluid model (Zhu et al., CoNEXT 2016): N = 8" in done.stdout
    assert "queue mean" in done.stdout
    assert "fixed point" in done.stdout
    assert "93.8 KB" in done.stdout  # the fixed point at N = 8 (fidelity.md)
    summary = json.loads((out / "fluid.json").read_text())
    assert summary["scheme"] == "dcqcn"
    assert summary["n_flows"] == 8
    assert summary["fixed_point"]["queue_bytes"] == pytest.approx(93_800, rel=0.01)
    assert next(row["quantity"] for row in summary["comparison"]) == "queue mean"
    header = (out / "fluid.csv").read_text().splitlines()[0].split(",")
    assert header[:3] == ["time_s", "rate_bps", "target_bps"]
    assert "queue_bytes" in header
    assert (out / "plots" / "switch_queue.png").stat().st_size > 10_000


def test_a_fixed_point_on_reds_jump_is_written_as_null_and_shown_as_such() -> None:
    toml_text, overrides = fixed_point_base(16)
    scenario = tomllib.loads(cnsim.resolve(toml_text, set=overrides))
    fluid = beside.fluid_of(scenario, duration_s=0.005)
    assert fluid.fixed_point["queue_bytes"] == float("inf")  # p* > Pmax
    assert show.finite(fluid.summary())["fixed_point"]["queue_bytes"] is None
    assert fluid.stable is None  # no local analysis on the jump
    assert fluid.stability == "fixed point on RED's jump at Kmax"
