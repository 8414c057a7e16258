"""A sweep's status lines for logs (`cnsim sweep --status-every SECONDS`, `status.py`'s
`SweepStatusLines`): the lines' text and timing on a fake clock, the timer thread, the refusals
end to end, and real sweeps on the local pool and on a Dask cluster.

The sweeps are tiny (seed000-pause-bcn cut to 5 ms, 2 points x 2 replications), as in
tests/test_sweep.py.
"""

from __future__ import annotations

import io
import math
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cnsim.status import SweepStatusLines

TINY_SWEEP = """
[sweep]
name = "tiny"
base = "seed000-pause-bcn"
replications = 2
seed = 7
metrics = ["frames.delivered"]

[sweep.grid]
"congestion.bcn.sampling.interval_bytes" = [20_000, 80_000]

[sweep.set]
duration_s = 0.005
"report.window_s" = [0.001, 0.004]
"""
LINE = re.compile(
    r"cnsim sweep: \d+ of 4 runs done \(\d+\.\d%(, \d+ reused)?\)(, \d+ failed)?, "
    r"\d+ s elapsed(, about \d+ s left)?"
)


class FakeClock:
    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


# ---------------------------------------------------------------- the lines


def test_a_line_when_a_run_ends_an_interval_after_the_last_and_one_at_the_end() -> None:
    clock, out = FakeClock(), io.StringIO()
    status = SweepStatusLines(60.0, stream=out, clock=clock)
    with status.counting(8, timer=False):
        for elapsed_s in [10, 30, 61, 100, 110, 120, 190, 600]:
            clock.now_s = 100.0 + elapsed_s
            status.advance()
    # 10 s, 30 s: too soon; 61 s: a line (3 runs in 61 s, 5 to go: 102 s left); 100 s to 120 s:
    # less than 60 s after it; 190 s: a line (7 runs, 1 to go: 27 s); 600 s: the last run, said
    # once, by the closing line.
    assert out.getvalue().splitlines() == [
        "cnsim sweep: 3 of 8 runs done (37.5%), 1 min 01 s elapsed, about 1 min 42 s left",
        "cnsim sweep: 7 of 8 runs done (87.5%), 3 min 10 s elapsed, about 27 s left",
        "cnsim sweep: 8 of 8 runs done (100.0%), 10 min 00 s elapsed",
    ]


def test_the_lines_text() -> None:
    line = SweepStatusLines.line
    assert line(37, 150, 123.0) == (
        "cnsim sweep: 37 of 150 runs done (24.7%), 2 min 03 s elapsed, about 6 min 16 s left"
    )
    assert line(0, 150, 5.0) == "cnsim sweep: 0 of 150 runs done (0.0%), 5 s elapsed"
    assert (
        line(150, 150, 3725.0) == "cnsim sweep: 150 of 150 runs done (100.0%), 1 h 02 min elapsed"
    )
    assert line(12, 40, 30.0, failed=2) == (
        "cnsim sweep: 12 of 40 runs done (30.0%), 2 failed, 30 s elapsed, about 1 min 10 s left"
    )


def test_runs_found_finished_count_as_done_but_not_in_the_pace() -> None:
    clock, out = FakeClock(), io.StringIO()
    status = SweepStatusLines(60.0, stream=out, clock=clock)
    with status.counting(150, reused=100, timer=False):
        clock.now_s += 30.0
        for _ in range(9):
            status.advance()
        clock.now_s += 30.0
        status.advance()
        clock.now_s += 40.0
        for _ in range(40):
            status.advance(failed=True)
    # 10 runs in 60 s, 40 to go: 240 s left (not 60 s x 40 / 110 done = 22 s).
    assert out.getvalue().splitlines() == [
        "cnsim sweep: 110 of 150 runs done (73.3%, 100 reused), 1 min 00 s elapsed, "
        "about 4 min 00 s left",
        "cnsim sweep: 150 of 150 runs done (100.0%, 100 reused), 40 failed, 1 min 40 s elapsed",
    ]


def test_a_sweep_with_every_run_finished_before_says_so_once() -> None:
    out = io.StringIO()
    with SweepStatusLines(1.0, stream=out, clock=FakeClock()).counting(4, reused=4):
        pass
    assert out.getvalue() == "cnsim sweep: 4 of 4 runs done (100.0%, 4 reused), 0 s elapsed\n"


def test_no_closing_line_when_the_sweep_stops_on_an_error() -> None:
    clock, out = FakeClock(), io.StringIO()
    status = SweepStatusLines(60.0, stream=out, clock=clock)

    def interrupted_after_one_run() -> None:
        with status.counting(4, timer=False):
            clock.now_s += 61.0
            status.advance()
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted_after_one_run()
    assert out.getvalue().splitlines() == [
        "cnsim sweep: 1 of 4 runs done (25.0%), 1 min 01 s elapsed, about 3 min 03 s left"
    ]


def test_the_timer_prints_while_no_run_finishes_and_stops_with_the_sweep() -> None:
    out = io.StringIO()
    status = SweepStatusLines(0.2, stream=out)
    with status.counting(3):
        deadline = time.monotonic() + 10
        while not out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        first = out.getvalue().splitlines()[0]
        assert re.fullmatch(r"cnsim sweep: 0 of 3 runs done \(0\.0%\), \d+ s elapsed", first)
        for _ in range(3):
            status.advance()
    last = out.getvalue().splitlines()[-1]
    assert re.fullmatch(r"cnsim sweep: 3 of 3 runs done \(100\.0%\), \d+ s elapsed", last)
    assert not [t for t in threading.enumerate() if t.name == "cnsim-status"]
    written = out.getvalue()
    time.sleep(0.5)
    assert out.getvalue() == written


@pytest.mark.parametrize("every_s", [0.0, -1.0, math.nan, math.inf])
def test_an_interval_that_is_no_positive_time_is_refused(every_s: float) -> None:
    with pytest.raises(ValueError, match="positive number of seconds"):
        SweepStatusLines(every_s)


# ---------------------------------------------------------------- the command


def cnsim_sweep(*args: str, tty: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    if tty:
        env["TTY_COMPATIBLE"] = "1"  # rich: stderr is a terminal, where the bar is drawn
    cmd = [sys.executable, "-m", "cnsim", "sweep", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)


@pytest.fixture
def tiny_sweep(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_SWEEP)
    return path


@pytest.mark.parametrize(
    "extra",
    [
        ["--status-every", "0"],
        ["--status-every", "-1"],
        ["--status-every", "nan"],
        ["--status-every", "inf"],
        ["--status-every", "0", "--dask", "tcp://127.0.0.1:9"],  # before connecting
    ],
)
def test_the_command_refuses_a_bad_interval_before_the_sweep(
    tiny_sweep: Path, tmp_path: Path, extra: list[str]
) -> None:
    out = tmp_path / "out"
    done = cnsim_sweep(str(tiny_sweep), "--out", str(out), *extra)
    assert done.returncode == 2, done.stderr
    assert "--status-every" in done.stderr
    assert "positive number of seconds" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.toml"]


def test_a_local_sweep_prints_status_lines_and_no_bar(tiny_sweep: Path, tmp_path: Path) -> None:
    pytest.importorskip("cnsim._native")
    out = tmp_path / "out"
    args = [str(tiny_sweep), "--out", str(out), "--jobs", "2", "--no-plots"]
    done = cnsim_sweep(*args, "--status-every", "1e-9", tty=True)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines, "no status line"
    assert all(LINE.fullmatch(line) for line in lines), lines
    assert lines[-1].startswith("cnsim sweep: 4 of 4 runs done (100.0%), ")
    assert "━" not in done.stderr  # no bar, though stderr counts as a terminal
    assert "4/4 runs ok" in done.stdout  # the closing table, as without the option
    assert (out / "runs.parquet").is_file()

    again = cnsim_sweep(*args, "-q", "--status-every", "1e-9")
    assert again.returncode == 0, again.stderr
    assert again.stdout == ""
    assert again.stderr.splitlines() == [
        "cnsim sweep: 4 of 4 runs done (100.0%, 4 reused), 0 s elapsed"
    ]

    # Without the option, the same terminal gets the bar: the check above can see one.
    barred = cnsim_sweep(str(tiny_sweep), "--out", str(tmp_path / "barred"), "-j", "2", tty=True)
    assert barred.returncode == 0, barred.stderr
    assert "━" in barred.stderr
    assert "cnsim sweep:" not in barred.stderr


def test_a_dask_sweep_prints_status_lines(tiny_sweep: Path, tmp_path: Path) -> None:
    pytest.importorskip("cnsim._native")
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    try:
        address = cluster.scheduler_address
        out = tmp_path / "out"
        args = ["--out", str(out), "--dask", address, "-q", "--no-plots"]
        done = cnsim_sweep(str(tiny_sweep), *args, "--status-every", "1e-9")
    finally:
        cluster.close()
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("cnsim sweep: ")]
    assert lines, done.stderr
    assert all(LINE.fullmatch(line) for line in lines), lines
    assert lines[-1].startswith("cnsim sweep: 4 of 4 runs done (100.0%), ")
    assert "━" not in done.stderr


def test_status_lines_import_no_rich() -> None:
    code = "import sys, cnsim.status; print(sorted({'rich', 'pandas'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr
