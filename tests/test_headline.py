"""Headline numbers (issue 27): a scenario names what it is about, read against a reference,
printed first by the terminal and the notebook."""

from __future__ import annotations

import tomllib

import pandas as pd
import pytest
import tomli_w

import cnsim
from cnsim import headline, readout, terminal
from cnsim.result import Result


def synthetic(report: dict, summary: dict, name: str = "mine") -> Result:
    toml = tomli_w.dumps({"name": name, "report": report})
    return Result({"scenario": name, **summary}, toml, pd.DataFrame(), add_metrics=False)


VICTIM = {
    "label": "victim",
    "metric": "window.per_source.VS.throughput_bps",
    "reference": 20e9,
    "reference_label": "max-min fair share",
}
WINDOW = {"window": {"per_source": {"VS": {"throughput_bps": 9e9}}}, "metrics": {"x_s": 3e-4}}


def test_a_declared_headline_is_read_against_its_reference_and_printed_first() -> None:
    result = synthetic({"headline": [VICTIM, {"label": "x", "metric": "metrics.x_s"}]}, WINDOW)
    lines = readout.run_lines(result)
    assert lines[0] == readout.Line(
        "victim", "9 Gb/s = 0.45 x max-min fair share (20 Gb/s)", headline=True
    )
    assert lines[1].text == "300 us"
    assert lines[2].label == "simulated"


def test_a_missing_value_or_zero_reference_still_prints() -> None:
    zero = {
        "label": "drops",
        "metric": "frames.dropped.total",
        "reference": 0,
        "reference_label": "hardware",
    }
    absent = {"label": "gone", "metric": "window.per_source.XX.throughput_bps"}
    summary = {"frames": {"dropped": {"total": 12}}, "window": None}
    lines = readout.headline_lines({"report": {"headline": [zero, absent]}}, summary)
    assert [line.text for line in lines] == ["12 (hardware: 0)", "-"]


def test_every_run_preset_declares_its_headline_in_its_own_file() -> None:
    """The presets name their headline numbers in their TOML (`[[report.headline]]`), summary
    paths under the summary's keys; there is no fallback by scenario name."""
    roots = set(cnsim.api.summary_schema()["properties"])
    for name, text in cnsim.presets().items():
        if text.startswith("sweep:"):
            continue
        text = cnsim.api.load_scenario(name)
        entries = tomllib.loads(text).get("report", {}).get("headline")
        assert entries, f"{name} declares no [[report.headline]]"
        for entry in headline.declared(tomllib.loads(text)):
            assert entry.metric.split(".")[0] in roots, (name, entry.metric)
    assert headline.declared({"name": "pfc-victim-flow"}) == []
    declared = headline.declared(tomllib.loads(cnsim.api.load_scenario("pfc-victim-flow")))
    assert (declared[0].entity, declared[0].reference) == ("VS", 20e9)


def test_every_preset_headline_names_a_path_its_run_has() -> None:
    # The paths are checked against the presets' real summaries (short runs).
    short = {"duration_s": 0.004}
    for name in ("pfc-victim-flow", "pfc-unfairness", "seed000-pause", "flows-16-exp"):
        window = {"report.window_s": [0.001, 0.004]} if name != "flows-16-exp" else {}
        result = cnsim.run(name, set={**short, **window})
        for entry in headline.declared(result.scenario):
            assert headline.value(result.summary, entry) is not None, (name, entry.metric)


def test_the_terminal_prints_the_headline_first() -> None:
    from rich.console import Console

    result = cnsim.run(
        "pfc-victim-flow", set={"duration_s": 0.004, "report.window_s": [0.001, 0.004]}
    )
    console = Console(record=True, width=200)
    console.print(terminal.summary_table(result))
    text = console.export_text()
    assert text.index("victim VS -> VR") < text.index("simulated")
    assert "x max-min fair share (20 Gb/s)" in text
    page = result._repr_html_()
    assert page.index("victim VS -&gt; VR") < page.index("simulated")


def test_a_scenario_declares_its_headline_in_the_format_and_the_core_keeps_it() -> None:
    """`[[report.headline]]` is part of the scenario format: the core checks it and keeps it in
    the resolved scenario, where the terminal reads it."""
    text = cnsim.api.load_scenario("seed004-qcn") + (
        '\n[[report.headline]]\nlabel = "drops"\nmetric = "frames.dropped.total"\n'
        'reference = 0.0\nreference_label = "the hardware"\n'
    )
    result = cnsim.run(text, set={"duration_s": 0.01})
    *own, declared = headline.declared(result.scenario)
    assert [h.label for h in own] == ["recovery"]  # the preset's, then the added one
    assert (declared.label, declared.metric) == ("drops", "frames.dropped.total")
    lines = readout.headline_lines(result.scenario, result.summary)
    assert len(lines) == 2
    assert "drops" in str(lines[1])
    bad = text.replace('label = "drops"', 'label = ""')
    with pytest.raises(cnsim.ScenarioError, match=r"report\.headline\[1\]\.label"):
        cnsim.run(bad, set={"duration_s": 0.01})
