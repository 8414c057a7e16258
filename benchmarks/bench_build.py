"""Build time against network size: the two-tier trees of gen_tree.py (32 hosts per leaf, 4
spines, ECMP, uniform Bernoulli at 60%) at 10k, 20k, 40k and 100k hosts.

Usage: python benchmarks/bench_build.py [HOSTS ...] [--run-s 1e-4] [--stages]

Per size, in a fresh process, CPU seconds of the process (this machine is shared: CPU time
does not count the waits that wall time does): `resolve`, `cnsim.resolve` (parse, validate, build
the network once to check its routes, the resolved TOML: what `cnsim show --resolved` does
before printing); `start`, `cnsim.run` with `duration_s = 1e-9` (resolve, build the network
again to run it, an empty run, the report, its hand-over to Python: all a run costs besides its
events); `run`, `cnsim.run` with `duration_s = RUN_S` (100 us by default); and the process's peak
memory. The `e(...)` columns give the growth exponent against the previous row,
t2 / t1 = (n2 / n1)^e (1 linear, 2 quadratic).

`--stages` also times the core's stages with the example binary
(`cargo run --release --example build_time`, built first): parse and validate, resolve, the
resolved TOML, and `Simulation::new` (the network built to run).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = """
import json, resource, sys, time
import cnsim
path, run_s = sys.argv[1], float(sys.argv[2])
t = time.process_time()
text = cnsim.resolve(path)
resolve_s = time.process_time() - t
t = time.process_time()
cnsim.run(path, set={"duration_s": 1e-9})
start_s = time.process_time() - t
t = time.process_time()
s = cnsim.run(path, set={"duration_s": run_s}).summary
run_cpu_s = time.process_time() - t
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"resolve_s": resolve_s, "resolved_mb": len(text) / 1e6, "start_s": start_s,
                  "run_s": run_cpu_s, "events": s["events"], "peak_mib": peak_kib / 1024}))
"""


def growth(t2: float, t1: float, n2: int, n1: int) -> str:
    if t1 <= 0 or t2 <= 0:
        return "-"
    return f"{math.log(t2 / t1) / math.log(n2 / n1):.2f}"


def write_tree(n: int, tmp: Path, run_s: float) -> Path:
    out = tmp / f"tree{n}.toml"
    subprocess.run(
        [
            sys.executable,
            str(HERE / "gen_tree.py"),
            str(n),
            "--out",
            str(out),
            "--duration-s",
            repr(run_s),
        ],
        check=True,
    )
    return out


def stages_binary() -> Path:
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "cnsim-core", "--example", "build_time"],
        check=True,
        cwd=ROOT,
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "examples" / "build_time"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hosts", nargs="*", type=int, default=[10_000, 20_000, 40_000, 100_000])
    parser.add_argument("--run-s", type=float, default=1e-4, help="simulated seconds of the run")
    parser.add_argument("--stages", action="store_true", help="also time the core's stages")
    a = parser.parse_args()
    binary = stages_binary() if a.stages else None
    print(
        f"{'hosts':>8}{'resolve s':>11}{'MB':>7}{'start s':>9}{'run s':>9}{'events':>12}"
        f"{'peak MiB':>10}{'e(resolve)':>12}{'e(start)':>10}"
    )
    prev: tuple[int, dict[str, float]] | None = None
    stage_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in a.hosts:
            path = write_tree(n, Path(tmp), a.run_s)
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(path), repr(a.run_s)],
                check=True,
                capture_output=True,
                text=True,
            )
            r = json.loads(out.stdout)
            e_res = e_start = "-"
            if prev is not None:
                n1, p = prev
                e_res = growth(r["resolve_s"], p["resolve_s"], n, n1)
                e_start = growth(r["start_s"], p["start_s"], n, n1)
            print(
                f"{n:>8,}{r['resolve_s']:>11.2f}{r['resolved_mb']:>7.1f}{r['start_s']:>9.2f}"
                f"{r['run_s']:>9.2f}{r['events']:>12,}{r['peak_mib']:>10.0f}"
                f"{e_res:>12}{e_start:>10}",
                flush=True,
            )
            prev = (n, r)
            if binary is not None:
                got = subprocess.run(
                    [str(binary), str(path)], check=True, capture_output=True, text=True
                )
                stage_rows.append((n, json.loads(got.stdout)))
    if stage_rows:
        print(
            f"\n{'hosts':>8}{'parse+validate s':>18}{'resolve s':>11}{'to_toml s':>11}"
            f"{'build s':>9}"
        )
        for n, s in stage_rows:
            print(
                f"{n:>8,}{s['parse_validate_s']:>18.2f}{s['resolve_s']:>11.2f}"
                f"{s['to_toml_s']:>11.2f}{s['build_s']:>9.2f}"
            )


if __name__ == "__main__":
    main()
