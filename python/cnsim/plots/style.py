"""The look every cnsim figure shares: size and resolution, axis names in the seeds' words,
units chosen from the unit in a metric's name, legends, the provenance stamp, file names.

The run, flow and sweep figures draw with these public names only, so a change of style is
made here once. Figures are `matplotlib.figure.Figure` objects rendered by Agg, never pyplot:
no global state, no GUI backend, safe in threads and in a user's notebook session.
"""

from __future__ import annotations

import re

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

DPI = 120
FIGSIZE = (8.0, 4.5)
LEGEND_INSIDE_MAX = 6

# Axis names in the seeds' words ("accepted throughput", "egress throughput", "occupancy").
AXIS_NAMES = {
    "host_offered_bps": "offered load",
    "host_tx_bps": "accepted throughput",
    "host_rx_bps": "delivered throughput",
    "port_tx_bps": "egress throughput",
    "queue_bytes": "queue length",
    "switch_memory_bytes": "switch memory occupancy",
    "rx_queue_bytes": "receive buffer",
    "nic_queue_bytes": "NIC transmit queues",
    "paused_frac": "time paused",
    "pfc_paused_frac": "time paused (PFC class)",
    "class_queue_bytes": "class queue length",
    "dropped_frames": "dropped frames (cumulative)",
    "rp_rate_bps": "rate limiter rate",
    "rp_target_bps": "rate limiter target rate",
    "cp_fb": "feedback Fb",
    "cp_messages": "congestion messages (cumulative)",
    "rp_feedback": "feedback held by the rate limiter",
    "throughput_bps": "throughput",
    "peak_queue_bytes": "peak queue",
    "mean_queue_bytes": "mean queue",
    "utilisation": "utilisation",
}


# ---------------------------------------------------------------- units and labels


def value_unit(metric: str, max_abs: float) -> tuple[float, str]:
    """Divisor and unit label for a metric, from the unit in its name (style: units in names)."""
    if metric.endswith("_bps"):
        return (1e9, "Gb/s") if max_abs >= 1e8 or max_abs == 0 else (1e6, "Mb/s")
    if metric.endswith("_bytes"):
        return (1e6, "MB") if max_abs >= 1e7 else (1e3, "KB")
    if metric.endswith("_frac"):
        return 1.0, "fraction of interval"
    if metric.endswith("_frames"):
        return 1.0, "frames"
    if metric.endswith("_messages"):
        return 1.0, "messages"
    return 1.0, ""


def time_unit(span_s: float) -> tuple[float, str]:
    """Multiplier and label for a time axis: ms up to one second of span, s beyond."""
    return (1e3, "ms") if span_s <= 1.0 else (1.0, "s")


def axis_label(metric: str, unit: str) -> str:
    """Y axis label: the quantity in the seeds' words and its unit, unless the words already
    say it ("dropped frames (cumulative)" needs no "(frames)")."""
    name = AXIS_NAMES.get(metric, metric)
    return f"{name} ({unit})" if unit and unit not in name else name


# ---------------------------------------------------------------- figures, lines, legends


def new_figure() -> tuple[Figure, Axes]:
    """A figure of the standard size with one gridded axes."""
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    ax.grid(alpha=0.3)
    return fig, ax


def line_style(index: int) -> str:
    """Solid for the first ten lines, then dashed, dotted: the colour cycle has ten colours."""
    return ("-", "--", ":", "-.")[index // 10 % 4]


def bar_width(n_bars: int) -> float:
    """Narrower bars when there are few, so one bar does not fill the axes."""
    return 0.8 if n_bars > 3 else 0.5


def legend(ax: Axes, n_lines: int, title: str | None) -> None:
    """Legend inside for a few lines, outside on the right (in columns) for many."""
    if n_lines <= LEGEND_INSIDE_MAX:
        ax.legend(fontsize="small", title=title, title_fontsize="small")
        return
    ax.legend(
        fontsize="x-small",
        title=title,
        title_fontsize="x-small",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        ncols=1 + (n_lines - 1) // 16,
    )


def stamp(fig: Figure, text: str) -> None:
    """Provenance (what ran, which seed) in small grey type in a strip reserved at the bottom."""
    engine = fig.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine):  # room for the stamp below the axes
        engine.set(rect=(0.0, 0.03, 1.0, 0.97))
    fig.text(0.995, 0.005, text, ha="right", va="bottom", fontsize=7, color="0.5")


def file_stem(name: str) -> str:
    """A plot name made safe as a file name (the name comes from user-written TOML)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "plot"
