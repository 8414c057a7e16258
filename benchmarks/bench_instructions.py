"""Instructions per frame-hop of the event loop, counted by valgrind's callgrind.

Usage: python benchmarks/bench_instructions.py [CASE ...] [--duration-s S] [--binary PATH]

Wall time on this project's machines scatters by 20% and more from one hour to the next (the
same build ran the Meta fabric's first 20 ms in 19.8 s and in 23.3 s ten minutes apart;
docs/performance.md, "Session 30"), so a speed-up of a few percent cannot be read from the
wall, and nor can the distance to a wall-clock goal. callgrind counts the instructions the loop
executes: the same count for the same build and inputs, whatever else the machine does. This
script runs each case once under callgrind with `examples/run` (the optimised Rust runner, the
allocator the Python package uses) and prints, per case, the loop's instructions
(`Simulation::run_inner`, inclusive: the build of the network and the writing of outputs are
left out) per event and per frame-hop. It does not count cache misses: a change that trades
instructions for misses shows here as a gain it may not be (compare with `ab.py` then).

CASE is one of `bench_speed.py`'s cases (default: `meta6144` for 2 ms, the fabric of issue 25's
hour, and `qcn`), a preset or a scenario file; `--duration-s` sets the simulated time of every
case (the cases' own defaults are sized for the wall clock, which callgrind slows about 50
times). Without `--binary` the runner is built first (`cargo build --release -p cnsim-core
--example run`).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_speed import CASES, scenario_file  # noqa: E402

# Simulated seconds per case when `--duration-s` is not given: 20 s or less under callgrind.
DEFAULT_DURATIONS = {"meta6144": 0.002, "qcn": 0.2}
DEFAULT_CASES = ["meta6144", "qcn"]
# The event loop's function, as callgrind_annotate names it.
LOOP_FUNCTION = "Simulation::run_inner"


@dataclass
class Count:
    """One case's counts: the loop's instructions and what it simulated."""

    case: str
    simulated_s: float
    events: int
    frame_hops: int
    loop_instructions: int

    @property
    def per_event(self) -> float:
        return self.loop_instructions / max(self.events, 1)

    @property
    def per_frame_hop(self) -> float:
        return self.loop_instructions / max(self.frame_hops, 1)


def loop_instructions(annotated: str) -> int:
    """The inclusive instruction count of the event loop in `callgrind_annotate --inclusive=yes`
    output: its first line naming `LOOP_FUNCTION` as the function itself (`file:function`, not an
    inlined callee attributed to it)."""
    pattern = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+\S*:\S*" + re.escape(LOOP_FUNCTION) + r"\b")
    for line in annotated.splitlines():
        match = pattern.match(line)
        if match and "[" in line:
            return int(match.group(1).replace(",", ""))
    raise ValueError(f"no inclusive count of {LOOP_FUNCTION} in the annotation")


def build_runner(profile: str = "release") -> Path:
    """`examples/run` built in `profile` ("release", as `bench_speed.py` measures the package, or
    "debug", quick to build after `cargo test`): its path."""
    flags = ["--release"] if profile == "release" else []
    subprocess.run(
        ["cargo", "build", *flags, "-q", "-p", "cnsim-core", "--example", "run"],
        check=True,
        cwd=REPO,
    )
    return target_directory() / profile / "examples" / "run"


def target_directory() -> Path:
    """Where cargo builds this workspace (`CARGO_TARGET_DIR` or `target/`)."""
    meta = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    return Path(json.loads(meta.stdout)["target_directory"])


def scenario_text(spec: str, tmp: Path) -> Path:
    """A scenario file for `spec` (a case's scenario, a preset name or a file)."""
    resolved = scenario_file(spec, tmp)
    path = Path(resolved)
    if path.suffix == ".toml" and path.exists():
        return path
    from cnsim import api  # a preset: its TOML, as `cnsim show` prints it

    try:
        text = api.resolve(resolved)
    except api.ScenarioNotFoundError as e:
        raise SystemExit(f"{spec}: {e}") from None
    out = tmp / f"{resolved}.toml"
    out.write_text(text)
    return out


def count(case: str, runner: Path, duration_s: float | None, tmp: Path, index: int) -> Count:
    """Runs `case` once under callgrind (`index`: its place on the command line)."""
    spec, case_duration = CASES.get(case, (case, None))
    duration = duration_s or DEFAULT_DURATIONS.get(case) or case_duration
    scenario = scenario_text(spec, tmp)
    out = tmp / f"callgrind.{index}.out"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(runner)]
    command.append(str(scenario))
    if duration is not None:
        command += ["--set", f"duration_s={duration}"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        tail = "\n".join(run.stderr.splitlines()[-5:])
        raise SystemExit(f"{case}: the run under callgrind failed ({run.returncode}):\n{tail}")
    summary = json.loads(run.stdout)
    annotated = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", str(out)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return Count(
        case=case,
        simulated_s=summary["sim_time_s"],
        events=summary["events"],
        frame_hops=summary["frame_hops"],
        loop_instructions=loop_instructions(annotated),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", default=DEFAULT_CASES)
    parser.add_argument("--duration-s", type=float, help="simulated seconds of every case")
    parser.add_argument("--binary", type=Path, help="an examples/run binary (default: build)")
    args = parser.parse_args()
    for tool in ("valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found: install valgrind (Debian's package `valgrind`)")
    if args.binary is not None and not args.binary.is_file():
        raise SystemExit(f"--binary {args.binary}: no such file (an examples/run binary)")
    runner = args.binary or build_runner()
    header = ("case", "sim s", "events", "frame-hops", "loop Minstr", "/event", "/hop")
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(args.cases):
            c = count(case, runner, args.duration_s, Path(tmp), i)
            if i == 0:  # after the first count: a refused case prints no table
                print("{:<16} {:>7} {:>12} {:>12} {:>12} {:>8} {:>8}".format(*header))
            print(
                f"{c.case:<16} {c.simulated_s:>7.4f} {c.events:>12,} {c.frame_hops:>12,} "
                f"{c.loop_instructions / 1e6:>12,.1f} {c.per_event:>8.1f} {c.per_frame_hop:>8.1f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
