"""A study's directory: every finished run on disk, written so a kill never leaves half a file.

Layout (docs/sweeps.md, "The store"):

    DIR/sweep.toml             the resolved sweep (its base is DIR/base.toml)
    DIR/base.toml              the base scenario's text
    DIR/runs.parquet           one row per run: parameters, seed, status, collected metrics
    DIR/runs/<key>/run.json    how the run went: seed, overrides, status, error, wall time
    DIR/runs/<key>/summary.json         the run's summary (the contract of `cnsim run`)
    DIR/runs/<key>/timeseries.parquet   with --keep full
    DIR/runs/<key>/transient_series.parquet   a transient study's aggregate series
    DIR/transient.csv          a transient study's table
    DIR/plots/*.png

Each file is written to a temporary name and renamed into place (atomic on POSIX and
Windows), and run.json is written last: a run counts as finished when its run.json says "ok",
so a study killed at any instant resumes without redoing or trusting a partial run.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from cnsim.report import strict_json
from cnsim.sweeps.transient import SERIES_FILE

Keep = Literal["none", "summary", "full"]
KEEP_CHOICES: tuple[Keep, ...] = ("none", "summary", "full")

SPEC_FILE = "sweep.toml"
BASE_FILE = "base.toml"
TABLE_FILE = "runs.parquet"
RUNS_DIR = "runs"
RECORD_FILE = "run.json"
SUMMARY_FILE = "summary.json"
TIMESERIES_FILE = "timeseries.parquet"
PLOTS_DIR = "plots"
TEMP_SUFFIX = ".tmp"


class Store:
    """The files of one study under `root`."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def run_dir(self, key: str) -> Path:
        """Where one run's files live."""
        return self.root / RUNS_DIR / key

    # ------------------------------------------------------------ reading

    def record(self, key: str) -> dict[str, Any] | None:
        """A run's run.json, or None when it never finished."""
        path = self.run_dir(key) / RECORD_FILE
        try:
            return json.loads(path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def summary(self, key: str) -> dict[str, Any]:
        """A finished run's summary.json."""
        return json.loads((self.run_dir(key) / SUMMARY_FILE).read_text())

    def timeseries_path(self, key: str) -> Path:
        """A run's timeseries.parquet (present with --keep full)."""
        return self.run_dir(key) / TIMESERIES_FILE

    def series_path(self, key: str) -> Path:
        """A run's aggregate series of a transient study."""
        return self.run_dir(key) / SERIES_FILE

    def is_done(self, key: str, keep: Keep, series: bool = False) -> bool:
        """Finished with status ok and holding what `keep` (and a transient study, `series`)
        asks for; failed runs are retried."""
        record = self.record(key)
        if record is None or record.get("status") != "ok":
            return False
        if not (self.run_dir(key) / SUMMARY_FILE).is_file():
            return False
        if series and not self.series_path(key).is_file():
            return False
        return keep != "full" or self.timeseries_path(key).is_file()

    # ------------------------------------------------------------ writing

    def prepare(self, spec_toml: str, base_toml: str) -> None:
        """Create the directory, write the spec and base, and drop temp files of a killed run."""
        (self.root / RUNS_DIR).mkdir(parents=True, exist_ok=True)
        for stale in (self.root / RUNS_DIR).glob(f"*/.*{TEMP_SUFFIX}"):
            stale.unlink(missing_ok=True)
        atomic_write(self.root / BASE_FILE, base_toml.encode())
        atomic_write(self.root / SPEC_FILE, spec_toml.encode())

    def write_run(
        self,
        record: Mapping[str, Any],
        summary: Mapping[str, Any] | None,
        timeseries: bytes | None,
        series: bytes | None = None,
    ) -> None:
        """One run's files, record last (it marks the run finished)."""
        folder = self.run_dir(str(record["key"]))
        folder.mkdir(parents=True, exist_ok=True)
        if series is not None:
            atomic_write(folder / SERIES_FILE, series)
        if timeseries is not None:
            atomic_write(folder / TIMESERIES_FILE, timeseries)
        if summary is not None:
            atomic_write(folder / SUMMARY_FILE, _json_bytes(summary))
        atomic_write(folder / RECORD_FILE, _json_bytes(record))

    def write_text(self, name: str, text: str) -> Path:
        """A file at the study's root (transient.csv), atomically."""
        path = self.root / name
        atomic_write(path, text.encode())
        return path

    def write_table(self, table: pd.DataFrame) -> Path:
        """runs.parquet, atomically (a reader never sees half a table)."""
        path = self.root / TABLE_FILE
        temp = _temp_name(path)
        table.to_parquet(temp, index=False)
        os.replace(temp, path)
        return path

    def drop_runs(self, keys: list[str]) -> None:
        """Delete per-run folders (--keep none keeps only runs.parquet)."""
        for key in keys:
            shutil.rmtree(self.run_dir(key), ignore_errors=True)


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, flush it to disk, then rename it into place."""
    temp = _temp_name(path)
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


def _temp_name(path: Path) -> Path:
    """A hidden name unique to this process, so two writers never share a temp file."""
    return path.with_name(f".{path.name}.{os.getpid()}{TEMP_SUFFIX}")


def _json_bytes(value: Mapping[str, Any]) -> bytes:
    return (json.dumps(strict_json(value), indent=2, allow_nan=False) + "\n").encode()
