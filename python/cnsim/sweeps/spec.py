"""The sweep file: one base scenario, the values to vary, replications, what to collect.

A sweep is data, like a scenario (docs/sweeps.md has the format). This module reads and checks
it without running anything; `cnsim.sweeps.study` resolves every point through the core before
the first run starts, so a wrong parameter path fails in a second, not after an hour.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import itertools
import json
import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import tomli_w
from pydantic import (
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic.dataclasses import dataclass
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import ErrorDetails

from cnsim import api
from cnsim.outputs import file_stem
from cnsim.sweeps.errors import SweepError
from cnsim.sweeps.paths import parse_path

# The models below are the one definition of the sweep file: its fields, types, defaults and
# rules. `sweep_file_schema()` exports them as JSON Schema (`cnsim schema --sweep`), and every
# error becomes one line naming the key ("sweep.grid.\"x\": ..."), as the scenario's do.
STRICT = ConfigDict(extra="forbid")
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
# Columns a transient study's table computes; a [sweep.transient.columns] name may not take them.
TRANSIENT_RESULT_COLUMNS = (
    "point",
    "n",
    "transient_s",
    "transient_rtt",
    "settled",
    "knee_s",
    "flat_s",
    "transient_end_s",
    "rtt_s",
    "method",
)
SEED_BITS = 63  # the core's seed is a u64, but TOML integers are signed 64-bit
MAX_RUNS = 1_000_000  # points x replications; the plan holds every run in memory
DEFAULT_REFERENCE = "seed_transient_s"

Stat = Literal["mean", "std"]
ErrorBar = Literal["ci95", "std", "none"]
AxisScale = Literal["linear", "log"]
FewSamples = Literal["error", "warn"]
T = TypeVar("T")
Values = Annotated[list[Any], Field(min_length=1)]


def one_line_errors(prefix: str) -> Callable[[type[T]], type[T]]:
    """Made directly (not inside a sweep), the model's errors become SweepErrors too."""

    def wrap(cls: type[T]) -> type[T]:
        validate = cls.__init__

        @functools.wraps(validate)
        def checked_init(self: T, *args: Any, **kwargs: Any) -> None:
            try:
                validate(self, *args, **kwargs)
            except ValidationError as exc:
                raise SweepError(_one_line(exc.errors()[0], prefix)) from None

        cls.__init__ = checked_init  # type: ignore[assignment,method-assign]
        return cls

    return wrap


@one_line_errors("sweep.plots[]")
@dataclass(frozen=True, config=STRICT)
class PlotSpec:
    """One figure ([[sweep.plots]]): the per-point `stat` of metric `y` against swept `x`."""

    x: StrictStr = Field(
        description="A swept parameter path (a key of grid or zip), or 'size_bucket': y then"
        " holds a '*' for the flow-size bucket key (flows.slowdown_by_size.*.p99)."
    )
    y: StrictStr = Field(description="A summary path collected from each run.")
    stat: Stat = Field(default="mean", description="Per-point statistic over the replications.")
    error: ErrorBar | None = Field(
        default=None, description="Error bars; default ci95 for a mean, none for a std."
    )
    title: StrictStr | None = None
    name: StrictStr | None = Field(default=None, description="File stem of the figure.")
    xlabel: StrictStr | None = None
    ylabel: StrictStr | None = None
    where: dict[str, Any] = Field(
        default_factory=dict,
        description="Swept parameter -> value (or its [sweep.names] name): only these points.",
    )
    panel: StrictStr | None = Field(
        default=None, description="A swept parameter: one panel per value of it."
    )
    yscale: AxisScale = Field(
        default="linear", description="The y axis: linear, or log for values spanning decades."
    )
    xscale: AxisScale = Field(
        default="linear",
        description="The x axis: linear, or log for swept values spanning decades (loss rates,"
        " sizes); not with x = 'size_bucket' or non-numeric x.",
    )

    def __post_init__(self) -> None:
        if self.error is None:  # frozen: set once, while the object is being made
            object.__setattr__(self, "error", "ci95" if self.stat == "mean" else "none")

    def to_table(self) -> dict[str, Any]:
        """As written in a sweep file."""
        return {k: v for k, v in vars(self).items() if v is not None and v != {}}


@one_line_errors("sweep.fluid")
@dataclass(frozen=True, config=STRICT)
class FluidStudy:
    """[sweep.fluid]: each point's fluid fixed point beside its packet runs (`cnsim.sweeps.fluid`):
    DIR/table.csv gains the senders' rates and the fixed point's columns, and two figures draw
    the packet runs' queue and rates against `x`, one line per value of `lines`, with the fixed
    points as lines."""

    x: StrictStr = Field(description="A [sweep.table] column: the figures' x (numbers).")
    lines: StrictStr = Field(description="A [sweep.table] column: one line per value.")
    queue: StrictStr = Field(description="A [sweep.table] column: the packet runs' queue (bytes).")
    queue_std: StrictStr | None = Field(
        default=None, description="A [sweep.table] column: the queue's std (the error bars)."
    )

    def to_table(self) -> dict[str, Any]:
        """As written in a sweep file."""
        return {k: v for k, v in vars(self).items() if v is not None}


@one_line_errors("sweep.transient")
@dataclass(frozen=True, config=STRICT)
class TransientStudy:
    """[sweep.transient]: a transient study's per-point label columns and how to draw them."""

    columns: dict[str, list[Any]] = Field(
        default_factory=dict, description="Extra columns of DIR/transient.csv, one value per point."
    )
    label: StrictStr | None = Field(
        default=None, description="Column naming a point (default: the first)."
    )
    panel: StrictStr | None = Field(
        default=None, description="Column splitting the figures into panels."
    )
    reference: StrictStr | None = Field(
        default=None,
        description=f"Column of published durations (default: {DEFAULT_REFERENCE} if given).",
    )

    @model_validator(mode="after")
    def _names(self) -> TransientStudy:
        for name in self.columns:
            if name in TRANSIENT_RESULT_COLUMNS:
                raise SweepError(
                    f"sweep.transient.columns.{name}: a column of the transient table already"
                )
        for key in ("label", "panel", "reference"):
            name = getattr(self, key)
            if name is not None and name not in self.columns:
                known = ", ".join(self.columns) or "none"
                raise SweepError(f"sweep.transient.{key}: no column {name!r} (columns: {known})")
        return self

    @property
    def label_column(self) -> str | None:
        """The column naming a point in legends: `label`, else the first column."""
        return self.label or next(iter(self.columns), None)

    @property
    def reference_column(self) -> str | None:
        """The column of published durations: `reference`, else seed_transient_s if given."""
        if self.reference:
            return self.reference
        return DEFAULT_REFERENCE if DEFAULT_REFERENCE in self.columns else None

    def to_table(self) -> dict[str, Any]:
        """As written in a sweep file."""
        return {k: v for k, v in vars(self).items() if v is not None}


@dataclasses.dataclass(frozen=True)
class MetricUse:
    """A metric path where the sweep file uses it: `key` names the field ("sweep.table.q");
    `numeric` says what needs it to be a number ("a plot"), empty when anything goes."""

    key: str
    path: str
    numeric: str = ""


@dataclass(frozen=True)
class Point:
    """One combination of swept values; `index` is its place in the sweep's point order."""

    index: int
    params: dict[str, Any]


@one_line_errors("sweep")
@dataclass(frozen=True, kw_only=True, config=STRICT)
class SweepSpec:
    """[sweep]: one base scenario, the values to vary, replications, what to collect.

    Checked however it is made (file, dict, `dataclasses.replace`): a wrong key is a
    SweepError naming it. `base_toml` is the base scenario's text (from `base` or [scenario]).
    """

    name: StrictStr = Field(default="sweep", description="Default: the sweep file's stem.")
    base_toml: SkipJsonSchema[StrictStr]
    base: StrictStr = Field(
        default="",
        description="A preset or a scenario file (relative to the sweep file), or use [scenario].",
    )
    description: StrictStr = ""
    replications: StrictInt = Field(
        default=1, ge=1, description="Runs per point, each with its own seed."
    )
    seed: StrictInt = Field(
        1, ge=0, lt=2**SEED_BITS, description="Base seed; each run's seed is derived from it."
    )
    metrics: tuple[StrictStr, ...] = Field(default=(), description="Summary paths to collect.")
    grid: dict[str, Values] = Field(
        default_factory=dict,
        description="Parameter path -> values; every combination (first key slowest).",
    )
    zip: dict[str, Values] = Field(
        default_factory=dict,
        description="Parameter path -> values; lists of one length, varied together.",
    )
    set: dict[str, Any] = Field(
        default_factory=dict, description="Parameter path -> value, applied to every point."
    )
    plots: tuple[PlotSpec, ...] = ()
    transient: TransientStudy | None = None
    fluid: FluidStudy | None = None
    table: dict[str, StrictStr] = Field(
        default_factory=dict,
        description=(
            "DIR/table.csv: column name -> metric path (per-point mean over replications) or "
            "a swept parameter (the point's value, or its [sweep.names] name)."
        ),
    )
    names: dict[str, list[StrictStr]] = Field(
        default_factory=dict,
        description=(
            "Swept parameter -> a name for each of its values, in order (table.csv, legends, "
            "plot filters)."
        ),
    )
    few_samples: FewSamples = Field(
        default="error",
        description=(
            "A point whose runs' steady or transient window held too few probe samples: its "
            "steady_*/transient_* cells in the printed tables say so in red instead of a mean "
            "('error'), or show the mean marked '*' ('warn')."
        ),
    )

    @model_validator(mode="after")
    def _rules(self) -> SweepSpec:
        """The rules a schema cannot say, in the order a reader meets the keys."""
        _metrics(self.metrics)
        _grid(self.grid)
        _zip(self.zip)
        _overrides("sweep.set", self.set)
        shared = (set(self.grid) & set(self.zip)) | (set(self.parameters) & set(self.set))
        if shared:
            raise SweepError(f"parameter {sorted(shared)[0]!r} is given twice (grid, zip or set)")
        _names(self)
        for index, plot in enumerate(self.plots):
            _check_plot(self, index, plot)
        _plot_files(self.plots)
        for path in self.table.values():
            parse_path(path)
        _run_count(self)  # before anything enumerates the points
        if self.transient is not None:
            _transient_points(self.transient, len(self.points()))
        if self.fluid is not None:
            _fluid_columns(self.fluid, self.table)
        return self

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
        """Metric paths to collect: the listed ones plus every plot's y and the table's metric
        columns, in order, once. A size-bucket plot's y is a pattern (its buckets are among the
        metrics or the table), not a path."""
        table = [p for p in self.table.values() if p not in self.parameters]
        plots = [p.y for p in self.plots if p.x != "size_bucket"]
        paths = [*self.metrics, *plots, *table]
        return tuple(dict.fromkeys(paths))

    def metric_uses(self) -> list[MetricUse]:
        """Every metric path with the key that names it, in `collected` order: to check them
        against a run's summary and name the field at fault."""
        uses = [MetricUse(f"sweep.metrics[{i}]", path) for i, path in enumerate(self.metrics)]
        uses += [
            MetricUse(f"sweep.plots[{i}].y", plot.y, "a plot")
            for i, plot in enumerate(self.plots)
            if plot.x != "size_bucket"
        ]
        uses += [
            MetricUse(_where(("sweep.table", column)), path, "a [sweep.table] mean")
            for column, path in self.table.items()
            if path not in self.parameters
        ]
        return uses

    def value_name(self, parameter: str, value: Any) -> Any:
        """The [sweep.names] name of one of a swept parameter's values (the value without)."""
        names = self.names.get(parameter)
        if names is None:
            return value
        values = self.grid.get(parameter) or self.zip[parameter]
        text = json.dumps(value, sort_keys=True, default=str)
        for candidate, name in zip(values, names, strict=True):
            if json.dumps(candidate, sort_keys=True, default=str) == text:
                return name
        return value

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
            table["plots"] = [p.to_table() for p in self.plots]
        if self.transient is not None:
            table["transient"] = self.transient.to_table()
        if self.fluid is not None:
            table["fluid"] = self.fluid.to_table()
        if self.table:
            table["table"] = dict(self.table)
        if self.names:
            table["names"] = dict(self.names)
        if self.few_samples != "error":
            table["few_samples"] = self.few_samples
        comments = "".join(f"# {line}\n" for line in header.splitlines())
        return comments + tomli_w.dumps({"sweep": table})


@dataclass(frozen=True, config=STRICT)
class SweepFile:
    """A sweep file: [sweep], and the base scenario as [scenario] unless sweep.base names it."""

    sweep: SweepSpec
    scenario: dict[str, Any] | None = Field(
        None, description="The base scenario inline (a scenario table, see `cnsim schema`)."
    )


def sweep_file_schema() -> dict[str, Any]:
    """The JSON Schema of sweep files (TOML, applied to their parsed form)."""
    schema: dict[str, Any] = TypeAdapter(SweepFile).json_schema()
    schema["title"] = "cnsim sweep file"
    return schema


def _one_line(error: ErrorDetails, prefix: str) -> str:
    """A pydantic error as cnsim's one line: `sweep.<path>: <reason> (got <value>)`."""
    if error["type"] == "value_error":  # a rule of ours: the message names its key already
        return str(error.get("ctx", {}).get("error", error["msg"]))
    loc = (prefix, *error["loc"])
    where = _where(loc)
    if error["type"] in ("unexpected_keyword_argument", "extra_forbidden"):
        return f"{where}: unknown key {loc[-1]!r}{_hint(loc, str(loc[-1]))}"
    if error["type"] == "missing":
        return f"{where}: required"
    reason = error["msg"][0].lower() + error["msg"][1:]
    reason = reason.replace("valid tuple", "list")  # TOML and JSON have arrays, not tuples
    return f"{where}: {reason} (got {error.get('input')!r})"


def _where(loc: Sequence[int | str]) -> str:
    """`sweep.grid."traffic[0].load"`, `sweep.plots[1].x`: keys as in the file.

    The first item is the table's own path, written as it is."""
    text = str(loc[0])
    for key in loc[1:]:
        if isinstance(key, int):
            text += f"[{key}]"
        elif key.isidentifier():
            text += f".{key}"
        else:
            text += f'."{key}"'
    return text


def _hint(loc: tuple[int | str, ...], key: str) -> str:
    """`; did you mean 'replications'?` from the keys the table at `loc` takes."""
    tables = {
        "plots": PlotSpec,
        "sweep.plots[]": PlotSpec,
        "transient": TransientStudy,
        "fluid": FluidStudy,
    }
    model: Any = next((tables[k] for k in reversed(loc[:-1]) if k in tables), SweepSpec)
    known = [f.name for f in dataclasses.fields(model) if f.name != "base_toml"]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else f" (expected {', '.join(known)})"


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


def load_sweep(source: str | Path | Mapping[str, Any]) -> SweepSpec:
    """Read a sweep from a preset name, a file, TOML text or a dict; SweepError if malformed."""
    data, folder, stem = _sweep_data(source)
    if "sweep" not in data and data:  # the reverse of `cnsim run` on a sweep file
        if isinstance(source, str | Path) and "\n" not in str(source):
            raise SweepError(
                f"{source} is a scenario, not a sweep; run it with `cnsim run {source}`"
            )
        raise SweepError("this TOML is a scenario, not a sweep; run it with cnsim.run()")
    unknown = set(data) - {"sweep", "scenario"}
    if unknown:
        raise SweepError(f"unknown top-level key {sorted(unknown)[0]!r} (expected [sweep])")
    if not isinstance(data.get("sweep"), Mapping):
        raise SweepError("not a sweep file: it has no [sweep] table")
    table = dict(data["sweep"])
    base, base_toml = _base(table.pop("base", None), data.get("scenario"), folder)
    if stem:
        table.setdefault("name", stem)
    return SweepSpec(**table, base=base, base_toml=base_toml)


def _sweep_data(source: str | Path | Mapping[str, Any]) -> tuple[dict[str, Any], Path, str]:
    """Parsed TOML, the folder relative paths start from, and a default name."""
    if isinstance(source, Mapping):
        return dict(source), Path.cwd(), ""
    if isinstance(source, str) and "\n" in source:
        return tomllib.loads(source), Path.cwd(), ""
    try:
        text = api.load_scenario(source)
    except api.ScenarioNotFoundError as exc:  # the loader is the scenarios': name the sweep
        raise api.ScenarioNotFoundError(
            str(exc).replace("no such scenario file", "no such sweep file")
        ) from None
    path = Path(source)
    folder = path.parent.resolve() if path.is_file() else Path.cwd()
    return tomllib.loads(text), folder, path.stem


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
    if api.is_sweep_text(text):
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


# ---------------------------------------------------------------- rules


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


def _metrics(metrics: tuple[str, ...]) -> None:
    for metric in metrics:
        parse_path(metric)
        if metric in RUN_COLUMNS:
            raise SweepError(f"sweep.metrics: {metric!r} is a column of the runs table already")


def _grid(table: dict[str, list[Any]]) -> None:
    _overrides("sweep.grid", table)
    for path, values in table.items():
        _no_duplicates(f'sweep.grid."{path}"', values)


def _zip(table: dict[str, list[Any]]) -> None:
    _overrides("sweep.zip", table)
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


def _overrides(where: str, table: Mapping[str, Any]) -> None:
    for path in table:
        if not path.strip():
            raise SweepError(f"{where}: empty parameter path")
        if path == "seed":
            raise SweepError(f"{where}: 'seed' is not a parameter; runs derive it from sweep.seed")
        if path in RUN_COLUMNS:
            raise SweepError(f"{where}: {path!r} is a column of the runs table; not a parameter")


def _check_plot(spec: SweepSpec, index: int, plot: PlotSpec) -> None:
    known = ", ".join(spec.parameters) or "none"
    if plot.x == "size_bucket":  # against the flow-size bucket (cnsim.plots.sweep_sizes)
        if plot.y.count("*") != 1:
            raise SweepError(
                f"sweep.plots[{index}].y: x = 'size_bucket' needs one '*' where the bucket key"
                f" goes, e.g. 'flows.slowdown_by_size.*.p99' (got {plot.y!r})"
            )
    elif plot.x not in spec.parameters:
        raise SweepError(f"sweep.plots[{index}].x: {plot.x!r} is not swept (swept: {known})")
    if plot.xscale == "log":
        _check_log_x(spec, index, plot)
    parse_path(plot.y)
    for path in [*plot.where, *([plot.panel] if plot.panel else [])]:
        if path not in spec.parameters:
            key = "panel" if path == plot.panel else f'where."{path}"'
            raise SweepError(f"sweep.plots[{index}].{key}: {path!r} is not swept (swept: {known})")
    for path, wanted in plot.where.items():
        values = spec.grid.get(path) or spec.zip[path]
        if not any(spec.value_name(path, v) == wanted or v == wanted for v in values):
            raise SweepError(
                f'sweep.plots[{index}].where."{path}": {wanted!r} is none of its values'
            )


def _plot_files(plots: Sequence[PlotSpec]) -> None:
    """Two plots writing one file would lose a figure: each needs its own name."""
    seen: dict[str, int] = {}
    for index, plot in enumerate(plots):
        stem = plot_file_stem(plot)
        if stem in seen:
            key = "name" if plot.name is not None else "name (none given)"
            raise SweepError(
                f"sweep.plots[{index}].{key}: writes plots/{stem}.png, as sweep.plots"
                f"[{seen[stem]}] does; give each plot its own name"
            )
        seen[stem] = index


def plot_file_stem(plot: PlotSpec) -> str:
    """The file stem a plot is saved as (`cnsim.plots.sweep` saves it so): its name, or by
    default 'mean_peak_queue_bytes_vs_load' (the statistic and the leaf keys of y and x)."""
    name = plot.name or f"{plot.stat}_{parse_path(plot.y)[-1]}_vs_{parse_path(plot.x)[-1]}"
    return file_stem(name)


def _check_log_x(spec: SweepSpec, index: int, plot: PlotSpec) -> None:
    """A log x axis needs positive numbers: every value of the swept `x`."""
    values = [] if plot.x == "size_bucket" else spec.grid.get(plot.x) or spec.zip[plot.x]
    bad = [v for v in values if isinstance(v, bool) or not isinstance(v, int | float) or v <= 0]
    if plot.x == "size_bucket" or bad:
        what = "the flow-size buckets" if plot.x == "size_bucket" else f"value {bad[0]!r}"
        raise SweepError(
            f"sweep.plots[{index}].xscale: 'log' needs positive numbers on x ({what} is not one)"
        )


def _names(spec: SweepSpec) -> None:
    """[sweep.names]: a swept parameter's values, one name each, no name twice."""
    for path, names in spec.names.items():
        values = spec.grid.get(path) or spec.zip.get(path)
        if values is None:
            known = ", ".join(spec.parameters) or "none"
            raise SweepError(f'sweep.names."{path}": not a swept parameter (swept: {known})')
        if len(names) != len(values):
            raise SweepError(
                f'sweep.names."{path}": expected {len(values)} names, one per value '
                f"(got {len(names)})"
            )
        _no_duplicates(f'sweep.names."{path}"', list(names))


def _transient_points(study: TransientStudy, n_points: int) -> None:
    """Every [sweep.transient.columns] list has one value per point."""
    for name, values in study.columns.items():
        if len(values) != n_points:
            raise SweepError(
                f"sweep.transient.columns.{name}: expected {n_points} values, one per point "
                f"(got {len(values)})"
            )


def _fluid_columns(study: FluidStudy, table: Mapping[str, str]) -> None:
    """Every [sweep.fluid] column names a [sweep.table] column."""
    for key in ("x", "lines", "queue", "queue_std"):
        name = getattr(study, key)
        if name is not None and name not in table:
            known = ", ".join(table) or "none: the sweep has no [sweep.table]"
            raise SweepError(f"sweep.fluid.{key}: no [sweep.table] column {name!r} ({known})")
