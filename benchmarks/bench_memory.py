"""The memory estimate against measured peaks: each scenario run in a fresh process through
the API (`cnsim.run`) and the CLI (`cnsim run --no-plots`, and with its default figures where
`--plots` is given), its peak resident memory beside the estimate validation makes.

Usage: python benchmarks/bench_memory.py [CASE ...] [--plots]

The estimate is read from the cap's message (`limits.max_memory_bytes = 1` refuses every run
and says what it needs), so this measures what `[limits]` compares. Cases: ws8 (8 hosts on a
leaf, WebSearch flows at 50%, 0.1 s), flows1m (16 hosts, a million 1000-byte flows), tree2048
(gen_tree.py, uniform Bernoulli at 60%, 1 ms), ft16 (a k = 16 fat tree, WebSearch at 50%,
2 ms), tree8192 (8,192 hosts, no traffic). The ratio is estimate / measured.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

FLOWS = """
[[traffic]]
kind = "flows"
hosts = "all"
dst = "uniform"
load = {load}
size = {size}
"""

CASES: dict[str, str] = {
    "ws8": 'name = "ws8"\nduration_s = 0.1\n[topology]\nkind = "leaf_spine"\nleaves = 1\n'
    "spines = 1\nhosts_per_leaf = 8\n" + FLOWS.format(load=0.5, size='{ cdf = "websearch" }'),
    "flows1m": 'name = "flows1m"\nduration_s = 0.5\n[topology]\nkind = "leaf_spine"\n'
    "leaves = 1\nspines = 1\nhosts_per_leaf = 16\n"
    + FLOWS.format(load=0.1, size='{ dist = "fixed", bytes = 1000 }')
    + "[report]\nprobe_interval_s = 0.05\n",
    "ft16": 'name = "ft16"\nduration_s = 2e-3\n[topology]\nkind = "fat_tree"\nk = 16\n'
    + FLOWS.format(load=0.5, size='{ cdf = "websearch" }'),
    "tree2048": "tree:2048:0.6",
    "tree8192": "tree:8192:0",
}

API = """
import sys, resource, cnsim
cnsim.run(sys.argv[1])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def scenario_file(name: str, spec: str, tmp: Path) -> Path:
    out = tmp / f"{name}.toml"
    if not spec.startswith("tree:"):
        out.write_text(spec)
        return out
    _, n, load = spec.split(":")
    subprocess.run(
        [sys.executable, str(HERE / "gen_tree.py"), n, "--out", str(out), "--load", load],
        check=True,
    )
    if float(load) == 0:  # no traffic: the network alone
        text = out.read_text()
        start, end = text.index("[[traffic]]"), text.index("[report]")
        out.write_text(text[:start] + text[end:])
    return out


def estimate_bytes(path: Path) -> float:
    import cnsim

    try:
        cnsim.resolve(str(path), set={"limits.max_memory_bytes": 1})
    except cnsim.ScenarioError as e:
        m = re.search(r"needs about ([0-9.e+-]+) bytes of memory", str(e))
        if m:
            return float(m.group(1))
        raise
    raise AssertionError("a cap of 1 byte refuses every run")


def api_peak_mb(path: Path) -> float:
    """Peak resident memory of a process that runs the scenario with `cnsim.run`, MB."""
    out = subprocess.run(
        [sys.executable, "-c", API, str(path)], check=True, capture_output=True, text=True
    )
    return int(out.stdout.split()[-1]) * 1024 / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=list(CASES), help=", ".join(CASES))
    parser.add_argument("--plots", action="store_true", help="also the CLI with its figures")
    a = parser.parse_args()
    print(
        f"{'case':<10}{'estimate MB':>13}{'API MB':>9}{'ratio':>7}{'CLI MB':>9}{'ratio':>7}", end=""
    )
    print(f"{'CLI+plots MB':>14}{'ratio':>7}" if a.plots else "")
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.cases:
            path = scenario_file(name, CASES[name], Path(tmp))
            est = estimate_bytes(path) / 1e6
            api = api_peak_mb(path)
            cli_cmd = [sys.executable, "-m", "cnsim", "run", str(path), "-q", "--out"]
            cli = peak_mb_isolated([*cli_cmd, str(Path(tmp) / f"{name}-out"), "--no-plots"])
            row = f"{name:<10}{est:>13.0f}{api:>9.0f}{est / api:>7.2f}{cli:>9.0f}{est / cli:>7.2f}"
            if a.plots:
                plots = peak_mb_isolated([*cli_cmd, str(Path(tmp) / f"{name}-plots")])
                row += f"{plots:>14.0f}{est / plots:>7.2f}"
            print(row, flush=True)


def peak_mb_isolated(cmd: list[str]) -> float:
    """Peak resident memory of `cmd`, MB (its own child of a fresh process, so no earlier
    child's peak counts)."""
    wrapper = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
        "capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", wrapper, *cmd], check=True, capture_output=True, text=True
    )
    return int(out.stdout.split()[-1]) * 1024 / 1e6


if __name__ == "__main__":
    main()
