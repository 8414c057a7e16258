"""The files of a run: the output contract of docs/outputs.md, written in one place.

scenario.toml, summary.json, timeseries.parquet, flows.parquet, window_per_source.csv and
plots/*.png; tests and users rely on their names and content, and a sweep's store keeps the
same summary.json. Written crash-consistently, and without pandas: Parquet through pyarrow from
the native columns, the window table through the csv module (the same files pandas wrote).
"""

from __future__ import annotations

import contextlib
import csv
import glob
import io
import json
import math
import os
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from cnsim.result import Result
    from cnsim.stream import Folder

SCENARIO_FILE = "scenario.toml"
SUMMARY_FILE = "summary.json"
TIMESERIES_FILE = "timeseries.parquet"
FLOWS_FILE = "flows.parquet"
PLOTS_DIR = "plots"
WINDOW_TABLE_FILE = "window_per_source.csv"
REPORT_FILE = "report.html"  # `cnsim report DIR --html`: a run rewritten into DIR drops it
RUN_FILES = frozenset(
    {
        SCENARIO_FILE,
        SUMMARY_FILE,
        TIMESERIES_FILE,
        FLOWS_FILE,
        PLOTS_DIR,
        WINDOW_TABLE_FILE,
        REPORT_FILE,
    }
)
TEMP_SUFFIX = ".tmp"
OLD_SUFFIX = ".old"


class OutputError(OSError):
    """An output directory cnsim will not write into (named in the message)."""


def file_stem(name: str) -> str:
    """A figure's name made safe as a file name (the name comes from user-written TOML): one
    rule for run, sweep and fluid figures, here without matplotlib so that checking a sweep
    file can apply it (`cnsim.sweeps.spec.plot_file_stem`)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "plot"


def write_run(result: Result, out_dir: str | Path, *, plots: bool = True) -> Path:
    """Write the run's files into `out_dir`: scenario.toml, summary.json, timeseries.parquet,
    plots/*.png (unless `plots` is false), and flows.parquet and the window table when the run
    has them.

    Crash-consistent: everything is written into a hidden sibling directory, each file synced,
    summary.json last; the directory is then renamed into place (replacing an earlier run's
    directory as a whole, so no stale file of it survives). A kill at any instant leaves
    either the earlier run or this one, each whole, never a mix (between the two renames
    `out_dir` is briefly absent, the new run complete beside it); a directory holding
    anything but a cnsim run's files is refused. Disk-full and permission errors name the
    file.
    """
    with staged_run_dir(out_dir) as folder:
        write_contents(result, folder.path, plots=plots)
    return folder.path


@contextmanager
def staged_run_dir(out_dir: str | Path) -> Iterator[Folder]:
    """The hidden temporary directory a run is written into (`write_run`'s rule): renamed to
    `out_dir` when the block ends normally, removed when it raises (a failed or interrupted
    run leaves nothing that looks complete). A streamed run writes its Parquet files there as
    it goes (`cnsim.stream`); the Folder's path is `out_dir` after the rename."""
    from cnsim.stream import Folder

    out_dir = check_out_dir(out_dir)
    parent = out_dir.parent
    made_parent = not parent.exists()
    _mkdir(parent)
    _drop_stale_siblings(out_dir)
    temp = parent / f".{out_dir.name}.{os.getpid()}{TEMP_SUFFIX}"
    shutil.rmtree(temp, ignore_errors=True)
    folder = Folder(temp)
    try:
        _mkdir(temp)
        yield folder
        _replace_dir(temp, out_dir)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        if made_parent:  # a streamed run that failed (a bad scenario) leaves no `runs/`
            with contextlib.suppress(OSError):
                parent.rmdir()
        raise
    folder.path = out_dir


def check_out_dir(out_dir: str | Path) -> Path:
    """The output directory as a Path, or OutputError when cnsim must not write there: an
    empty name, the working directory (or one above it), a file, or a directory holding
    anything but an earlier run's files."""
    if str(out_dir).strip() == "":
        raise OutputError("output directory: empty name (give --out DIR)")
    out_dir = Path(out_dir)
    here = Path.cwd().resolve()
    target = out_dir.resolve()
    if target == here or target in here.parents:
        raise OutputError(
            f"output directory {out_dir}: is the working directory or contains it; "
            "name a new folder (e.g. --out runs/NAME)"
        )
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"output directory {out_dir}: is a file")
    if out_dir.is_dir():
        foreign = sorted(p.name for p in out_dir.iterdir() if p.name not in RUN_FILES)
        if foreign:
            raise OutputError(
                f"output directory {out_dir}: holds {foreign[0]!r}, not a cnsim run's file; "
                "choose another directory (a run replaces its directory as a whole)"
            )
    return out_dir


def write_contents(result: Result, folder: Path, *, plots: bool) -> None:
    """All files of the run into `folder`, synced, summary.json last (it marks completion);
    the tables a streamed run wrote there already are not written again."""
    _write(folder / SCENARIO_FILE, lambda h: h.write(result.scenario_toml.encode()))
    stored = result.stored_in(folder)
    # pyarrow, not DataFrame.to_parquet: a run nobody has looked at as a DataFrame is written
    # from its native columns without importing pandas (the same file; a test compares them).
    if TIMESERIES_FILE not in stored:
        _write(folder / TIMESERIES_FILE, lambda h: _write_parquet(result.timeseries_table(), h))
    flows = None if FLOWS_FILE in stored else result.flows_table()
    if flows is not None:
        _write(folder / FLOWS_FILE, lambda h: _write_parquet(flows, h))
    rows = window_rows(result.summary)
    if rows is not None:
        _write(folder / WINDOW_TABLE_FILE, lambda h: h.write(window_csv(rows).encode()))
    if plots:
        from cnsim.plots import make_plots

        plot_dir = folder / PLOTS_DIR
        try:
            for png in make_plots(result, plot_dir):
                _fsync_path(png)
        except OSError as exc:
            raise _named(exc, plot_dir) from None
    summary = json.dumps(strict_json(result.summary), indent=2, allow_nan=False) + "\n"
    _write(folder / SUMMARY_FILE, lambda h: h.write(summary.encode()))
    _fsync_path(folder)


def _write(path: Path, fill: Callable[[Any], object]) -> None:
    """Write a file through `fill(handle)` and sync it; an OSError names the file."""
    try:
        with open(path, "wb") as handle:
            fill(handle)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise _named(exc, path) from None


def _write_parquet(table: Any, handle: Any) -> None:
    """A pyarrow Table as Parquet, with DataFrame.to_parquet's defaults (snappy)."""
    import pyarrow.parquet as pq

    pq.write_table(table, handle, compression="snappy")


def _named(exc: OSError, path: Path) -> OSError:
    """The OSError with `path` as its file name when it lacks one (pyarrow's lack it)."""
    if exc.filename:
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


def _mkdir(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _named(exc, path) from None


def _fsync_path(path: Path) -> None:
    """Sync a file or directory entry to disk (directories where the OS allows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # Windows cannot open directories; the rename is still atomic there
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on directories
    finally:
        os.close(fd)


def _replace_dir(new: Path, out_dir: Path) -> None:
    """Rename `new` to `out_dir`; an existing run directory is first moved aside, then
    deleted, so the name never points at a mix of two runs."""
    old = out_dir.with_name(f".{out_dir.name}.{os.getpid()}{OLD_SUFFIX}")
    try:
        if out_dir.exists():
            shutil.rmtree(old, ignore_errors=True)
            os.rename(out_dir, old)
        os.rename(new, out_dir)
    except OSError as exc:
        raise _named(exc, out_dir) from None
    _fsync_path(out_dir.parent)
    shutil.rmtree(old, ignore_errors=True)


def _drop_stale_siblings(out_dir: Path) -> None:
    """Temporary and replaced directories a killed writer of `out_dir` left behind."""
    for suffix in (TEMP_SUFFIX, OLD_SUFFIX):
        for stale in out_dir.parent.glob(f".{glob.escape(out_dir.name)}.*{suffix}"):
            pid = stale.name.removesuffix(suffix).rsplit(".", 1)[-1]
            if pid.isdigit() and not _process_alive(int(pid)):
                shutil.rmtree(stale, ignore_errors=True)


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def window_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The per-source table over [report].window_s (seed 002's table), sending hosts only:
    throughput and frames generated, transmitted and dropped at the source in the window;
    None without a window. Plain rows: the CLI writes and prints them without pandas."""
    window = summary.get("window")
    if not window:
        return None
    return [
        {
            "source": name,
            "throughput_gbps": row.get("throughput_bps", 0.0) / 1e9,
            "frames_generated": row.get("generated_frames", 0),
            "frames_transmitted": row.get("tx_frames", 0),
            "frames_dropped_at_source": row.get("dropped_frames", 0),
        }
        for name, row in window.get("per_source", {}).items()
        if row.get("generated_frames", 1) > 0
    ]


def window_per_source(summary: Mapping[str, Any]) -> pd.DataFrame | None:
    """`window_rows` as a DataFrame (None without a window)."""
    rows = window_rows(summary)
    if rows is None:
        return None
    import pandas as pd

    return pd.DataFrame(rows)


def window_csv(rows: list[dict[str, Any]]) -> str:
    """The window table as `DataFrame.to_csv(index=False)` wrote it (a test compares them):
    floats in their shortest round-trip form, strings quoted only when they must be."""
    if not rows:
        return "\n"  # pandas' text for a table without columns
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(rows[0].keys())
    writer.writerows(row.values() for row in rows)
    return out.getvalue()


def strict_json(value: Any) -> Any:
    """Copy of a JSON-like value with NaN/inf as null and numpy scalars unwrapped."""
    if isinstance(value, Mapping):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
