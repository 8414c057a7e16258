"""The look every cnsim figure shares: size and resolution, axis names in the seeds' words,
units chosen from the unit in a metric's name, legends, the provenance stamp, file names.

The run, flow and sweep figures draw with these public names only, so a change of style is
made here once. Figures are `matplotlib.figure.Figure` objects rendered by Agg, never pyplot:
no global state, no GUI backend, safe in threads and in a user's notebook session.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.textpath import TextPath

from cnsim.outputs import file_stem as file_stem  # the run, sweep and fluid figures' files

if TYPE_CHECKING:
    import pandas as pd

    from cnsim.references import Reference

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
    "pfc_paused_frac": "class time paused by PFC",
    "class_queue_bytes": "class queue length",
    "dropped_frames": "dropped frames (cumulative)",
    "rp_rate_bps": "rate limiter rate",
    "rp_target_bps": "rate limiter target rate",
    "cp_fb": "feedback Fb",
    "cp_messages": "congestion messages (cumulative)",
    "rp_feedback": "feedback held by the rate limiter",
    "cc_window_bytes": "congestion window",
    "cc_rate_bps": "sender pacing rate",
    "flow_rx_bps": "flow delivered rate",
    "throughput_bps": "throughput",
    "peak_queue_bytes": "peak queue",
    "mean_queue_bytes": "mean queue",
    "utilisation": "utilisation",
}

# What a metric's words do not say by themselves, in one line under the figure.
AXIS_NOTES = {
    "host_offered_bps": "offered load: data the host's sources generated",
    "host_tx_bps": "accepted throughput: data the host's NIC transmitted, i.e. what the network "
    "accepted from it (offered load less what waits or is dropped at the source)",
    "host_rx_bps": "delivered throughput: data delivered to the host's receiver",
    "port_tx_bps": "egress throughput: data sent on the switch port",
    "paused_frac": "time paused: share of each probe interval the port was held by PAUSE",
    "pfc_paused_frac": "class time paused: share of each probe interval the class was held by "
    "PFC from the peer",
    "rp_rate_bps": "rate limiter rate: the current rate (CR) of each reaction point",
}
REFERENCE_COLOURS = ("0.25", "tab:brown", "tab:olive", "tab:cyan", "tab:pink")


# ---------------------------------------------------------------- units and labels


def value_unit(metric: str, max_abs: float) -> tuple[float, str]:
    """Divisor and unit label for a metric, from the unit in its name (style: units in names)."""
    if metric.endswith("_bps"):
        return (1e9, "Gb/s") if max_abs >= 1e8 or max_abs == 0 else (1e6, "Mb/s")
    if metric.endswith("_bytes"):
        return (1e6, "MB") if max_abs >= 1e7 else (1e3, "KB")
    if metric.endswith("_frac"):
        return 0.01, "%"
    if metric.endswith("_s"):
        for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
            if max_abs >= scale:
                return scale, unit
        return (1e-9, "ns") if max_abs > 0 else (1.0, "s")
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


STRIP_POINTS = 10.0  # height of one line of small type in the strip below the axes
NOTE_SIZE = 6.5  # points: the notes under a figure
NOTE_MARGIN = 0.01  # of the figure's width, left and right of the notes
# Agg hints small type to whole pixels, which widens it: up to 6 % over the outline's width at
# 6.5 pt (100 dpi, a notebook's; 120 dpi, the PNGs'). Notes are measured with room for that.
HINTING_SLACK = 1.1


def stamp(fig: Figure, text: str) -> None:
    """Provenance (what ran, which seed) in small grey type in a strip reserved at the bottom."""
    _reserve_bottom(fig, 1)
    fig.text(0.995, 0.005, text, ha="right", va="bottom", fontsize=7, color="0.5")


def _reserve_bottom(fig: Figure, lines: int) -> float:
    """Keep `lines` lines of small type free below the axes; returns one line's height as a
    fraction of the figure."""
    line = STRIP_POINTS / (fig.get_figheight() * 72.0)
    engine = fig.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine):  # room for the strip below the axes
        bottom = max(engine.get()["rect"][1], lines * line)
        engine.set(rect=(0.0, bottom, 1.0, 1.0 - bottom))
    return line


def explain(
    fig: Figure, metric: str, probe_interval_s: float | None = None, caveat: str | None = None
) -> None:
    """The metric's note (`AXIS_NOTES`) in small grey type at the bottom left, beside the
    stamp; for a rate or share per probe interval, the interval too; a `caveat` about what the
    figure cannot show (under-sampling) on a line above it."""
    note = AXIS_NOTES.get(metric)
    if note is not None and probe_interval_s and metric.endswith(("_bps", "_frac")):
        scale, unit = value_unit("interval_s", float(probe_interval_s))
        note += f" (per probe interval of {probe_interval_s / scale:g} {unit})"
    # Each note wrapped to the figure's width: a line longer than the figure is cut at its edges.
    width_pt = (1.0 - 2 * NOTE_MARGIN) * fig.get_figwidth() * 72.0
    lines = [part for text in (caveat, note) if text for part in wrap(text, width_pt, NOTE_SIZE)]
    if not lines:
        return
    line = _reserve_bottom(fig, 1 + len(lines))  # the notes above the stamp's line
    for index, text in enumerate(reversed(lines)):
        y = (1 + index) * line + 0.003
        fig.text(NOTE_MARGIN, y, text, ha="left", va="bottom", fontsize=NOTE_SIZE, color="0.4")


def wrap(text: str, width_pt: float, size: float) -> list[str]:
    """`text` in lines no wider than `width_pt` points at font size `size`, broken between
    words (a single word wider than that stays whole)."""
    lines: list[str] = []
    for word in text.split():
        longer = f"{lines[-1]} {word}" if lines else word
        if lines and _text_width(longer, size) <= width_pt:
            lines[-1] = longer
        else:
            lines.append(word)
    return lines


def _text_width(text: str, size: float) -> float:
    """Width in points of `text` in the default font at `size` points, as drawn at any dpi."""
    return HINTING_SLACK * float(TextPath((0, 0), text, size=size).get_extents().width)


def reference_lines(
    ax: Axes, refs: Sequence[Reference], t_scale: float, v_scale: float, t_end_s: float
) -> None:
    """Dashed reference lines (a threshold, a fair share), named in the legend (a label on the
    line would sit on the data it is compared with); a reference that changes over time is
    drawn as steps up to `t_end_s`."""
    for index, ref in enumerate(refs):
        style = {
            "ls": "--",
            "lw": 1.0,
            "color": REFERENCE_COLOURS[index % len(REFERENCE_COLOURS)],
            "zorder": 1.5,
            "label": ref.label,
        }
        if ref.constant:
            ax.axhline(ref.values[0] / v_scale, **style)  # type: ignore[arg-type]
        else:
            times = [t * t_scale for t in (*ref.times_s, t_end_s)]
            values = [v / v_scale for v in (*ref.values, ref.values[-1])]
            ax.step(times, values, where="post", **style)  # type: ignore[arg-type]


def drop_all_zero(table: pd.DataFrame, *, explicit: bool) -> tuple[pd.DataFrame, int]:
    """Without explicit entities, hide series that never leave zero (idle ports clutter);
    returns the table shown and how many were hidden."""
    if explicit:
        return table, 0
    keep = table.columns[(table.fillna(0) != 0).any(axis=0)]
    if len(keep) == 0:
        return table, 0
    return table[keep], table.shape[1] - len(keep)
