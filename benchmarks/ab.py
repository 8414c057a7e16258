"""Compares the speed of two or more builds of cnsim on the same case, in interleaved rounds.

Usage: python benchmarks/ab.py CASE --build NAME=PYTHON_DIR --build NAME=PYTHON_DIR [--rounds N]
       [--duration-s S]

A build is a directory holding a `cnsim` package with its compiled `_native` module (a
checkout's `python/` after `cargo build --release -p cnsim-py` and copying
`target/release/lib_native.so` to `python/cnsim/_native.abi3.so`). CASE is one of
`bench_speed.py`'s cases (its default duration, or `--duration-s`) or a scenario file or preset.

Single runs of a large fabric scatter by 5-10% on a shared machine (its last-level cache is
the host's), more than most changes move them; one build run after the other also sees the
machine drift. So the builds take turns, round after round, each run a fresh process, and
each build's minimum over the rounds is compared (the run the machine disturbed least). The
outputs must agree: the summaries, without their wall-clock fields, are compared, and a
difference is reported (a change meant to keep results must keep them bit for bit).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# The child runs with the build's directory first on the path (`run_once`).
from bench_speed import CASES, CHILD, scenario_file  # noqa: E402

# Summary fields that measure the machine, not the simulation.
WALL_FIELDS = ("wall_time_s", "wall_s_per_sim_s", "events_per_s", "frame_hops_per_s")


def run_once(python_dir: Path, scenario: str, duration: float | None) -> dict:
    """One run of `scenario` with the build in `python_dir`: its summary."""
    env = dict(os.environ, PYTHONPATH=str(python_dir))
    arg = "-" if duration is None else repr(duration)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, scenario, arg],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    got = json.loads(out.stdout)
    package = Path(got["package"]).resolve()
    if not package.is_relative_to(python_dir.resolve()):
        raise SystemExit(f"{python_dir}: the run imported cnsim from {package}, not this build")
    return got["summary"]


def outputs(summary: dict) -> dict:
    """The summary without its wall-clock fields: what two builds must agree on."""
    return {k: v for k, v in summary.items() if k not in WALL_FIELDS}


def ns_per_hop(summary: dict) -> float:
    return summary["wall_time_s"] / summary["frame_hops"] * 1e9


def parse_build(text: str) -> tuple[str, Path]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"--build {text!r}: expected NAME=PYTHON_DIR")
    directory = Path(path)
    if not (directory / "cnsim" / "__init__.py").is_file():
        raise argparse.ArgumentTypeError(f"--build {text!r}: no cnsim package in {directory}")
    return name, directory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", help=f"a case of bench_speed.py ({', '.join(CASES)}) or a file")
    parser.add_argument("--build", type=parse_build, action="append", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration-s", type=float, default=None)
    args = parser.parse_args()
    builds: list[tuple[str, Path]] = args.build
    if len(builds) < 2 or len({name for name, _ in builds}) < len(builds):
        parser.error("give at least two --build entries with distinct names")
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: at least 1")
    spec, duration = CASES.get(args.case, (args.case, None))
    duration = args.duration_s if args.duration_s is not None else duration

    times: dict[str, list[float]] = {name: [] for name, _ in builds}
    reference: dict | None = None
    differ: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        scenario = scenario_file(spec, Path(tmp))
        for round_no in range(1, args.rounds + 1):
            for name, directory in builds:
                summary = run_once(directory, scenario, duration)
                times[name].append(ns_per_hop(summary))
                if reference is None:
                    reference = outputs(summary)
                elif outputs(summary) != reference:
                    differ.add(name)
                print(f"round {round_no}: {name} {times[name][-1]:.1f} ns/hop", flush=True)

    first = builds[0][0]
    best_first = min(times[first])
    print(f"\n{'build':<16}{'min ns/hop':>11}{'vs ' + first:>12}  all rounds")
    for name, _ in builds:
        best = min(times[name])
        rounds = " ".join(f"{t:.1f}" for t in times[name])
        print(f"{name:<16}{best:>11.1f}{best / best_first - 1:>+12.1%}  {rounds}")
    if differ:
        print(f"\noutputs differ from {first}'s: {', '.join(sorted(differ))}")
        sys.exit(1)
    print(f"\noutputs identical across builds (summaries without {', '.join(WALL_FIELDS)})")


if __name__ == "__main__":
    main()
