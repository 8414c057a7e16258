"""Write a two-tier leaf-spine scenario: `hosts_per_leaf` hosts on each leaf switch, every leaf
linked to every spine, 10 Gb/s links with 1 us delay, uniform Bernoulli traffic at `load`.

    python benchmarks/gen_tree.py 2048 --out /tmp/tree2048.toml [--duration-s 0.001] [--ecmp]

Used by the scale tests and the speed benchmarks (16 / 128 / 1024 / 2048 / 8192 hosts).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import tomli_w


def tree(
    n_hosts: int,
    *,
    hosts_per_leaf: int = 32,
    spines: int = 4,
    load: float = 0.6,
    duration_s: float = 1e-3,
    ecmp: bool = False,
) -> dict[str, Any]:
    """The scenario as a dict (TOML-ready). Without `ecmp`, every leaf sends all its
    inter-leaf traffic through spine 0 (equal-cost ties go to the lowest port)."""
    per_leaf = min(hosts_per_leaf, n_hosts)
    leaves = -(-n_hosts // per_leaf)
    hosts = [f"h{i}" for i in range(n_hosts)]
    links: list[dict[str, Any]] = []
    for i, h in enumerate(hosts):
        links.append({"ends": [h, f"leaf{i // per_leaf}"], "rate_bps": 10e9, "delay_s": 1e-6})
    n_spines = spines if leaves > 1 else 0
    for leaf in range(leaves):
        for spine in range(n_spines):
            links.append(
                {"ends": [f"leaf{leaf}", f"spine{spine}"], "rate_bps": 10e9, "delay_s": 1e-6}
            )
    switches = [{"name": f"leaf{i}"} for i in range(leaves)]
    switches += [{"name": f"spine{i}"} for i in range(n_spines)]
    routing = {"routing": {"multipath": "ecmp"}} if ecmp else {}
    return {
        "name": f"tree-{n_hosts}",
        "description": f"two-tier tree, {n_hosts} hosts, uniform Bernoulli at {load:.0%}",
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
    parser.add_argument("--ecmp", action="store_true", help="spread over all spines (ECMP)")
    a = parser.parse_args()
    scenario = tree(
        a.hosts,
        hosts_per_leaf=a.hosts_per_leaf,
        spines=a.spines,
        load=a.load,
        duration_s=a.duration_s,
        ecmp=a.ecmp,
    )
    a.out.write_text(tomli_w.dumps(scenario))


if __name__ == "__main__":
    main()
