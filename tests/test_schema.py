"""The JSON Schemas exported from the Rust types: the scenario schema (`cnsim schema`) accepts
every preset and rejects a bad field at the path cnsim's own error names; the summary schema
(`cnsim schema --summary`) accepts what a run writes, and docs/outputs.md documents its keys."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import cnsim
from cnsim import api

ROOT = Path(__file__).resolve().parents[1]
SWEEP_PRESETS = {name for name, text in cnsim.presets().items() if text.startswith("sweep:")}
RUN_PRESETS = sorted(set(cnsim.presets()) - SWEEP_PRESETS)


def cli_json(*args: str) -> Any:
    cmd = [sys.executable, "-m", "cnsim", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def scenario_validator() -> jsonschema.Draft202012Validator:
    schema = cli_json("schema")
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="module")
def summary_validator() -> jsonschema.Draft202012Validator:
    schema = cli_json("schema", "--summary")
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def cnsim_path(error: jsonschema.ValidationError) -> str:
    """A jsonschema error's location written as cnsim writes field paths: `traffic[0].load`.
    An unexpected key is named itself (jsonschema reports the object that holds it)."""
    parts = list(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        parts.extend(sorted(set(error.instance) - allowed)[:1])
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.removeprefix(".")


def schema_error_path(validator: jsonschema.Draft202012Validator, toml_text: str) -> str:
    errors = sorted(validator.iter_errors(tomllib.loads(toml_text)), key=lambda e: e.path)
    assert errors, "the schema accepted it"
    return cnsim_path(jsonschema.exceptions.best_match(errors))


def cnsim_error_path(toml_text: str) -> str:
    with pytest.raises(cnsim.ScenarioError) as caught:
        cnsim.resolve(toml_text)
    return str(caught.value).split(": ", 1)[0]


@pytest.mark.parametrize("name", RUN_PRESETS)
def test_every_preset_and_its_resolved_form_validate(
    name: str, scenario_validator: jsonschema.Draft202012Validator
) -> None:
    scenario_validator.validate(tomllib.loads(cnsim.load_scenario(name)))
    scenario_validator.validate(tomllib.loads(cnsim.resolve(name)))


BAD_FIELDS = [
    # (what to change in seed000-pause-bcn's TOML, the path both must name)
    ("load = 0.5\n", 'load = "high"\n', "traffic[0].load"),  # wrong type
    ("load = 0.5\n", "load = 1.5\n", "traffic[0].load"),  # out of (0, 1]
    ('name = "ep0"\n', 'name = "ep0"\ncolour = "red"\n', "hosts[0].colour"),  # unknown key
    ("duration_s = 0.1\n", "duration_s = -1.0\n", "duration_s"),
    ('scheme = "bcn"\n', 'scheme = "vegas"\n', "congestion.scheme"),  # not implemented
]


@pytest.mark.parametrize(("old", "new", "path"), BAD_FIELDS)
def test_a_bad_field_fails_the_schema_at_cnsim_s_own_path(
    old: str, new: str, path: str, scenario_validator: jsonschema.Draft202012Validator
) -> None:
    text = cnsim.load_scenario("seed000-pause-bcn")
    assert old in text, f"seed000-pause-bcn no longer has {old!r}"
    bad = text.replace(old, new, 1)
    assert cnsim_error_path(bad) == path
    assert schema_error_path(scenario_validator, bad) == path


def test_schema_defaults_are_the_cores(scenario_validator: jsonschema.Draft202012Validator) -> None:
    """Defaults come from the Rust Default impls (no second copy to drift)."""
    resolved = tomllib.loads(cnsim.resolve("seed004-qcn"))
    schema = scenario_validator.schema
    report = schema["$defs"]["ReportSpec"]["properties"]
    assert report["probe_interval_s"]["default"] == 1e-3
    qcn = schema["$defs"]["QcnParams"]["properties"]
    assert qcn["gd"]["default"] == 1 / 128
    assert set(qcn) == set(resolved["congestion"]["qcn"])


def test_python_keeps_no_copy_of_the_report_defaults(
    scenario_validator: jsonschema.Draft202012Validator,
) -> None:
    """The analysis reads [report.*] defaults and the knee rules from the core's schema."""
    import typing

    from cnsim import analysis

    defs = scenario_validator.schema["$defs"]
    assert (
        analysis.report_defaults("RecoverySpec")["band"]
        == defs["RecoverySpec"]["properties"]["band"]["default"]
    )
    transient = analysis.report_defaults("TransientSpec")
    assert transient["method"] == "chord"
    assert transient["tol"] == 0.005
    knee_rules = {
        v for one in defs["KneeMethod"]["oneOf"] for v in one.get("enum", [one.get("const")])
    }
    assert set(typing.get_args(analysis.KneeMethod)) == knee_rules


# ---------------------------------------------------------------- sweep files


@pytest.fixture(scope="module")
def sweep_validator() -> jsonschema.Draft202012Validator:
    schema = cli_json("schema", "--sweep")
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("name", sorted(SWEEP_PRESETS))
def test_every_sweep_preset_validates(
    name: str, sweep_validator: jsonschema.Draft202012Validator
) -> None:
    sweep_validator.validate(tomllib.loads(cnsim.load_scenario(name)))
    resolved = cnsim.load_sweep(name).to_toml()  # as a study directory keeps it
    sweep_validator.validate(tomllib.loads(resolved))


BAD_SWEEP_FIELDS = [
    # (what to change in seed000-window-sweep's [sweep] table, the path both must name)
    ("replications = 25\n", "replications = 0\n", "sweep.replications"),
    ("replications = 25\n", 'replications = "25"\n', "sweep.replications"),
    ("replications = 25\n", "replications = 25\nreplicas = 3\n", "sweep.replicas"),
    ('stat = "std"\n', 'stat = "median"\n', "sweep.plots[3].stat"),
    ("[sweep.plots]]\n", "[sweep.plots]]\ncolour = 1\n", "sweep.plots[0].colour"),
]


@pytest.mark.parametrize(("old", "new", "path"), BAD_SWEEP_FIELDS)
def test_a_bad_sweep_field_fails_the_schema_at_cnsim_s_own_path(
    old: str, new: str, path: str, sweep_validator: jsonschema.Draft202012Validator
) -> None:
    text = cnsim.load_scenario("seed000-window-sweep")
    assert old in text, f"seed000-window-sweep no longer has {old!r}"
    bad = text.replace(old, new, 1)
    with pytest.raises(cnsim.SweepError) as caught:
        cnsim.load_sweep(bad)
    assert str(caught.value).split(": ", 1)[0] == path
    assert schema_error_path(sweep_validator, bad) == path


def test_sweep_schema_defaults_are_the_loaders() -> None:
    """The schema and the loader are one definition: a sweep that gives nothing gets the
    schema's defaults."""
    schema = api_sweep_schema()["$defs"]["SweepSpec"]["properties"]
    bare = cnsim.load_sweep({"sweep": {"base": "seed000-pause"}})
    for key in ("replications", "seed", "description", "name"):
        assert getattr(bare, key) == schema[key]["default"]


def api_sweep_schema() -> dict[str, Any]:
    from cnsim.sweeps.spec import sweep_file_schema

    return sweep_file_schema()


# ---------------------------------------------------------------- summary.json


@pytest.fixture(scope="module")
def short_runs() -> dict[str, cnsim.Result]:
    return {
        name: cnsim.run(name, set={"duration_s": 0.02, "report.window_s": [0.0, 0.02]})
        for name in RUN_PRESETS
    }


@pytest.mark.parametrize("name", RUN_PRESETS)
def test_every_preset_s_saved_summary_validates(
    name: str,
    short_runs: dict[str, cnsim.Result],
    summary_validator: jsonschema.Draft202012Validator,
    tmp_path: Path,
) -> None:
    short_runs[name].save(tmp_path, plots=False)
    summary = json.loads((tmp_path / "summary.json").read_text())
    summary_validator.validate(summary)
    order = list(summary)
    assert order[:2] == ["scenario", "seed"]
    assert order.index("frames") < order.index("metrics") < order.index("per_source")


def test_window_is_null_without_a_window(
    summary_validator: jsonschema.Draft202012Validator,
) -> None:
    summary = cnsim.run("seed004-pause", set={"duration_s": 0.005}).summary
    assert summary["window"] is None
    summary_validator.validate(summary)


def schema_fields(schema: dict[str, Any]) -> Iterator[str]:
    """Every property name of every object in the schema (maps' values included)."""
    for node in [schema, *schema.get("$defs", {}).values()]:
        yield from node.get("properties", {})
        for variant in node.get("oneOf", []):
            yield from variant.get("properties", {})


def summary_section(markdown: str) -> str:
    """The summary.json section of docs/outputs.md, without the metrics table (metrics are a
    map the Python analysis fills; their names are checked by test_analysis)."""
    section = markdown.split("## summary.json", 1)[1].split("\n## ", 1)[0]
    return section.split("### `metrics`", 1)[0]


def table_keys(section: str) -> set[str]:
    """Backticked names in the first column of the section's tables, last path component."""
    keys = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            for key in re.findall(r"`([^`]+)`", line.split("|")[1]):
                keys.add(key.split(".")[-1])
    return keys


def test_outputs_doc_and_summary_schema_name_the_same_keys() -> None:
    fields = set(schema_fields(api.summary_schema()))
    section = summary_section((ROOT / "docs" / "outputs.md").read_text())
    undocumented = {f for f in fields if not re.search(rf"\b{f}\b", section)}
    assert not undocumented, f"docs/outputs.md does not document {sorted(undocumented)}"
    unknown = table_keys(section) - fields
    assert not unknown, f"docs/outputs.md documents keys the summary lacks: {sorted(unknown)}"


def test_scenario_doc_names_every_field_of_the_schema() -> None:
    """docs/scenario.md is the reference: every field the schema knows is described there."""
    text = (ROOT / "docs" / "scenario.md").read_text()
    documented = set(re.findall(r"`([a-z0-9_]+)`", text))
    documented |= {
        part
        for key in re.findall(r"`([a-z0-9_.\[\]]+)`", text)
        for part in re.split(r"[.\[\]]+", key)
    }
    fields = set(schema_fields(api.scenario_schema()))
    missing = sorted(fields - documented)
    assert not missing, f"docs/scenario.md does not describe {missing}"


def test_every_probe_metric_is_documented_and_has_an_axis_name() -> None:
    """The core's metric list is the one source: outputs.md's time-series table and the plots'
    axis names follow it."""
    from cnsim import plots

    metrics = api.probe_metrics()
    text = (ROOT / "docs" / "outputs.md").read_text()
    section = text.split("## timeseries.parquet", 1)[1].split("\n## ", 1)[0]
    documented = {
        line.split("|")[1].strip().strip("`") for line in section.splitlines() if line[:3] == "| `"
    }
    assert set(metrics) <= documented, sorted(set(metrics) - documented)
    assert set(metrics) <= set(plots.AXIS_NAMES), sorted(set(metrics) - set(plots.AXIS_NAMES))
