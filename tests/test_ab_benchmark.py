"""benchmarks/ab.py: builds compared in interleaved rounds, their outputs checked equal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cnsim

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import ab  # noqa: E402


def test_two_builds_are_timed_in_turns_and_their_outputs_compared() -> None:
    build = Path(cnsim.__file__).resolve().parent.parent
    cmd = [sys.executable, str(ROOT / "benchmarks" / "ab.py"), "seed004-qcn"]
    cmd += ["--build", f"one={build}", "--build", f"two={build}"]
    cmd += ["--rounds", "2", "--duration-s", "0.05"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    turns = [
        line.split(":")[1].split()[0]
        for line in proc.stdout.splitlines()
        if line.startswith("round ")
    ]
    assert turns == ["one", "two", "one", "two"]
    assert "outputs identical across builds" in proc.stdout


def test_only_the_wall_clock_fields_may_differ() -> None:
    a = {"events": 10, "frame_hops": 5, "wall_time_s": 1.0, "frame_hops_per_s": 5.0}
    b = dict(a, wall_time_s=2.0, frame_hops_per_s=2.5)
    assert ab.outputs(a) == ab.outputs(b)
    assert ab.outputs(a) != ab.outputs(dict(b, events=11))


def test_a_build_without_the_package_is_refused(tmp_path: Path) -> None:
    build = Path(cnsim.__file__).resolve().parent.parent
    cmd = [sys.executable, str(ROOT / "benchmarks" / "ab.py"), "qcn"]
    cmd += ["--build", f"a={build}", "--build", f"b={tmp_path}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"no cnsim package in {tmp_path}" in proc.stderr
