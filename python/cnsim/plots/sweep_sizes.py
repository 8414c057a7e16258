"""A sweep figure against the flow-size bucket: `x = "size_bucket"` in [[sweep.plots]].

The y path holds `*` where the bucket key goes (`flows.slowdown_by_size.*.p99`, the summary's
table from `[report] slowdown_size_edges_bytes`); every collected metric that matches it with
a key b0, b1, ... is one x position, in bucket order, labelled by the scenario's edges
("<= 10 KB", "10 KB-100 KB", ..., "> 1 MB"). One line per combination of the other swept
parameters, one panel per value of `panel`, as the other sweep figures: the HPCC paper's
FCT-slowdown-by-size figure (SIGCOMM 2019, Fig. 11), one line per scheme.
"""

from __future__ import annotations

import itertools
import math
import re
import tomllib
from typing import TYPE_CHECKING, Any

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from cnsim.plots.style import FIGSIZE
from cnsim.readout import bytes_text

if TYPE_CHECKING:
    from cnsim.sweeps.result import SweepResult
    from cnsim.sweeps.spec import PlotSpec

SIZE_BUCKET = "size_bucket"


def bucket_metrics(template: str, metrics: list[str]) -> list[tuple[int, str]]:
    """(bucket index, metric) of the metrics `template` (one `*`) matches with b0, b1, ...,
    in bucket order."""
    head, _, tail = template.partition("*")
    pattern = re.compile(re.escape(head) + r"b(\d+)" + re.escape(tail) + "$")
    found = [(int(m.group(1)), name) for name in metrics if (m := pattern.match(name))]
    return sorted(found)


def bucket_labels(base_toml: str, count: int) -> list[str]:
    """Words for buckets 0..count-1 from the base scenario's edges; b0, b1, ... without them."""
    try:
        report = tomllib.loads(base_toml).get("report", {})
    except tomllib.TOMLDecodeError:
        report = {}
    edges = report.get("slowdown_size_edges_bytes", [])
    if not all(isinstance(e, int | float) for e in edges) or len(edges) + 1 < count:
        return [f"b{i}" for i in range(count)]
    labels = [f"<= {bytes_text(edges[0])}"] if edges else []
    labels += [f"{bytes_text(a)}-{bytes_text(b)}" for a, b in itertools.pairwise(edges)]
    labels += [f"> {bytes_text(edges[-1])}"] if edges else []
    return labels[:count]


def size_bucket_figure(result: SweepResult, spec: PlotSpec) -> Figure | None:
    """The figure, or None when no metric matches or none has a number."""
    from cnsim.plots.sweep import _label, _line_parameters, _value_of, _where, path_words

    found = bucket_metrics(spec.y, list(result.metrics))
    if not found:
        return None
    index_of = {metric: i for i, metric in found}
    table = _where(result, spec, result.aggregate([m for _, m in found]))
    if table.empty or table["mean"].isna().all():
        return None
    table = table.assign(bucket=[index_of[m] for m in table["metric"]])
    labels = bucket_labels(result.spec.base_toml, max(index_of.values()) + 1)
    others = [p for p in _line_parameters(result, spec) if p != SIZE_BUCKET]
    panels: list[tuple[str, pd.DataFrame]] = [("", table)]
    if spec.panel is not None:
        panels = [
            (
                f"{path_words(spec.panel)} = "
                f"{result.spec.value_name(spec.panel, _value_of(result, spec.panel, v))}",
                rows,
            )
            for v, rows in table.groupby(spec.panel, sort=False)
        ]
    fig = Figure(figsize=(FIGSIZE[0], FIGSIZE[1] * (0.8 * len(panels) if len(panels) > 1 else 1)))
    fig.set_layout_engine("constrained")
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (panel_title, rows) in zip(axes, panels, strict=True):
        _draw_panel(ax, result, spec, rows, others, _label)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_xlabel(spec.xlabel or "flow size")
        ax.set_ylabel(spec.ylabel or path_words(spec.y.replace("*", "bucket")))
        ax.set_yscale(spec.yscale)
        # Plain numbers on a log axis ("20", not "2 x 10^1"): slowdowns span a decade or two.
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(
            FuncFormatter(_minor_text) if spec.yscale == "log" else NullFormatter()
        )
        if panel_title:
            ax.set_title(panel_title, fontsize="medium")
    title = spec.title or f"{path_words(spec.y.replace('*', 'bucket'))} by flow size"
    if len(panels) > 1:
        fig.suptitle(title)
    else:
        axes[0].set_title(title)
    return fig


def _draw_panel(
    ax: Any, result: SweepResult, spec: PlotSpec, rows: pd.DataFrame, others: list[str], label: Any
) -> None:
    """One line per combination of `others` (the schemes), markers at the buckets."""
    from cnsim.plots.style import line_style

    ax.grid(alpha=0.3)
    groups = rows.groupby(others, sort=False) if others else [((), rows)]
    column = "std" if spec.stat == "std" else "mean"
    for index, (key, group) in enumerate(groups):
        group = group.sort_values("bucket")
        marker = ("o", "s", "^", "D", "v")[index % 5]
        # Error bars as the other sweep figures (none with one replication: ci95 is NaN).
        with_error = spec.stat == "mean" and spec.error not in (None, "none")
        ax.errorbar(
            group["bucket"],
            group[column],
            yerr=group[spec.error].to_numpy(dtype=float) if with_error else None,
            marker=marker,
            ls=line_style(index),
            capsize=4,
            label=label(result, others, key),
        )
    if others:
        ax.legend(fontsize="x-small")


def _minor_text(value: float, _: int) -> str:
    """A log axis's minor tick labelled at 2 and 5 times a power of ten only (no crowding)."""
    if value <= 0:
        return ""
    lead = value / 10 ** math.floor(math.log10(value))
    return f"{value:g}" if round(lead) in (2, 5) and abs(lead - round(lead)) < 1e-6 else ""
