"""Sweeps and replications: one base scenario, values to vary, many seeds, a table of results.

    >>> import cnsim
    >>> study = cnsim.sweep("seed000-window-sweep")          # every local core
    >>> study.aggregate()                                     # mean, std, ci95, n per point
    >>> study.plot()                                          # DIR/plots/*.png

docs/sweeps.md describes the sweep file, the store on disk, resuming and Dask clusters.
"""

from __future__ import annotations

from cnsim.sweeps.errors import SweepError
from cnsim.sweeps.result import SweepResult
from cnsim.sweeps.spec import PlotSpec, Point, SweepSpec, load_sweep, replication_seed
from cnsim.sweeps.study import sweep

__all__ = [
    "PlotSpec",
    "Point",
    "SweepError",
    "SweepResult",
    "SweepSpec",
    "load_sweep",
    "replication_seed",
    "sweep",
]
