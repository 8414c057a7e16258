"""benchmarks/bench_floor.py: cnsim beside the floor (benchmarks/floor) on the Meta fabric."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_floor  # noqa: E402

SCRIPT = str(ROOT / "benchmarks" / "bench_floor.py")


def test_a_rounds_ratio_is_of_the_loop_time_per_frame_hop() -> None:
    r = bench_floor.Round(
        cnsim_loop_s=2.0, cnsim_frame_hops=10_000_000, floor_loop_s=0.8, floor_frame_hops=9_600_000
    )
    assert r.cnsim_ns_per_hop == pytest.approx(200.0)
    assert r.floor_ns_per_hop == pytest.approx(83.333, rel=1e-4)
    assert r.ratio == pytest.approx(2.4)
    assert r.hop_mismatch == pytest.approx(1 / 24)


def test_a_window_is_the_difference_of_two_runs() -> None:
    long = bench_floor.Round(
        cnsim_loop_s=5.0, cnsim_frame_hops=30, floor_loop_s=2.0, floor_frame_hops=29
    )
    short = bench_floor.Round(
        cnsim_loop_s=1.0, cnsim_frame_hops=10, floor_loop_s=0.5, floor_frame_hops=9
    )
    assert bench_floor.window(long, short) == bench_floor.Round(
        cnsim_loop_s=4.0, cnsim_frame_hops=20, floor_loop_s=1.5, floor_frame_hops=20
    )


def test_bad_arguments_are_refused_by_name() -> None:
    for args, field in (
        (["--duration-ms", "0"], "--duration-ms"),
        (["--rounds", "0"], "--rounds"),
        (["--duration-ms", "1", "--from-ms", "2"], "--from-ms"),
    ):
        proc = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
        assert proc.returncode == 2
        assert field in proc.stderr


def test_both_run_the_same_traffic_end_to_end() -> None:
    # A debug build of the floor (quick after `cargo test`): the ratio means nothing here,
    # the columns and the traffic check do.
    binary = bench_floor.build_floor("debug")
    cmd = [SCRIPT, "--duration-ms", "0.5", "--rounds", "1", "--floor-binary", str(binary)]
    proc = subprocess.run([sys.executable, *cmd], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    row = next(line.split() for line in lines if line.startswith("1 "))
    cnsim_ns, floor_ns, ratio = float(row[2]), float(row[4]), float(row[5])
    assert ratio == pytest.approx(cnsim_ns / floor_ns, abs=0.01)
    hops = next(line for line in lines if line.startswith("frame-hops:"))
    cnsim_hops, floor_hops = (int(w.rstrip(",").replace(",", "")) for w in hops.split()[2::3])
    # The 6,144-host fabric's first 0.5 ms: 344,062 frame-hops in cnsim, 348,283 in the floor.
    assert abs(cnsim_hops / floor_hops - 1) < bench_floor.MAX_HOP_MISMATCH
    assert floor_hops > 300_000


def test_a_window_runs_end_to_end() -> None:
    binary = bench_floor.build_floor("debug")
    cmd = [SCRIPT, "--duration-ms", "0.5", "--from-ms", "0.25", "--rounds", "1"]
    cmd += ["--floor-binary", str(binary)]
    proc = subprocess.run([sys.executable, *cmd], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "simulated ms 0.25 to 0.5" in proc.stdout
    hops = next(line for line in proc.stdout.splitlines() if line.startswith("frame-hops:"))
    cnsim_hops, floor_hops = (int(w.rstrip(",").replace(",", "")) for w in hops.split()[2::3])
    # Fewer than the first 0.5 ms's (344,062 and 348,283): the window's alone.
    assert 0 < cnsim_hops < 344_062
    assert 0 < floor_hops < 348_283
