"""Writes a cnsim flow trace of a k-ary fat tree as a csg-htsim connection matrix, so the two
simulators run the same flows on the same fabric (docs/performance.md, "Session 28").

    cnsim trace benchmarks/roce_fattree16.toml --out flows.csv
    python benchmarks/to_htsim_cm.py flows.csv --k 16 --out flows.cm

cnsim's `fat_tree` names host i under edge switch e of pod p `h{p}_{e}_{i}`; htsim's fat tree
numbers the hosts pod by pod and switch by switch from 0, the same order, so host
`h{p}_{e}_{i}` is htsim's node p k^2/4 + e k/2 + i. A connection line is `SRC->DST start
PICOSECONDS size BYTES` (htsim's `ConnectionMatrix::load` reads the start in picoseconds).
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

HOST_NAME = re.compile(r"h(\d+)_(\d+)_(\d+)")


def htsim_node(name: str, k: int) -> int:
    """htsim's node number of the fat tree host cnsim calls `name`."""
    match = HOST_NAME.fullmatch(name)
    if match is None:
        raise SystemExit(f"{name!r} is not a fat_tree host name (h{{pod}}_{{edge}}_{{i}})")
    pod, edge, i = (int(g) for g in match.groups())
    if not (pod < k and edge < k // 2 and i < k // 2):
        raise SystemExit(f"{name!r} is not a host of the k = {k} fat tree")
    return pod * k * k // 4 + edge * k // 2 + i


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path, help="a CSV from `cnsim trace`")
    parser.add_argument("--k", type=int, required=True, help="the fat tree's k")
    parser.add_argument("--out", type=Path, required=True, help="the connection matrix to write")
    args = parser.parse_args()
    with args.trace.open(newline="") as f:
        flows = list(csv.DictReader(f))
    lines = [f"Nodes {args.k**3 // 4}", f"Connections {len(flows)}"]
    for flow in flows:
        src, dst = htsim_node(flow["src"], args.k), htsim_node(flow["dst"], args.k)
        start_ps = round(float(flow["start_s"]) * 1e12)
        lines.append(f"{src}->{dst} start {start_ps} size {round(float(flow['size_bytes']))}")
    args.out.write_text("\n".join(lines) + "\n")
    print(f"{len(flows):,} flows written to {args.out}")


if __name__ == "__main__":
    main()
