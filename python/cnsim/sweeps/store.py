"""A study's directory: every finished run on disk, written so a kill never leaves half a file.

Layout (docs/sweeps.md, "The store"):

    DIR/sweep.toml             the resolved sweep (its base is DIR/base.toml)
    DIR/base.toml              the base scenario's text
    DIR/runs.parquet           one row per run: parameters, seed, status, collected metrics
    DIR/runs/<key>/run.json    how the run went: seed, overrides, status, error, wall time
    DIR/runs/<key>/summary.json         the run's summary (the contract of `cnsim run`)
    DIR/runs/<key>/timeseries.parquet   with --keep full
    DIR/runs/<key>/flows.parquet        with --keep full and a flow workload
    DIR/runs/<key>/transient_series.parquet   a transient study's aggregate series
    DIR/transient.csv          a transient study's table
    DIR/table.csv              the [sweep.table], one row per point
    DIR/aggregate.csv          otherwise: per point and metric, n, mean, std, ci95
    DIR/plots/*.png
    DIR/plots/figures.json     which PNGs the study drew, and from which results

Each file is written to a temporary name and renamed into place (atomic on POSIX and
Windows), and run.json is written last: a run counts as finished when its run.json says "ok",
so a study killed at any instant resumes without redoing or trusting a partial run.

A study writes only into a new or empty directory or its own store (`check_out_dir`), and
deletes only files it wrote: its own stale figures (listed in figures.json), temp files of its
writers, and with --keep none its runs' folders.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from cnsim.outputs import (
    FLOWS_FILE,
    REPORT_FILE,
    SUMMARY_FILE,
    TIMESERIES_FILE,
    OutputError,
    strict_json,
)
from cnsim.sweeps.folders import check_no_file_in_path
from cnsim.sweeps.keep import Keep
from cnsim.sweeps.transient import SERIES_FILE
from cnsim.sweeps.transient import TABLE_FILE as TRANSIENT_TABLE_FILE

SPEC_FILE = "sweep.toml"
BASE_FILE = "base.toml"
TABLE_FILE = "runs.parquet"
RUNS_DIR = "runs"
RECORD_FILE = "run.json"
PLOTS_DIR = "plots"
FIGURES_FILE = "figures.json"  # in plots/: the figures `SweepResult.plot` drew, and from what
POINT_TABLE_FILE = "table.csv"  # [sweep.table]: one row per point
AGGREGATE_FILE = "aggregate.csv"  # without one: `SweepResult.aggregate()`, what the table shows
TEMP_SUFFIX = ".tmp"
# What a store's root may hold (report.html: `cnsim report DIR --html`).
STORE_FILES = frozenset(
    {
        SPEC_FILE,
        BASE_FILE,
        TABLE_FILE,
        RUNS_DIR,
        PLOTS_DIR,
        TRANSIENT_TABLE_FILE,
        POINT_TABLE_FILE,
        AGGREGATE_FILE,
        REPORT_FILE,
    }
)


class Store:
    """The files of one study under `root`."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def run_dir(self, key: str) -> Path:
        """Where one run's files live."""
        return self.root / RUNS_DIR / key

    def is_store(self) -> bool:
        """The directory is a study's store: it holds the sweep.toml and base.toml every study
        writes first (or only those and runs/, when the first writes were cut short)."""
        names = {p.name for p in self.root.iterdir() if not _is_temp(p.name)}
        first_writes = {SPEC_FILE, BASE_FILE, RUNS_DIR}
        return {SPEC_FILE, BASE_FILE} <= names or (bool(names) and names <= first_writes)

    def check_out_dir(self) -> None:
        """OutputError, before anything is written, when the study must not write here: a path
        through a file, a file, or a non-empty directory that is not a study's store (a
        `cnsim run` directory, a folder of one's own figures), since a study adds files there
        and replaces its own."""
        check_no_file_in_path(self.root, "output directory")
        if not self.root.is_dir() or self.is_store():
            return
        entries = sorted(p.name for p in self.root.iterdir())
        if entries:
            foreign = [name for name in entries if name not in STORE_FILES]
            # Names a sweep also writes (plots/, summary's neighbours) without its sweep.toml:
            # somebody else's folder all the same.
            what = (
                f"holds {foreign[0]!r}, not a cnsim sweep's file"
                if foreign
                else f"holds {entries[0]!r} but no {SPEC_FILE}: not a sweep's own"
            )
            raise OutputError(
                f"output directory {self.root}: {what}; choose a new or empty directory, or a "
                "sweep's own (a sweep writes sweep.toml, base.toml, runs/ and plots/ there)"
            )

    # ------------------------------------------------------------ reading

    def record(self, key: str) -> dict[str, Any] | None:
        """A run's run.json, or None when it never finished or the file is unreadable
        (truncated, emptied, not this run's): such a run counts as not done."""
        record = _read_json(self.run_dir(key) / RECORD_FILE)
        if record is None or record.get("key") != key:
            return None
        return record

    def summary(self, key: str) -> dict[str, Any]:
        """A finished run's summary.json (`is_done` has checked it reads back whole)."""
        summary = _read_json(self.run_dir(key) / SUMMARY_FILE)
        if summary is None:
            raise FileNotFoundError(f"no readable summary for run {key}")
        return summary

    def timeseries_path(self, key: str) -> Path:
        """A run's timeseries.parquet (present with --keep full)."""
        return self.run_dir(key) / TIMESERIES_FILE

    def flows_path(self, key: str) -> Path:
        """A run's flows.parquet (present with --keep full and a flow workload)."""
        return self.run_dir(key) / FLOWS_FILE

    def series_path(self, key: str) -> Path:
        """A run's aggregate series of a transient study."""
        return self.run_dir(key) / SERIES_FILE

    def is_done(self, key: str, keep: Keep, series: bool = False) -> bool:
        """Finished with status ok and holding, readable, what `keep` (and a transient study,
        `series`) asks for. A failed run, or one whose files are missing, truncated or
        inconsistent, is run again."""
        record = self.record(key)
        if record is None or record.get("status") != "ok":
            return False
        summary = _read_json(self.run_dir(key) / SUMMARY_FILE)
        if summary is None or not _complete(summary):
            return False
        if series and not _parquet_readable(self.series_path(key)):
            return False
        return keep != Keep.full or _parquet_readable(self.timeseries_path(key))

    # ------------------------------------------------------------ writing

    def prepare(self, spec_toml: str, base_toml: str) -> None:
        """Create the directory, write the spec and base, and drop temp files of a killed run.

        Files that already hold the same text are left alone, so a finished study on a
        read-only disk opens (and its table is only rewritten when it changed).
        """
        self.root.mkdir(parents=True, exist_ok=True)
        self.drop_temp_files()
        write_if_changed(self.root / BASE_FILE, base_toml.encode())
        write_if_changed(self.root / SPEC_FILE, spec_toml.encode())
        (self.root / RUNS_DIR).mkdir(exist_ok=True)

    def drop_temp_files(self) -> None:
        """Temp files of writers that are gone (killed, or out of disk mid-write)."""
        for pattern in (f".*{TEMP_SUFFIX}", f"{RUNS_DIR}/*/.*{TEMP_SUFFIX}"):
            for stale in self.root.glob(pattern):
                if not _is_temp(stale.name):
                    continue  # not a name `_temp_name` makes: not ours to delete
                pid = int(stale.name.removesuffix(TEMP_SUFFIX).rsplit(".", 1)[-1])
                if pid != os.getpid() and _pid_alive(pid):
                    continue  # another live process is writing it
                with contextlib.suppress(OSError):
                    stale.unlink()

    def write_run(
        self,
        record: Mapping[str, Any],
        summary: Mapping[str, Any] | None,
        timeseries: bytes | None,
        series: bytes | None = None,
        flows: bytes | None = None,
    ) -> None:
        """One run's files, record last (it marks the run finished)."""
        folder = self.run_dir(str(record["key"]))
        folder.mkdir(parents=True, exist_ok=True)
        if series is not None:
            atomic_write(folder / SERIES_FILE, series)
        if timeseries is not None:
            atomic_write(folder / TIMESERIES_FILE, timeseries)
        if flows is not None:
            atomic_write(folder / FLOWS_FILE, flows)
        if summary is not None:
            atomic_write(folder / SUMMARY_FILE, _json_bytes(summary))
        atomic_write(folder / RECORD_FILE, _json_bytes(record))

    def write_text(self, name: str, text: str) -> Path:
        """A file at the study's root (transient.csv), atomically; left alone when it already
        holds `text` (a finished study opens on a read-only disk)."""
        path = self.root / name
        write_if_changed(path, text.encode())
        return path

    def write_table(self, table: pd.DataFrame) -> Path:
        """runs.parquet, atomically (a reader never sees half a table); left alone when it
        already holds this table."""
        path = self.root / TABLE_FILE
        buffer = io.BytesIO()
        table.to_parquet(buffer, index=False)
        write_if_changed(path, buffer.getvalue(), same=lambda: _same_table(path, table))
        return path

    # ------------------------------------------------------------ figures

    def results_stamp(self) -> str:
        """What the figures are drawn from: a hash of sweep.toml and runs.parquet as stored."""
        digest = hashlib.sha256()
        for name in (SPEC_FILE, TABLE_FILE):
            with contextlib.suppress(OSError):
                digest.update((self.root / name).read_bytes())
            digest.update(b"\0")
        return digest.hexdigest()

    def drawn_figures(self) -> tuple[list[Path], str | None]:
        """The PNGs plots/figures.json lists (those still there) and the results stamp they
        were drawn from (None without a readable figures.json)."""
        record = _read_json(self.root / PLOTS_DIR / FIGURES_FILE)
        if record is None or not isinstance(record.get("figures"), list):
            return [], None
        folder = self.root / PLOTS_DIR
        names = [n for n in record["figures"] if isinstance(n, str) and Path(n).name == n]
        figures = [folder / name for name in names if (folder / name).is_file()]
        stamp = record.get("drawn_from")
        return figures, stamp if isinstance(stamp, str) else None

    def current_figures(self) -> list[Path]:
        """The study's own figures, when drawn from its current sweep.toml and runs.parquet;
        [] when there are none or they are stale."""
        figures, stamp = self.drawn_figures()
        return figures if stamp == self.results_stamp() else []

    def record_figures(self, drawn: list[Path]) -> None:
        """plots/figures.json: `drawn` are the study's figures, from its current results;
        figures it listed before and `drawn` lacks are removed (no other file is touched)."""
        earlier, _ = self.drawn_figures()
        for old in set(earlier) - set(drawn):
            with contextlib.suppress(OSError):
                old.unlink()
        record = {"figures": sorted(p.name for p in drawn), "drawn_from": self.results_stamp()}
        (self.root / PLOTS_DIR).mkdir(parents=True, exist_ok=True)
        write_if_changed(self.root / PLOTS_DIR / FIGURES_FILE, _json_bytes(record))

    def drop_stale_figures(self) -> None:
        """Remove the study's own figures when its results changed since they were drawn (a
        re-run with --no-plots), so that plots/ never shows an old figure as current."""
        figures, stamp = self.drawn_figures()
        if stamp is None or stamp == self.results_stamp():
            return
        for old in figures:
            with contextlib.suppress(OSError):
                old.unlink()
        with contextlib.suppress(OSError):
            (self.root / PLOTS_DIR / FIGURES_FILE).unlink()

    def drop_runs(self, keys: list[str]) -> None:
        """Delete per-run folders (--keep none keeps only runs.parquet)."""
        for key in keys:
            shutil.rmtree(self.run_dir(key), ignore_errors=True)


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, flush it to disk, then rename it into place.

    On any failure (a full disk, a permission) the temporary file is removed and the OSError
    names `path`.
    """
    temp = _temp_name(path)
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        if isinstance(exc, OSError) and exc.filename != str(path):
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        raise


def write_if_changed(path: Path, data: bytes, same: Callable[[], bool] | None = None) -> None:
    """`atomic_write` unless the file already holds `data` (or `same()` says it does)."""
    try:
        unchanged = same() if same is not None else path.read_bytes() == data
    except (OSError, ValueError):
        unchanged = False
    if not unchanged:
        atomic_write(path, data)


def _read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from `path`, or None when missing, unreadable, truncated, not an object,
    or holding NaN/Infinity (cnsim writes strict JSON, so those mean a damaged file)."""
    try:
        value = json.loads(path.read_bytes(), parse_constant=_reject_constant)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not strict JSON")


def _complete(summary: Mapping[str, Any]) -> bool:
    """A summary of a run that finished and conserved frames (what `cnsim run` writes)."""
    frames = summary.get("frames")
    return (
        summary.get("completed") is True
        and isinstance(frames, Mapping)
        and frames.get("conserved") is True
    )


def _parquet_readable(path: Path) -> bool:
    """The file is whole Parquet (its footer reads back)."""
    try:
        pd.read_parquet(path, columns=[])  # reads the footer and schema, not the data
    except (OSError, ValueError):  # pyarrow's errors derive from these
        return False
    return True


def _same_table(path: Path, table: pd.DataFrame) -> bool:
    if not path.is_file():
        return False
    try:
        return pd.read_parquet(path).equals(table)
    except (OSError, ValueError):
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _is_temp(name: str) -> bool:
    """A temp file's name as `_temp_name` makes it: .NAME.PID.tmp."""
    if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
        return False
    return name.removesuffix(TEMP_SUFFIX).rsplit(".", 1)[-1].isdigit()


def _temp_name(path: Path) -> Path:
    """A hidden name unique to this process, so two writers never share a temp file."""
    return path.with_name(f".{path.name}.{os.getpid()}{TEMP_SUFFIX}")


def _json_bytes(value: Mapping[str, Any]) -> bytes:
    return (json.dumps(strict_json(value), indent=2, allow_nan=False) + "\n").encode()
