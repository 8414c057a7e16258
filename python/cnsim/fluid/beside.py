"""The fluid model beside a packet run: from the run's resolved scenario, the scheme's fluid
model (`cnsim.fluid.dcqcn`, `cnsim.fluid.qcn` or `cnsim.fluid.dctcp`), its fixed point (DCTCP:
its limit cycle), local stability and time course, and the model's numbers beside the packet
run's over the same window (`cnsim run --fluid`, `Result.fluid()`); `cnsim.fluid.show` draws it
on the run's figures and writes it.

A scenario the models do not cover is refused with `FluidUnsupported`, which names the field and
the reason: a scheme without a fluid model, a workload other than one `saturate` entry (N
long-lived flows into one receiver; for DCTCP also one `flow_trace` entry of N long flows, one
per sender, starting together; DCTCP's traffic without a transport, which it does not
control), DCTCP's RED ramp or a bottleneck schedule, a topology other
than one switch between the senders and the receiver (one bottleneck), senders on links of
different rates (the models' flows are identical), a receiver slower than its link, DCQCN's
`single_counter` rate increase.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from cnsim.fluid import dcqcn, dctcp, qcn

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from cnsim.result import Result

FluidModel = dcqcn.DcqcnModel | qcn.QcnModel
AnyModel = FluidModel | dctcp.DctcpModel
Trajectory = dcqcn.Trajectory | qcn.Trajectory | dctcp.Trajectory
SOURCES = {
    "dcqcn": "DCQCN fluid model (Zhu et al., CoNEXT 2016)",
    "qcn": "QCN fluid model (Alizadeh et al., Allerton 2008)",
    "dctcp": "DCTCP fluid model (Alizadeh et al., SIGMETRICS 2011)",
}
FLUID_JSON = "fluid.json"
FLUID_CSV = "fluid.csv"
FLUID_STYLE: dict[str, Any] = {"color": "black", "ls": "--", "lw": 1.3}
FIXED_POINT_STYLE: dict[str, Any] = {"color": "0.3", "ls": ":", "lw": 1.3}
# Integration steps: the models' defaults, coarser for long runs (at most MAX_STEPS), never more
# than a third of the feedback delay (the lag must span several steps).
MAX_STEPS = 2_000_000


class FluidUnsupported(ValueError):
    """The scenario is not one a fluid model covers; the message names the field and why."""


@dataclass(frozen=True)
class Topology:
    """The single bottleneck the models describe: N senders - one switch - one receiver."""

    senders: list[str]
    switch: str
    receiver: str

    @property
    def port(self) -> str:
        return f"{self.switch}->{self.receiver}"


def covered(scenario: Mapping[str, Any]) -> Topology:
    """The scenario's single bottleneck, or FluidUnsupported naming why the models do not
    cover it."""
    congestion = scenario.get("congestion", {})
    scheme = congestion.get("scheme", "none")
    if scheme not in SOURCES:
        raise FluidUnsupported(
            f"congestion.scheme = {scheme!r}: the fluid models cover DCQCN, QCN and DCTCP only"
        )
    if scheme == "dcqcn" and congestion["dcqcn"].get("counters") == "single_counter":
        raise FluidUnsupported(
            "congestion.dcqcn.counters = 'single_counter': the DCQCN fluid model has the "
            "paper's timer and byte counter ('timer_and_bytes' or 'timer_only')"
        )
    traffic = scenario.get("traffic", [])
    kinds = [entry.get("kind") for entry in traffic]
    open_loop = traffic[0].get("transport", "none") == "none" if traffic else True
    if scheme == "dctcp" and kinds in (["flow_trace"], ["saturate"]) and open_loop:
        raise FluidUnsupported(
            "traffic[0].transport = 'none': DCTCP controls transported flows only; this "
            f"{kinds[0]} entry is open loop"
        )
    if scheme == "dctcp" and kinds == ["flow_trace"]:
        return _single_bottleneck(scenario, *_long_flows(traffic[0]))
    if kinds != ["saturate"]:
        raise FluidUnsupported(
            f"traffic: the fluid models need one 'saturate' entry (N long-lived flows into "
            f"one receiver); this scenario has {kinds or 'none'}"
        )
    entry = traffic[0]
    return _single_bottleneck(scenario, list(entry["hosts"]), str(entry["dst"]))


def _long_flows(entry: Mapping[str, Any]) -> tuple[list[str], str]:
    """The senders and the receiver of a trace of N long flows (DCTCP's runs: one flow per
    sender, one destination, one start), else FluidUnsupported naming why."""
    flows = entry.get("flows", [])
    senders = [str(flow["src"]) for flow in flows]
    destinations = {str(flow["dst"]) for flow in flows}
    starts = {float(flow.get("start_s", 0.0)) for flow in flows}
    if not flows or len(set(senders)) != len(senders) or len(destinations) != 1 or len(starts) > 1:
        raise FluidUnsupported(
            "traffic[0].flows: the DCTCP fluid model needs N long flows, one per sender, into "
            "one receiver, starting together"
        )
    return senders, destinations.pop()


def _single_bottleneck(scenario: Mapping[str, Any], senders: list[str], dst: str) -> Topology:
    links = scenario.get("links", [])
    into_dst = [link for link in links if dst in link["ends"]]
    if len(into_dst) != 1:
        raise FluidUnsupported(
            f"links: not a single bottleneck: the receiver {dst} has {len(into_dst)} links "
            "(the fluid models need one switch between the senders and the receiver)"
        )
    switch = next(end for end in into_dst[0]["ends"] if end != dst)
    rates = set()
    for sender in senders:
        own = [link for link in links if sender in link["ends"]]
        if len(own) != 1 or set(own[0]["ends"]) != {sender, switch}:
            raise FluidUnsupported(
                f"links: not a single bottleneck: sender {sender} is not on one link to "
                f"{switch}, the receiver's switch (the fluid models need N senders - one "
                "switch - one receiver)"
            )
        rates.add(float(own[0]["rate_bps"]))
    if len(rates) > 1:
        raise FluidUnsupported(
            f"links: the senders' links differ in rate ({sorted(rates)}); the fluid models' "
            "flows are identical"
        )
    host: Mapping[str, Any] = next((h for h in scenario.get("hosts", []) if h["name"] == dst), {})
    if host.get("rx_rate_bps") or host.get("rx_schedule"):
        raise FluidUnsupported(
            f"hosts: receiver {dst} has rx_rate_bps/rx_schedule: the bottleneck is the "
            "receiver, not the switch's queue the fluid models describe"
        )
    return Topology(senders=senders, switch=switch, receiver=dst)


def build_model(scenario: Mapping[str, Any]) -> tuple[AnyModel, int]:
    """The scheme's model and N from the resolved scenario (after `covered`)."""
    scheme = scenario["congestion"]["scheme"]
    if scheme == "dcqcn":
        return dcqcn.model_from_scenario(scenario)
    if scheme == "dctcp":
        try:
            return dctcp.model_from_scenario(scenario)
        except ValueError as why:  # a field the model does not cover (RED ramp, schedule)
            raise FluidUnsupported(str(why)) from why
    return qcn.model_from_scenario(scenario)


@dataclass(frozen=True)
class Fluid:
    """The fluid model of one scenario: parameters, fixed point, time course (per flow), and
    the window its numbers are compared over."""

    scheme: str
    topology: Topology
    n_flows: int
    model: AnyModel
    fixed_point: dict[str, float]
    trajectory: Trajectory
    start_s: float
    window_s: tuple[float, float]
    settles: bool
    notes: tuple[str, ...]
    # The fixed point's local stability (None: no local analysis, on DCQCN's RED jump) and
    # how it was found, for the reader.
    stable: bool | None = None
    stability: str = ""

    @property
    def source(self) -> str:
        return SOURCES[self.scheme]

    @property
    def time_s(self) -> npt.NDArray[np.float64]:
        """The time course on the run's clock (the flows start at the entry's start_s)."""
        return self.trajectory.time_s + self.start_s

    def capacity_bps(self) -> npt.NDArray[np.float64]:
        return np.array([self.model.capacity_at(t) for t in self.trajectory.time_s])

    def departures_bps(self) -> npt.NDArray[np.float64]:
        """What leaves the bottleneck: C while the queue holds frames, else what arrives."""
        cap = self.capacity_bps()
        arriving = self.n_flows * self.trajectory.rate_bps
        return np.where(self.trajectory.queue_bytes > 0, cap, np.minimum(arriving, cap))

    def curve(self, metric: str, n_summed: int | None) -> npt.NDArray[np.float64] | None:
        """The model's counterpart of a probe metric (per flow, or summed over `n_summed`
        flows), or None when the model has none."""
        traj = self.trajectory
        per_flow = {"rp_rate_bps": traj.rate_bps, "host_tx_bps": traj.rate_bps}
        if not isinstance(traj, dctcp.Trajectory):  # DCTCP has no target rate
            per_flow["rp_target_bps"] = traj.target_bps
        if metric in per_flow:
            return per_flow[metric] * (n_summed or 1)
        if metric == "rp_feedback" and isinstance(traj, dcqcn.Trajectory):
            return traj.alpha
        if metric == "queue_bytes":
            return traj.queue_bytes
        if metric in ("host_rx_bps", "port_tx_bps"):
            return self.departures_bps()
        return None

    def window_means(self) -> dict[str, float]:
        """The time course's means over the comparison window."""
        start, end = (t - self.start_s for t in self.window_s)
        tail = self.trajectory.window(start, end)
        keep = (self.trajectory.time_s >= start) & (self.trajectory.time_s <= end)
        return {
            "queue_mean_bytes": float(np.mean(tail.queue_bytes)),
            "queue_std_bytes": float(np.std(tail.queue_bytes)),
            "rate_mean_bps": float(np.mean(tail.rate_bps)),
            "throughput_bps": float(np.mean(self.departures_bps()[keep])),
        }

    def comparison(self, result: Result) -> list[dict[str, Any]]:
        """Rows (quantity, packet run, fluid over the window, fluid fixed point) over
        `window_s`: the packet numbers from the run's series, the same window as the fluid."""
        packet = packet_means(result, self.topology, self.window_s)
        fluid = self.window_means()
        fp = self.fixed_point
        return [
            _row(
                "queue mean",
                "bytes",
                packet["queue_mean_bytes"],
                fluid["queue_mean_bytes"],
                fp["queue_bytes"],
            ),
            _row(
                "queue std",
                "bytes",
                packet["queue_std_bytes"],
                fluid["queue_std_bytes"],
                math.nan if self.scheme == "dctcp" else 0.0,  # DCTCP: a limit cycle, no point
            ),
            _row(
                "rate per flow (CR)",
                "bps",
                packet["rate_mean_bps"],
                fluid["rate_mean_bps"],
                fp["rate_bps"],
            ),
            _row(
                "bottleneck throughput",
                "bps",
                packet["throughput_bps"],
                fluid["throughput_bps"],
                self.model.capacity_at(self.window_s[1]),
            ),
        ]

    def summary(self, result: Result | None = None) -> dict[str, Any]:
        """What `fluid.json` holds: the model, its fixed point, whether it settles, and the
        comparison with the run when given."""
        out: dict[str, Any] = {
            "scheme": self.scheme,
            "source": self.source,
            "n_flows": self.n_flows,
            "bottleneck_port": self.topology.port,
            "model": asdict(self.model),
            "fixed_point": self.fixed_point,
            "settles": self.settles,
            "stable": self.stable,
            "stability": self.stability,
            "window_s": list(self.window_s),
            "notes": list(self.notes),
        }
        if result is not None:
            out["comparison"] = self.comparison(result)
        return out

    def draw(self, fig: Figure, metric: str, columns: Sequence[str], summed: bool) -> bool:
        """The time course (dashed) on every panel of a packet run's figure of `metric` over
        the entities `columns` (summed or per entity); the fixed point dotted on a queue or
        alpha figure. False when the model has no counterpart of what the figure shows."""
        what = self._counterpart(metric, list(columns), summed)
        if what is None:
            return False
        values, label = what
        from cnsim.fluid.show import panels, scales, second_legend

        fixed = self._fixed_level(metric)
        for ax in panels(fig):
            t_mult, v_div = scales(ax, metric)
            ylim = ax.get_ylim()
            handles = ax.plot(self.time_s * t_mult, values / v_div, label=label, **FLUID_STYLE)
            if fixed is not None:
                level, fixed_label = fixed
                handles.append(ax.axhline(level / v_div, label=fixed_label, **FIXED_POINT_STYLE))
            ax.set_ylim(ylim)  # the packet run's scale; the model is clipped to it
            second_legend(ax, handles)
        return True

    def _counterpart(
        self, metric: str, columns: list[str], summed: bool
    ) -> tuple[npt.NDArray[np.float64], str] | None:
        senders = [c for c in columns if c in self.topology.senders]
        if metric == "queue_bytes":
            ok = not summed and columns == [self.topology.port]
        elif metric in ("host_rx_bps", "port_tx_bps"):
            ok = columns == [
                self.topology.receiver if metric == "host_rx_bps" else self.topology.port
            ]
        elif metric == "host_tx_bps":
            ok = bool(senders) and len(senders) == len(columns)
        else:
            ok = bool(columns)
        if not ok:
            return None
        n_summed = (len(senders) or self.n_flows) if summed else None
        values = self.curve(metric, n_summed)
        if values is None:
            return None
        per = f"sum of {n_summed} flows" if n_summed else "per flow"
        if metric in ("queue_bytes", "host_rx_bps", "port_tx_bps", "rp_feedback"):
            per = "alpha" if metric == "rp_feedback" else "bottleneck"
        return values, f"fluid model, {per} ({self.scheme.upper()})"

    def _fixed_level(self, metric: str) -> tuple[float, str] | None:
        if metric == "queue_bytes":
            q = self.fixed_point["queue_bytes"]
            if not math.isfinite(q):
                return None
            return q, f"fluid fixed point {q / 1e3:.1f} KB"
        if metric == "rp_feedback" and "alpha" in self.fixed_point:
            return self.fixed_point[
                "alpha"
            ], f"fluid fixed point alpha {self.fixed_point['alpha']:.3f}"
        return None

    def time_course_table(self) -> dict[str, npt.NDArray[np.float64]]:
        """Columns of `fluid.csv`: time (run clock) and every quantity of the time course."""
        traj = self.trajectory
        table = {"time_s": self.time_s}
        for name in traj.__dataclass_fields__:
            if name != "time_s":
                table[name] = getattr(traj, name)
        table["departures_bps"] = self.departures_bps()
        return table


def _row(name: str, unit: str, packet: float, fluid: float, fixed: float) -> dict[str, Any]:
    return {"quantity": name, "unit": unit, "packet": packet, "fluid": fluid, "fixed_point": fixed}


def fluid_of(scenario: Mapping[str, Any], *, duration_s: float | None = None) -> Fluid:
    """The fluid model of a resolved scenario (a dict), integrated over the run's duration
    (or `duration_s`) from the start the packet run has: every flow at line rate."""
    topology = covered(scenario)
    model, n_flows = build_model(scenario)
    if isinstance(model, dctcp.DctcpModel):
        return _dctcp_fluid(scenario, topology, model, n_flows, duration_s)
    start_s = float(scenario["traffic"][0].get("start_s", 0.0))
    run_s = float(scenario.get("duration_s", 0.0))
    duration = duration_s if duration_s is not None else run_s - start_s
    if not duration > 0:
        raise FluidUnsupported("duration_s: the flows start at or after the end of the run")
    window = comparison_window(scenario, model, start_s, start_s + duration)
    if isinstance(model, dcqcn.DcqcnModel):
        step = _step(0.25e-6, duration, model.feedback_delay_s)
        traj: dcqcn.Trajectory | qcn.Trajectory = dcqcn.simulate(
            n_flows, model, duration_s=duration, step_s=step, sample_s=max(5e-6, step)
        )
    else:
        step = _step(0.5e-6, duration, model.feedback_delay_s)
        traj = qcn.simulate(
            n_flows, model, duration_s=duration, step_s=step, sample_s=max(duration / 20_000, step)
        )
    at_end = replace(model, capacity_bps=model.capacity_at(window[1]), capacity_schedule=())
    stable, stability = local_stability(n_flows, at_end)
    return Fluid(
        scheme=scenario["congestion"]["scheme"],
        topology=topology,
        n_flows=n_flows,
        model=model,
        fixed_point=_fixed_point(n_flows, at_end),
        trajectory=traj,
        start_s=start_s,
        window_s=window,
        settles=_settles(traj, n_flows, at_end),
        notes=tuple(_notes(scenario, model)),
        stable=stable,
        stability=stability,
    )


def _dctcp_fluid(
    scenario: Mapping[str, Any],
    topology: Topology,
    model: dctcp.DctcpModel,
    n_flows: int,
    duration_s: float | None,
) -> Fluid:
    """DCTCP's model beside a run of N long flows: no fixed point but a limit cycle, so the
    time course starts at the SIGCOMM 2010 operating point (not the run's slow start) and the
    title gives the limit cycle's amplitude and period over the comparison window."""
    entry = scenario["traffic"][0]
    first = entry["flows"][0] if entry.get("flows") else entry  # a trace's, or saturate's
    start_s = float(first.get("start_s", 0.0))
    run_s = float(scenario.get("duration_s", 0.0))
    duration = duration_s if duration_s is not None else run_s - start_s
    if not duration > 0:
        raise FluidUnsupported("duration_s: the flows start at or after the end of the run")
    window = comparison_window(scenario, model, start_s, start_s + duration)
    step = max(model.r_star_s / 400, duration / MAX_STEPS)
    traj = dctcp.simulate(
        n_flows, model, duration_s=duration, step_s=step, sample_s=max(1e-6, step)
    )
    tail = traj.window(window[0] - start_s, window[1] - start_s)
    saw = dctcp.sawtooth(tail.time_s, tail.queue_bytes / model.packet_bytes)
    return Fluid(
        scheme="dctcp",
        topology=topology,
        n_flows=n_flows,
        model=model,
        fixed_point={"queue_bytes": math.nan, "rate_bps": model.capacity_bps / n_flows},
        trajectory=traj,
        start_s=start_s,
        window_s=window,
        settles=False,
        notes=(
            "the model starts at the sawtooth's operating point (no slow start), its flows "
            "identical and in step, each cut spread over the round trips the marks arrive "
            "(docs/dctcp.md)",
        ),
        stable=None,
        stability=(
            f"a limit cycle ({saw.amplitude_packets:.1f} packets peak to trough, every "
            f"{saw.period_s * 1e6:.3g} us)"
        ),
    )


def local_stability(n_flows: int, model: FluidModel) -> tuple[bool | None, str]:
    """Is the fixed point stable (a kick away from it dies out)? With a phrase for the title:
    DCQCN's decay per period of its oscillation (`dcqcn.oscillation`), QCN's kick test
    (`qcn.is_stable`); None on DCQCN's RED jump at Kmax, where no local analysis applies."""
    if isinstance(model, qcn.QcnModel):
        stable = qcn.is_stable(n_flows, model)
        return stable, f"fixed point {'stable' if stable else 'unstable'}"
    if not math.isfinite(dcqcn.fixed_point(n_flows, model)["queue_bytes"]):
        return None, "fixed point on RED's jump at Kmax"
    mode = dcqcn.oscillation(n_flows, model)
    word = "stable" if mode.stable else "unstable"
    if math.isnan(mode.period_s):
        return mode.stable, f"fixed point {word}"
    period_ms = mode.period_s * 1e3
    return mode.stable, (
        f"fixed point {word} (swing x{mode.decay_per_period:.2f} per {period_ms:.2g} ms)"
    )


def _step(default_s: float, duration_s: float, delay_s: float) -> float:
    """The models' default step, coarser when the run is long, at most a third of the delay."""
    return max(default_s, min(duration_s / MAX_STEPS, delay_s / 3))


def _fixed_point(n_flows: int, model: FluidModel) -> dict[str, float]:
    if isinstance(model, dcqcn.DcqcnModel):
        return dcqcn.fixed_point(n_flows, model)
    return qcn.fixed_point(n_flows, model)


def _settles(traj: dcqcn.Trajectory | qcn.Trajectory, n_flows: int, model: FluidModel) -> bool:
    if isinstance(traj, dcqcn.Trajectory):
        return dcqcn.settles(traj)
    assert isinstance(model, qcn.QcnModel)
    return qcn.settles(traj, n_flows, model)


def comparison_window(
    scenario: Mapping[str, Any], model: AnyModel, start_s: float, end_s: float
) -> tuple[float, float]:
    """Where packet and model are compared: `[report.steady]`'s window when the scenario has
    one (inside the run), else the second half of the last stretch of constant capacity."""
    steady = scenario.get("report", {}).get("steady")
    if steady and float(steady["start_s"]) < end_s:
        return float(steady["start_s"]), min(float(steady.get("end_s") or end_s), end_s)
    changes = [at for at, _ in model.capacity_schedule if start_s < at < end_s]
    stretch = max(changes, default=start_s)
    return stretch + 0.5 * (end_s - stretch), end_s


def _notes(scenario: Mapping[str, Any], model: FluidModel) -> list[str]:
    """What the packet run has and the model leaves out, for the reader of the comparison."""
    notes = ["the model has no hyper increase, no per-frame randomness"]
    if isinstance(model, qcn.QcnModel):
        notes[0] = "the model has no RP timer (so no hyper increase), no sampling jitter"
    switch_pause = any(s.get("pause") for s in scenario.get("switches", []))
    if switch_pause or scenario.get("pfc"):
        notes.append("the run has PAUSE/PFC, the model none")
    return notes


def packet_means(
    result: Result, topology: Topology, window_s: tuple[float, float]
) -> dict[str, float]:
    """The packet run's queue (mean, std), mean CR and bottleneck throughput over the window,
    from its time series (NaN for a metric the run did not probe)."""

    def window(metric: str, entities: list[str] | None) -> npt.NDArray[np.float64]:
        if metric not in result.metric_names:
            return np.array([math.nan])
        table = result.series(metric, entities)
        times = table.index.to_numpy(dtype=float)
        keep = (times >= window_s[0]) & (times <= window_s[1])
        return table.to_numpy(dtype=float)[keep]

    queue = window("queue_bytes", [topology.port])
    rates = window("rp_rate_bps", None)
    tx = window("port_tx_bps", [topology.port])
    if np.isnan(tx).all():
        tx = window("host_rx_bps", [topology.receiver])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a metric all NaN (DCTCP's rates)
        return {
            "queue_mean_bytes": float(np.nanmean(queue)) if queue.size else math.nan,
            "queue_std_bytes": float(np.nanstd(queue)) if queue.size else math.nan,
            "rate_mean_bps": float(np.nanmean(rates)) if rates.size else math.nan,
            "throughput_bps": float(np.nanmean(tx)) if tx.size else math.nan,
        }
