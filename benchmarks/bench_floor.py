"""cnsim beside the floor (benchmarks/floor): `meta-fabric-6144`'s first milliseconds (or a
window of them) run by both in alternation on this machine, and the ratio of their loop times
per frame-hop.

The floor is a lean model of the same fabric, traffic and events with nothing else
(benchmarks/floor/README.md). Their ratio says how far cnsim's loop is from a lean loop of the
same events on the machine of the moment, to the extent that the machine's state disturbs both
alike: session 30 measured this VM's speed 18% apart within ten minutes, and session 31 saw
cnsim's loaded window move 13-14% in an hour while the floor's moved under 3%, then both slow
together in the next, so the ratio takes out part of the machine's scatter, not all of it
(docs/performance.md, "Session 31"). Each round runs cnsim (through the installed package, a
fresh process, its loop's wall time) and then the floor; the best of each and the median of the
rounds' ratios are printed. With `--from-ms`, each round runs both to
`--from-ms` and to `--duration-ms` and takes the differences: the window's figures (20 to 100
ms is the loaded window `bench_speed.py meta6144-steady` measures, the rate the issue's hour
is extrapolated from). The two must carry the same traffic: the script exits 1 if their
frame-hop counts differ by more than 15%.

Usage: python benchmarks/bench_floor.py [--duration-ms MS] [--from-ms MS] [--rounds N]
       [--floor-binary PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench_instructions import target_directory
from bench_speed import bench

REPO = Path(__file__).resolve().parent.parent
SCENARIO = "meta-fabric-6144"
# The frame-hop counts of the two at 0.5-20 ms differ by 1-4% (different random streams draw
# the flows); more than this means they no longer model the same traffic.
MAX_HOP_MISMATCH = 0.15


@dataclass(frozen=True)
class Round:
    cnsim_loop_s: float
    cnsim_frame_hops: int
    floor_loop_s: float
    floor_frame_hops: int

    @property
    def cnsim_ns_per_hop(self) -> float:
        return self.cnsim_loop_s / self.cnsim_frame_hops * 1e9

    @property
    def floor_ns_per_hop(self) -> float:
        return self.floor_loop_s / self.floor_frame_hops * 1e9

    @property
    def ratio(self) -> float:
        """cnsim's loop time per frame-hop over the floor's."""
        return self.cnsim_ns_per_hop / self.floor_ns_per_hop

    @property
    def hop_mismatch(self) -> float:
        return abs(self.cnsim_frame_hops / self.floor_frame_hops - 1.0)


def build_floor(profile: str = "release") -> Path:
    """`cnsim-floor` built in `profile`: its path."""
    flags = ["--release"] if profile == "release" else []
    subprocess.run(["cargo", "build", *flags, "-q", "-p", "cnsim-floor"], check=True, cwd=REPO)
    return target_directory() / profile / "cnsim-floor"


def run_floor(binary: Path, duration_ms: float) -> dict[str, float]:
    out = subprocess.run(
        [str(binary), repr(duration_ms)], check=True, capture_output=True, text=True
    )
    floor: dict[str, float] = json.loads(out.stdout)
    return floor


def one_round(binary: Path, duration_ms: float) -> Round:
    cnsim = bench(SCENARIO, duration_ms / 1e3, 1)
    floor = run_floor(binary, duration_ms)
    return Round(
        cnsim_loop_s=cnsim["wall_s"],
        cnsim_frame_hops=int(cnsim["hops"]),
        floor_loop_s=floor["loop_s"],
        floor_frame_hops=int(floor["frame_hops"]),
    )


def window(to: Round, start: Round) -> Round:
    """The figures between two runs' ends: the longer run's less the shorter one's."""
    return Round(
        cnsim_loop_s=to.cnsim_loop_s - start.cnsim_loop_s,
        cnsim_frame_hops=to.cnsim_frame_hops - start.cnsim_frame_hops,
        floor_loop_s=to.floor_loop_s - start.floor_loop_s,
        floor_frame_hops=to.floor_frame_hops - start.floor_frame_hops,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration-ms", type=float, default=20.0)
    parser.add_argument("--from-ms", type=float, help="the window's start (default: none)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--floor-binary", type=Path, help="a built cnsim-floor (default: build it, release)"
    )
    args = parser.parse_args()
    if not args.duration_ms > 0:
        parser.error(f"--duration-ms: {args.duration_ms} is not a positive number of ms")
    if args.rounds < 1:
        parser.error(f"--rounds: {args.rounds} is not a positive count")
    start_ms = args.from_ms
    if start_ms is not None and not 0 < start_ms < args.duration_ms:
        parser.error(f"--from-ms: {start_ms} is not between 0 and --duration-ms")
    binary = args.floor_binary or build_floor()
    if not binary.is_file():
        parser.error(f"--floor-binary: {binary} is not a file")
    span = (
        f"the first {args.duration_ms:g} simulated ms"
        if start_ms is None
        else f"simulated ms {start_ms:g} to {args.duration_ms:g}"
    )
    print(f"{SCENARIO}, {span}, {args.rounds} rounds")
    print(f"{'round':<7}{'cnsim s':>9}{'ns/hop':>8}{'floor s':>9}{'ns/hop':>8}{'ratio':>7}")
    rounds = []
    for n in range(1, args.rounds + 1):
        r = one_round(binary, args.duration_ms)
        if start_ms is not None:
            r = window(r, one_round(binary, start_ms))
        rounds.append(r)
        print(
            f"{n:<7}{r.cnsim_loop_s:>9.2f}{r.cnsim_ns_per_hop:>8.1f}"
            f"{r.floor_loop_s:>9.2f}{r.floor_ns_per_hop:>8.1f}{r.ratio:>7.2f}"
        )
    best_cnsim = min(r.cnsim_ns_per_hop for r in rounds)
    best_floor = min(r.floor_ns_per_hop for r in rounds)
    print(
        f"best: cnsim {best_cnsim:.1f} ns per frame-hop, the floor {best_floor:.1f}, "
        f"ratio {best_cnsim / best_floor:.2f}; median of the rounds' ratios "
        f"{statistics.median(r.ratio for r in rounds):.2f}"
    )
    r = rounds[-1]
    print(f"frame-hops: cnsim {r.cnsim_frame_hops:,}, the floor {r.floor_frame_hops:,}")
    if r.hop_mismatch > MAX_HOP_MISMATCH:
        print(
            f"the frame-hop counts differ by {r.hop_mismatch:.0%} (more than "
            f"{MAX_HOP_MISMATCH:.0%}): the two no longer model the same traffic",
            file=sys.stderr,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
