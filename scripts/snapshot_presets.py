"""Snapshot every preset's results for a refactor's before/after compare.

Runs each preset (optionally capped at `--max-duration-s` simulated seconds) and writes one JSON
file: per preset, the summary without wall-clock fields and a SHA-256 of the time series and
flow records (their exact bytes as numpy columns). Two snapshots of the same code are equal;
`--compare A B` prints every preset whose results differ, and exits 1 if any does.

    python scripts/snapshot_presets.py --out /tmp/before.json
    python scripts/snapshot_presets.py --out /tmp/after.json
    python scripts/snapshot_presets.py --compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

import cnsim

WALL_CLOCK_KEYS = {
    "wall_time_s",
    "wall_s_per_sim_s",
    "events_per_s",
    "frame_hops_per_s",
    "cnsim_version",
}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in WALL_CLOCK_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _digest(frame: Any) -> str:
    h = hashlib.sha256()
    if frame is None:
        return "none"
    for name in frame.columns:
        column = frame[name]
        h.update(name.encode())
        if column.dtype.name in ("category", "object", "str", "string"):
            # Strings by value (an object array's bytes would be its pointers).
            h.update("\x1f".join(map(str, column)).encode())
        else:
            h.update(np.ascontiguousarray(column.to_numpy()).tobytes())
    return h.hexdigest()


def snapshot(names: list[str], max_duration_s: float | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        text = cnsim.api.load_scenario(name)
        if cnsim.api.is_sweep_text(text):
            print(
                f"{name}: a sweep, skipped (its points are scenarios of their own)", file=sys.stderr
            )
            continue
        overrides: dict[str, Any] = {}
        if max_duration_s is not None:
            duration = tomllib.loads(text).get("duration_s", max_duration_s)
            if duration > max_duration_s:
                overrides["duration_s"] = max_duration_s
        result = cnsim.run(name, set=overrides or None)
        out[name] = {
            "summary": _strip(result.summary),
            "timeseries": _digest(result.timeseries),
            "flows": _digest(result.flows if len(result.flows) else None),
        }
        print(f"{name}: {result.summary['events']} events", file=sys.stderr)
    return out


def compare(a: dict[str, Any], b: dict[str, Any]) -> int:
    differ = 0
    for name in sorted(set(a) | set(b)):
        if a.get(name) != b.get(name):
            differ += 1
            print(f"DIFFERS: {name}")
            sa, sb = (a.get(name) or {}), (b.get(name) or {})
            for key in sorted(set(sa) | set(sb)):
                if sa.get(key) != sb.get(key):
                    print(f"   {key}")
    print(f"{len(set(a) | set(b)) - differ} identical, {differ} differ")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--max-duration-s", type=float, default=None)
    parser.add_argument("--presets", nargs="*", default=None)
    parser.add_argument("--compare", nargs=2, type=Path)
    args = parser.parse_args()
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        return compare(a, b)
    names = args.presets or sorted(cnsim.presets())
    result = snapshot(names, args.max_duration_s)
    text = json.dumps(result, indent=1, sort_keys=True, default=str)
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
