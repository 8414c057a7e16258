"""Sweeps and replications: one base scenario, values to vary, many seeds, a table of results.

    >>> import cnsim
    >>> study = cnsim.sweep("seed000-window-sweep")          # every local core
    >>> study.aggregate()                                     # mean, std, ci95, n per point
    >>> study.plot()                                          # DIR/plots/*.png

docs/sweeps.md describes the sweep file, the store on disk, resuming and Dask clusters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cnsim.sweeps.errors import SweepError

if TYPE_CHECKING:
    from cnsim.sweeps.result import SweepResult
    from cnsim.sweeps.spec import PlotSpec, Point, SweepSpec, load_sweep, replication_seed
    from cnsim.sweeps.study import sweep

# Imported on first use: they pull in pandas (half a second) or pydantic (a tenth), which the
# CLI's error path and `cnsim run` (checking that a scenario is not a sweep file) should not pay.
_SPEC = "cnsim.sweeps.spec"
_LAZY = {
    "SweepResult": "cnsim.sweeps.result",
    "sweep": "cnsim.sweeps.study",
    **dict.fromkeys(["PlotSpec", "Point", "SweepSpec", "load_sweep", "replication_seed"], _SPEC),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cnsim.sweeps' has no attribute {name!r}")


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
