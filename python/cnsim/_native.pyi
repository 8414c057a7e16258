"""Type stubs for `cnsim._native`, the PyO3 binding of the Rust simulator (crates/cnsim-py).

The binding converts and maps errors only; every rule about scenarios lives in Rust.
"""

from collections.abc import Callable, Sequence
from typing import Protocol, TypedDict

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

class NativeFlows(TypedDict):
    """One entry per started flow; `src`/`dst` are host indices (scenario order)."""

    flow_id: npt.NDArray[np.uint32]
    src: npt.NDArray[np.uint32]
    dst: npt.NDArray[np.uint32]
    size_bytes: npt.NDArray[np.uint64]
    priority: npt.NDArray[np.uint8]
    start_s: npt.NDArray[np.float64]
    end_s: npt.NDArray[np.float64]
    fct_s: npt.NDArray[np.float64]
    ideal_fct_s: npt.NDArray[np.float64]
    completed: npt.NDArray[np.bool_]
    frames_dropped: npt.NDArray[np.uint32]
    delivered_bytes: npt.NDArray[np.uint64]

class NativeRunOutput(TypedDict):
    summary_json: str
    resolved_toml: str
    timeseries: NativeTimeseries
    flows: NativeFlows
    # A streamed run: (flow_id, frames_dropped) to patch in the written flows (else empty).
    late_drops: list[tuple[int, int]]

class Sink(Protocol):
    """Where a streamed run hands its rows (`cnsim.stream.StreamWriter`): the host names once,
    then the probe rows and final flow records since the last batch (`entities`: the new names)."""

    def hosts(self, names: list[str]) -> object: ...
    def batch(self, series: NativeTimeseries, flows: NativeFlows) -> object: ...

def run(
    scenario_toml: str,
    overrides: Sequence[tuple[str, str]] = ...,
    seed: int | None = None,
    progress: Callable[[float], object] | None = None,
    base_dir: str | None = None,
    stage: Callable[[str], object] | None = None,
    sink: Sink | None = None,
) -> NativeRunOutput:
    """Validate and run a scenario; `progress` gets the simulated fraction done (0..1); with
    `sink` the tables are streamed to it and returned empty."""

def resolve(
    scenario_toml: str,
    overrides: Sequence[tuple[str, str]] = ...,
    seed: int | None = None,
    base_dir: str | None = None,
) -> str:
    """Return the fully resolved scenario TOML (defaults filled); raise ScenarioError if bad."""

def write_flow_trace(
    scenario_toml: str,
    out_path: str,
    overrides: Sequence[tuple[str, str]] = ...,
    seed: int | None = None,
    base_dir: str | None = None,
) -> int:
    """Write the scenario's flow workload as a trace CSV; return the number of flows."""

def version() -> str:
    """Version of the Rust core."""

def scenario_schema() -> str:
    """JSON Schema of scenario files (generated from the Rust types), as JSON text."""

def summary_schema() -> str:
    """JSON Schema of summary.json (generated from the Rust types), as JSON text."""

def probe_metrics() -> list[str]:
    """Probe metric names the time series' `metric` column can hold."""
