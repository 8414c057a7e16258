"""Bars for many entities (a fabric's thousands of hosts or ports): one bar per entity with its
value printed and its name under it takes most of a minute to draw at 6,144 hosts and shows
nothing readable, so above `MANY_BARS` entities a bar figure draws their values ranked, largest
first, as one filled step line, with the minimum, median and maximum named. Figures of fewer
entities are drawn as before (`plots/run.py`).
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cnsim.plots.style import new_figure

# Up to this many entities a bar figure keeps one bar each.
MANY_BARS = 64


def ranked_figure(names: list[str], values: np.ndarray, per: str) -> tuple[Figure, Axes]:
    """`values` (already in the axis unit) of `names`, ranked, largest first; returns the
    figure and its axes for the caller's labels and title."""
    order = np.argsort(-values, kind="stable")
    ranked = values[order]
    fig, ax = new_figure()
    rank = np.arange(1, len(ranked) + 1)
    ax.fill_between(rank, ranked, step="mid", alpha=0.35, color="tab:blue", lw=0)
    ax.step(rank, ranked, where="mid", color="tab:blue", lw=1.0)
    for label, i, side in (
        ("max", 0, "left"),
        ("median", len(ranked) // 2, "left"),
        ("min", len(ranked) - 1, "right"),  # at the right edge: its text to the left
    ):
        ax.annotate(
            f"{label} {ranked[i]:.3g}: {names[order[i]]}",
            (rank[i], ranked[i]),
            xytext=(4 if side == "left" else -4, 6),
            textcoords="offset points",
            ha=side,
            fontsize="small",
            color="0.2",
        )
        ax.plot(rank[i], ranked[i], "o", color="tab:red", ms=4)
    ax.set_xlim(0, len(ranked) + 1)
    ax.set_xlabel(f"{per}s, ranked by value ({len(ranked):,})")
    return fig, ax
