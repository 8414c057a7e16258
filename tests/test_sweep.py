"""Sweeps end to end through the real core: the file format, seeds, the store, resuming after a
kill, failures, the local process pool, a Dask cluster, statistics and plots.

Runs are tiny (seed000-pause-bcn cut to 5 ms of simulated time) so the whole file stays quick;
the module-scoped `pool_study` runs once on the process pool and several tests read it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import tomli_w
from typer.testing import CliRunner

import cnsim
from cnsim import analysis, api, cli
from cnsim.sweeps import execute, paths, result, study
from cnsim.sweeps.store import Store

pytest.importorskip("cnsim._native")

METRICS = ["per_port.core->ep4.peak_queue_bytes", "window.fairness_index", "frames.delivered"]
TINY_SET = {"duration_s": 0.005, "report.window_s": [0.001, 0.004]}
SAMPLING = "congestion.bcn.sampling"
WINDOW = f"{SAMPLING}.interval_bytes"
# Figures of the wall clock differ from run to run; everything else must not.
WALL_KEYS = {"wall_time_s", "events_per_s", "frame_hops_per_s", "wall_s_per_sim_s"}
runner = CliRunner()


def tiny(**changes) -> dict:
    """A 2-point x 2-replication sweep of 5 ms runs, as a dict (the TOML's shape)."""
    table = {
        "name": "tiny",
        "base": "seed000-pause-bcn",
        "replications": 2,
        "seed": 7,
        "metrics": METRICS,
        "grid": {WINDOW: [20_000, 80_000]},
        "set": dict(TINY_SET),
    }
    table.update(changes)
    return {"sweep": table}


def tiny_toml(**changes) -> str:
    return tomli_w.dumps(tiny(**changes))


def metric_columns(table: pd.DataFrame) -> pd.DataFrame:
    return table.set_index("key")[METRICS].sort_index()


def without_wall(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in WALL_KEYS}


@pytest.fixture(scope="module")
def pool_study(tmp_path_factory) -> cnsim.SweepResult:
    out = tmp_path_factory.mktemp("pool") / "study"
    return cnsim.sweep(tiny(), out=out, jobs=2, progress=False)


# ---------------------------------------------------------------- the format


def test_seed_formula_is_sha256_of_canonical_json():
    material = '{"point":{"a.b":10000},"replication":3,"seed":1}'
    expected = int.from_bytes(hashlib.sha256(material.encode()).digest()[:8], "big") >> 1
    assert cnsim.sweeps.replication_seed(1, {"a.b": 10000}, 3) == expected
    assert expected == 1870596644713525250  # pinned: a change here re-seeds every stored study
    assert cnsim.sweeps.replication_seed(1, {"a.b": 10000}, 4) != expected
    assert cnsim.sweeps.replication_seed(2, {"a.b": 10000}, 3) != expected


def test_points_are_grid_product_times_zip_rows():
    sweep = cnsim.load_sweep(
        {
            "sweep": {
                "base": "seed000-pause-bcn",
                "grid": {"a": [1, 2], "b": ["x", "y"]},
                "zip": {"c": [10, 20], "d": [0.1, 0.2]},
            }
        }
    )
    params = [p.params for p in sweep.points()]
    assert len(params) == 8
    assert params[0] == {"a": 1, "b": "x", "c": 10, "d": 0.1}
    assert params[1] == {"a": 1, "b": "x", "c": 20, "d": 0.2}
    assert params[-1] == {"a": 2, "b": "y", "c": 20, "d": 0.2}
    assert sweep.parameters == ["a", "b", "c", "d"]


def test_metric_paths_take_arrows_bare_and_dots_quoted():
    assert paths.parse_path("per_port.core->ep4.peak_queue_bytes") == (
        "per_port",
        "core->ep4",
        "peak_queue_bytes",
    )
    assert paths.parse_path('per_port."sw.1->h".peak') == ("per_port", "sw.1->h", "peak")
    assert paths.format_path(("per_port", "sw.1->h", "peak")) == 'per_port."sw.1->h".peak'
    summary = {"per_port": {"sw.1->h": {"peak": 3}}, "window": {"fairness_index": 0.9}}
    assert paths.extract(summary, 'per_port."sw.1->h".peak') == 3
    with pytest.raises(KeyError, match="did you mean fairness_index"):
        paths.extract(summary, "window.fairness_indx")
    with pytest.raises(KeyError, match="is a table"):
        paths.extract(summary, "window")
    for bad in ["", "a..b", 'a."b', "a."]:
        with pytest.raises(cnsim.SweepError):
            paths.parse_path(bad)


def test_window_sweep_preset_is_the_seed_experiment():
    sweep = cnsim.load_sweep("seed000-window-sweep")
    assert sweep.grid == {WINDOW: [10_000, 20_000, 40_000, 60_000, 80_000, 100_000]}
    assert sweep.set == {"congestion.bcn.sampling.jitter_bytes": 5_000}
    assert sweep.replications == 25
    assert sweep.n_runs == 150
    assert [(p.y, p.stat) for p in sweep.plots] == [
        ("per_port.core->ep4.peak_queue_bytes", "mean"),
        ("window.per_port.core->ep4.peak_queue_bytes", "mean"),
        ("window.fairness_index", "mean"),
        ("window.fairness_index", "std"),
    ]
    assert "window_s = [0.02, 0.08]" in sweep.base_toml  # fairness over t = 20-80 ms
    with pytest.raises(cnsim.SweepError, match="replications"):
        replace(sweep, replications=0)  # a SweepSpec is checked however it is made
    assert api.presets()["seed000-window-sweep"].startswith("sweep: Seed 000")


# ---------------------------------------------------------------- bad sweep files


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"grid": {f"{SAMPLING}.nope": [1]}}, api.ScenarioError, "unknown field `nope`"),
        (
            {"grid": {WINDOW: []}},
            cnsim.SweepError,
            r"grid\.[^:]*: list should have at least 1 item",
        ),
        ({"zip": {"a": [1, 2], "b": [1]}}, cnsim.SweepError, "same length .a has 2, b has 1"),
        (
            {"replications": 0},
            cnsim.SweepError,
            r"replications: .*greater than or equal to 1 \(got 0\)",
        ),
        ({"replicas": 3}, cnsim.SweepError, "did you mean 'replications'"),
        ({"grid": {WINDOW: [1, 1]}}, cnsim.SweepError, "listed twice"),
        ({"set": {"seed": 3}}, cnsim.SweepError, "runs derive it from sweep.seed"),
        ({"base": "nothing-like-it"}, api.ScenarioNotFoundError, "unknown preset or file"),
        ({"plots": [{"x": "duration_s", "y": "frames.delivered"}]}, cnsim.SweepError, "not swept"),
        ({"names": {"duration_s": ["a"]}}, cnsim.SweepError, "names.*not a swept parameter"),
        ({"names": {WINDOW: ["a"]}}, cnsim.SweepError, "expected 2 names, one per value"),
        ({"names": {WINDOW: ["a", "a"]}}, cnsim.SweepError, "listed twice"),
        (
            {"plots": [{"x": WINDOW, "y": "frames.delivered", "panel": "duration_s"}]},
            cnsim.SweepError,
            r"plots\[0\]\.panel: 'duration_s' is not swept",
        ),
        (
            {"plots": [{"x": WINDOW, "y": "frames.delivered", "where": {WINDOW: 5}}]},
            cnsim.SweepError,
            "5 is none of its values",
        ),
        (
            {"plots": [{"x": WINDOW, "y": "frames.delivered", "yscale": "symlog"}]},
            cnsim.SweepError,
            r"sweep\.plots\[0\]\.yscale: input should be 'linear' or 'log' \(got 'symlog'\)",
        ),
        (
            {
                "grid": {WINDOW: [0, 20_000]},
                "plots": [{"x": WINDOW, "y": "frames.delivered", "xscale": "log"}],
            },
            cnsim.SweepError,
            r"sweep\.plots\[0\]\.xscale: 'log' needs positive numbers on x \(value 0 is not",
        ),
    ],
)
def test_bad_sweeps_fail_before_any_run(tmp_path, changes, error, message):
    out = tmp_path / "study"
    with pytest.raises(error, match=message):
        cnsim.sweep(tiny(**changes), out=out, jobs=1, progress=False)
    assert not out.exists()


def test_unknown_parameter_names_the_point(tmp_path):
    bad = tiny(grid={WINDOW: [20_000, 80_000], "traffic[0].load": [0.5, 7.0]})
    with pytest.raises(api.ScenarioError, match=r"sweep point 1 \(.*traffic\[0\]\.load=7.0\)"):
        cnsim.sweep(bad, out=tmp_path / "study", jobs=1, progress=False)


def test_unknown_metric_stops_after_the_first_run(tmp_path):
    out = tmp_path / "study"
    bad = tiny(metrics=["per_port.core->ep4.peak_queue_byte"])
    with pytest.raises(cnsim.SweepError, match="did you mean peak_queue_bytes"):
        cnsim.sweep(bad, out=out, jobs=1, progress=False)
    assert len(list(out.glob("runs/*/run.json"))) == 1  # the rest never started


def test_cli_bad_sweep_is_one_red_line_exit_2(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(tiny_toml(replications=0))
    outcome = runner.invoke(cli.app, ["sweep", str(path), "--out", str(tmp_path / "o")])
    assert outcome.exit_code == 2
    assert outcome.output.strip().splitlines() == [
        "error: sweep.replications: input should be greater than or equal to 1 (got 0)"
    ]


def test_cnsim_run_on_a_sweep_points_to_cnsim_sweep(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text(tiny_toml())
    for target in (str(path), "seed000-window-sweep"):
        outcome = runner.invoke(cli.app, ["run", target])
        assert outcome.exit_code == 2
        assert f"run it with `cnsim sweep {target}`" in outcome.output


# ---------------------------------------------------------------- running on all cores


def test_pool_writes_the_store(pool_study):
    out = pool_study.out_dir
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 4
    assert list(runs.columns[:2]) == ["point", WINDOW]
    assert set(METRICS) <= set(runs.columns)
    assert (runs["status"] == "ok").all()
    assert runs["seed"].nunique() == 4
    assert runs["key"].str.fullmatch(r"[0-9a-f]{16}").all()
    workers = {int(w.rsplit(":", 1)[1]) for w in runs["worker"]}
    assert os.getpid() not in workers  # ran in the pool, not in this process
    for key in runs["key"]:
        assert (out / "runs" / key / "summary.json").is_file()
        assert not (out / "runs" / key / "timeseries.parquet").exists()  # keep="summary"
    resolved = cnsim.load_sweep(out / "sweep.toml")
    assert [p.params for p in resolved.points()] == [p.params for p in pool_study.spec.points()]
    assert resolved.base_toml == api.load_scenario("seed000-pause-bcn")
    loaded = cnsim.SweepResult.load(out)
    pd.testing.assert_frame_equal(loaded.runs, pool_study.runs)


def test_replication_seeds_follow_the_formula(pool_study):
    for _, row in pool_study.runs.iterrows():
        params = {WINDOW: int(row[WINDOW])}
        assert row["seed"] == cnsim.sweeps.replication_seed(7, params, int(row["replication"]))


def test_any_run_repeats_alone_with_cnsim_run(pool_study, tmp_path):
    row = pool_study.runs.iloc[3]
    expected = pool_study.summary(row["key"])
    command = shlex.split(pool_study.command(row["key"]))
    assert command[:2] == ["cnsim", "run"]
    as_preset = ["run", "seed000-pause-bcn", *command[3:]]  # BASE by preset name
    for args in (command[1:], as_preset):
        out = tmp_path / "again"
        outcome = runner.invoke(cli.app, [*args, "--out", str(out), "--no-plots", "-q"])
        assert outcome.exit_code == 0, outcome.output
        again = json.loads((out / "summary.json").read_text())
        assert without_wall(again) == without_wall(expected)


def test_rerun_reuses_every_finished_run(pool_study):
    out = pool_study.out_dir
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("runs/*/*.json")}
    again = cnsim.sweep(tiny(), out=out, jobs=2, progress=False)
    assert (again.executed, again.reused) == (0, 4)
    assert {p: p.stat().st_mtime_ns for p in out.glob("runs/*/*.json")} == stamps
    pd.testing.assert_frame_equal(metric_columns(again.runs), metric_columns(pool_study.runs))


def test_killed_sweep_resumes_without_redoing_finished_runs(tmp_path):
    path = tmp_path / "long.toml"
    path.write_text(tiny_toml(replications=15, grid={WINDOW: [20_000, 40_000, 60_000, 80_000]}))
    out = tmp_path / "study"
    args = [sys.executable, "-m", "cnsim.cli", "sweep", str(path), "--out", str(out)]
    child = subprocess.Popen(
        [*args, "--jobs", "2", "--quiet", "--no-plots"],
        start_new_session=True,  # its own process group: the kill reaches its workers too
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while len(list(out.glob("runs/*/run.json"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    finished = {p: p.stat().st_mtime_ns for p in out.glob("runs/*/run.json")}
    assert 3 <= len(finished) < 60, "the kill should land mid-study"
    assert not (out / "runs.parquet").exists()

    study_again = cnsim.sweep(path, out=out, jobs=2, progress=False)

    assert (study_again.executed, study_again.reused) == (60 - len(finished), len(finished))
    for record, stamp in finished.items():
        assert record.stat().st_mtime_ns == stamp, f"{record.parent.name} was redone"
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 60
    assert (runs["status"] == "ok").all()
    assert runs[METRICS].notna().all().all()
    assert not list(out.glob("runs/*/.*.tmp"))


def test_failed_run_is_recorded_and_the_others_finish(tmp_path, monkeypatch):
    doomed = cnsim.sweeps.replication_seed(7, {WINDOW: 80_000}, 1)
    real_run = api.run

    def flaky_run(scenario, *, seed=None, **kwargs):
        if seed == doomed:
            raise RuntimeError("core exploded")
        return real_run(scenario, seed=seed, **kwargs)

    monkeypatch.setattr(execute.api, "run", flaky_run)
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_toml())
    out = tmp_path / "study"
    outcome = runner.invoke(cli.app, ["sweep", str(path), "--out", str(out), "-j", "1"])
    assert outcome.exit_code == 1
    assert "1 of 4 runs failed" in outcome.output
    assert "RuntimeError: core exploded" in outcome.output
    runs = pd.read_parquet(out / "runs.parquet")
    failed = runs[runs["status"] == "error"]
    assert failed["seed"].tolist() == [doomed]
    assert failed["error"].tolist() == ["RuntimeError: core exploded"]
    assert failed[METRICS].isna().all().all()
    assert (runs["status"] == "ok").sum() == 3

    monkeypatch.setattr(execute.api, "run", real_run)
    healed = cnsim.sweep(path, out=out, jobs=1, progress=False)
    assert (healed.executed, healed.reused) == (1, 3)  # only the failed run is retried
    assert (healed.runs["status"] == "ok").all()


# ---------------------------------------------------------------- keep, time series, stats


def test_keep_full_gives_replication_mean_series_and_transients(tmp_path):
    out = tmp_path / "study"
    cnsim.sweep(tiny(), out=out, jobs=1, progress=False)  # summaries only
    full = cnsim.sweep(tiny(), out=out, jobs=1, progress=False, keep="full")
    assert full.executed == 4  # keep="full" needs time series the first call did not keep
    means = full.timeseries_mean("host_tx_bps", ["ep*"])
    assert list(means.columns) == [0, 1]
    keys = full.runs.loc[full.runs["point"] == 1, "key"]
    by_hand = [
        analysis.aggregate(pd.read_parquet(out / "runs" / k / "timeseries.parquet"), "host_tx_bps")
        for k in keys
    ]
    np.testing.assert_allclose(means[1].to_numpy(), pd.concat(by_hand, axis=1).mean(axis=1))
    transients = full.transient_durations("host_tx_bps", ["ep*"])
    assert list(transients["point"]) == [0, 1]
    assert (transients["n"] == 2).all()
    assert (transients["transient_duration_s"] >= 0).all()


def test_timeseries_mean_needs_keep_full(pool_study):
    with pytest.raises(cnsim.SweepError, match="keep='full'"):
        pool_study.timeseries_mean("host_tx_bps")


def test_keep_none_leaves_only_the_table(tmp_path):
    out = tmp_path / "study"
    done = cnsim.sweep(tiny(replications=1), out=out, jobs=1, progress=False, keep="none")
    assert not list((out / "runs").iterdir())
    assert (out / "runs.parquet").is_file()
    assert done.runs[METRICS].notna().all().all()


@pytest.mark.parametrize("bad", ["all", "Full", None, ["full"]])
def test_a_bad_keep_is_refused_before_any_run(tmp_path, bad):
    out = tmp_path / "study"
    with pytest.raises(cnsim.SweepError, match=r"keep: expected one of none, summary, full"):
        cnsim.sweep(tiny(), out=out, jobs=1, progress=False, keep=bad)
    assert not out.exists()


def test_the_cli_offers_the_keep_choices_the_api_takes():
    got = runner.invoke(cli.app, ["sweep", "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert "none|summary|full" in got.output
    bad = runner.invoke(cli.app, ["sweep", "x.toml", "--keep", "all"])
    assert bad.exit_code == 2
    assert "'all' is not one of 'none', 'summary', 'full'" in bad.output


def test_aggregate_mean_std_and_t_interval(pool_study):
    sweep = pool_study.spec
    runs = pd.DataFrame(
        {
            "point": [0, 0, 0, 1, 1],
            WINDOW: [20_000] * 3 + [80_000] * 2,
            "status": ["ok", "ok", "ok", "ok", "error"],
            "metrics.x": [1.0, 2.0, 3.0, 5.0, np.nan],
        }
    )
    stats = result.SweepResult(sweep, runs, "unused").aggregate(["metrics.x"])
    first, second = stats.to_dict("records")
    assert (first["n"], first["mean"], first["std"]) == (3, 2.0, 1.0)
    assert first["ci95"] == pytest.approx(4.3027 / math.sqrt(3))
    assert (second["n"], second["mean"]) == (1, 5.0)
    assert math.isnan(second["std"])
    assert math.isnan(second["ci95"])
    assert result.t975(100) == pytest.approx(1.9840, abs=1e-4)
    assert result.t975(31) == pytest.approx(2.0395, abs=1e-4)


def test_aggregate_of_real_runs(pool_study):
    stats = pool_study.aggregate()
    assert set(stats["metric"]) == set(METRICS)
    assert (stats["n"] == 2).all()
    assert stats.loc[stats["metric"] == "window.fairness_index", "mean"].between(0, 1).all()


# ---------------------------------------------------------------- plots


def test_window_sweep_preset_runs_and_draws_its_plots(tmp_path):
    short = replace(cnsim.load_sweep("seed000-window-sweep"), replications=2)
    short = replace(short, grid={WINDOW: [10_000, 100_000]})
    done = cnsim.sweep(short, out=tmp_path / "study", jobs=2, progress=False)
    assert (done.runs["status"] == "ok").all()
    drawn = done.plot()
    assert [p.name for p in drawn] == [
        "averaged_peak_queue.png",
        "averaged_peak_queue_in_window.png",
        "fairness_index.png",
        "fairness_index_std.png",
    ]
    assert all(p.stat().st_size > 10_000 for p in drawn)


def test_default_plots_one_per_metric(pool_study, tmp_path):
    drawn = pool_study.plot(tmp_path / "plots")  # tiny() lists no [[sweep.plots]]
    assert len(drawn) == len(METRICS)


def test_std_plot_of_single_runs_warns_and_is_skipped(pool_study, tmp_path):
    plot = cnsim.sweeps.PlotSpec(x=WINDOW, y="window.fairness_index", stat="std", error="none")
    first_runs = pool_study.runs[pool_study.runs["replication"] == 0]
    spec_one = replace(pool_study.spec, plots=(plot,))
    one = result.SweepResult(spec_one, first_runs, pool_study.out_dir)
    with pytest.warns(UserWarning, match="two finished runs per point"):
        assert one.plot(tmp_path) == []


# ---------------------------------------------------------------- Dask


def test_dask_cluster_gives_the_local_results(pool_study, tmp_path):
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    try:
        with distributed.Client(cluster) as client:
            on_dask = cnsim.sweep(tiny(), out=tmp_path / "dask", client=client, progress=False)
            worker_pids = set(client.run(os.getpid).values())
    finally:
        cluster.close()
    assert on_dask.executed == 4
    ran_on = {int(w.rsplit(":", 1)[1]) for w in on_dask.runs["worker"]}
    assert ran_on <= worker_pids
    pd.testing.assert_frame_equal(metric_columns(on_dask.runs), metric_columns(pool_study.runs))
    for key in on_dask.runs["key"]:
        assert without_wall(on_dask.summary(key)) == without_wall(pool_study.summary(key))


def test_missing_dask_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"pip install 'cnsim\[dask\]'"):
        execute.connect("tcp://127.0.0.1:1")


def test_plan_keys_change_with_version_and_seed(pool_study):
    runs = study.plan(pool_study.spec)
    assert [r.key for r in runs] == pool_study.runs["key"].tolist()
    resolved = api.resolve("seed000-pause-bcn", set=list(runs[0].overrides))
    assert study.run_key(resolved, runs[0].seed, study.run_version()) == runs[0].key
    assert study.run_key(resolved, runs[0].seed, "0.0.0") != runs[0].key
    assert study.run_key(resolved, runs[0].seed + 1, study.run_version()) != runs[0].key


def test_named_values_table_parameter_columns_and_filtered_panelled_plots(tmp_path):
    """[sweep.names] names a parameter's values; a [sweep.table] column naming a swept
    parameter holds the point's value (or name); plots keep the `where` points and split by
    `panel`; a path through a table the run lacks (`flows` without flows) is null."""
    load = "traffic[0].load"
    spec = tiny(
        replications=1,
        grid={WINDOW: [20_000, 80_000], load: [0.3, 0.5]},
        names={load: ["light", "heavy"]},
        table={
            "window": WINDOW,
            "load": load,
            "generated": "frames.generated",
            "flows_completed": "flows.completed",
        },
        plots=[
            {"name": "heavy", "x": WINDOW, "y": "frames.delivered", "where": {load: "heavy"}},
            {"name": "by_load", "x": WINDOW, "y": "frames.delivered", "panel": load},
            {"name": "light_by_value", "x": WINDOW, "y": "frames.delivered", "where": {load: 0.3}},
        ],
    )
    out = tmp_path / "study"
    study_result = cnsim.sweep(spec, out=out, jobs=1, progress=False)
    table = pd.read_csv(out / "table.csv")
    assert list(table["load"]) == ["light", "heavy", "light", "heavy"]
    assert list(table["window"]) == [20_000, 20_000, 80_000, 80_000]
    assert table["flows_completed"].isna().all()
    heavy = table[table["load"] == "heavy"]["generated"]
    light = table[table["load"] == "light"]["generated"]
    assert heavy.mean() > light.mean()
    study_result.plot()
    for name in ("heavy", "by_load", "light_by_value"):
        assert (out / "plots" / f"{name}.png").is_file()
    assert study_result.spec.value_name(load, 0.5) == "heavy"
    assert "names" in (out / "sweep.toml").read_text()


def _rendered(table) -> str:
    from rich.console import Console

    console = Console(record=True, width=250)
    console.print(table)
    return console.export_text()


def test_terminal_table_names_list_values_and_cuts_long_ones(tmp_path):
    # A list-valued parameter is shown by its [sweep.names] name; without a name a long value
    # (a traffic list) is cut, never printed whole.
    from cnsim import readout, terminal

    named = cnsim.sweep(
        tiny(
            grid={"report.window_s": [[0.001, 0.004], [0.002, 0.004]]},
            names={"report.window_s": ["early", "late"]},
            set={"duration_s": 0.005},
            replications=1,
        ),
        out=tmp_path / "named",
        jobs=1,
        progress=False,
    )
    text = _rendered(terminal.sweep_table(named))
    for shown in ("early", "late"):
        assert shown in text
    assert "[0.001" not in text
    cut = readout.value_cell(named, "traffic", [{"kind": "bernoulli", "hosts": ["h1"] * 50}])
    assert len(cut) == readout.MAX_VALUE_CHARS
    assert cut.endswith("...")


def test_terminal_table_is_the_sweep_table_when_there_is_one(tmp_path):
    from cnsim import terminal

    study = cnsim.sweep(
        tiny(
            replications=1,
            names={WINDOW: ["fine", "coarse"]},
            table={"window": WINDOW, "fairness": "window.fairness_index"},
        ),
        out=tmp_path / "t",
        jobs=1,
        progress=False,
    )
    text = _rendered(terminal.sweep_table(study))
    csv = pd.read_csv(tmp_path / "t" / "table.csv")
    for shown in ("window", "fairness", "fine", "coarse"):
        assert shown in text
    assert f"{csv['fairness'][0]:.4g}" in text
    assert "table.csv" in text


def test_a_list_valued_x_is_plotted_by_its_numeric_names_or_its_length(tmp_path):
    from cnsim.plots import sweep as plots
    from cnsim.sweeps.spec import PlotSpec

    senders = [["ep0", "ep1", "ep2"], ["ep0", "ep1"]]
    spec = tiny(grid={"traffic[0].hosts": senders}, replications=1)
    study = cnsim.sweep(spec, out=tmp_path / "len", jobs=1, progress=False)
    plot = PlotSpec(x="traffic[0].hosts", y="frames.delivered")
    table = study.aggregate(["frames.delivered"])
    by_length, text, ticks = plots._numeric_x(study, plot, table)
    assert sorted(by_length["traffic[0].hosts"]) == [2, 3]
    assert text == "number of hosts"
    assert ticks is None
    spec["sweep"]["names"] = {"traffic[0].hosts": ["10", "20"]}
    named = cnsim.sweep(spec, out=tmp_path / "named", jobs=1, progress=False)
    by_name, _, _ = plots._numeric_x(named, plot, named.aggregate(["frames.delivered"]))
    assert sorted(by_name["traffic[0].hosts"]) == [10.0, 20.0]


def test_replotting_the_study_removes_figures_its_spec_no_longer_draws(pool_study):
    plots_dir = pool_study.out_dir / "plots"
    stale = plots_dir / "mean_from_an_older_spec.png"
    plots_dir.mkdir(exist_ok=True)
    stale.write_bytes(b"")
    Store(pool_study.out_dir).record_figures([stale])  # as an earlier spec's plot() left it
    drawn = pool_study.plot()
    assert drawn
    assert not stale.exists()
    assert sorted(plots_dir.glob("*.png")) == sorted(drawn)
