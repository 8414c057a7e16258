"""Unit strings (issue 27): a field whose name carries a unit takes `"100Gbps"`, `"1us"`,
`"64KB"`; the JSON Schema allows them on the same fields and rejects a bad one where cnsim's own
error does; a run written with units is the run written with numbers."""

from __future__ import annotations

import tomllib

import jsonschema
import pytest

import cnsim
from cnsim import api

NUMBERS = """
name = "units"
duration_s = 0.002
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s"
output_buffer_bytes = 150000
[[links]]
ends = ["a", "s"]
rate_bps = 10e9
delay_s = 1e-6
[[links]]
ends = ["s", "b"]
rate_bps = 10e9
delay_s = 5e-7
[[traffic]]
kind = "cbr"
hosts = ["a"]
dst = "b"
rate_bps = 2.5e9
[report]
probe_interval_s = 1e-4
window_s = [0.0005, 0.002]
"""

UNITS = (
    NUMBERS.replace("duration_s = 0.002", 'duration_s = "2ms"')
    .replace("output_buffer_bytes = 150000", 'output_buffer_bytes = "150KB"')
    .replace("rate_bps = 10e9\ndelay_s = 1e-6", 'rate_bps = "10Gbps"\ndelay_s = "1us"')
    .replace("rate_bps = 10e9\ndelay_s = 5e-7", 'rate_bps = "10G"\ndelay_s = "500 ns"')
    .replace("rate_bps = 2.5e9", 'rate_bps = "2.5Gb/s"')
    .replace("probe_interval_s = 1e-4", 'probe_interval_s = "100us"')
    .replace("window_s = [0.0005, 0.002]", 'window_s = ["0.5ms", "2ms"]')
)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = api.scenario_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_a_scenario_with_units_runs_as_the_one_with_numbers() -> None:
    assert UNITS.count('"') > 20  # the replacements took
    assert cnsim.resolve(UNITS) == cnsim.resolve(NUMBERS)
    with_units, with_numbers = cnsim.run(UNITS), cnsim.run(NUMBERS)
    drop = {"wall_time_s", "wall_s_per_sim_s", "events_per_s", "frame_hops_per_s"}
    assert {k: v for k, v in with_units.summary.items() if k not in drop} == {
        k: v for k, v in with_numbers.summary.items() if k not in drop
    }


def test_an_override_takes_a_unit() -> None:
    resolved = tomllib.loads(cnsim.resolve(NUMBERS, set={"links[0].rate_bps": "40G"}))
    assert resolved["links"][0]["rate_bps"] == 40e9


def test_a_bad_unit_names_the_field_and_the_forms() -> None:
    with pytest.raises(cnsim.ScenarioError) as caught:
        cnsim.resolve(UNITS.replace('"10G"', '"10 Gbit"'))
    text = str(caught.value)
    assert text.startswith('links[1].rate_bps: "10 Gbit" is not a rate in bits per second'), text
    assert '"100Gbps", "100G"' in text
    assert "units: bps, b/s" in text


def test_the_schema_validates_unit_strings(validator: jsonschema.Draft202012Validator) -> None:
    validator.validate(tomllib.loads(UNITS))
    validator.validate(tomllib.loads(UNITS.replace('"10G"', '"100G"')))
    bad = tomllib.loads(UNITS.replace('"10G"', '"10Q"'))
    errors = list(validator.iter_errors(bad))
    assert [list(e.absolute_path) for e in errors] == [["links", 1, "rate_bps"]]
    # A time is not a rate: the patterns follow the field's unit.
    wrong_kind = tomllib.loads(UNITS.replace('"10G"', '"10us"'))
    assert not validator.is_valid(wrong_kind)
