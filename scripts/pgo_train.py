"""The training runs of a profile-guided build (scripts/build-pgo): what the profile teaches the
compiler is which branches and calls are hot, so the set covers the kinds of run cnsim is used
for, each short: the 6,144-host fabric (its per-hop path), the 802.1Qau seeds' schemes on
their own networks, a k = 8 fat tree with flows, and the transports and today's schemes over
an incast (bench_speed.py's cases). About 10 s with the instrumented build here.

Usage (build-pgo runs it with the instrumented package first on PYTHONPATH):
    python scripts/pgo_train.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import cnsim

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_speed import CASES, scenario_file  # noqa: E402

# (bench_speed case, simulated seconds or None for the case's own)
TRAINING: list[tuple[str, float | None]] = [
    ("meta6144", 0.01),
    ("qcn", 2.0),
    ("incast", 1.0),
    ("fattree8", 0.005),
    ("transport:roce", 0.005),
    ("transport:tcp", 0.005),
    ("scheme:dcqcn", 0.005),
    ("scheme:dctcp", 0.005),
    ("scheme:timely", 0.005),
    ("scheme:hpcc", 0.005),
    ("scheme:swift", 0.005),
]
# Presets of the other mechanisms (PAUSE, BCN, ECM and E2CM, PFC; WebSearch on a leaf-spine).
PRESETS: list[tuple[str, float | None]] = [
    ("seed004-pause", 2.0),
    ("seed002-bcn-baseline", None),
    ("seed003-bernoulli", 0.02),
    ("pfc-unfairness", None),
    ("leafspine-websearch", 0.005),
]


def training_runs(tmp: Path) -> list[tuple[str, dict[str, float] | None]]:
    """Each training run: its scenario (a preset name, or a file written into `tmp`) and its
    overrides."""
    cases = [(scenario_file(CASES[c][0] if c in CASES else c, tmp), d) for c, d in TRAINING]
    return [(s, None if d is None else {"duration_s": d}) for s, d in cases + PRESETS]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for scenario, overrides in training_runs(Path(tmp)):
            start = time.perf_counter()
            cnsim.run(scenario, set=overrides)
            name = Path(scenario).stem if scenario.endswith(".toml") else scenario
            print(f"pgo_train: {name} {time.perf_counter() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
