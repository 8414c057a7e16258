"""Scenario lookup, overrides and the CLI's error handling, with the native module faked.

End-to-end runs through the real core live elsewhere; here a stand-in `native()` returns a
synthetic run so the Python plumbing is pinned down without building Rust.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
from typer.testing import CliRunner

from cnsim import _native, api, cli
from conftest import build_scenario, build_series, build_summary, native_timeseries

PRESETS = {
    "seed004-qcn": 'name = "seed004-qcn"\ndescription = """QCN on 10G hardware\nslide 7"""\n',
    "seed000-bcn": 'name = "seed000-bcn"\ndescription = "BCN calibration"\n',
    "seed000-pause": 'name = "seed000-pause"\n',
}


@pytest.fixture
def preset_dir(tmp_path, monkeypatch):
    folder = tmp_path / "presets"
    folder.mkdir()
    for name, text in PRESETS.items():
        (folder / f"{name}.toml").write_text(text)
    monkeypatch.setattr(api, "_preset_dir", lambda: folder)
    return folder


def fake_native(error: Exception | None = None) -> SimpleNamespace:
    """A stand-in for cnsim._native that records its calls and returns a synthetic run."""
    calls: list[dict] = []

    def run(text, overrides=(), seed=None, progress=None, base_dir=None, stage=None, sink=None):
        calls.append({"text": text, "overrides": overrides, "seed": seed, "base_dir": base_dir})
        if stage is not None:
            stage("building the network")
        if error is not None:
            raise error
        if stage is not None:
            stage("simulating")
        if progress is not None:
            progress(0.5)
            progress(1.0)
        times = np.cumsum(np.full(100, 1e-3))
        series = native_timeseries(times, build_series(times, 5))
        if sink is not None:  # a streamed run: the rows go to the sink, as the core hands them
            sink.hosts([])
            sink.batch(series, {"flow_id": np.zeros(0, np.uint32)})
            series = {
                **series,
                **{k: series[k][:0] for k in ("time_s", "metric", "entity", "value")},
            }
        return {
            "summary_json": json.dumps(build_summary("seed004-qcn", 5, True)),
            "resolved_toml": build_scenario("seed004-qcn", 1e-3, {}),
            "timeseries": series,
            "late_drops": [],
        }

    # The schemas are static facts of the core, not of a run: the real ones are served, since the
    # analysis reads the [report.*] defaults from them.
    return SimpleNamespace(
        run=run,
        calls=calls,
        version=lambda: "9.9.9",
        scenario_schema=_native.scenario_schema,
        summary_schema=_native.summary_schema,
    )


# ---------------------------------------------------------------- scenarios


def test_presets_lists_first_description_line(preset_dir):
    assert api.presets() == {
        "seed000-bcn": "BCN calibration",
        "seed000-pause": "",
        "seed004-qcn": "QCN on 10G hardware",
    }


def test_load_scenario_by_name_and_path(preset_dir, tmp_path):
    assert api.load_scenario("seed000-bcn") == PRESETS["seed000-bcn"]
    own = tmp_path / "mine.toml"
    own.write_text('name = "mine"\n')
    assert api.load_scenario(own) == 'name = "mine"\n'
    assert api.load_scenario(str(own)) == 'name = "mine"\n'


def test_unknown_preset_lists_close_matches(preset_dir):
    with pytest.raises(api.ScenarioNotFoundError, match="did you mean seed004-qcn"):
        api.load_scenario("seed04-qcn")
    with pytest.raises(api.ScenarioNotFoundError, match=r"no such scenario file: nope\.toml"):
        api.load_scenario("nope.toml")


def test_scenario_text_accepts_text_and_dicts(preset_dir):
    assert api.scenario_text('name = "x"\nseed = 1\n') == 'name = "x"\nseed = 1\n'
    assert api.scenario_text('name = "x"') == 'name = "x"'
    assert api.scenario_text({"name": "x", "report": {"probe_interval_s": 0.001}}) == (
        'name = "x"\n\n[report]\nprobe_interval_s = 0.001\n'
    )
    assert api.scenario_text("seed000-pause") == PRESETS["seed000-pause"]


# ---------------------------------------------------------------- overrides


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("traffic[0].load=0.3", ("traffic[0].load", "0.3")),
        (" duration_s = 1e-2 ", ("duration_s", "1e-2")),
        ("pause.enabled=true", ("pause.enabled", "true")),
        ("report.window_s=[0.02, 0.08]", ("report.window_s", "[0.02, 0.08]")),
        ("traffic[0].pattern=uniform", ("traffic[0].pattern", '"uniform"')),
        ('name="a=b"', ("name", '"a=b"')),
    ],
)
def test_parse_override(item, expected):
    assert api.parse_override(item) == expected


@pytest.mark.parametrize("item", ["load", "=0.3", ""])
def test_parse_override_rejects_missing_path_or_equals(item):
    with pytest.raises(api.OverrideSyntaxError, match="expected path=value"):
        api.parse_override(item)


def test_override_pairs_from_python_values():
    pairs = api.override_pairs(
        {
            "traffic[0].load": 0.3,
            "seed": np.int64(4),
            "name": "q",
            "report.window_s": (0.02, 0.08),
            "cc": {"kind": "qcn", "w": 2, "odd key": True},
        }
    )
    assert pairs == [
        ("traffic[0].load", "0.3"),
        ("seed", "4"),
        ("name", '"q"'),
        ("report.window_s", "[0.02, 0.08]"),
        ("cc", '{ kind = "qcn", w = 2, "odd key" = true }'),
    ]
    assert api.override_pairs(None) == []
    assert api.override_pairs(["a=1", "b=x"]) == [("a", "1"), ("b", '"x"')]


# ---------------------------------------------------------------- run (faked core)


def test_run_passes_text_overrides_seed_and_progress(preset_dir, monkeypatch):
    native = fake_native()
    monkeypatch.setattr(api, "native", lambda: native)
    seen: list[float] = []
    result = api.run("seed004-qcn", seed=3, set={"duration_s": 0.1}, progress=seen.append)
    # A preset's relative file paths (traces, CDFs) are taken from the presets' folder.
    assert native.calls == [
        {
            "text": PRESETS["seed004-qcn"],
            "overrides": [("duration_s", "0.1")],
            "seed": 3,
            "base_dir": str(preset_dir),
        }
    ]
    assert seen == [0.5, 1.0]
    assert result.name == "seed004-qcn"
    assert result.series("host_tx_bps").shape == (100, 4)


# ---------------------------------------------------------------- CLI


runner = CliRunner()


def test_cli_run_writes_outputs_and_prints_summary(preset_dir, monkeypatch, tmp_path):
    monkeypatch.setattr(api, "native", fake_native)
    out = tmp_path / "out"
    got = runner.invoke(cli.app, ["run", "seed004-qcn", "--out", str(out), "--set", "seed=2"])
    assert got.exit_code == 0, got.output
    assert "frames dropped" in got.stdout
    assert "5 (egress 5)" in got.stdout
    assert "qcn_cnm 321 (1.6 Mb/s)" in got.stdout
    for name in ("scenario.toml", "summary.json", "timeseries.parquet", "plots/drops.png"):
        assert (out / name).exists()


def test_cli_run_default_out_dir_and_quiet(preset_dir, monkeypatch, tmp_path):
    monkeypatch.setattr(api, "native", fake_native)
    monkeypatch.chdir(tmp_path)
    got = runner.invoke(cli.app, ["run", "seed004-qcn", "--quiet", "--no-plots"])
    assert got.exit_code == 0
    assert got.stdout == ""
    assert (tmp_path / "runs" / "seed004-qcn" / "summary.json").exists()
    assert not (tmp_path / "runs" / "seed004-qcn" / "plots").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "seed04-qcn"], "error: unknown preset or file 'seed04-qcn'; did you mean"),
        (["run", "missing.toml"], "error: no such scenario file: missing.toml"),
        (["run", "seed004-qcn", "--set", "load"], "error: bad override 'load': expected"),
        (["show", "nothing"], "error: unknown preset or file 'nothing'"),
    ],
)
def test_cli_user_errors_are_one_line_and_exit_2(preset_dir, args, message):
    got = runner.invoke(cli.app, args)
    assert got.exit_code == 2
    assert got.stderr.startswith(message)
    assert got.stderr.count("\n") == 1
    assert "Traceback" not in got.output


def test_cli_scenario_error_keeps_brackets(preset_dir, monkeypatch):
    error = api.ScenarioError("traffic[2].load: must be in (0, 1] (got 1.5)")
    monkeypatch.setattr(api, "native", lambda: fake_native(error))
    got = runner.invoke(cli.app, ["run", "seed004-qcn"])
    assert got.exit_code == 2
    assert got.stderr == "error: traffic[2].load: must be in (0, 1] (got 1.5)\n"


def test_cli_presets_show_version(preset_dir):
    listed = runner.invoke(cli.app, ["presets"])
    assert listed.exit_code == 0
    assert "QCN on 10G hardware" in listed.stdout
    shown = runner.invoke(cli.app, ["show", "seed000-bcn"])
    assert shown.stdout == PRESETS["seed000-bcn"]
    assert runner.invoke(cli.app, ["version"]).stdout.startswith("cnsim ")
