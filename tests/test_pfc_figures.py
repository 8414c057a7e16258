"""PFC's queue figures (issue 27): XOFF/XON drawn as references (labelled as the per-ingress
thresholds they are), and queues probed more slowly than PFC's pause cycle drawn as samples
with a note that their shape is not resolved, instead of lines that draw an alias."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
from matplotlib.figure import Figure

import cnsim
from cnsim import references
from cnsim.plots.run import figure

SHORT = {"duration_s": 0.004, "report.window_s": [0.001, 0.004]}


def scenario(name: str) -> dict[str, Any]:
    return tomllib.loads(cnsim.resolve(name))


def texts(fig: Figure) -> str:
    return " ".join(t.get_text() for t in fig.texts)


def test_pfc_xoff_and_xon_are_references_of_a_switch_queue() -> None:
    sc = scenario("pfc-victim-flow")
    refs = references.plot_references(sc, {}, "queue_bytes", ["S1->T4", "T1->S1"])
    labels = {r.label: r.values for r in refs}
    assert labels["PFC XOFF 220 KB (per ingress port, class 3)"] == (220e3,)
    assert labels["PFC XON 200 KB"] == (200e3,)
    # A host's receive queue is not a switch queue; a dynamic threshold has no fixed line.
    host_port = references.plot_references(sc, {}, "queue_bytes", ["VS->T1"])
    assert all("PFC" not in r.label for r in host_port)
    dynamic = {**sc, "pfc": {**sc["pfc"], "threshold": "dynamic"}}
    assert all(
        "PFC" not in r.label
        for r in references.plot_references(dynamic, {}, "queue_bytes", ["S1->T4"])
    )
    no_pfc = {k: v for k, v in sc.items() if k != "pfc"}
    assert references.pfc_cycle_s(no_pfc, "queue_bytes", ["S1->T4"]) is None


def test_the_pfc_cycle_is_the_hysteresis_at_the_ports_line_rate() -> None:
    sc = scenario("pfc-unfairness")
    # (220 KB - 200 KB) x 8 bits at 40 Gb/s.
    assert references.pfc_cycle_s(sc, "queue_bytes", ["T4->R"]) == pytest.approx(4e-6)
    assert references.pfc_cycle_s(sc, "host_tx_bps", ["H1"]) is None


def _queue_lines(fig: Figure) -> list[Any]:
    return [line for line in fig.axes[0].get_lines() if "->" in str(line.get_label())]


def test_an_undersampled_pfc_queue_is_drawn_as_samples_with_a_note() -> None:
    fig = figure(cnsim.run("pfc-unfairness", set=SHORT), "switch_queue")
    (queue,) = _queue_lines(fig)
    assert queue.get_marker() == "."
    assert queue.get_linestyle() == "None"  # no line joining samples 100 us apart
    assert "Dots: samples every 100 us" in texts(fig)
    assert "XON-XOFF band in 4 us" in texts(fig)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "PFC XOFF 220 KB (per ingress port, class 3)" in legend


def test_probes_faster_than_the_cycle_draw_lines_without_the_note() -> None:
    fast = {**SHORT, "duration_s": 0.002, "report.window_s": [0.001, 0.002]}
    fig = figure(
        cnsim.run("pfc-unfairness", set={**fast, "report.probe_interval_s": 1e-6}),
        "switch_queue",
    )
    (queue,) = _queue_lines(fig)
    assert queue.get_linestyle() != "None"
    assert "Dots:" not in texts(fig)
