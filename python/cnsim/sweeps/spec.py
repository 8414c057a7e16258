"""The sweep file: one base scenario, the values to vary, replications, what to collect.

A sweep is data, like a scenario (docs/sweeps.md has the format). This module reads and checks
it without running anything; `cnsim.sweeps.study` resolves every point through the core before
the first run starts, so a wrong parameter path fails in a second, not after an hour.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import tomli_w

from cnsim import api
from cnsim.sweeps.errors import SweepError
from cnsim.sweeps.paths import parse_path

if TYPE_CHECKING:
    # Imported where used: it pulls in pandas (half a second), which `cnsim run` pays only to
    # check that its scenario is not a sweep file.
    from cnsim.sweeps.transient import TransientStudy

SWEEP_KEYS = ("name", "description", "base", "replications", "seed", "metrics")
SWEEP_TABLES = ("grid", "zip", "set", "plots", "transient", "table")
PLOT_KEYS = ("x", "y", "stat", "error", "title", "name", "xlabel", "ylabel")
# Columns every runs table has; a parameter or metric may not take these names.
RUN_COLUMNS = (
    "point",
    "replication",
    "seed",
    "key",
    "status",
    "error",
    "elapsed_s",
    "worker",
    "warnings",
)
SEED_BITS = 63  # the core's seed is a u64, but TOML integers are signed 64-bit
DEFAULT_SEED = 1

Stat = Literal["mean", "std"]
ErrorBar = Literal["ci95", "std", "none"]


@dataclass(frozen=True)
class PlotSpec:
    """One figure: the per-point `stat` of metric `y` against swept parameter `x`."""

    x: str
    y: str
    stat: Stat = "mean"
    error: ErrorBar = "ci95"
    title: str | None = None
    name: str | None = None
    xlabel: str | None = None
    ylabel: str | None = None


@dataclass(frozen=True)
class Point:
    """One combination of swept values; `index` is its place in the sweep's point order."""

    index: int
    params: dict[str, Any]


@dataclass(frozen=True)
class SweepSpec:
    """A checked sweep. `base_toml` is the base scenario's text; `base` says where it came from."""

    name: str
    base_toml: str
    base: str = ""
    description: str = ""
    replications: int = 1
    seed: int = DEFAULT_SEED
    metrics: tuple[str, ...] = ()
    grid: dict[str, list[Any]] = field(default_factory=dict)
    zip: dict[str, list[Any]] = field(default_factory=dict)
    set: dict[str, Any] = field(default_factory=dict)
    plots: tuple[PlotSpec, ...] = ()
    transient: TransientStudy | None = None
    # [sweep.table]: DIR/table.csv column name -> metric path (per-point mean over replications).
    table: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Checked on every construction, `dataclasses.replace` included."""
        check(self)

    @property
    def parameters(self) -> list[str]:
        """Swept parameter paths: the grid's keys, then the zip's."""
        return [*self.grid, *self.zip]

    def points(self) -> list[Point]:
        """Product of the grid (first key varies slowest) with the zip's rows."""
        grid_rows = [
            dict(zip(self.grid, values, strict=True))
            for values in itertools.product(*self.grid.values())
        ]
        n_zip = len(next(iter(self.zip.values()))) if self.zip else 1
        zip_rows = [{k: v[i] for k, v in self.zip.items()} for i in range(n_zip)]
        rows = [{**g, **z} for g in grid_rows for z in zip_rows]
        return [Point(i, row) for i, row in enumerate(rows)]

    def overrides(self, point: Point) -> tuple[str, ...]:
        """A point's `path=value` overrides as `cnsim run --set` takes them: set, then swept."""
        items = {**self.set, **point.params}
        return tuple(f"{path}={api.toml_literal(value)}" for path, value in items.items())

    @property
    def n_runs(self) -> int:
        """Points times replications."""
        return len(self.points()) * self.replications

    def collected(self) -> tuple[str, ...]:
        """Metric paths to collect: the listed ones plus every plot's y, in order, once."""
        paths = [*self.metrics, *(p.y for p in self.plots), *self.table.values()]
        return tuple(dict.fromkeys(paths))

    def to_toml(self, base_file: str = "base.toml", header: str = "") -> str:
        """The resolved sweep file, with the base scenario referred to as `base_file`.

        `header` becomes comment lines on top (provenance: where the base came from).
        """
        table: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "base": base_file,
            "replications": self.replications,
            "seed": self.seed,
            "metrics": list(self.metrics),
        }
        for key in ("grid", "zip", "set"):
            if getattr(self, key):
                table[key] = getattr(self, key)
        if self.plots:
            table["plots"] = [_plot_table(p) for p in self.plots]
        if self.transient is not None:
            table["transient"] = self.transient.to_table()
        if self.table:
            table["table"] = dict(self.table)
        comments = "".join(f"# {line}\n" for line in header.splitlines())
        return comments + tomli_w.dumps({"sweep": table})


def _plot_table(plot: PlotSpec) -> dict[str, Any]:
    return {k: getattr(plot, k) for k in PLOT_KEYS if getattr(plot, k) is not None}


# ---------------------------------------------------------------- seeds


def replication_seed(base_seed: int, params: Mapping[str, Any], replication: int) -> int:
    """The seed of one run (docs/sweeps.md, "Seeds").

    seed = first 8 bytes of SHA-256(canonical JSON of {"seed": base_seed, "point": params,
    "replication": replication}), big-endian, shifted right by one (63 bits, so TOML holds it).
    Canonical JSON: sorted keys, separators "," and ":", values as written in the sweep file.
    A point is named by its values, not its position, so adding values to a grid keeps the
    seeds (and the stored runs) of the points already there; `hash()` would change per process.
    """
    material = {"seed": base_seed, "point": dict(params), "replication": replication}
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


# ---------------------------------------------------------------- loading


def is_sweep_text(text: str) -> bool:
    """True when a TOML text is a sweep file (has a [sweep] table)."""
    if "sweep" not in text:
        return False
    try:
        return "sweep" in tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False


def load_sweep(source: str | Path | Mapping[str, Any]) -> SweepSpec:
    """Read a sweep from a preset name, a file, TOML text or a dict; SweepError if malformed."""
    data, folder, stem = _sweep_data(source)
    unknown = set(data) - {"sweep", "scenario"}
    if unknown:
        raise SweepError(f"unknown top-level key {sorted(unknown)[0]!r} (expected [sweep])")
    if not isinstance(data.get("sweep"), Mapping):
        raise SweepError("not a sweep file: it has no [sweep] table")
    table = dict(data["sweep"])
    _check_keys("sweep", table, (*SWEEP_KEYS, *SWEEP_TABLES))
    base, base_toml = _base(table.get("base"), data.get("scenario"), folder)
    plots = table.get("plots", [])
    if not isinstance(plots, list):
        raise SweepError("sweep.plots: expected [[sweep.plots]] tables")
    metrics = table.get("metrics", [])
    if not isinstance(metrics, list):
        raise SweepError("sweep.metrics: expected a list of summary paths")
    return SweepSpec(
        name=_text(table, "name", stem or "sweep"),
        description=_text(table, "description", ""),
        base=base,
        base_toml=base_toml,
        replications=table.get("replications", 1),
        seed=table.get("seed", DEFAULT_SEED),
        metrics=tuple(metrics),
        grid=table.get("grid", {}),
        zip=table.get("zip", {}),
        set=table.get("set", {}),
        plots=tuple(_plot(i, plot) for i, plot in enumerate(plots)),
        transient=_transient(table),
        table=table.get("table", {}),
    )


def _transient(table: Mapping[str, Any]) -> TransientStudy | None:
    if "transient" not in table:
        return None
    from cnsim.sweeps.transient import parse_transient

    return parse_transient(table["transient"])


def _sweep_data(source: str | Path | Mapping[str, Any]) -> tuple[dict[str, Any], Path, str]:
    """Parsed TOML, the folder relative paths start from, and a default name."""
    if isinstance(source, Mapping):
        return dict(source), Path.cwd(), ""
    if isinstance(source, str) and "\n" in source:
        return tomllib.loads(source), Path.cwd(), ""
    text = api.load_scenario(source)
    path = Path(source)
    folder = path.parent.resolve() if path.is_file() else Path.cwd()
    return tomllib.loads(text), folder, path.stem


def _check_keys(where: str, table: Mapping[str, Any], known: tuple[str, ...]) -> None:
    for key in table:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]!r}?" if close else f" (expected {', '.join(known)})"
            raise SweepError(f"{where}: unknown key {key!r}{hint}")


def _text(table: Mapping[str, Any], key: str, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str):
        raise SweepError(f"sweep.{key}: expected a string (got {value!r})")
    return value


def _base(base: Any, inline: Any, folder: Path) -> tuple[str, str]:
    """Where the base scenario comes from and its TOML text."""
    if base is not None and inline is not None:
        raise SweepError("give the base scenario as sweep.base or as [scenario], not both")
    if inline is not None:
        if not isinstance(inline, Mapping):
            raise SweepError("[scenario] must be a table")
        return "", tomli_w.dumps(dict(inline))
    if not isinstance(base, str) or not base:
        raise SweepError("sweep.base: name a preset or a scenario file (or add [scenario])")
    text = api.load_scenario(where := _base_location(base, folder))
    if is_sweep_text(text):
        raise SweepError(f"sweep.base: {base!r} is itself a sweep, not a scenario")
    return where, text


def _base_location(base: str, folder: Path) -> str:
    """A preset name wins over a file of that name (as with `cnsim run`); a file is relative to
    the sweep file. A name that is neither goes to `load_scenario` for its close-match hint.
    """
    path = folder / base  # an absolute `base` stays absolute
    if base in api.presets() or not (path.is_file() or path.suffix or "/" in base):
        return base
    if not path.is_file():
        raise api.ScenarioNotFoundError(f"no such scenario file: {path}")
    return str(path)


# ---------------------------------------------------------------- checking


def check(spec: SweepSpec) -> None:
    """SweepError naming the first wrong key; nothing is resolved or run here."""
    _replications(spec.replications)
    _seed(spec.seed)
    _metrics(spec.metrics)
    _grid(spec.grid)
    _zip(spec.zip)
    _overrides("sweep.set", spec.set)
    shared = (set(spec.grid) & set(spec.zip)) | (set(spec.parameters) & set(spec.set))
    if shared:
        raise SweepError(f"parameter {sorted(shared)[0]!r} is given twice (grid, zip or set)")
    for index, plot in enumerate(spec.plots):
        _check_plot(spec, index, plot)
    _table(spec.table)
    _run_count(spec)  # before anything enumerates the points
    if spec.transient is not None:
        from cnsim.sweeps.transient import check_points

        check_points(spec.transient, len(spec.points()))


MAX_RUNS = 1_000_000  # points x replications; the plan holds every run in memory


def _run_count(spec: SweepSpec) -> None:
    """Refuse a study too large to plan, before any point is built (10^12 runs would fill
    the memory while planning)."""
    points = math.prod(len(values) for values in spec.grid.values())
    points *= len(next(iter(spec.zip.values()))) if spec.zip else 1
    runs = points * spec.replications
    if runs > MAX_RUNS:
        raise SweepError(
            f"sweep.replications: {points:,} point{'s' * (points != 1)} x "
            f"{spec.replications:,} replications = "
            f"{runs:,} runs, more than {MAX_RUNS:,}; split the study"
        )


def _table(table: Any) -> None:
    if not isinstance(table, Mapping):
        raise SweepError('sweep.table: expected a table of column = "metric path"')
    for column, path in table.items():
        if not isinstance(path, str):
            raise SweepError(f"sweep.table.{column}: expected a metric path (got {path!r})")
        parse_path(path)


def _replications(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SweepError(f"sweep.replications: expected an integer >= 1 (got {value!r})")


def _seed(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**SEED_BITS:
        raise SweepError(f"sweep.seed: expected an integer in 0 .. 2^63-1 (got {value!r})")


def _metrics(value: Any) -> None:
    if not all(isinstance(m, str) for m in value):
        raise SweepError("sweep.metrics: expected a list of summary paths (strings)")
    for metric in value:
        parse_path(metric)
        if metric in RUN_COLUMNS:
            raise SweepError(f"sweep.metrics: {metric!r} is a column of the runs table already")


def _grid(table: Any) -> None:
    _overrides("sweep.grid", table)
    for path, values in table.items():
        where = f'sweep.grid."{path}"'
        if not isinstance(values, list) or not values:
            raise SweepError(f"{where}: expected a non-empty list of values (got {values!r})")
        _no_duplicates(where, values)


def _zip(table: Any) -> None:
    _overrides("sweep.zip", table)
    for path, values in table.items():
        if not isinstance(values, list) or not values:
            raise SweepError(f'sweep.zip."{path}": expected a non-empty list (got {values!r})')
    lengths = {path: len(values) for path, values in table.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{p} has {n}" for p, n in lengths.items())
        raise SweepError(f"sweep.zip: lists must have the same length ({shown})")
    if table:
        rows = [json.dumps(row, default=str) for row in zip(*table.values(), strict=True)]
        _no_duplicates("sweep.zip", rows)


def _no_duplicates(where: str, values: list[Any]) -> None:
    """Two equal points would share a seed, so they would be one run counted twice."""
    seen: set[str] = set()
    for value in values:
        text = json.dumps(value, sort_keys=True, default=str)
        if text in seen:
            raise SweepError(f"{where}: value {value!r} is listed twice")
        seen.add(text)


def _overrides(where: str, table: Any) -> None:
    if not isinstance(table, Mapping):
        raise SweepError(f"{where}: expected a table of parameter paths")
    for path in table:
        if not str(path).strip():
            raise SweepError(f"{where}: empty parameter path")
        if path == "seed":
            raise SweepError(f"{where}: 'seed' is not a parameter; runs derive it from sweep.seed")
        if path in RUN_COLUMNS:
            raise SweepError(f"{where}: {path!r} is a column of the runs table; not a parameter")


def _plot(index: int, table: Any) -> PlotSpec:
    """A [[sweep.plots]] table as a PlotSpec (its values are checked with the whole spec)."""
    where = f"sweep.plots[{index}]"
    if not isinstance(table, Mapping):
        raise SweepError(f"{where}: expected a table")
    _check_keys(where, table, PLOT_KEYS)
    for key in ("x", "y"):
        if not isinstance(table.get(key), str):
            raise SweepError(f"{where}.{key}: required (a string)")
    stat = table.get("stat", "mean")
    error = table.get("error", "ci95" if stat == "mean" else "none")
    return PlotSpec(**{**dict(table), "stat": stat, "error": error})


def _check_plot(spec: SweepSpec, index: int, plot: PlotSpec) -> None:
    where = f"sweep.plots[{index}]"
    if plot.x not in spec.parameters:
        known = ", ".join(spec.parameters) or "none"
        raise SweepError(f"{where}.x: {plot.x!r} is not swept (swept: {known})")
    parse_path(plot.y)
    if plot.stat not in ("mean", "std"):
        raise SweepError(f"{where}.stat: expected 'mean' or 'std' (got {plot.stat!r})")
    if plot.error not in ("ci95", "std", "none"):
        raise SweepError(f"{where}.error: expected 'ci95', 'std' or 'none' (got {plot.error!r})")
