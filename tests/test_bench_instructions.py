"""benchmarks/bench_instructions.py: the event loop's instructions per frame-hop under callgrind
(valgrind from Debian's packages; `.ci/run` installs it when missing and sets
CNSIM_REQUIRE_VALGRIND=1, so CI cannot skip the end-to-end test)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_instructions  # noqa: E402

# `callgrind_annotate --inclusive=yes` lines: the loop's own line (with the binary in brackets)
# after lines of code inlined into it (attributed to the loop, without brackets).
ANNOTATED = """\
4,998,660,084 (99.99%)  examples/run.rs:run::main [/x/run]
3,873,677,458 (77.48%)  src/sim/mod.rs:run::main
3,505,851,103 (70.13%)  src/sim/mod.rs:cnsim_core::sim::Simulation::run_inner [/x/run]
1,060,580,109 (21.21%)  src/net/switch.rs:cnsim_core::sim::Simulation::run_inner
"""


def test_the_loop_s_own_inclusive_count_is_read() -> None:
    assert bench_instructions.loop_instructions(ANNOTATED) == 3_505_851_103
    inlined_only = "\n".join(line for line in ANNOTATED.splitlines() if "[" not in line)
    with pytest.raises(ValueError, match="run_inner"):
        bench_instructions.loop_instructions(inlined_only)


def test_per_event_and_per_frame_hop() -> None:
    c = bench_instructions.Count("x", 0.1, events=400, frame_hops=200, loop_instructions=100_000)
    assert (c.per_event, c.per_frame_hop) == (250.0, 500.0)


def valgrind() -> bool:
    found = shutil.which("valgrind") is not None and shutil.which("callgrind_annotate") is not None
    if not found and os.environ.get("CNSIM_REQUIRE_VALGRIND") == "1":
        pytest.fail("CNSIM_REQUIRE_VALGRIND=1 but no valgrind on PATH (apt-get install valgrind)")
    return found


def test_a_case_is_counted_end_to_end() -> None:
    if not valgrind():
        pytest.skip("valgrind is not installed")
    cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_instructions.py"), "incast"]
    cmd += ["--duration-s", "0.0002", "--binary", str(bench_instructions.build_runner("debug"))]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    row = proc.stdout.splitlines()[-1].split()
    assert row[0] == "incast"
    assert float(row[1]) == pytest.approx(0.0002)
    events, hops = (int(v.replace(",", "")) for v in row[2:4])
    per_event, per_hop = float(row[5]), float(row[6])
    assert events > 0
    assert hops > 0
    # The columns agree with each other, and a debug build's loop costs thousands per event.
    assert per_hop == pytest.approx(per_event * events / hops, rel=1e-3)
    assert per_event > 100
