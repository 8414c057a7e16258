"""Figures of a flow workload: the FCT distribution, FCT and slowdown by flow size, and the
slowdown percentiles (p50, p95, p99) per flow-size bucket with one line per run or sweep point,
the figure data-center congestion-control papers compare schemes with (`cnsim.flow_sizes`).

Slowdown is FCT over the flow's FCT alone on an idle network (`ideal_fct_s`, computed by the
core from the path's rates and latencies), the measure data-center transport studies report.
A run's figure list (`run.figure_names`) includes these when the run completed any flow.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cnsim.flow_sizes import PERCENTILES, size_edges, slowdown_by_size, summary_edges
from cnsim.plots.style import legend, line_style, new_figure

if TYPE_CHECKING:
    from cnsim.result import Result
    from cnsim.sweeps.result import SweepResult

SIZE_BINS_PER_DECADE = 2


def flow_figure_names(result: Result) -> list[str]:
    """`fct_cdf`, `fct_by_size` and `fct_slowdown_by_size` when the run completed any flow."""
    return list(FLOW_FIGURES) if bool(result.flows["completed"].astype(bool).any()) else []


def flow_figure(result: Result, name: str) -> Figure:
    """One of `FLOW_FIGURES`, drawn from the run's completed flows."""
    done = result.flows[result.flows["completed"].astype(bool)]
    return FLOW_FIGURES[name](result, done)


def fct_cdf_figure(result: Result, done: pd.DataFrame) -> Figure:
    fig, ax = new_figure()
    fct_us = np.sort(done["fct_s"].to_numpy()) * 1e6
    ax.step(fct_us, np.arange(1, len(fct_us) + 1) / len(fct_us), where="post")
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (us)")
    ax.set_ylabel("fraction of completed flows")
    started = len(result.flows)
    ax.set_title(f"FCT distribution ({len(done):,} of {started:,} flows completed)")
    return fig


def size_bins(sizes: pd.Series) -> pd.Series:
    """Log-spaced size bins (two per decade), as intervals of bytes."""
    lo = np.floor(np.log10(sizes.min()) * SIZE_BINS_PER_DECADE) / SIZE_BINS_PER_DECADE
    hi = np.ceil(np.log10(sizes.max()) * SIZE_BINS_PER_DECADE) / SIZE_BINS_PER_DECADE
    step = 1 / SIZE_BINS_PER_DECADE
    edges = [float(10**e) for e in np.arange(lo, hi + 1e-9 + step, step)]
    bins: pd.Series = pd.cut(sizes, edges, include_lowest=True)
    return bins


def fct_by_size(done: pd.DataFrame) -> pd.DataFrame:
    """Per size bin: flows, mean and p99 FCT, mean slowdown."""
    grouped = done.groupby(size_bins(done["size_bytes"].astype(float)), observed=True)
    return pd.DataFrame(
        {
            "flows": grouped.size(),
            "fct_mean_s": grouped["fct_s"].mean(),
            "fct_p99_s": grouped["fct_s"].quantile(0.99),
            "slowdown_mean": grouped["slowdown"].mean(),
        }
    )


def fct_by_size_figure(result: Result, done: pd.DataFrame) -> Figure:
    table = fct_by_size(done)
    labels = [f"{_size(iv.left)}-{_size(iv.right)}" for iv in table.index]
    fig = Figure(figsize=(8.0, 6.0), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    x = np.arange(len(table))
    top.plot(x, table["fct_mean_s"] * 1e6, "o-", label="mean")
    top.plot(x, table["fct_p99_s"] * 1e6, "s--", label="99th percentile")
    top.set_yscale("log")
    top.set_ylabel("FCT (us)")
    top.legend(fontsize="small")
    top.set_title("Flow completion time by flow size")
    bottom.bar(x, table["slowdown_mean"], width=0.6)
    bottom.axhline(1.0, color="0.3", lw=0.8)
    bottom.set_ylabel("mean slowdown (FCT / ideal)")
    bottom.set_xticks(x, labels, rotation=30, ha="right", fontsize="small")
    bottom.set_xlabel("flow size (bin; the number above each bar is its flow count)")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    for xi, n, top_y in zip(x, table["flows"], table["slowdown_mean"], strict=True):
        bottom.annotate(
            f"{n:,}",
            (xi, top_y),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            fontsize=7,
            color="0.3",
        )
    return fig


def fct_slowdown_by_size_figure(result: Result, done: pd.DataFrame) -> Figure:
    """A run's slowdown percentiles per equal-count size bucket, one line each."""
    return slowdown_by_size_figure({result.name: result.fct_slowdown_by_size()})


def slowdown_by_size_figure(tables: Mapping[str, pd.DataFrame], title: str = "") -> Figure:
    """Slowdown p50 / p95 / p99 against flow size (each bucket drawn at its upper edge), log
    axes. One table: one panel, a line per percentile. Several (`label: table`, the same
    buckets: runs of different schemes, sweep points): a panel per percentile, a line per
    label."""
    drawn = {k: t[t["flows"] > 0] for k, t in tables.items()}
    if len(drawn) == 1:
        ((label, table),) = drawn.items()
        fig, ax = new_figure()
        for i, p in enumerate(PERCENTILES):
            ax.plot(drawn_at(table), table[f"slowdown_p{p}"], "os^"[i] + "-", label=f"p{p}")
        _slowdown_axes(ax, f"FCT slowdown by flow size ({_counts(tables)})")
        ax.legend(fontsize="small")
        return fig
    fig = Figure(figsize=(13.0, 4.5), layout="constrained")
    axes = fig.subplots(1, len(PERCENTILES), sharey=True)
    for ax, p in zip(axes, PERCENTILES, strict=True):
        for i, (label, table) in enumerate(drawn.items()):
            ax.plot(
                drawn_at(table),
                table[f"slowdown_p{p}"],
                line_style(i),
                marker="o",
                markersize=3,
                label=label,
            )
        _slowdown_axes(ax, f"p{p}")
    for ax in axes[1:]:
        ax.set_ylabel("")
    legend(axes[-1], len(drawn), None)
    fig.suptitle(title or f"FCT slowdown by flow size ({_counts(tables)})")
    return fig


def compare_slowdown_by_size(
    results: Mapping[str, Result] | Sequence[Result],
    edges: Sequence[float] | None = None,
    buckets: int = 10,
) -> Figure:
    """Runs side by side (`label: Result`, or Results labelled by their scenario's name), on
    the same buckets: `edges` as `Result.fct_slowdown_by_size` takes them (k edges, k + 1
    buckets), or equal-count buckets of all their flows' sizes together."""
    named = results if isinstance(results, Mapping) else {r.name: r for r in results}
    if edges is not None:
        cuts = summary_edges(edges)
    else:
        cuts = list(size_edges(pd.concat([r.flows["size_bytes"] for r in named.values()]), buckets))
    return slowdown_by_size_figure({k: slowdown_by_size(r.flows, cuts) for k, r in named.items()})


def sweep_slowdown_by_size_figure(
    sweep: SweepResult, edges: Sequence[float] | None = None, buckets: int = 10
) -> Figure:
    """A sweep's points (their replications' flows pooled), one line per point, on the same
    buckets (`SweepResult.fct_slowdown_by_size`; the runs' flows are kept with keep="full")."""
    return sweep_slowdown_table_figure(sweep, sweep.fct_slowdown_by_size(edges, buckets))


def sweep_slowdown_table_figure(sweep: SweepResult, table: pd.DataFrame) -> Figure:
    """The figure of a `SweepResult.fct_slowdown_by_size` table, one line per point."""
    tables = {
        str(label): group.drop(columns="label").reset_index(drop=True)
        for label, group in table.groupby("label", sort=False)
    }
    return slowdown_by_size_figure(tables, f"FCT slowdown by flow size: {sweep.spec.name}")


def drawn_at(table: pd.DataFrame) -> pd.Series:
    """Where each bucket is drawn: its upper edge; the open last bucket of `edges` (above the
    last edge, no upper edge) a decade past its lower edge, so it is not lost off the axis."""
    hi = table["size_hi_bytes"]
    return hi.where(np.isfinite(hi), table["size_lo_bytes"] * 10.0)


def _slowdown_axes(ax: Axes, title: str) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axhline(1.0, color="0.3", lw=0.8)
    ax.set_xlabel("flow size (bytes, bucket upper edge)")
    ax.set_ylabel("FCT slowdown (FCT / ideal)")
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")


def _counts(tables: Mapping[str, pd.DataFrame]) -> str:
    done = sum(int(t["flows"].sum()) for t in tables.values())
    started = sum(int(t["started"].sum()) for t in tables.values())
    return f"{done:,} of {started:,} flows completed"


def _size(n_bytes: float) -> str:
    for scale, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "KB")):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{n_bytes:.3g} B"


FLOW_FIGURES: dict[str, Callable[[Result, pd.DataFrame], Figure]] = {
    "fct_cdf": fct_cdf_figure,
    "fct_by_size": fct_by_size_figure,
    "fct_slowdown_by_size": fct_slowdown_by_size_figure,
}
