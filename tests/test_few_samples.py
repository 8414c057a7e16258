"""No silent statistics (issue 27): a steady or transient window with fewer probe samples than
`cnsim.analysis.MIN_WINDOW_SAMPLES` is a warning with the run's numbers (terminal, notebook,
a loaded run) and a marked cell in a sweep's tables, never a mean of one sample."""

from __future__ import annotations

import warnings

import pytest

import cnsim
from cnsim import analysis, readout
from cnsim.analysis import FEW_SAMPLES, FewSamplesWarning

# dcqcn-incast's steady window starts at 30 ms: a 30 ms run leaves it one probe.
ONE_PROBE = {"duration_s": 0.03}


def test_a_window_of_one_probe_warns_with_the_runs_numbers(tmp_path) -> None:
    with pytest.warns(FewSamplesWarning, match="holds 1 probe sample \\(fewer than 10\\)"):
        result = cnsim.run("dcqcn-incast", set=ONE_PROBE)
    (message,) = [w for w in result.warnings if FEW_SAMPLES in w]
    assert message.startswith("[report].steady: too few samples")
    lines = readout.run_lines(result)
    warned = [line for line in lines if line.label == "warning"]
    assert [line.text for line in warned] == [message]
    assert warned[0].alert
    assert lines.index(warned[0]) < [line.label for line in lines].index("simulated")
    assert message.replace(">", "&gt;") in result._repr_html_()
    loaded = cnsim.Result.load(result.save(tmp_path / "run", plots=False))
    assert loaded.warnings == [message]


def test_the_full_window_is_quiet() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewSamplesWarning)
        result = cnsim.run("dcqcn-incast", set={"duration_s": 0.032})  # 41 probes from 30 ms
    assert not [w for w in result.warnings if FEW_SAMPLES in w]


def test_a_short_transient_window_warns(make_result) -> None:
    result = make_result(plots=[])
    result.scenario["report"]["transient"] = {
        "metric": "host_tx_bps",
        "start_s": 0.0,
        "end_s": 0.005,
    }
    (message,) = analysis.few_sample_warnings(result)
    assert message.startswith(
        "[report].transient: too few samples: the window 0 s - 0.005 s holds 5"
    )


def test_the_cli_prints_it_once_in_the_table(tmp_path) -> None:
    from typer.testing import CliRunner

    from cnsim import cli

    args = ["run", "dcqcn-incast", "--set", "duration_s=0.03", "--no-plots", "--out"]
    done = CliRunner().invoke(cli.app, [*args, str(tmp_path / "r")])
    assert done.exit_code == 0, done.output
    assert done.output.count("too few samples") == 1  # the table's line, no second yellow one
    quiet = CliRunner().invoke(cli.app, [*args, str(tmp_path / "q"), "-q"])
    assert quiet.output.count("too few samples") == 1  # the warning line, as there is no table


def sweep_spec(mode: str | None = None) -> dict:
    table = {
        "name": "few",
        "base": "dcqcn-incast",
        "replications": 1,
        "metrics": ["metrics.steady_queue_mean_bytes", "frames.delivered"],
        "grid": {"duration_s": [0.03, 0.032]},
    }
    if mode is not None:
        table["few_samples"] = mode
    return {"sweep": table}


def test_a_sweep_table_marks_the_point_as_an_error(tmp_path) -> None:
    study = cnsim.sweep(sweep_spec(), out=tmp_path / "s", jobs=1, progress=False)
    assert study.few_samples() == {0: (1, frozenset({"steady"}))}
    table = readout.sweep_table(study)
    steady = table.columns.index("metrics.steady_queue_mean_bytes")
    delivered = table.columns.index("frames.delivered")
    first, second = table.rows
    assert first[steady] == readout.Cell("too few samples (1/1 runs)", alert=True)
    assert not first[delivered].alert  # a count over the whole run is no window statistic
    assert not second[steady].alert
    assert "KB" in second[steady].text
    assert "too few probe samples" in table.caption


def test_a_sweep_can_ask_for_the_value_marked_instead(tmp_path) -> None:
    study = cnsim.sweep(sweep_spec("warn"), out=tmp_path / "s", jobs=1, progress=False)
    table = readout.sweep_table(study)
    cell = table.rows[0][table.columns.index("metrics.steady_queue_mean_bytes")]
    assert cell.alert
    assert cell.text.endswith(" KB *")
    assert 'few_samples = "warn"' in (tmp_path / "s" / "sweep.toml").read_text()
