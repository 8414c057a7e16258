"""Where runs execute: in this process, on every local core, or on a Dask cluster.

Local parallelism uses a process pool rather than threads. The core releases the GIL while it
simulates, but each run also builds pandas tables, computes metrics and encodes files in
Python, which threads would serialise; a process also confines a crash or a memory blow-up to
one worker. Workers start from a fork server (spawn where there is none): forking a process
that runs a progress-bar thread can deadlock the child.

Every backend runs the same function, `run_one`, which never raises: a failure comes back as
an outcome with status "error" so one bad run does not stop the others. Outcomes carry the
summary and time series back to the caller, which alone writes the store; so a Dask worker on
another machine needs no shared file system.
"""

from __future__ import annotations

import ast
import io
import multiprocessing
import os
import socket
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from cnsim import api
from cnsim.sweeps.transient import run_series


@dataclass(frozen=True)
class RunTask:
    """One run, as `cnsim run BASE --seed SEED --set OVERRIDE ...` would do it."""

    key: str
    base_toml: str
    overrides: tuple[str, ...]
    seed: int
    keep_timeseries: bool = False
    keep_series: bool = False  # the [report.transient] aggregate, for a transient study


@dataclass
class RunOutcome:
    """What came back from a run; `summary` and `timeseries` are None when it failed."""

    key: str
    status: str
    error: str | None = None
    elapsed_s: float = 0.0
    worker: str = ""
    warnings: list[str] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    timeseries: bytes | None = None
    series: bytes | None = None
    flows: bytes | None = None  # with keep="full" and a flow workload

    def record(self, task: RunTask) -> dict[str, Any]:
        """The run.json of this outcome: enough to re-run it alone."""
        return {
            "key": self.key,
            "status": self.status,
            "error": self.error,
            "seed": task.seed,
            "overrides": list(task.overrides),
            "elapsed_s": self.elapsed_s,
            "worker": self.worker,
            "warnings": self.warnings,
        }


def run_one(task: RunTask) -> RunOutcome:
    """Run one task; any exception becomes an outcome with status "error" and its message."""
    start = time.perf_counter()
    worker = f"{socket.gethostname()}:{os.getpid()}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = api.run(task.base_toml, seed=task.seed, set=list(task.overrides))
            timeseries = _parquet(result.timeseries) if task.keep_timeseries else None
            keep_flows = task.keep_timeseries and len(result.flows) > 0
            flows = _parquet(result.flows) if keep_flows else None
            series = run_series(result.scenario, result.timeseries) if task.keep_series else None
        except Exception as exc:  # a failed run is data, not the end of the study
            return RunOutcome(
                key=task.key,
                status="error",
                error=f"{type(exc).__name__}: {exc}",
                elapsed_s=time.perf_counter() - start,
                worker=worker,
            )
    return RunOutcome(
        key=task.key,
        status="ok",
        elapsed_s=time.perf_counter() - start,
        worker=worker,
        warnings=[str(w.message) for w in caught],
        summary=result.summary,
        timeseries=timeseries,
        series=series,
        flows=flows,
    )


def _parquet(frame: Any) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _lost(task: RunTask, exc: BaseException) -> RunOutcome:
    """Outcome of a run whose worker died, or that the cluster could not run (no cnsim there)."""
    error = f"worker lost: {type(exc).__name__}: {exc}"
    return RunOutcome(key=task.key, status="error", error=error)


# ---------------------------------------------------------------- backends


def default_jobs() -> int:
    """The cores this process may use (the affinity mask, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def outcomes(
    tasks: Sequence[RunTask], *, jobs: int | None = None, client: Any = None
) -> Generator[RunOutcome]:
    """Outcomes in completion order; closing the iterator cancels the runs not yet started."""
    if not tasks:
        return
    if client is not None:
        yield from _dask(tasks, client)
        return
    jobs = min(jobs or default_jobs(), len(tasks))
    if jobs <= 1:
        yield from (run_one(task) for task in tasks)
        return
    yield from _pool(tasks, jobs)


PARENT_POLL_S = 0.5


def _exit_with_parent(parent_pid: int) -> None:
    """Worker initializer: a daemon thread ends the worker within PARENT_POLL_S once the
    process that started the sweep is gone (killed with SIGKILL, say), instead of it running
    its queue for minutes. (The core releases the GIL while simulating, so the thread runs.)"""

    # The worker's own parent is the fork server (or the sweep itself): it exits when the
    # sweep dies, and the worker is then re-parented. A dead sweep that nobody has reaped yet
    # still answers kill(pid, 0), so both are watched.
    first_parent = os.getppid()

    def watch() -> None:
        while _alive(parent_pid) and os.getppid() == first_parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="cnsim-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, but not ours to signal
    return True


def _pool(tasks: Sequence[RunTask], jobs: int) -> Iterator[RunOutcome]:
    context = _context()
    if context.get_start_method() != "fork":
        check_main_guard()
    executor = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=context,
        initializer=_exit_with_parent,
        initargs=(os.getpid(),),
    )
    try:
        futures: dict[Future[RunOutcome], RunTask] = {
            executor.submit(run_one, task): task for task in tasks
        }
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # BrokenProcessPool: a worker died mid-run
                yield _lost(futures[future], exc)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def _context() -> multiprocessing.context.BaseContext:
    """A fork server that has cnsim imported already (fast starts), else spawn.

    Both re-import the caller's main script in each worker (so a script must call
    `cnsim.sweep` under `if __name__ == "__main__":`, as with any process pool). A main
    module with no file to re-import (`python - <script`) gets plain fork instead.
    """
    methods = multiprocessing.get_all_start_methods()
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file and not os.path.isfile(main_file) and "fork" in methods:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["cnsim.sweeps.execute"])
        return context
    return multiprocessing.get_context("spawn")


def check_main_guard() -> None:
    """SweepError when the main script starts the sweep from its top level, outside
    `if __name__ == "__main__":`. Each worker re-imports that script, would start the sweep
    again, and dies in multiprocessing's bootstrapping check: a long traceback per worker and
    every run recorded as "worker lost". Said once, before any worker starts."""
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    if main is None or not main_file or not os.path.isfile(main_file):
        return  # Jupyter, `python -c`: nothing is re-imported
    module = getattr(getattr(main, "__spec__", None), "name", None) or ""
    if module == "__main__" or module.endswith(".__main__"):
        return  # `python -m package`: multiprocessing does not re-import a __main__.py
    frame: FrameType | None = sys._getframe()
    while frame is not None and not (
        frame.f_code.co_name == "<module>" and frame.f_globals is vars(main)
    ):
        frame = frame.f_back
    if frame is None or _guarded(main_file, frame.f_lineno):
        return
    from cnsim.sweeps.errors import SweepError

    raise SweepError(
        f"{main_file}, line {frame.f_lineno}: the sweep starts at the script's top level; put "
        'it under `if __name__ == "__main__":` (each worker process re-imports the script, '
        "which would start the sweep again), or pass jobs=1"
    )


def _guarded(path: str, line: int) -> bool:
    """`line` of the script is inside an `if __name__ == "__main__":` block (or the script
    cannot be read, so nothing is claimed)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), path)
    except (OSError, SyntaxError, ValueError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_main_test(node.test):
            first, last = node.body[0], node.body[-1]  # the `if` body, not its `else`
            if first.lineno <= line <= (last.end_lineno or last.lineno):
                return True
    return False


def _is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if not (isinstance(test, ast.Compare) and len(test.comparators) == 1):
        return False
    sides = [test.left, test.comparators[0]]
    names = any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
    main = any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)
    return names and main and isinstance(test.ops[0], ast.Eq)


def _dask(tasks: Sequence[RunTask], client: Any) -> Iterator[RunOutcome]:
    distributed = import_distributed()
    batch = uuid.uuid4().hex[:8]  # Dask keys name results; a second sweep must not reuse them
    futures = {
        client.submit(run_one, task, key=f"cnsim-run-{task.key}-{batch}", pure=False): task
        for task in tasks
    }
    try:
        for future in distributed.as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # KilledWorker, a lost connection
                yield _lost(futures[future], exc)
    finally:
        client.cancel([f for f in futures if not f.done()])


def import_distributed() -> Any:
    """dask.distributed, or an ImportError that says how to install it."""
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            "Dask is not installed; install it with `pip install 'cnsim[dask]'`"
        ) from exc
    return distributed


def connect(address: str) -> Any:
    """A Dask client for a scheduler address such as tcp://host:8786."""
    return import_distributed().Client(address)
