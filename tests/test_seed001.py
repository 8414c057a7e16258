"""Seed 001 in cnsim: the presets, the transient-study machinery of sweeps, and the study's
findings on a shortened study.

The machinery tests run tiny studies (seed000-pause-bcn cut to 5 ms); the findings test runs
seed001-transient's BCN-MAX comparison with fewer replications (about a minute on two cores).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import cnsim
from cnsim import analysis, api, cli
from cnsim.sweeps import transient

pytest.importorskip("cnsim._native")

runner = CliRunner()
RULE = {"metric": "host_tx_bps", "start_s": 0.001, "end_s": 0.005, "rtt_s": 0.0005}
WINDOW = "congestion.bcn.sampling.interval_bytes"


def tiny_transient(**changes) -> dict:
    """2 points x 2 replications of 5 ms runs with a [sweep.transient] table."""
    table = {
        "name": "tiny-transient",
        "base": "seed000-pause-bcn",
        "replications": 2,
        "seed": 3,
        "grid": {WINDOW: [20_000, 80_000]},
        "set": {
            "duration_s": 0.005,
            "report.window_s": [0.001, 0.004],
            "report.probe_interval_s": 0.0001,
            "report.transient": RULE,
        },
        "transient": {"columns": {"case": ["a", "b"], "seed_transient_s": [0.001, math.nan]}},
    }
    table.update(changes)
    return {"sweep": table}


# ---------------------------------------------------------------- the machinery


def test_transient_study_writes_its_table_from_the_replication_mean(tmp_path):
    out = tmp_path / "study"
    study = cnsim.sweep(tiny_transient(), out=out, jobs=1, progress=False)
    table = pd.read_csv(out / "transient.csv")
    assert list(table.columns) == [
        "point", "case", "seed_transient_s", "n", "transient_s", "transient_rtt", "settled",
        "knee_s", "flat_s", "transient_end_s", "rtt_s", "method",
    ]  # fmt: skip
    assert list(table["case"]) == ["a", "b"]
    assert (table["n"] == 2).all()
    # By hand: each run's stored aggregate is the sum over hosts of its own probes, and the
    # table's duration is initial data deletion on their mean.
    for point in (0, 1):
        keys = study.ok.loc[study.ok["point"] == point, "key"]
        series = [
            transient.read_series(str(out / "runs" / k / transient.SERIES_FILE)) for k in keys
        ]
        found = analysis.transient_duration(
            pd.concat(series, axis=1).mean(axis=1), start_s=0.001, end_s=0.005
        )
        row = table.iloc[point]
        assert row["knee_s"] == pytest.approx(found.duration_s)
        assert row["settled"] == found.settled
        expected = found.duration_s if found.settled else max(found.duration_s, found.lower_bound_s)
        assert row["transient_s"] == pytest.approx(expected)
        assert row["transient_rtt"] == pytest.approx(expected / 0.0005)
        assert row["rtt_s"] == 0.0005
    assert math.isnan(table.iloc[1]["seed_transient_s"])
    assert sorted(p.name for p in study.plot()) == [
        "transient_duration.png",
        "transient_relative_change.png",
        "transient_throughput.png",
    ]


def test_stored_series_is_the_runs_aggregate(tmp_path):
    out = tmp_path / "study"
    study = cnsim.sweep(tiny_transient(replications=1), out=out, jobs=1, progress=False)
    key = study.ok["key"].iloc[0]
    stored = transient.read_series(str(out / "runs" / key / transient.SERIES_FILE))
    full = cnsim.sweep(
        tiny_transient(replications=1), out=tmp_path / "full", jobs=1, progress=False, keep="full"
    )
    whole = pd.read_parquet(tmp_path / "full" / "runs" / key / "timeseries.parquet")
    np.testing.assert_allclose(stored.to_numpy(), analysis.aggregate(whole, "host_tx_bps"))
    assert full.transient_table()["transient_s"].tolist() == (
        study.transient_table()["transient_s"].tolist()
    )


def test_transient_study_resumes_and_survives_keep_none(tmp_path):
    out = tmp_path / "study"
    first = cnsim.sweep(tiny_transient(), out=out, jobs=1, progress=False)
    again = cnsim.sweep(tiny_transient(), out=out, jobs=1, progress=False)
    assert (again.executed, again.reused) == (0, 4)
    pd.testing.assert_frame_equal(first.transient_table(), again.transient_table())
    bare = cnsim.sweep(tiny_transient(), out=tmp_path / "bare", jobs=1, progress=False, keep="none")
    del bare
    assert pd.read_csv(tmp_path / "bare" / "transient.csv")["n"].tolist() == [2, 2]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"transient": {"columns": {"case": ["a"]}}}, "expected 2 values, one per point"),
        ({"transient": {"columns": {"case": ["a", "b"]}, "label": "x"}}, "no column 'x'"),
        ({"transient": {"columns": {"n": [1, 2]}}}, "a column of the transient table"),
        ({"transient": {"colums": {}}}, "unknown key 'colums'"),
    ],
)
def test_bad_transient_tables_fail_before_any_run(tmp_path, changes, message):
    with pytest.raises(cnsim.SweepError, match=message):
        cnsim.sweep(tiny_transient(**changes), out=tmp_path / "x", jobs=1, progress=False)
    assert not (tmp_path / "x").exists()


def test_transient_study_needs_report_transient(tmp_path):
    spec = tiny_transient(replications=1)
    del spec["sweep"]["set"]["report.transient"]
    with pytest.raises(cnsim.SweepError, match=r"sweep point 0 .*needs a \[report.transient\]"):
        cnsim.sweep(spec, out=tmp_path / "x", jobs=1, progress=False)
    assert not (tmp_path / "x").exists()


def test_cli_prints_the_transient_table(tmp_path):
    import tomli_w

    path = tmp_path / "tiny.toml"
    path.write_text(tomli_w.dumps(tiny_transient()))
    done = runner.invoke(cli.app, ["sweep", str(path), "--out", str(tmp_path / "s"), "-j", "1"])
    assert done.exit_code == 0, done.output
    assert "tiny-transient (4/4 runs ok" in done.output
    assert "knee rule 'chord'" in done.output  # the transient table, not the metric table
    assert (tmp_path / "s" / "transient.csv").is_file()
    assert (tmp_path / "s" / "plots" / "transient_relative_change.png").is_file()


# ---------------------------------------------------------------- the presets

B_VALUES = {600_000, 75_000}


def test_og_ms_preset_is_the_seeds_setup():
    scenario = tomllib.loads(api.resolve("seed001-og-ms"))
    hosts = [h["name"] for h in scenario["hosts"]]
    assert hosts == [f"n{i}" for i in range(1, 11)]
    ports = {}
    for link in scenario["links"]:
        for end in link["ends"]:
            ports[end] = ports.get(end, 0) + 1
        assert link["rate_bps"] == 10e9
    assert [ports[s] for s in ("core", "e1", "e2", "e3")] == [4, 4, 4, 4]  # 4-port switches
    # Loop latency: 8 link delays and 6 switch latencies on the longest path = 16 us.
    delay = {link["delay_s"] for link in scenario["links"]}
    latency = {s["latency_s"] for s in scenario["switches"]}
    assert len(delay) == len(latency) == 1
    assert 8 * delay.pop() + 6 * latency.pop() == pytest.approx(16e-6)
    b = 600_000
    for switch in scenario["switches"]:
        assert switch["shared_buffer_bytes"] == 4 * b
        assert switch["pause"] == {
            "enabled": True,
            "trigger": "ingress",
            "xoff_bytes": b - 16e-6 * 10e9 / 8,
            "xon_bytes": b / 2,
            "quanta": 65535,
        }
    bcn = scenario["congestion"]["bcn"]
    assert bcn["qeq_bytes"] == b / 4
    assert bcn["sampling"] == {"kind": "probability", "p": 0.02}
    assert (bcn["w"], bcn["ru_bps"], bcn["drift"], bcn["bcn00"]) == (2.0, 1e6, False, False)
    assert bcn["bcn_max_threshold_bytes"] == b
    rule = scenario["report"]["transient"]
    assert rule["rtt_s"] == pytest.approx(16e-6 + (b / 4) * 8 / 500e6)
    assert (rule["start_s"], rule["end_s"]) == (0.05, 1.05)


def test_transient_preset_has_every_case_of_the_seed():
    sweep = cnsim.load_sweep("seed001-transient")
    assert sweep.replications == 10
    columns = sweep.transient.columns
    cases = list(zip(columns["case"], columns["buffer_bytes"], strict=True))
    assert cases == [(c, 600_000) for c in "1234567"] + [(c, 75_000) for c in "1234567"] + [
        (c, 600_000) for c in ("R3", "R4", "R5", "R6")
    ]
    seed_ms = [round(s * 1e3) for s in columns["seed_transient_s"]]
    assert seed_ms == [462, 52, 86, 38, 144, 96, 52, 264, 56, 42, 20, 52, 92, 26, 170, 274, 108, 62]
    bcn = sweep.zip["congestion.bcn"]
    for (case, b), table, rtt in zip(cases, bcn, sweep.zip["report.transient.rtt_s"], strict=True):
        assert table["qeq_bytes"] == b / 4
        assert rtt == pytest.approx(16e-6 + (b / 4) * 8 / 500e6)
        has_max = case not in ("1", "R3", "R5")
        assert ("bcn_max_threshold_bytes" in table) == has_max
        p = table["sampling"]["p"]
        assert p == {"4": 0.10, "7": 0.05}.get(case, 0.02)
        over = {"3": 0.10, "5": 0.20, "6": 0.30}.get(case)
        assert table.get("oversample_probability") == over
        if over is not None:
            assert table["qsc_bytes"] == b / 2
        wide = case.startswith("R")
        assert table["qoff_range"] == ([-1.0, 2.0] if wide else [-1.0, 1.0])
        assert table["qdelta_range"] == ([-4.0, 4.0] if case in ("R3", "R4") else [-2.0, 2.0])
    for i in range(4):
        buffers = sweep.zip[f"switches[{i}].shared_buffer_bytes"]
        assert buffers == [4 * b for _, b in cases]
        pause = sweep.zip[f"switches[{i}].pause"]
        assert [(p["xoff_bytes"], p["xon_bytes"]) for p in pause] == [
            (b - 20_000, b // 2) for _, b in cases
        ]


# ---------------------------------------------------------------- the seed's findings

# Points of seed001-transient (case, B in KB) run by the shortened study, 4 replications each
# (the first 4 of the full study's 10: a run's seed depends on its point and replication only).
SHORT_POINTS = [("1", 600), ("2", 600), ("4", 600), ("R5", 600), ("1", 75), ("2", 75)]
SHORT_REPLICATIONS = 4


@pytest.fixture(scope="module")
def short_study(tmp_path_factory) -> pd.DataFrame:
    """seed001-transient cut to SHORT_POINTS x 4 replications (about a minute on two cores)."""
    full = cnsim.load_sweep("seed001-transient")
    cases = list(
        zip(full.transient.columns["case"], full.transient.columns["buffer_bytes"], strict=True)
    )
    rows = [cases.index((case, kb * 1000)) for case, kb in SHORT_POINTS]
    pick = {path: [values[i] for i in rows] for path, values in full.zip.items()}
    columns = {name: [values[i] for i in rows] for name, values in full.transient.columns.items()}
    spec = replace(
        full,
        replications=SHORT_REPLICATIONS,
        zip=pick,
        transient=replace(full.transient, columns=columns),
    )
    out = tmp_path_factory.mktemp("seed001") / "study"
    done = cnsim.sweep(spec, out=out, progress=False)
    assert len(done.ok) == len(SHORT_POINTS) * SHORT_REPLICATIONS
    table = pd.read_csv(out / "transient.csv", dtype={"case": str})
    return table.set_index(["case", "buffer_bytes"])


def test_bcn_max_shortens_the_transient_a_lot(short_study):
    # Seed: 462 -> 52 ms at 600 KB, 264 -> 56 ms at 75 KB. Without BCN-MAX the aggregate has
    # not settled in the searched 500 ms (still draining at 1 s); with it, it has.
    s = short_study
    assert not s.loc[("1", 600_000), "settled"]
    assert s.loc[("2", 600_000), "settled"]
    # At 75 KB the knee of four replications' mean scatters with the order of same-time events:
    # case 2 104 ms against case 1's 230 before switch ports went to one event per hop, 111
    # against 206 after; the full study's 10 replications give 76 against >= 250 ms (knee 250).
    # So "a lot" is half at 600 KB and 0.6 at 75 KB here.
    for b, factor in ((600_000, 0.5), (75_000, 0.6)):
        assert s.loc[("2", b), "knee_s"] <= factor * s.loc[("1", b), "knee_s"]
    # Whether case 2 at 75 KB has settled (its aggregate over 300-550 ms within 1% of its mean
    # after) is a coin flip of the sample: over 40 replications that mean drifts 1.8% (0.65%
    # before PAUSE/PFC frames went ahead of the BCN messages at a port, 2026-12-06), and means of
    # 10 replications settle in 1 block of 4 (3 of 4 before; docs/seed001.md). At 600 KB case 2
    # settles and case 1 does not.
    assert s.loc[("2", 600_000), "transient_s"] < s.loc[("1", 600_000), "transient_s"]


def test_ten_percent_sampling_beats_two_percent(short_study):
    # Seed, 600 KB: case 4 (10%) 38 ms, the fastest; case 2 (2%) 52 ms.
    s = short_study
    assert s.loc[("4", 600_000), "settled"]
    assert s.loc[("4", 600_000), "transient_s"] < s.loc[("2", 600_000), "transient_s"]


def test_wider_ranges_do_not_help(short_study):
    # Seed: R5 (Qoff up to +2Qeq, no BCN-MAX) 108 ms against case 2's 52 ms.
    s = short_study
    assert not s.loc[("R5", 600_000), "settled"]
    assert s.loc[("R5", 600_000), "transient_s"] > s.loc[("2", 600_000), "transient_s"]
