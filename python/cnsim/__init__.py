"""cnsim: packet-level simulation of data-center Ethernet congestion management.

    >>> import cnsim
    >>> result = cnsim.run("seed004-pause", set={"duration_s": 1.0})
    >>> result.series("host_tx_bps").sum(axis=1)   # aggregate throughput vs time
    >>> result.save("runs/pause")                    # scenario.toml, summary.json, parquet, plots
    >>> study = cnsim.sweep("seed000-window-sweep")    # replications on every core; see sweeps

The simulator is a Rust core (`cnsim._native`); `cnsim.analysis` and `cnsim.plots` are pure
Python and import without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cnsim.api import (
    OverrideSyntaxError,
    ScenarioError,
    ScenarioNotFoundError,
    load_scenario,
    native_version,
    presets,
    resolve,
    run,
    run_to_dir,
    trace,
)

if TYPE_CHECKING:
    from cnsim.result import Result
    from cnsim.sweeps import SweepError, SweepResult, load_sweep, sweep

    __version__: str

# Imported on first use: pandas and matplotlib cost a second, which `cnsim --version` and
# shell completion should not pay.
_LAZY = {
    "Result": "cnsim.result",
    "SweepError": "cnsim.sweeps",
    "SweepResult": "cnsim.sweeps",
    "load_sweep": "cnsim.sweeps",
    "sweep": "cnsim.sweeps",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":  # on first use: importlib.metadata takes 10 ms to import
        globals()[name] = _version()
        return globals()[name]
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cnsim' has no attribute {name!r}")


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("cnsim")
    except metadata.PackageNotFoundError:  # running from a source tree
        return native_version() or "0+unknown"


__all__ = [
    "OverrideSyntaxError",
    "Result",
    "ScenarioError",
    "ScenarioNotFoundError",
    "SweepError",
    "SweepResult",
    "__version__",
    "load_scenario",
    "load_sweep",
    "presets",
    "resolve",
    "run",
    "run_to_dir",
    "sweep",
    "trace",
]
