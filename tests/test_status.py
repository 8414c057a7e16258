"""Status lines for long runs in logs (`cnsim run --status-every SECONDS`, `status.py`)."""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cnsim.status import StatusLines, duration_text
from conftest import small_run


class FakeClock:
    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


def test_a_line_at_most_every_interval_and_one_at_completion() -> None:
    clock, out = FakeClock(), io.StringIO()
    status = StatusLines(1.0, stream=out, clock=clock)
    for elapsed_s, fraction in [(0.5, 0.1), (1.2, 0.2), (1.5, 0.3), (2.1, 0.35), (2.3, 1.0)]:
        clock.now_s = 100.0 + elapsed_s
        status(fraction)
    # 0.5 s: too soon; 1.2 s: a line (1.2 s x 0.8 / 0.2 = 4.8 s left); 1.5 s and 2.1 s: 0.3
    # and 0.9 s after that line, too soon; 2.3 s: the end, always.
    assert out.getvalue().splitlines() == [
        "cnsim: 20.0% simulated, 1 s elapsed, about 5 s left",
        "cnsim: 100.0% simulated, 2 s elapsed",
    ]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.4, "0 s"), (42, "42 s"), (425, "7 min 05 s"), (5220, "1 h 27 min"), (5959.6, "1 h 39 min")],
)
def test_durations_read_as_a_person_writes_them(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


@pytest.mark.parametrize("every_s", [0.0, -1.0, math.nan, math.inf])
def test_an_interval_that_is_no_positive_time_is_refused(every_s: float) -> None:
    with pytest.raises(ValueError, match="positive number of seconds"):
        StatusLines(every_s)


def cnsim_run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "cnsim", "run", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


def test_the_command_prints_status_lines_to_stderr_only(tmp_path: Path) -> None:
    scenario = tmp_path / "small.toml"
    scenario.write_text(small_run("window_s = [2e-4, 1e-3]"))
    out = tmp_path / "out"
    done = cnsim_run(str(scenario), "--out", str(out), "--no-plots", "-q", "--status-every", "1e-9")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines, "no status line"
    assert all(line.startswith("cnsim: ") and "% simulated, " in line for line in lines)
    assert lines[-1].startswith("cnsim: 100.0% simulated, ")
    assert (out / "summary.json").is_file()


def test_the_command_refuses_a_zero_interval_before_the_run(tmp_path: Path) -> None:
    scenario = tmp_path / "small.toml"
    scenario.write_text(small_run("window_s = [2e-4, 1e-3]"))
    out = tmp_path / "out"
    done = cnsim_run(str(scenario), "--out", str(out), "--status-every", "0")
    assert done.returncode == 2
    assert "--status-every" in done.stderr
    assert "positive number of seconds" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
