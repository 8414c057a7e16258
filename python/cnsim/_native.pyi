"""Type stubs for `cnsim._native`, the PyO3 binding of the Rust simulator (crates/cnsim-py).

The binding converts and maps errors only; every rule about scenarios lives in Rust.
"""

from collections.abc import Callable, Sequence
from typing import TypedDict

import numpy as np
import numpy.typing as npt

class ScenarioError(ValueError):
    """A scenario failed to parse or validate; the message is "path.to.field: reason"."""

class NativeTimeseries(TypedDict):
    """Long-format probe samples; `metric` and `entity` are codes into `metrics`/`entities`."""

    time_s: npt.NDArray[np.float64]
    metric: npt.NDArray[np.uint32]
    entity: npt.NDArray[np.uint32]
    value: npt.NDArray[np.float64]
    metrics: list[str]
    entities: list[str]

class NativeRunOutput(TypedDict):
    summary_json: str
    resolved_toml: str
    timeseries: NativeTimeseries

def run(
    scenario_toml: str,
    overrides: Sequence[tuple[str, str]] = ...,
    seed: int | None = None,
    progress: Callable[[float], object] | None = None,
) -> NativeRunOutput:
    """Validate and run a scenario; `progress` gets the simulated fraction done (0..1)."""

def resolve(
    scenario_toml: str,
    overrides: Sequence[tuple[str, str]] = ...,
    seed: int | None = None,
) -> str:
    """Return the fully resolved scenario TOML (defaults filled); raise ScenarioError if bad."""

def version() -> str:
    """Version of the Rust core."""

def scenario_schema() -> str:
    """JSON Schema of scenario files (generated from the Rust types), as JSON text."""

def summary_schema() -> str:
    """JSON Schema of summary.json (generated from the Rust types), as JSON text."""

def probe_metrics() -> list[str]:
    """Probe metric names the time series' `metric` column can hold."""
