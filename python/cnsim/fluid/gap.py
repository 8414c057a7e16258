"""The packet-vs-fluid gap for DCQCN at N = 10 against the feedback delay (docs/fidelity.md):
the dcqcn-stability sweep's scenario with 10 senders, the loop delay set on the bottleneck link
as that sweep does, packet runs (several seeds) beside the fluid model of the same scenario,
over the same t = 30-60 ms window.

    python -m cnsim.fluid.gap [--seeds 1 2] [--delays-us 25 35 45 55 65 75] [--set PATH=VALUE]

prints one CSV row per (delay, seed): the packet queue mean and std, the shares of probe
samples with the queue empty and above Kmax, link use, the period of the queue's swing and its
autocorrelation at that lag; the fluid model's queue mean, std and minimum over the window,
whether it settles (by 100 ms), and its fixed point's oscillation (period, decay per period).
`--set` is passed to both (e.g. counters = "timer_only").
"""

from __future__ import annotations

import argparse
import tomllib
from collections.abc import Sequence

import numpy as np

import cnsim
from cnsim.fluid import beside, dcqcn

# The dcqcn presets' own loop: 4 x 1 us propagation + data and CNP transmission on two hops.
BASE_DELAY_S = 4.4256e-6
BOTTLENECK_DELAY = "links[64].delay_s"  # sw - recv in the dcqcn-stability scenario
WINDOW_S = (0.03, 0.06)


def overrides(n_flows: int, delay_s: float, extra: Sequence[str]) -> list[str]:
    """The sweep's way to a loop delay: the extra, half each way, on the bottleneck link."""
    hosts = ", ".join(f'"s{i}"' for i in range(1, n_flows + 1))
    link_delay = 1e-6 + (delay_s - BASE_DELAY_S) / 2
    return [f"traffic[0].hosts=[{hosts}]", f"{BOTTLENECK_DELAY}={link_delay!r}", *extra]


def row(n_flows: int, delay_s: float, seed: int, extra: Sequence[str]) -> dict[str, float]:
    base = cnsim.load_sweep("dcqcn-stability").base_toml
    sets = overrides(n_flows, delay_s, extra)
    result = cnsim.run(base, seed=seed, set=sets)
    queue = result.series("queue_bytes", ["sw->recv"]).iloc[:, 0]
    in_window = queue[(queue.index >= WINDOW_S[0]) & (queue.index <= WINDOW_S[1])]
    scenario = tomllib.loads(cnsim.resolve(base, set=sets))
    fluid = beside.fluid_of(scenario, duration_s=0.1)
    assert abs(fluid.model.feedback_delay_s - delay_s) < 1e-9, fluid.model.feedback_delay_s
    tail = fluid.trajectory.window(*WINDOW_S)
    metrics = result.metrics
    assert isinstance(fluid.model, dcqcn.DcqcnModel)
    mode = dcqcn.oscillation(n_flows, fluid.model)
    samples = in_window.to_numpy(dtype=float)
    period_s, correlation = swing_period(samples, float(np.median(np.diff(in_window.index))))
    return {
        "delay_us": delay_s * 1e6,
        "seed": seed,
        "packet_queue_mean_kb": metrics["steady_queue_mean_bytes"] / 1e3,
        "packet_queue_std_kb": metrics["steady_queue_std_bytes"] / 1e3,
        "packet_empty_frac": float(np.mean(samples <= 0)),
        "packet_above_kmax_frac": float(np.mean(samples > fluid.model.kmax_bytes)),
        "packet_period_ms": period_s * 1e3,
        "packet_period_autocorr": correlation,
        "packet_link_use": metrics["steady_throughput_bps"] / fluid.model.capacity_bps,
        "packet_rate_cv": metrics["steady_rate_cv"],
        "fluid_queue_mean_kb": float(np.mean(tail.queue_bytes)) / 1e3,
        "fluid_queue_std_kb": float(np.std(tail.queue_bytes)) / 1e3,
        "fluid_queue_min_kb": float(np.min(tail.queue_bytes)) / 1e3,
        "fluid_settles": float(fluid.settles),
        "fluid_period_ms": mode.period_s * 1e3,
        "fluid_decay_per_period": mode.decay_per_period,
    }


def swing_period(samples: np.ndarray, step_s: float) -> tuple[float, float]:
    """The queue's dominant period: the lag of the autocorrelation's highest peak after its
    first zero crossing, and the autocorrelation there (near 1: a regular swing)."""
    x = samples - samples.mean()
    corr = np.correlate(x, x, "full")[x.size - 1 :]
    corr = corr / corr[0]
    negative = np.flatnonzero(corr < 0)
    if negative.size == 0:
        return float("nan"), 0.0
    first = int(negative[0])
    lag = first + int(np.argmax(corr[first:]))
    return lag * step_s, float(corr[lag])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m cnsim.fluid.gap")
    parser.add_argument("--n-flows", type=int, default=10)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--delays-us", type=float, nargs="+", default=[25, 35, 45, 55, 65, 75])
    parser.add_argument("--set", dest="extra", action="append", default=[])
    args = parser.parse_args(argv)
    header = None
    for delay_us in args.delays_us:
        for seed in args.seeds:
            values = row(args.n_flows, delay_us * 1e-6, seed, args.extra)
            if header is None:
                header = list(values)
                print(",".join(header))
            print(",".join(f"{values[k]:.4g}" for k in header), flush=True)


if __name__ == "__main__":
    main()
