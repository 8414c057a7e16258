"""Simulator speed on the issue-12 benchmark set: the 8 -> 1 PAUSE incast, `seed004-qcn` and
two-tier trees of 16 / 128 / 1024 hosts at 60% uniform load; and the issue-25 fabrics: k-ary fat
trees (k = 8 / 16 / 24: 128 / 1,024 / 3,456 hosts) and the 6,144-host `meta-fabric-6144`, all
with WebSearch flows to uniform destinations at 50% load (the fat trees' of the hosts' line
rate, the Meta fabric's on its busiest links, Parsimon's "max load": hosts at 28.6%).

Usage: python benchmarks/bench_speed.py [CASE ...] [--repeat N]

Cases: incast (benchmarks/incast8.toml, 5 simulated s), qcn (seed004-qcn, 9 s), tree16 (20 ms),
tree128 (5 ms), tree1024 (1 ms) by default; fattree8 (20 ms), fattree16 (10 ms), fattree24 (5 ms),
clos384 (benchmarks/clos384.toml: the Meta fabric at a sixteenth of its size, 40 ms), meta6144
(20 ms), meta6144-dctcp (the same fabric as Parsimon's ns-3 ran it: RoCE, an ACK per
frame, PFC and DCTCP; 10 ms), roce-fattree16 (benchmarks/roce_fattree16.toml: a k = 16 fat tree
at 100 Gb/s, WebSearch over RoCE with PFC, 1 ms; the scenario run beside csg-htsim,
docs/performance.md "Session 28"), and the transported incasts (8 long flows into one 100 Gb/s port,
20 ms: roce8 and tcp8 without a scheme; dcqcn8, dctcp8, timely8, hpcc8, swift8 with one, over
roce with PFC) when named. A flow workload starts empty and fills over a few ms (flows of the
mean size, 1.6 MB, take 1.3 ms at 10 Gb/s), so the fabrics' rates are of loaded networks only
after that: the `ms/sim ms` column is the whole run's wall time per simulated ms. On the Meta
fabric the queues, the active flows and the hops per simulated ms grow for longer (the next
80 ms cost 1.46 x the wall time per simulated ms of the first 20): `meta6144-steady` is the
window from 20 to 100 ms (two runs, their difference; peak memory the longer one's), the rate
to extrapolate a long run from; it reads low for the full 5 s (session 27's full run averaged
5.7% more per simulated ms than this window, same build and day: docs/performance.md). Each
run is a fresh process (so its peak memory is its own); the best of N by wall time is printed:
events/s, frame-hops/s, wall ns per frame-hop (a frame crossing one link is one hop; control
frames count) and peak resident memory. The wall figures count only the simulation loop (the
core's `wall_time_s`), not building the network or writing outputs. On a loaded machine
compare instruction counts instead (docs/performance.md says how).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name -> (scenario, simulated seconds or None for the file's own)
CASES: dict[str, tuple[str, float | None]] = {
    "incast": (str(HERE / "incast8.toml"), None),
    "qcn": ("seed004-qcn", None),
    "tree16": ("tree:16", 0.02),
    "tree128": ("tree:128", 0.005),
    "tree1024": ("tree:1024", 0.001),
    "fattree8": ("fattree:8", 0.02),
    "fattree16": ("fattree:16", 0.01),
    "fattree24": ("fattree:24", 0.005),
    "clos384": (str(HERE / "clos384.toml"), None),
    "meta6144": ("meta-fabric-6144", 0.02),
    "meta6144-dctcp": ("meta-fabric-6144-dctcp", 0.01),
    "roce-fattree16": (str(HERE / "roce_fattree16.toml"), None),
    "roce8": ("transport:roce", None),
    "tcp8": ("transport:tcp", None),
    "dcqcn8": ("scheme:dcqcn", None),
    "dctcp8": ("scheme:dctcp", None),
    "timely8": ("scheme:timely", None),
    "hpcc8": ("scheme:hpcc", None),
    "swift8": ("scheme:swift", None),
}
DEFAULT_CASES = ["incast", "qcn", "tree16", "tree128", "tree1024"]
# name -> (scenario, from, to): the loaded network's own rate, the difference of a run to `to`
# and one to `from` simulated seconds (a flow workload starts empty; see the docstring).
WINDOWS: dict[str, tuple[str, float, float]] = {
    "meta6144-steady": ("meta-fabric-6144", 0.02, 0.1),
}

FAT_TREE = """
name = "fattree-{k}"
duration_s = 0.01
[topology]
kind = "fat_tree"
k = {k}
switch = {{ shared_buffer_bytes = 12e6 }}
[[traffic]]
kind = "flows"
hosts = "all"
dst = "uniform"
load = 0.5
size = {{ cdf = "websearch" }}
[report]
probe_interval_s = 5e-4
"""

# 8 long transported flows into one 100 Gb/s port, no congestion control: every frame-hop of
# the data and of its ACKs (one per packet) is counted, so ns/hop includes the transport.
TRANSPORT_INCAST = """
name = "incast-{transport}"
duration_s = 0.02
hosts = [{hosts}]
switches = [{{ name = "sw", shared_buffer_bytes = 12e6 }}]
links = [{links}]
[[traffic]]
kind = "flow_trace"
transport = "{transport}"
frame_bytes = 1000
flows = [{flows}]
[report]
probe_interval_s = 1e-4
"""

# The same incast with a scheme over roce, lossless (PFC on the flows' class 3, XOFF 1 MB per
# ingress port, as the schemes' incast presets): ns/hop with the scheme's per-frame and per-ACK
# work. TIMELY starts at C / N, as timely-incast does (docs/timely.md says why).
SCHEME_TABLES = {
    "timely": '[congestion.timely]\nvariant = "patched"\ninitial_rate_bps = 12.5e9\n',
}
SCHEME_INCAST = """
[pfc]
lossless_classes = [3]
xoff_bytes = 1_000_000
xon_bytes = 900_000
headroom_bytes = 30_000
[congestion]
scheme = "{scheme}"
{table}"""


def scheme_incast(scheme: str) -> str:
    base = transport_incast("roce").replace(
        "size_bytes = 1e9 }", "size_bytes = 1e9, priority = 3 }"
    )
    return base + SCHEME_INCAST.format(scheme=scheme, table=SCHEME_TABLES.get(scheme, ""))


def transport_incast(transport: str) -> str:
    senders = [f"s{i}" for i in range(1, 9)]
    hosts = ", ".join(f'{{ name = "{h}" }}' for h in [*senders, "r"])
    links = ", ".join(
        f'{{ ends = ["{h}", "sw"], rate_bps = 100e9, delay_s = 1e-6 }}' for h in [*senders, "r"]
    )
    flows = ", ".join(
        f'{{ start_s = 0.0, src = "{h}", dst = "r", size_bytes = 1e9 }}' for h in senders
    )
    return TRANSPORT_INCAST.format(transport=transport, hosts=hosts, links=links, flows=flows)


# Runs in the child (here and in ab.py): one simulation, its summary, peak memory and the
# package it imported, as JSON on stdout.
CHILD = """
import json, resource, sys
import cnsim
scenario, duration = sys.argv[1], sys.argv[2]
s = cnsim.run(scenario, set=None if duration == "-" else {"duration_s": float(duration)}).summary
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"summary": s, "peak_mib": peak_kib / 1024, "package": cnsim.__file__}))
"""


def scenario_file(spec: str, tmp: Path) -> str:
    """A preset name or path as is; `tree:N` written by gen_tree.py into `tmp`, `fattree:K` as
    the k-ary fat tree of FAT_TREE, `transport:T` as TRANSPORT_INCAST over transport T,
    `scheme:S` as that incast over roce with PFC and scheme S (SCHEME_INCAST)."""
    if spec.startswith("scheme:"):
        scheme = spec.split(":", 1)[1]
        out = tmp / f"incast-{scheme}.toml"
        out.write_text(scheme_incast(scheme))
        return str(out)
    if spec.startswith("transport:"):
        transport = spec.split(":", 1)[1]
        out = tmp / f"incast-{transport}.toml"
        out.write_text(transport_incast(transport))
        return str(out)
    if spec.startswith("fattree:"):
        k = int(spec.split(":", 1)[1])
        out = tmp / f"fattree{k}.toml"
        out.write_text(FAT_TREE.format(k=k))
        return str(out)
    if not spec.startswith("tree:"):
        return spec
    n = int(spec.split(":", 1)[1])
    out = tmp / f"tree{n}.toml"
    subprocess.run(
        [sys.executable, str(HERE / "gen_tree.py"), str(n), "--out", str(out)], check=True
    )
    return str(out)


def bench(scenario: str, duration: float | None, repeat: int) -> dict[str, float]:
    """Best-of-`repeat` (lowest loop wall time) figures for one case."""
    best: dict[str, float] | None = None
    for _ in range(repeat):
        arg = "-" if duration is None else repr(duration)
        out = subprocess.run(
            [sys.executable, "-c", CHILD, scenario, arg], check=True, capture_output=True, text=True
        )
        got = json.loads(out.stdout)
        s = got["summary"]
        row = {
            "sim_s": s["sim_time_s"],
            "wall_s": s["wall_time_s"],
            "events": s["events"],
            "events_per_s": s["events_per_s"],
            "frame_hops_per_s": s["frame_hops_per_s"],
            "hops": s["frame_hops"],
            "ns_per_hop": s["wall_time_s"] / s["frame_hops"] * 1e9,
            "peak_mib": got["peak_mib"],
            "acks": s["control_frames"].get("ack", 0),
        }
        if best is None or row["wall_s"] < best["wall_s"]:
            best = row
    assert best is not None
    return best


def bench_window(scenario: str, start: float, end: float, repeat: int) -> dict[str, float]:
    """The figures of the simulated window `start`..`end`: a run to `end` less one to `start`."""
    short, long = bench(scenario, start, repeat), bench(scenario, end, repeat)
    wall = long["wall_s"] - short["wall_s"]
    events = long["events"] - short["events"]
    hops = long["hops"] - short["hops"]
    return {
        "sim_s": end - start,
        "wall_s": wall,
        "events": events,
        "events_per_s": events / wall,
        "hops": hops,
        "frame_hops_per_s": hops / wall,
        "ns_per_hop": wall / hops * 1e9,
        "peak_mib": long["peak_mib"],
        "acks": long["acks"] - short["acks"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "cases", nargs="*", default=DEFAULT_CASES, help=", ".join([*CASES, *WINDOWS])
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    unknown = [c for c in args.cases if c not in CASES and c not in WINDOWS]
    if unknown:
        names = ", ".join([*CASES, *WINDOWS])
        parser.error(f"unknown case {unknown[0]!r} (cases: {names})")
    import cnsim

    print(f"cnsim {cnsim.__version__} on {platform.machine()}, Python {platform.python_version()}")
    print(
        f"{'case':<16}{'sim s':>7}{'wall s':>8}{'events':>13}{'Mev/s':>8}{'Mhops/s':>9}"
        f"{'ns/hop':>8}{'ms/sim ms':>10}{'peak MiB':>10}{'ACKs':>11}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases:
            if name in WINDOWS:
                spec, start, end = WINDOWS[name]
                r = bench_window(scenario_file(spec, Path(tmp)), start, end, args.repeat)
            else:
                spec, duration = CASES[name]
                r = bench(scenario_file(spec, Path(tmp)), duration, args.repeat)
            print(
                f"{name:<16}{r['sim_s']:>7.3f}{r['wall_s']:>8.2f}{r['events']:>13,.0f}"
                f"{r['events_per_s'] / 1e6:>8.2f}{r['frame_hops_per_s'] / 1e6:>9.2f}"
                f"{r['ns_per_hop']:>8.1f}{r['wall_s'] / r['sim_s']:>10.1f}{r['peak_mib']:>10.0f}"
                f"{r['acks']:>11,.0f}"
            )


if __name__ == "__main__":
    main()
