"""[sweep.fluid]: each point's fluid fixed point beside its packet runs, as the CoNEXT 2016
paper ("ECN or Delay", Zhu et al.) puts the analysis beside its simulations.

`add_columns` extends a study's point table (DIR/table.csv) with
- `rate_mean_bps`, `rate_min_bps`, `rate_max_bps`: the senders' throughput over the run's
  `[report].window_s` (`window.per_source`), mean, smallest and largest sender, averaged over
  the point's replications (NaN without a window or without kept summaries);
- `fluid_unique`, `fluid_queue_bytes`, `fluid_queue_low_bytes`, `fluid_queue_high_bytes`,
  `fluid_rate_bps`, `fluid_note`: the fixed point of the point's scheme for its N and
  parameters, from its resolved scenario: DCQCN's (`cnsim.fluid.dcqcn.fixed_point`; a fixed
  point past RED's Pmax sits on the jump at Kmax: queue Kmax, said in the note) and TIMELY's
  (`cnsim.fluid.timely.fixed_point`: patched, one queue; original, none unique: the band of
  queues between T_low and T_high, queue NaN);
- `queue_over_fluid`: the packet runs' queue over the fixed point's;
- `link_utilisation`: the senders' throughput in the window summed, over the bottleneck's C.

`PRINTED` are the columns `cnsim sweep` prints after the [sweep.table]'s (table.csv has all).

`fluid_plots` draws `fluid_queue.png` (the queue against x, one colour per line value, its
fixed point as a line of that colour, a band where it is not unique) and `fluid_rates.png`
(the senders' rates, mean with the smallest and largest, beside the fixed point's C / N; Jain's
index below).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from cnsim.fluid import dcqcn, timely
from cnsim.fluid.bottleneck import traffic_senders
from cnsim.sweeps.errors import SweepError
from cnsim.sweeps.spec import FluidStudy
from cnsim.sweeps.store import Store

if TYPE_CHECKING:
    from cnsim.sweeps.result import SweepResult

RATE_COLUMNS = ("rate_mean_bps", "rate_min_bps", "rate_max_bps", "rate_fairness_index")
FLUID_COLUMNS = (
    "fluid_unique",
    "fluid_queue_bytes",
    "fluid_queue_low_bytes",
    "fluid_queue_high_bytes",
    "fluid_rate_bps",
    "fluid_note",
    "queue_over_fluid",
    "link_utilisation",
)
PRINTED = (
    "link_utilisation",
    "rate_min_bps",
    "rate_max_bps",
    "fluid_queue_bytes",
    "queue_over_fluid",
)


def fixed_point_columns(scenario: dict[str, Any]) -> dict[str, Any]:
    """The fluid fixed point of a resolved scenario's scheme, as the table's fluid columns."""
    scheme = scenario.get("congestion", {}).get("scheme", "none")
    if scheme == "timely":
        model, n = timely.model_from_scenario(scenario)
        fp = timely.fixed_point(n, model)
        note = "" if fp["unique"] else "no unique fixed point: any queue from T_low to T_high"
        return {
            "fluid_unique": fp["unique"],
            "fluid_queue_bytes": fp["queue_bytes"],
            "fluid_queue_low_bytes": fp["queue_low_bytes"],
            "fluid_queue_high_bytes": fp["queue_high_bytes"],
            "fluid_rate_bps": fp["rate_bps"],
            "fluid_note": note,
        }
    if scheme == "dcqcn":
        dmodel, n = dcqcn.model_from_scenario(scenario)
        dfp = dcqcn.fixed_point(n, dmodel)
        queue, note = dfp["queue_bytes"], ""
        if not math.isfinite(queue):
            queue = dmodel.kmax_bytes
            note = f"p* = {dfp['p']:.3g} > Pmax: on RED's jump at Kmax"
        return {
            "fluid_unique": True,
            "fluid_queue_bytes": queue,
            "fluid_queue_low_bytes": queue,
            "fluid_queue_high_bytes": queue,
            "fluid_rate_bps": dfp["rate_bps"],
            "fluid_note": note,
        }
    raise SweepError(
        f"congestion.scheme = {scheme!r}: [sweep.fluid] has fixed points for DCQCN and TIMELY"
    )


def sender_rates(summary: dict[str, Any] | None, senders: list[str]) -> dict[str, float]:
    """The senders' window throughput: mean, min, max and Jain's index (NaN without)."""
    window = (summary or {}).get("window") or {}
    per_source = window.get("per_source") or {}
    rates = [per_source[s]["throughput_bps"] for s in senders if s in per_source]
    if len(rates) != len(senders) or not rates:
        return dict.fromkeys(RATE_COLUMNS, math.nan)
    x = np.array(rates, dtype=float)
    square = float(np.sum(x * x))
    return {
        "rate_mean_bps": float(np.mean(x)),
        "rate_min_bps": float(np.min(x)),
        "rate_max_bps": float(np.max(x)),
        "rate_fairness_index": float(np.sum(x)) ** 2 / (x.size * square) if square else math.nan,
    }


def add_columns(result: SweepResult, table: pd.DataFrame) -> pd.DataFrame:
    """`table` (the point table) with the rate and fluid columns, one row per point."""
    study = result.spec.fluid
    assert study is not None
    store = Store(result.out_dir)
    ok = result.ok
    rows = []
    for point in result.spec.points():
        scenario = result._point_scenario(point)
        senders = traffic_senders(scenario["traffic"][0])
        runs = [
            sender_rates(_summary(store, key), senders)
            for key in ok.loc[ok["point"] == point.index, "key"]
        ]
        row: dict[str, Any] = {
            c: float(np.nanmean([r[c] for r in runs])) if runs and _any(runs, c) else math.nan
            for c in RATE_COLUMNS
        }
        row.update(fixed_point_columns(scenario))
        rows.append(row)
    extra = pd.DataFrame(rows, index=table.index)
    out = pd.concat([table, extra], axis=1)
    out["queue_over_fluid"] = pd.to_numeric(out[study.queue], errors="coerce") / out[
        "fluid_queue_bytes"
    ].astype(float)
    # The senders' throughput summed over C: N rate_mean / C, and fluid_rate_bps is C / N.
    out["link_utilisation"] = out["rate_mean_bps"] / out["fluid_rate_bps"]
    return out


def _any(runs: list[dict[str, float]], column: str) -> bool:
    return any(math.isfinite(r[column]) for r in runs)


def _summary(store: Store, key: str) -> dict[str, Any] | None:
    try:
        return store.summary(key)
    except (FileNotFoundError, KeyError, ValueError):
        return None  # keep="none": the rates stay NaN


# ---------------------------------------------------------------- figures


def fluid_plots(result: SweepResult, out_dir: Path, *, dpi: int) -> list[Path]:
    """fluid_queue.png and fluid_rates.png (module docstring)."""
    from cnsim.plots.sweep import _stamped_png

    study = result.spec.fluid
    assert study is not None
    table = result.point_table()
    table = table.assign(_x=pd.to_numeric(table[study.x], errors="coerce")).sort_values("_x")
    if not pd.to_numeric(table[study.queue], errors="coerce").notna().any():
        warnings.warn("fluid plots skipped: no point has a finished run", stacklevel=2)
        return []
    paths = []
    for name, draw in (("fluid_queue", _draw_queue), ("fluid_rates", _draw_rates)):
        fig = draw(table, study)
        extra = "; points: mean over replications; lines: fluid fixed points"
        paths.append(_stamped_png(fig, result, out_dir / f"{name}.png", dpi, extra))
    return paths


def _groups(table: pd.DataFrame, study: FluidStudy) -> list[tuple[str, pd.DataFrame]]:
    return [(str(k), rows) for k, rows in table.groupby(study.lines, sort=False)]


def _draw_queue(table: pd.DataFrame, study: FluidStudy) -> Figure:
    fig = Figure(figsize=(9.5, 4.8))
    fig.set_layout_engine("constrained")
    ax = fig.subplots()
    ax.grid(alpha=0.3)
    top = 1.25 * float(
        np.nanmax(
            np.concatenate(
                [
                    pd.to_numeric(table[study.queue], errors="coerce").to_numpy(dtype=float),
                    table.loc[table["fluid_unique"].astype(bool), "fluid_queue_bytes"].to_numpy(
                        dtype=float
                    ),
                ]
            )
        )
    )
    for i, (label, rows) in enumerate(_groups(table, study)):
        colour = f"C{i}"
        x = rows["_x"].to_numpy(dtype=float)
        q = pd.to_numeric(rows[study.queue], errors="coerce").to_numpy(dtype=float) / 1e3
        err = None
        if study.queue_std is not None:
            err = pd.to_numeric(rows[study.queue_std], errors="coerce").to_numpy(dtype=float)
            err = np.vstack([np.minimum(err / 1e3, q), err / 1e3])  # never below zero
        ax.errorbar(
            x,
            q,
            yerr=err,
            color=colour,
            marker="o",
            ls="none",
            capsize=3,
            label=f"{label}: packet runs",
        )
        if rows["fluid_unique"].astype(bool).all():
            ax.plot(
                x,
                rows["fluid_queue_bytes"].to_numpy(dtype=float) / 1e3,
                color=colour,
                ls="--",
                label=f"{label}: fluid fixed point",
            )
        else:
            low = rows["fluid_queue_low_bytes"].to_numpy(dtype=float) / 1e3
            high = rows["fluid_queue_high_bytes"].to_numpy(dtype=float) / 1e3
            ax.fill_between(
                x,
                low,
                np.minimum(high, top / 1e3),
                color=colour,
                alpha=0.12,
                label=f"{label}: fluid equilibria, none unique\n(any RTT from "
                f"T_low to T_high: {low.min():,.0f} KB\nto {high.max():,.0f} KB)",
            )
        for xi, qi, note in zip(x, rows["fluid_queue_bytes"], rows["fluid_note"], strict=True):
            if str(note).startswith("p*"):  # DCQCN past Pmax: the fixed point is at Kmax
                ax.annotate(
                    "Kmax (RED's jump)",
                    (xi, qi / 1e3),
                    textcoords="offset points",
                    xytext=(-10, 12),
                    ha="right",
                    fontsize="small",
                    color=colour,
                )
    ax.set_ylim(0, top / 1e3)
    ax.set_xlabel("number of flows N")
    ax.set_ylabel("queue (KB)")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("Queue against N: packet runs (mean +-1 std) and fluid fixed points")
    return fig


def _draw_rates(table: pd.DataFrame, study: FluidStudy) -> Figure:
    fig = Figure(figsize=(7.0, 6.0))
    fig.set_layout_engine("constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[2, 1])
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    groups = _groups(table, study)
    for i, (label, rows) in enumerate(groups):
        x = rows["_x"].to_numpy(dtype=float) * (1 + 0.03 * (i - (len(groups) - 1) / 2))
        mean = rows["rate_mean_bps"].to_numpy(dtype=float) / 1e9
        low = mean - rows["rate_min_bps"].to_numpy(dtype=float) / 1e9
        high = rows["rate_max_bps"].to_numpy(dtype=float) / 1e9 - mean
        top.errorbar(
            x,
            mean,
            yerr=np.vstack([low, high]),
            color=f"C{i}",
            marker="o",
            ls="none",
            capsize=3,
            label=f"{label}: senders (mean, min-max)",
        )
        bottom.plot(
            x,
            rows["rate_fairness_index"].to_numpy(dtype=float),
            color=f"C{i}",
            marker="o",
            label=label,
        )
    fluid = table.drop_duplicates("_x")
    top.plot(
        fluid["_x"],
        fluid["fluid_rate_bps"] / 1e9,
        color="black",
        ls="--",
        label="fluid fixed point: C / N",
    )
    top.set_xscale("log")
    top.set_yscale("log")
    top.set_ylabel("sender throughput (Gb/s)")
    top.legend(fontsize="small")
    bottom.set_ylabel("Jain's index")
    bottom.set_xlabel("number of flows N")
    bottom.legend(fontsize="small")
    ticks = sorted(set(table["_x"].dropna().astype(int)))
    bottom.set_xticks(ticks, [str(t) for t in ticks])
    bottom.minorticks_off()
    fig.suptitle("Senders' rates against N, beside the fluid fixed point")
    return fig
