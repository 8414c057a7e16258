"""A sweep writes only where it may and deletes only what it wrote; its figures, tables and
messages say what is true: a directory that is no store is refused, stale figures are never
shown as current, the printed table's CSV exists, errors name the field at fault, an
interrupted study says how to resume, and a script without a `__main__` guard gets one clear
error instead of every run lost.

Runs are tiny (seed000-pause, 2 ms of simulated time) so the file stays quick.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import cnsim
from cnsim import cli
from cnsim.outputs import OutputError

pytest.importorskip("cnsim._native")

runner = CliRunner()
LOAD = "traffic[0].load"
TINY_SET = {"duration_s": 0.002, "report.window_s": [0.0, 0.002]}


def tiny(loads=(0.2, 0.4), **changes) -> dict:
    """A 2-point sweep of 2 ms runs, one replication each, as a dict (the TOML's shape)."""
    table = {
        "name": "tiny",
        "base": "seed000-pause",
        "metrics": ["frames.delivered"],
        "grid": {LOAD: list(loads)},
        "set": dict(TINY_SET),
    }
    table.update(changes)
    return {"sweep": table}


def run_tiny(out: Path, **changes) -> cnsim.SweepResult:
    return cnsim.sweep(tiny(**changes), out=out, jobs=1, progress=False)


# ---------------------------------------------------------------- 1. where a sweep writes


def test_a_folder_of_ones_own_figures_is_refused_and_kept(tmp_path: Path) -> None:
    mine = tmp_path / "myfigs" / "plots" / "thesis_fig1.png"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"x")
    with pytest.raises(OutputError, match=r"holds 'plots' but no sweep\.toml: not a sweep's own"):
        run_tiny(tmp_path / "myfigs")
    assert mine.read_bytes() == b"x"
    assert sorted(p.name for p in (tmp_path / "myfigs").rglob("*")) == ["plots", "thesis_fig1.png"]


def test_a_cnsim_run_directory_is_refused_in_the_cli(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "plots").mkdir(parents=True)
    (run_dir / "summary.json").write_text("{}")
    (run_dir / "plots" / "queues.png").write_bytes(b"png")
    spec = tmp_path / "s.toml"
    spec.write_text(cnsim.load_sweep(tiny()).to_toml(base_file="seed000-pause"))
    done = runner.invoke(cli.app, ["sweep", str(spec), "--out", str(run_dir), "-q"])
    assert done.exit_code == 2
    assert "holds 'summary.json', not a cnsim sweep's file" in done.output
    assert (run_dir / "plots" / "queues.png").exists()
    assert sorted(p.name for p in run_dir.iterdir()) == ["plots", "summary.json"]


def test_an_empty_directory_is_taken_and_the_store_resumes(tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    assert run_tiny(out).executed == 2
    (out / "notes.txt").write_text("my notes on this study")  # a store may hold one's notes
    assert run_tiny(out).reused == 2
    assert (out / "notes.txt").exists()


def test_replotting_never_deletes_a_figure_the_study_did_not_draw(tmp_path: Path) -> None:
    study = run_tiny(tmp_path / "s", plots=[{"x": LOAD, "y": "frames.delivered", "name": "a"}])
    study.plot()
    mine = study.out_dir / "plots" / "my_own.png"
    mine.write_bytes(b"x")
    changed = replace_plot_name(study, "b")
    assert [p.name for p in changed.plot()] == ["b.png"]
    assert sorted(p.name for p in (study.out_dir / "plots").glob("*.png")) == [
        "b.png",
        "my_own.png",
    ]
    assert changed.figures() == [study.out_dir / "plots" / "b.png"]


def replace_plot_name(study: cnsim.SweepResult, name: str) -> cnsim.SweepResult:
    spec = tiny(plots=[{"x": LOAD, "y": "frames.delivered", "name": name}])
    return cnsim.sweep(spec, out=study.out_dir, jobs=1, progress=False)


# ---------------------------------------------------------------- 2. stale figures


def test_figures_of_older_results_are_removed_and_not_reported(tmp_path: Path) -> None:
    out = tmp_path / "s"
    plot = [{"x": LOAD, "y": "frames.delivered", "name": "delivered"}]
    run_tiny(out, plots=plot).plot()
    figure = out / "plots" / "delivered.png"
    assert figure.exists()
    unchanged = run_tiny(out, plots=plot)  # as with --no-plots: same results, figure current
    assert unchanged.figures() == [figure]
    three = cnsim.sweep(tiny((0.2, 0.3, 0.4), plots=plot), out=out, jobs=1, progress=False)
    assert not figure.exists()  # drawn from the 2-point table: not the study's any more
    assert three.figures() == []
    done = runner.invoke(cli.app, ["report", str(out), "--html"])
    assert done.exit_code == 0, done.output
    assert (out / "report.html").read_text().count("data:image/png;base64,") == 1  # drawn now
    assert not figure.exists()  # the report draws into a temporary folder
    assert three.plot() == [figure]
    assert three.figures() == [figure]


# ---------------------------------------------------------------- 3. the table's CSV


def test_the_printed_tables_numbers_are_in_aggregate_csv(tmp_path: Path) -> None:
    metrics = ["frames.delivered", "frames.generated", "window.fairness_index"]
    study = run_tiny(tmp_path / "s", metrics=metrics)
    table = pd.read_csv(tmp_path / "s" / "aggregate.csv")
    assert list(table.columns) == ["point", LOAD, "metric", "n", "mean", "std", "ci95"]
    assert sorted(set(table["metric"])) == sorted(metrics)
    pd.testing.assert_frame_equal(table, study.aggregate(), check_dtype=False)


def test_a_study_with_a_sweep_table_writes_table_csv_only(tmp_path: Path) -> None:
    run_tiny(tmp_path / "s", table={"delivered": "frames.delivered"})
    assert (tmp_path / "s" / "table.csv").exists()
    assert not (tmp_path / "s" / "aggregate.csv").exists()


# ---------------------------------------------------------------- 4. errors name the field


def test_a_bad_table_path_names_its_column(tmp_path: Path) -> None:
    bad = {"q": "per_port.sw->recv.peak_queue_byts"}
    with pytest.raises(cnsim.SweepError, match=r"^sweep\.table\.q: metric path 'per_port"):
        run_tiny(tmp_path / "s", table=bad)


def test_a_plot_of_a_text_metric_says_it_is_not_a_number(tmp_path: Path) -> None:
    plot = [{"x": LOAD, "y": "metrics.peak_queue_port"}]
    with pytest.raises(
        cnsim.SweepError, match=r"^sweep\.plots\[0\]\.y: .* is text \(.*not a number"
    ):
        run_tiny(tmp_path / "s", plots=plot)
    assert len(list((tmp_path / "s").glob("runs/*/run.json"))) == 1  # stopped after one run


@pytest.mark.parametrize(
    ("plots", "message"),
    [
        (
            [
                {"x": LOAD, "y": "frames.delivered", "name": "a"},
                {"x": LOAD, "y": "x.y", "name": "a"},
            ],
            r"sweep\.plots\[1\]\.name: writes plots/a\.png, as sweep\.plots\[0\] does",
        ),
        (  # no names: both would be mean_delivered_vs_load.png
            [
                {"x": LOAD, "y": "frames.delivered"},
                {"x": LOAD, "y": "frames.delivered", "where": {LOAD: 0.2}},
            ],
            r"sweep\.plots\[1\]\.name \(none given\): writes plots/mean_delivered_vs_load\.png",
        ),
    ],
)
def test_two_plots_writing_one_file_are_refused(plots: list, message: str) -> None:
    with pytest.raises(cnsim.SweepError, match=message):
        cnsim.load_sweep(tiny(plots=plots))


# ---------------------------------------------------------------- 5. an interrupted study


def test_an_interrupted_study_says_how_to_resume(tmp_path: Path) -> None:
    out = tmp_path / "s"
    run_tiny(out)
    (out / "runs.parquet").unlink()  # killed before it wrote its table
    with pytest.raises(FileNotFoundError, match=r"interrupted .* same `cnsim sweep` command"):
        cnsim.SweepResult.load(out)
    for html in ([], ["--html"]):
        done = runner.invoke(cli.app, ["report", str(out), *html])
        assert done.exit_code == 2
        assert "the sweep was interrupted" in done.output
        assert "summary.json" not in done.output


def test_report_of_an_empty_directory_says_the_same_with_or_without_html(tmp_path: Path) -> None:
    plain = runner.invoke(cli.app, ["report", str(tmp_path)])
    html = runner.invoke(cli.app, ["report", str(tmp_path), "--html"])
    assert plain.exit_code == html.exit_code == 2
    assert plain.output == html.output
    assert "not a cnsim run or sweep directory" in plain.output


# ---------------------------------------------------------------- 6. the command's messages


@pytest.mark.parametrize("target", ["seed000-pause", "scenario.toml"])
def test_cnsim_sweep_on_a_scenario_points_to_cnsim_run(
    tmp_path: Path, target: str, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("scenario.toml").write_text(cnsim.load_scenario("seed000-pause"))
    done = runner.invoke(cli.app, ["sweep", target])
    assert done.exit_code == 2
    assert done.output.strip() == (
        f"error: {target} is a scenario, not a sweep; run it with `cnsim run {target}`"
    )


def test_a_missing_sweep_file_is_called_a_sweep_file(tmp_path: Path) -> None:
    done = runner.invoke(cli.app, ["sweep", str(tmp_path / "nonexist.toml")])
    assert done.exit_code == 2
    assert "no such sweep file" in done.output


def test_an_out_path_through_a_file_says_so(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    expected = f"{afile} is a file, not a directory"
    commands = [
        ["run", "seed000-pause", "--out", str(afile / "sub"), "-q"],
        ["sweep", "seed000-window-sweep", "--out", str(afile / "sub"), "-q"],
    ]
    for args in commands:
        done = runner.invoke(cli.app, args)
        assert done.exit_code == 2, args
        assert expected in done.output.replace("\n", ""), done.output
    study = run_tiny(tmp_path / "s")
    done = runner.invoke(
        cli.app, ["report", str(study.out_dir), "--html", "--out", f"{afile}/x.html"]
    )
    assert done.exit_code == 2
    assert f"report folder {afile}: is a file, not a directory" in done.output.replace("\n", "")


# ---------------------------------------------------------------- 7. the __main__ guard


SCRIPT = """
import cnsim
spec = {spec!r}
{call}
"""


@pytest.mark.parametrize("guarded", [False, True])
def test_a_script_without_a_main_guard_gets_one_clear_error(tmp_path: Path, guarded: bool) -> None:
    call = "study = cnsim.sweep(spec, out='s', jobs=2, progress=False)\n"
    call += "print(study.runs['status'].tolist())"
    if guarded:
        call = 'if __name__ == "__main__":\n' + textwrap.indent(call, "    ")
    (tmp_path / "study.py").write_text(SCRIPT.format(spec=tiny(), call=call))
    done = subprocess.run(
        [sys.executable, "study.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    if guarded:
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "['ok', 'ok']"
        return
    assert done.returncode == 1
    assert "BrokenProcessPool" not in done.stderr
    assert "bootstrapping" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("cnsim.sweeps.errors.SweepError: ")
    assert "study.py, line 4: the sweep starts at the script's top level; put it under" in last
    assert '`if __name__ == "__main__":`' in last


def test_a_plot_of_a_text_metric_is_skipped_for_that_reason() -> None:
    # A store made before the sweep refused text metrics can still hold one: the warning says
    # the value is text, not that the plot needs a finished run (both runs finished).
    from types import SimpleNamespace

    import pandas as pd

    from cnsim.plots.sweep import _why_no_numbers

    ok = pd.DataFrame({"metrics.peak_queue_port": ["sw->recv", "sw->recv"]})
    result = SimpleNamespace(ok=ok)
    spec = SimpleNamespace(y="metrics.peak_queue_port", stat="mean")
    assert _why_no_numbers(result, spec) == "its value is text ('sw->recv'), not a number"  # type: ignore[arg-type]
    numbers = SimpleNamespace(ok=pd.DataFrame({"metrics.peak_queue_port": [float("nan")]}))
    assert _why_no_numbers(numbers, spec) == "it needs a finished run"  # type: ignore[arg-type]
