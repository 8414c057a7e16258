"""Hostile input through the Python API and the CLI (issue 13), fuzzed with hypothesis.

Every case ends one of two ways: a one-line error naming a field (`ScenarioError` /
`OverrideSyntaxError` from the API; exit status 2 and one `error:` line from the CLI), or a
run whose summary conserves frames and holds no NaN. A traceback, a panic or a hang fails.
Runs are capped small through `[limits]`, so thousands of cases fit in the suite's time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
import tomli_w
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cnsim import api, cli

pytest.importorskip("cnsim._native")

API_ERRORS = (api.ScenarioError, api.OverrideSyntaxError)
FUZZ = settings(
    max_examples=700,
    deadline=None,  # wall time per case varies with the machine's load
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,  # CI runs the same cases every time
    database=None,  # nothing written into the repository
)


def base_scenario() -> dict[str, Any]:
    """Two senders into one receiver through a switch with PAUSE; 2 ms; capped small."""
    return {
        "name": "fuzz",
        "duration_s": 0.002,
        "hosts": [{"name": "a"}, {"name": "b"}, {"name": "c", "rx_rate_bps": 5e9}],
        "switches": [
            {
                "name": "sw",
                "output_buffer_bytes": 150_000.0,
                "pause": {"trigger": "egress", "xoff_bytes": 120_000.0, "xon_bytes": 1000.0},
            }
        ],
        "links": [
            {"ends": ["a", "sw"], "rate_bps": 1e10, "delay_s": 1e-6},
            {"ends": ["b", "sw"], "rate_bps": 1e10},
            {"ends": ["sw", "c"], "rate_bps": 1e10},
        ],
        "traffic": [{"kind": "bernoulli", "hosts": ["a", "b"], "dst": "c", "load": 0.6}],
        "congestion": {"scheme": "qcn"},
        "report": {"probe_interval_s": 2e-4},
        "limits": {"max_events": 3e4, "max_probe_samples": 1e5},
    }


# Where a hostile value goes: (path through the dict, the --set path of the same field).
SLOTS = [
    (("duration_s",), "duration_s"),
    (("seed",), "seed"),
    (("hosts", 2, "rx_rate_bps"), "hosts[2].rx_rate_bps"),
    (("hosts", 0, "nic_buffer_bytes"), "hosts[0].nic_buffer_bytes"),
    (("switches", 0, "latency_s"), "switches[0].latency_s"),
    (("switches", 0, "pause", "quanta"), "switches[0].pause.quanta"),
    (("links", 0, "rate_bps"), "links[0].rate_bps"),
    (("links", 0, "delay_s"), "links[0].delay_s"),
    (("traffic", 0, "load"), "traffic[0].load"),
    (("traffic", 0, "frame_bytes"), "traffic[0].frame_bytes"),
    (("traffic", 0, "start_s"), "traffic[0].start_s"),
    (("report", "probe_interval_s"), "report.probe_interval_s"),
    (("model", "wire_overhead_bytes"), "model.wire_overhead_bytes"),
    (("congestion", "qcn", "timer_period_s"), "congestion.qcn.timer_period_s"),
    (("name",), "name"),
]

EDGES = [
    0,
    -0.0,
    1,
    -1,
    0.5,
    1e-300,
    5e-324,
    1e-17,
    1e-13,
    1e-12,
    1e-9,
    1e-3,
    1e3,
    1e6,
    1e7,
    1e12,
    1e15,
    1e19,
    1e300,
    2**16,
    2**32,
    2**63 - 1,
    2**63,
    2**64,
    -(2**63),
    9216,
    9217,
]


def hostile_values() -> st.SearchStrategy[Any]:
    numbers = st.one_of(
        st.sampled_from(EDGES),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(min_value=-(2**70), max_value=2**70),
    )
    # Values a field may well take (so a good share of cases runs and is checked as a run).
    plausible = st.one_of(
        st.floats(min_value=1e-5, max_value=0.01),
        st.floats(min_value=0.1, max_value=1.0),
        st.integers(min_value=64, max_value=9000),
        st.floats(min_value=1e8, max_value=1e11),
    )
    return st.one_of(
        plausible,
        plausible,
        numbers,
        numbers.map(lambda v: np.float64(v) if isinstance(v, float) else np.int64(v % 2**62)),
        st.none(),
        st.booleans(),
        st.text(max_size=6),
        st.lists(st.floats(allow_nan=False), max_size=3),
        st.builds(object),
    )


def put(tree: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        tree = tree.setdefault(step, {}) if isinstance(step, str) else tree[step]
    tree[path[-1]] = value


def assert_one_line_error(exc: BaseException) -> None:
    message = str(exc)
    assert message, "empty error message"
    assert "\n" not in message, repr(message)
    assert "Traceback" not in message


def assert_sound(result: Any) -> None:
    frames = result.summary["frames"]
    dropped = frames["dropped"]["total"]
    assert frames["generated"] == frames["delivered"] + dropped + frames["in_flight"]
    assert frames["conserved"] is True
    assert result.summary["completed"] is True
    assert_no_nan(result.summary, "summary")
    assert np.isfinite(result.timeseries["value"].to_numpy()).all()


def assert_no_nan(value: Any, path: str) -> None:
    if isinstance(value, float):
        assert math.isfinite(value), f"{path} is {value}"
    elif isinstance(value, Mapping):
        for key, item in value.items():
            assert_no_nan(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            assert_no_nan(item, f"{path}[{i}]")


def outcome(call: Any) -> None:
    try:
        result = call()
    except API_ERRORS as exc:
        assert_one_line_error(exc)
        event("refused")
    else:
        assert_sound(result)
        event("ran")


def test_the_fuzz_base_runs():
    assert_sound(api.run(base_scenario()))


@FUZZ
@given(slots=st.lists(st.tuples(st.sampled_from(SLOTS), hostile_values()), max_size=3))
def test_hostile_scenario_dicts(slots):
    scenario = base_scenario()
    for (path, _), value in slots:
        put(scenario, path, value)
    outcome(lambda: api.run(scenario))


@FUZZ
@given(
    overrides=st.one_of(
        st.dictionaries(st.sampled_from([s for _, s in SLOTS]), hostile_values(), max_size=3),
        st.lists(st.one_of(st.text(max_size=12), st.integers(), st.none()), max_size=3),
        st.text(max_size=12),
        st.integers(),
    ),
    seed=st.one_of(
        st.none(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.integers(min_value=0, max_value=2**62).map(np.int64),
        st.floats(),
        st.text(max_size=4),
        st.booleans(),
    ),
)
def test_hostile_overrides_and_seeds(overrides, seed):
    outcome(lambda: api.run(base_scenario(), seed=seed, set=overrides))


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        (-1, "seed: must be an integer in [0, 2^63) (got -1)"),
        (2**64, "seed: must be an integer in [0, 2^63)"),
        (1.5, "seed: must be an integer"),
        ("7", "seed: must be an integer"),
    ],
)
def test_out_of_range_seeds_name_the_field(seed, message):
    with pytest.raises(api.ScenarioError, match=re.escape(message)):
        api.resolve(base_scenario(), seed=seed)


def test_numpy_values_work_as_python_values():
    scenario = base_scenario()
    scenario["duration_s"] = np.float64(0.002)
    scenario["traffic"][0]["frame_bytes"] = np.int32(1000)
    resolved = api.resolve(scenario, seed=np.int64(5), set={"traffic[0].load": np.float32(0.25)})
    assert "seed = 5" in resolved
    assert "frame_bytes = 1000" in resolved
    assert "load = 0.25" in resolved


def test_none_and_objects_name_their_field():
    scenario = base_scenario()
    scenario["links"][0]["delay_s"] = None
    with pytest.raises(api.ScenarioError, match=r"^links\[0\]\.delay_s: None has no TOML form"):
        api.run(scenario)
    with pytest.raises(api.OverrideSyntaxError, match=r"^traffic\[0\]\.load: None"):
        api.run(base_scenario(), set={"traffic[0].load": None})
    with pytest.raises(api.OverrideSyntaxError, match=r"^set: expected 'path=value' strings"):
        api.run(base_scenario(), set=["duration_s=0.001", 3])


runner = CliRunner()
CLI_ARGS = [
    "--seed=-1",
    "--seed=18446744073709551616",
    "--seed=abc",
    "--set=traffic[0].load=1e-17",
    "--set=duration_s=1e-13",
    "--set=links[0].rate_bps=1e15",
    "--set==",
    "--set=",
    "--set=traffic[0].frame_bytes=99999999999999999999",
    "--set=report.probe_interval_s=0",
    "--set=duration_s=1e300",
    "--set=limits.max_events=-1",
    "--set=report.plots=[{name='..', metric='queue_bytes'}]",
    "--out=",
]


@FUZZ
@given(args=st.lists(st.sampled_from(CLI_ARGS), min_size=1, max_size=3))
def test_hostile_cli_arguments_give_status_2_and_one_line(args, tmp_path_factory):
    scenario = tmp_path_factory.mktemp("cli") / "fuzz.toml"

    scenario.write_text(tomli_w.dumps(base_scenario()))
    out = scenario.parent / "out"
    has_out = any(a.startswith("--out") for a in args)
    extra = [] if has_out else [f"--out={out}"]
    result = runner.invoke(cli.app, ["run", str(scenario), "-q", "--no-plots", *extra, *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    if result.exit_code == 0:
        return
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert "Traceback" not in result.output
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 or "Usage:" in result.output, result.output  # click's own usage
