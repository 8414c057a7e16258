"""FCT slowdown by flow size: the table every data-center congestion-control paper plots
(HPCC, SIGCOMM 2019, Fig. 11; Parsimon, NSDI 2023): per flow-size bucket, the 50th, 95th and
99th percentile of the slowdown (FCT over the flow's FCT alone on an idle network) and the
number of flows.

Buckets are given by every boundary in bytes (`summary_edges` makes them from the cut points
of `[report] slowdown_size_edges_bytes`, as `Result.fct_slowdown_by_size(edges=...)` takes
them), or by default equal-count buckets of the flow sizes (their quantiles: the workload's
empirical CDF, so every bucket holds about the same share of the flows and the small flows of
a heavy-tailed workload are not lumped into one). A bucket is (lo, hi], the first one
[lo, hi]; a size outside every bucket given is in none. Only completed flows have a slowdown;
`started` counts every flow of the bucket, so an overloaded run's missing tail shows.

No matplotlib here: `Result.fct_slowdown_by_size` uses it without drawing.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

DEFAULT_BUCKETS = 10
PERCENTILES = (50, 95, 99)
COLUMNS = [
    "size_lo_bytes",
    "size_hi_bytes",
    "started",
    "flows",
    *(f"slowdown_p{p}" for p in PERCENTILES),
]


def size_edges(sizes: Iterable[float], buckets: int = DEFAULT_BUCKETS) -> np.ndarray:
    """Edges of up to `buckets` equal-count buckets of `sizes` (bytes), increasing; sizes
    repeated across a quantile (a workload of few distinct sizes) merge buckets."""
    if buckets < 1:
        raise ValueError(f"buckets: at least 1 (got {buckets})")
    values = np.asarray(list(sizes) if not isinstance(sizes, np.ndarray) else sizes, float)
    if values.size == 0:
        return np.array([], dtype=float)
    edges: np.ndarray = np.unique(np.quantile(values, np.linspace(0.0, 1.0, buckets + 1)))
    return edges


def summary_edges(edges: Sequence[float]) -> list[float]:
    """The bucket edges of `[report] slowdown_size_edges_bytes = edges` (the summary's
    `flows.slowdown_by_size`): k cut points make k + 1 buckets, from 0 to above the last
    edge, so every flow is in one; `slowdown_by_size(flows, summary_edges(edges))`."""
    cuts = [float(e) for e in edges]
    if not cuts:
        raise ValueError("edges: at least one size (bytes)")
    increasing = all(b > a for a, b in itertools.pairwise(cuts))
    if not (cuts[0] > 0 and math.isfinite(cuts[-1]) and increasing):
        raise ValueError(f"edges: finite sizes > 0 that increase strictly (got {list(edges)})")
    return [0.0, *cuts, math.inf]


def slowdown_by_size(
    flows: pd.DataFrame,
    edges: Sequence[float] | np.ndarray | None = None,
    buckets: int = DEFAULT_BUCKETS,
    method: Literal["linear", "inverted_cdf"] = "linear",
) -> pd.DataFrame:
    """Per size bucket (rows in size order): its edges, flows started and completed, and the
    slowdown percentiles of the completed ones (NaN when none completed). `flows` is a run's
    flow table (`size_bytes`, `completed`, `slowdown`); `edges` default to `size_edges`.
    `method` is numpy's percentile method: "linear" interpolates between ranks;
    "inverted_cdf" is the nearest rank of the summary's `flows.slowdown_by_size`."""
    sizes = flows["size_bytes"].to_numpy(dtype=float)
    cuts = size_edges(sizes, buckets) if edges is None else np.asarray(edges, dtype=float)
    if cuts.size and np.any(np.diff(cuts) <= 0):
        raise ValueError("edges: must increase strictly")
    if cuts.size == 0:
        return pd.DataFrame(columns=COLUMNS, index=pd.RangeIndex(0, name="bucket"))
    lows, highs = (cuts[:-1], cuts[1:]) if cuts.size > 1 else (cuts, cuts)
    # Bucket i is (edges[i], edges[i + 1]]; the smallest size belongs to the first bucket.
    which = np.searchsorted(highs, sizes, side="left")
    inside = (sizes >= cuts[0]) & (which < len(highs))
    completed = flows["completed"].to_numpy(dtype=bool)
    slowdown = flows["slowdown"].to_numpy(dtype=float)
    rows = []
    for i, (lo, hi) in enumerate(zip(lows, highs, strict=True)):
        mine = inside & (which == i)
        done = slowdown[mine & completed]
        pcts = (
            np.percentile(done, PERCENTILES, method=method)
            if done.size
            else [np.nan] * len(PERCENTILES)
        )
        rows.append([lo, hi, int(mine.sum()), int(done.size), *(float(v) for v in pcts)])
    table = pd.DataFrame(rows, columns=COLUMNS)
    table.index.name = "bucket"
    return table
