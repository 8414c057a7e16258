"""Write a two-tier leaf-spine scenario: `hosts_per_leaf` hosts on each leaf switch, every leaf
linked to every spine, 1 us links, uniform Bernoulli traffic at `load`.

    python benchmarks/gen_tree.py 2048 --out /tmp/tree2048.toml [--duration-s 0.001]

By default the fabric is non-blocking: host links run at 10 Gb/s, each uplink at
hosts_per_leaf x 10 Gb/s / spines (80 Gb/s for 32 hosts and 4 spines), and ECMP spreads the
(source, destination) pairs over the spines, so "60% load" loads every link at most about 60%.
`--single-path` routes every inter-leaf frame of a leaf through spine 0 and `--uplink-rate-bps
10e9` makes the uplinks as slow as the host links; together they give the oversubscribed tree
the first benchmarks used (its spine queues grow without bound at 60% load).

Used by the scale tests and the speed benchmarks (16 / 128 / 1024 / 2048 / 8192 hosts).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import tomli_w

HOST_RATE_BPS = 10e9


def tree(
    n_hosts: int,
    *,
    hosts_per_leaf: int = 32,
    spines: int = 4,
    load: float = 0.6,
    duration_s: float = 1e-3,
    ecmp: bool = True,
    uplink_rate_bps: float | None = None,
) -> dict[str, Any]:
    """The scenario as a dict (TOML-ready). Without `ecmp`, every leaf sends all its
    inter-leaf traffic through spine 0 (equal-cost ties go to the lowest port). Uplinks run at
    `uplink_rate_bps`, by default the non-blocking hosts_per_leaf x 10 Gb/s / spines."""
    per_leaf = min(hosts_per_leaf, n_hosts)
    leaves = -(-n_hosts // per_leaf)
    uplink_bps = uplink_rate_bps or per_leaf * HOST_RATE_BPS / spines
    hosts = [f"h{i}" for i in range(n_hosts)]
    links: list[dict[str, Any]] = []
    for i, h in enumerate(hosts):
        links.append(
            {"ends": [h, f"leaf{i // per_leaf}"], "rate_bps": HOST_RATE_BPS, "delay_s": 1e-6}
        )
    n_spines = spines if leaves > 1 else 0
    for leaf in range(leaves):
        for spine in range(n_spines):
            links.append(
                {"ends": [f"leaf{leaf}", f"spine{spine}"], "rate_bps": uplink_bps, "delay_s": 1e-6}
            )
    switches = [{"name": f"leaf{i}"} for i in range(leaves)]
    switches += [{"name": f"spine{i}"} for i in range(n_spines)]
    routing = {"routing": {"multipath": "ecmp"}} if ecmp else {}
    return {
        "name": f"tree-{n_hosts}",
        "description": (
            f"two-tier tree, {n_hosts} hosts, {leaves} leaves x {n_spines} spines at"
            f" {uplink_bps / 1e9:g} Gb/s, {'ECMP' if ecmp else 'single path'},"
            f" uniform Bernoulli at {load:.0%}"
        ),
        "duration_s": duration_s,
        "hosts": [{"name": h} for h in hosts],
        "switches": switches,
        "links": links,
        "traffic": [{"kind": "bernoulli", "hosts": hosts, "dst": "uniform", "load": load}],
        "report": {"probe_interval_s": duration_s / 2},
        **routing,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hosts", type=int)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--hosts-per-leaf", type=int, default=32)
    parser.add_argument("--spines", type=int, default=4)
    parser.add_argument("--load", type=float, default=0.6)
    parser.add_argument("--duration-s", type=float, default=1e-3)
    parser.add_argument(
        "--single-path", action="store_true", help="no ECMP: inter-leaf traffic via spine 0"
    )
    parser.add_argument(
        "--uplink-rate-bps",
        type=float,
        default=None,
        help="leaf-spine link rate (default: non-blocking, hosts_per_leaf x 10 Gb/s / spines)",
    )
    a = parser.parse_args()
    scenario = tree(
        a.hosts,
        hosts_per_leaf=a.hosts_per_leaf,
        spines=a.spines,
        load=a.load,
        duration_s=a.duration_s,
        ecmp=not a.single_path,
        uplink_rate_bps=a.uplink_rate_bps,
    )
    a.out.write_text(tomli_w.dumps(scenario))


if __name__ == "__main__":
    main()
