"""The Python entry points: find a scenario, apply overrides, run it, get a `Result`.

The scenario schema lives in Rust only; this module never interprets a scenario beyond finding
its text and reading its `description` for `presets()`. The native module is imported here
behind a guard so the pure modules (analysis, plots, result) work where it is not built.
"""

from __future__ import annotations

import difflib
import json
import operator
import re
import tomllib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import tomli_w

if TYPE_CHECKING:
    from cnsim.result import Result

_native: ModuleType | None
try:
    from cnsim import _native
except ImportError as _exc:  # not built yet: pure modules must still import
    _native = None
    _NATIVE_IMPORT_ERROR: ImportError | None = _exc
else:
    _NATIVE_IMPORT_ERROR = None

if _native is not None:
    ScenarioError = _native.ScenarioError
else:

    class ScenarioError(ValueError):  # type: ignore[no-redef]
        """A scenario failed to parse or validate ("path.to.field: reason")."""


Scenario = str | Path | Mapping[str, Any]
Overrides = Mapping[str, Any] | Sequence[str] | None
ProgressArg = bool | Callable[[float], object]


class ScenarioNotFoundError(FileNotFoundError):
    """Neither a preset nor a file has that name; the message lists close preset names."""


class OverrideSyntaxError(ValueError):
    """A `path=value` override string without the `=`."""


def native() -> Any:
    """The native module, or an ImportError that says how to build it."""
    if _native is None:
        raise ImportError(
            f"cnsim's simulator core (cnsim._native) is missing ({_NATIVE_IMPORT_ERROR}); "
            "install cnsim from a wheel (`pip install dist/cnsim-*.whl`, built by "
            "`bash scripts/build-wheel`), or from a source checkout with `pip install .`, "
            "which needs a Rust toolchain"
        ) from _NATIVE_IMPORT_ERROR
    return _native


# ---------------------------------------------------------------- finding scenarios


def _preset_dir() -> Any:
    return resources.files("cnsim").joinpath("presets")


def _preset_files() -> dict[str, Any]:
    folder = _preset_dir()
    if not folder.is_dir():
        return {}
    found = {Path(f.name).stem: f for f in folder.iterdir() if f.name.endswith(".toml")}
    return dict(sorted(found.items()))


def presets() -> dict[str, str]:
    """Preset names and the first line of each one's `description`, sorted by name."""
    out = {}
    for name, file in _preset_files().items():
        data = tomllib.loads(file.read_text())
        sweep = data.get("sweep")
        description = data.get("description", "")
        if isinstance(sweep, Mapping):  # a sweep preset: `cnsim sweep NAME`
            description = "sweep: " + str(sweep.get("description", "")).strip()
        out[name] = description.strip().splitlines()[0] if description.strip() else ""
    return out


def load_scenario(name_or_path: str | Path) -> str:
    """TOML text of a preset (by name) or of a scenario file (by path).

    A preset name wins over a file of the same name in the working directory, so
    `cnsim run seed004-qcn` means the same thing everywhere; use `./name` for the file.
    """
    files = _preset_files()
    text = str(name_or_path)
    if not isinstance(name_or_path, Path) and text in files:
        return str(files[text].read_text())
    path = Path(name_or_path)
    if _is_file(path):
        return path.read_text()
    if isinstance(name_or_path, Path) or _looks_like_path(text):
        raise ScenarioNotFoundError(f"no such scenario file: {text}")
    raise ScenarioNotFoundError(_unknown_preset_message(text, list(files)))


def _looks_like_path(text: str) -> bool:
    return text.endswith(".toml") or "/" in text or "\\" in text


def _unknown_preset_message(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"unknown preset or file {name!r}{hint} (`cnsim presets` lists them)"


def scenario_text(scenario: Scenario) -> str:
    """TOML text from a preset name, a path, TOML text or a dict."""
    if isinstance(scenario, Mapping):
        return tomli_w.dumps(_toml_ready(scenario, ""))
    if not isinstance(scenario, str | Path):
        raise ScenarioError(
            f"scenario: expected a preset name, a path, TOML text or a dict "
            f"(got {type(scenario).__name__})"
        )
    if isinstance(scenario, str) and _is_toml_text(scenario):
        return scenario
    return load_scenario(scenario)


def _is_toml_text(text: str) -> bool:
    """TOML, not a name: it spans lines, or is one `key = value` line that names no file."""
    if "\n" in text:
        return True
    return "=" in text and not _is_file(Path(text))


def _is_file(path: Path) -> bool:
    """Path.is_file that answers False for strings no file can have (too long, NUL bytes)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _toml_ready(value: Any, path: str) -> Any:
    """A scenario dict with numpy scalars and arrays as plain Python values; a value TOML
    cannot hold (None, an object) is a ScenarioError naming its path."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ScenarioError(f"{path or 'scenario'}: keys must be strings (got {key!r})")
            out[key] = _toml_ready(item, f"{path}.{key}" if path else key)
        return out
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        value = value.tolist()  # numpy scalar or array
    if isinstance(value, list | tuple):
        return [_toml_ready(item, f"{path}[{i}]") for i, item in enumerate(value)]
    if value is None:
        raise ScenarioError(f"{path}: None has no TOML form (leave the field out)")
    if not isinstance(value, str | int | float | bool):
        raise ScenarioError(
            f"{path}: expected a string, number, boolean, list or table "
            f"(got {type(value).__name__})"
        )
    return value


SEED_LIMIT = 2**63  # TOML integers are i64; the resolved scenario stores its seed


def check_seed(seed: Any) -> int | None:
    """The seed as an int in [0, 2^63), or a ScenarioError naming `seed` (numpy ints work)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise ScenarioError(f"seed: must be an integer in [0, 2^63) (got {seed!r})")
    value = operator.index(seed)
    if not 0 <= value < SEED_LIMIT:
        raise ScenarioError(f"seed: must be an integer in [0, 2^63) (got {value})")
    return value


# ---------------------------------------------------------------- overrides


def parse_override(item: str) -> tuple[str, str]:
    """Split a CLI-style `path=value`; the value stays TOML text for the core to parse.

    A value that is not a TOML literal (`pattern=uniform`) is taken as a string, so users need
    not quote strings on a shell command line.
    """
    path, sep, value = item.partition("=")
    path, value = path.strip(), value.strip()
    if not sep or not path:
        raise OverrideSyntaxError(f"bad override {item!r}: expected path=value")
    return path, value if _is_toml_value(value) else toml_literal(value)


def _is_toml_value(text: str) -> bool:
    try:
        tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return False
    return True


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_literal(value: Any) -> str:
    """A Python value as a TOML value literal (inline tables for dicts)."""
    if hasattr(value, "tolist") and not isinstance(value, list | tuple | Mapping | str):
        value = value.tolist()  # numpy scalar or array
    if value is None or not isinstance(value, str | int | float | bool | list | tuple | Mapping):
        raise OverrideSyntaxError(
            f"{value!r} has no TOML form (use a string, number, boolean, list or dict)"
        )
    if isinstance(value, Mapping):
        items = ", ".join(f"{_toml_key(k)} = {toml_literal(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    return tomli_w.dumps({"v": value}).removeprefix("v = ").rstrip("\n")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else toml_literal(str(key))


def override_pairs(overrides: Overrides) -> list[tuple[str, str]]:
    """(path, TOML value) pairs from a dict of Python values or a list of `path=value`."""
    if not overrides:
        return []
    if isinstance(overrides, str):
        return [parse_override(overrides)]
    if isinstance(overrides, Mapping):
        return [(str(path), _override_value(path, value)) for path, value in overrides.items()]
    if not isinstance(overrides, Sequence):
        raise OverrideSyntaxError(
            f"set: expected a dict or a list of 'path=value' strings "
            f"(got {type(overrides).__name__})"
        )
    for item in overrides:
        if not isinstance(item, str):
            raise OverrideSyntaxError(f"set: expected 'path=value' strings (got {item!r})")
    return [parse_override(item) for item in overrides]


def _override_value(path: Any, value: Any) -> str:
    try:
        return toml_literal(value)
    except OverrideSyntaxError as exc:
        raise OverrideSyntaxError(f"{path}: {exc}") from None


# ---------------------------------------------------------------- running


def base_dir(scenario: Scenario) -> str | None:
    """The folder relative file paths in a scenario (flow traces, CDFs) are taken from: the
    scenario file's folder, the presets' folder for a preset, else the working directory."""
    if isinstance(scenario, Mapping) or (isinstance(scenario, str) and _is_toml_text(scenario)):
        return None
    if not isinstance(scenario, Path) and str(scenario) in _preset_files():
        return str(_preset_dir())
    path = Path(scenario)
    return str(path.resolve().parent) if _is_file(path) else None


def resolve(scenario: Scenario, *, seed: int | None = None, set: Overrides = None) -> str:
    """The fully resolved scenario TOML (defaults filled) without running it."""
    text = scenario_text(scenario)
    _refuse_sweep(scenario, text)
    resolved: str = native().resolve(
        text, override_pairs(set), check_seed(seed), base_dir(scenario)
    )
    return resolved


# A trace's columns and their types, as the core writes them (`traffic::trace`; a trace without
# flows is the header alone): the Parquet form keeps an empty trace's columns typed.
TRACE_COLUMNS: dict[str, str] = {
    "start_s": "float64",
    "src": "str",
    "dst": "str",
    "size_bytes": "float64",
    "priority": "int64",
}
# Traffic kinds that are frame sources or long flows written during the run, not flows made
# before it: `cnsim trace` leaves them out (crates/cnsim-core/src/lib.rs, write_flow_trace).
NOT_IN_TRACE = ("saturate", "cbr", "bernoulli")


def trace(
    scenario: Scenario, out: str | Path, *, seed: int | None = None, set: Overrides = None
) -> int:
    """Write the flows a scenario's workload starts as a trace (`start_s,src,dst,size_bytes,
    priority`): CSV, or Parquet when `out` ends in `.parquet`. A `kind = "flow_trace"` entry
    reading it repeats those flows exactly. Returns the number of flows.

    A workload that starts no flow gives a valid empty trace (the CSV header, or a Parquet
    table with the columns and no row). `saturate`, `cbr` and `bernoulli` entries are not
    flows made before the run and are not in the trace: each is named in a UserWarning (keep
    those entries beside the `flow_trace` entry to repeat the run)."""
    text = scenario_text(scenario)
    _refuse_sweep(scenario, text)
    pairs = override_pairs(set)
    out = Path(out)
    if out.suffix.lower() != ".parquet":
        n = _write_trace_csv(text, out, pairs, seed, scenario)
    else:
        n = _write_trace_parquet(text, out, pairs, seed, scenario)
    _warn_sources_left_out(scenario, seed, set)
    return n


def _write_trace_parquet(
    text: str, out: Path, pairs: list[tuple[str, str]], seed: int | None, scenario: Scenario
) -> int:
    import tempfile

    import pandas as pd

    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "trace.csv"
        n = _write_trace_csv(text, csv, pairs, seed, scenario)
        # pandas reads floats exactly (round trip), so the start times stay the core's; the
        # types keep an empty trace's columns typed (not Parquet's null type).
        table = pd.read_csv(csv, dtype=TRACE_COLUMNS)
    table.to_parquet(out, index=False)
    return n


def _write_trace_csv(
    text: str, out: Path, pairs: list[tuple[str, str]], seed: int | None, scenario: Scenario
) -> int:
    written = native().write_flow_trace(text, str(out), pairs, check_seed(seed), base_dir(scenario))
    return int(written)


def _warn_sources_left_out(scenario: Scenario, seed: int | None, set: Overrides) -> None:
    """One warning per traffic entry the trace cannot hold, so nobody takes the trace for the
    whole run."""
    resolved = tomllib.loads(resolve(scenario, seed=seed, set=set))
    for index, entry in enumerate(resolved.get("traffic", [])):
        kind = entry.get("kind")
        if kind in NOT_IN_TRACE:
            warnings.warn(
                f"traffic[{index}] (kind = {kind}) is not in the trace: only flows made"
                " before the run are; keep that entry beside the flow_trace entry to repeat"
                " the run",
                stacklevel=3,
            )


def run(
    scenario: Scenario,
    *,
    seed: int | None = None,
    set: Overrides = None,  # shadows the builtin: the name users know from `--set`
    progress: ProgressArg = False,
) -> Result:
    """Run a scenario and return its `Result`.

    `scenario` is a preset name, a path, TOML text or a dict. `set` overrides fields by path:
    a dict of Python values ({"traffic[0].load": 0.3}) or `path=value` strings as on the
    command line. `progress` is True for a progress bar on stderr, or a callable that gets the
    simulated fraction done (0..1).
    """
    call = _NativeCall.of(scenario, seed, set)
    raw = call.run(progress)
    # After the run: a bad scenario is reported without waiting for pandas.
    from cnsim.result import Result

    return Result.from_native(raw)


def run_to_dir(
    scenario: Scenario,
    out_dir: str | Path,
    *,
    seed: int | None = None,
    set: Overrides = None,  # shadows the builtin, as in `run`
    progress: ProgressArg = False,
    plots: bool = True,
) -> Result:
    """Run a scenario and write its files to `out_dir` (what `cnsim run` does), streaming the
    time series and the flow records to Parquet as the run goes (`cnsim.stream`): their
    memory stays one batch, whatever the run's length. The files are those `run(...).save()`
    writes, crash-consistently (`outputs.write_run`: nothing that looks complete is left by
    a failed or interrupted run). The Result reads its tables from the files when asked."""
    from cnsim import outputs
    from cnsim.result import Result
    from cnsim.stream import StreamWriter

    call = _NativeCall.of(scenario, seed, set)
    with outputs.staged_run_dir(out_dir) as folder:
        writer = StreamWriter(folder.path)
        try:
            raw = call.run(progress, sink=writer)
        except BaseException:
            writer.abort()
            raise
        writer.close(raw["late_drops"])
        result = Result.from_native(raw, streamed=writer.tables(folder))
        outputs.write_contents(result, folder.path, plots=plots)
    return result


@dataclass(frozen=True)
class _NativeCall:
    """A run's arguments for the core, checked before anything is written: the scenario's
    text (not a sweep), its overrides, its seed and the folder its relative paths start from."""

    text: str
    pairs: list[tuple[str, str]]
    seed: int | None
    base_dir: str | None

    @classmethod
    def of(cls, scenario: Scenario, seed: int | None, overrides: Overrides) -> _NativeCall:
        text = scenario_text(scenario)
        _refuse_sweep(scenario, text)
        return cls(text, override_pairs(overrides), check_seed(seed), base_dir(scenario))

    def run(self, progress: ProgressArg, sink: Any = None) -> Any:
        """The core's run, with `progress` shown or called; `sink` takes streamed batches."""
        with _progress_callback(progress) as (callback, stage):
            return native().run(
                self.text,
                overrides=self.pairs,
                seed=self.seed,
                progress=callback,
                base_dir=self.base_dir,
                stage=stage,
                sink=sink,
            )


def scenario_name(scenario: Scenario, *, set: Overrides = None) -> str:
    """The scenario's `name` (as `--set name=...` leaves it), without validating anything:
    where `cnsim run` writes before the run has a summary."""
    for path, value in override_pairs(set):
        if path == "name":
            try:
                return str(tomllib.loads(f"v = {value}")["v"])
            except tomllib.TOMLDecodeError:
                return value
    try:
        parsed = tomllib.loads(scenario_text(scenario))
    except tomllib.TOMLDecodeError:
        return "run"
    return str(parsed.get("name") or "run")


def is_sweep_text(text: str) -> bool:
    """True when a TOML text is a sweep file (has a [sweep] table)."""
    if "sweep" not in text:
        return False
    try:
        return "sweep" in tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False


def _refuse_sweep(scenario: Scenario, text: str) -> None:
    """A sweep file is not a scenario: say which command runs it, not "unknown field sweep"."""
    from cnsim.sweeps.errors import SweepError

    if not is_sweep_text(text):
        return
    if isinstance(scenario, str | Path) and "\n" not in str(scenario):
        message = f"{scenario} is a sweep, not a scenario; run it with `cnsim sweep {scenario}`"
        raise SweepError(message)
    raise SweepError("this TOML is a sweep, not a scenario; run it with cnsim.sweep()")


@contextmanager
def _progress_callback(
    progress: ProgressArg,
) -> Iterator[tuple[Callable[[float], object] | None, Callable[[str], object] | None]]:
    """The native run's progress callback (the user's, the shared progress bar's, or none) and
    its stage callback (the bar's title: "building the network", then "simulating")."""
    if callable(progress):
        yield progress, None
    elif progress:
        from cnsim.terminal import progress_bar  # rich: only when a bar may be drawn

        with progress_bar("simulating") as bar:
            yield bar.update, bar.describe
    else:
        yield None, None


def scenario_schema() -> dict[str, Any]:
    """JSON Schema of scenario files, generated from the Rust types (`cnsim schema`)."""
    schema: dict[str, Any] = json.loads(native().scenario_schema())
    return schema


def summary_schema() -> dict[str, Any]:
    """JSON Schema of summary.json, generated from the Rust types (`cnsim schema --summary`)."""
    schema: dict[str, Any] = json.loads(native().summary_schema())
    return schema


def probe_metrics() -> list[str]:
    """The time-series metric names the core can record (its `METRICS` list)."""
    return list(native().probe_metrics())


def native_version() -> str | None:
    """Version of the Rust core, or None when the native module is not built."""
    return None if _native is None else _native.version()
