"""Faults in a sweep's store (issue 13): damaged run files, a full disk, a read-only disk, a
killed parent, a study too large to plan. A damaged run counts as unfinished and runs again;
nothing ends in a traceback; no temporary file outlives its writer.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

import cnsim
from cnsim.sweeps import store as store_module
from cnsim.sweeps.errors import SweepError
from cnsim.sweeps.store import Store

pytest.importorskip("cnsim._native")

METRIC = "frames.delivered"
# JSON values a damaged or hand-edited file may hold (keys include the ones the store reads).
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["key", "status", "completed", "frames", "conserved", "x"]),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=8,
)


def tiny(**changes) -> dict:
    """2 points x 1 replication of 2 ms runs."""
    table = {
        "name": "hostile",
        "base": "seed000-pause-bcn",
        "replications": 1,
        "seed": 3,
        "metrics": [METRIC],
        "grid": {"duration_s": [0.002, 0.003]},
        "set": {"report.window_s": [0.0005, 0.0015]},
    }
    table.update(changes)
    return {"sweep": table}


def run_files(out: Path, name: str) -> list[Path]:
    return sorted(out.glob(f"runs/*/{name}"))


@pytest.fixture
def finished(tmp_path) -> Path:
    out = tmp_path / "study"
    cnsim.sweep(tiny(), out=out, jobs=1, progress=False)
    return out


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("run.json", b""),  # emptied
        ("run.json", b'{"key": "'),  # truncated
        ("summary.json", b""),
        ("summary.json", b'{"frames": {"generated": 1'),
        ("summary.json", b'{"completed": true, "frames": {"conserved": true}, "x": NaN}'),
        ("summary.json", b"{}"),  # whole JSON, but not a finished run's summary
        ("summary.json", b"[1, 2]"),
        ("run.json", b"\xff\xfe\x00"),  # not text
    ],
)
def test_a_damaged_run_is_run_again(finished, name, damage):
    target = run_files(finished, name)[0]
    target.write_bytes(damage)
    study = cnsim.sweep(tiny(), out=finished, jobs=1, progress=False)
    assert (study.executed, study.reused) == (1, 1)
    assert (study.runs["status"] == "ok").all()
    assert study.runs[METRIC].notna().all()
    assert json.loads(target.parent.joinpath("summary.json").read_text())["completed"] is True


def test_keep_full_reruns_a_truncated_timeseries(tmp_path):
    out = tmp_path / "study"
    cnsim.sweep(tiny(), out=out, jobs=1, keep="full", progress=False)
    parquet = run_files(out, "timeseries.parquet")[0]
    parquet.write_bytes(parquet.read_bytes()[:100])
    study = cnsim.sweep(tiny(), out=out, jobs=1, keep="full", progress=False)
    assert study.executed == 1
    assert len(pd.read_parquet(parquet)) > 0


def test_a_full_disk_leaves_no_temporary_file(tmp_path, monkeypatch):
    def disk_full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_module.os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left") as caught:
        cnsim.sweep(tiny(), out=tmp_path / "study", jobs=1, progress=False)
    assert caught.value.filename.endswith(("base.toml", "sweep.toml"))
    assert not list((tmp_path / "study").rglob("*.tmp"))


def test_temp_files_of_dead_writers_are_removed(finished):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(dead.stdout)
    folder = run_files(finished, "run.json")[0].parent
    stale = [folder / f".summary.json.{pid}.tmp", finished / f".runs.parquet.{pid}.tmp"]
    for path in stale:
        path.write_bytes(b"half")
    cnsim.sweep(tiny(), out=finished, jobs=1, progress=False)
    assert not any(path.exists() for path in stale)


def test_a_finished_study_opens_on_a_read_only_disk(finished, monkeypatch):
    def read_only(path, data):
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(store_module, "atomic_write", read_only)
    study = cnsim.sweep(tiny(), out=finished, jobs=1, progress=False)
    assert (study.executed, study.reused) == (0, 2)
    assert study.runs[METRIC].notna().all()
    loaded = cnsim.SweepResult.load(finished)
    assert len(loaded.runs) == 2


def test_a_study_too_large_to_plan_is_refused_at_once():
    start = time.perf_counter()
    with pytest.raises(SweepError, match=r"sweep.replications: .* more than 1,000,000"):
        cnsim.sweep(tiny(replications=10**12), progress=False)
    grid = {"duration_s": [0.001 + i * 1e-6 for i in range(2000)], "seed_dummy": list(range(1000))}
    with pytest.raises(SweepError, match="2,000,000 runs"):
        cnsim.load_sweep(tiny(grid=grid))
    assert time.perf_counter() - start < 5


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (children of children), from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
def test_workers_exit_when_the_sweep_process_is_killed(tmp_path):
    spec = tiny(base="seed004-qcn", grid={"duration_s": [6.0, 6.5, 7.0, 7.5]})
    path = tmp_path / "long.toml"
    path.write_text(tomli_w.dumps(spec))
    args = [sys.executable, "-m", "cnsim.cli", "sweep", str(path), "--out", str(tmp_path / "s")]
    child = subprocess.Popen(
        [*args, "--jobs", "2", "--quiet", "--no-plots"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while len(workers) < 3 and time.monotonic() < deadline:  # fork server + 2 workers
        time.sleep(0.1)
        workers = descendants(child.pid)
    assert len(workers) >= 3, "the pool never started"
    os.kill(child.pid, signal.SIGKILL)  # only the main process, as a user's `kill -9` does
    child.wait()
    deadline = time.monotonic() + 10
    while any(alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [w for w in workers if alive(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    assert not left, f"workers still running {time.monotonic() - deadline + 10:.1f} s later"


def test_an_empty_out_is_refused_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SweepError, match="out: empty directory name"):
        cnsim.sweep(tiny(), out="", progress=False)
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    record=st.one_of(st.binary(max_size=64), st.builds(lambda v: json.dumps(v).encode(), JSON)),
    summary=st.one_of(st.binary(max_size=64), st.builds(lambda v: json.dumps(v).encode(), JSON)),
)
def test_any_bytes_in_run_files_read_as_done_or_not(tmp_path_factory, record, summary):
    """Whatever a damaged disk leaves in run.json and summary.json, reading the store answers
    "done" or "not done" and never raises."""
    store = Store(tmp_path_factory.mktemp("store"))
    folder = store.run_dir("k")
    folder.mkdir(parents=True)
    (folder / "run.json").write_bytes(record)
    (folder / "summary.json").write_bytes(summary)
    for keep in ("none", "summary", "full"):
        assert store.is_done("k", keep) in (True, False)
    assert store.record("k") is None or isinstance(store.record("k"), dict)
