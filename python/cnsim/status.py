"""Status lines for long runs and sweeps in logs and batch jobs: `cnsim run --status-every
SECONDS` and `cnsim sweep --status-every SECONDS`.

The progress bar is drawn only on a terminal or in a notebook (`terminal.py`), so a run whose
stderr goes to a file says nothing until it ends: 1 h 40 min for 5 simulated seconds of
`meta-fabric-6144`. With `--status-every`, the run prints one plain line to stderr every
SECONDS of wall time (and one when it completes): the share simulated, the time elapsed and, at
the pace so far, the time left. A sweep's lines count runs instead (`SweepStatusLines`). Like
OMNeT++'s Cmdenv status lines, but asked for, so that logs stay clean by default. No rich here:
`cnsim run -q --status-every ...` imports nothing heavy.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["StatusLines", "SweepStatusLines", "duration_text"]

TIMER_MIN_S = 0.1  # a sweep's timer thread wakes at most this often, whatever the interval


def duration_text(seconds: float) -> str:
    """A wall-clock duration as a reader wants it: "42 s", "7 min 05 s", "1 h 27 min"."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class _Lines:
    """What a run's and a sweep's status lines share: the interval (refused unless a positive
    number of seconds), the stream (stderr when None, looked up at each line), the clock."""

    def __init__(
        self,
        every_s: float,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not (math.isfinite(every_s) and every_s > 0):
            raise ValueError(f"must be a positive number of seconds, not {every_s}")
        self.every_s = every_s
        self._stream = stream
        self._clock = clock
        self._start = clock()
        self._last = self._start

    def _due(self, now: float) -> bool:
        return now - self._last >= self.every_s

    def _print(self, text: str, now: float) -> None:
        self._last = now
        print(text, file=self._stream or sys.stderr, flush=True)


class StatusLines(_Lines):
    """The native run's progress callback (it gets the share simulated, 0 to 1) that prints a
    status line at most every `every_s` seconds of wall time, and always at completion."""

    def __call__(self, fraction: float) -> None:
        now = self._clock()
        if fraction >= 1.0 or self._due(now):
            self._print(self.line(fraction, now - self._start), now)

    @staticmethod
    def line(fraction: float, elapsed_s: float) -> str:
        """ "cnsim: 24.0% simulated, 23 min 50 s elapsed, about 1 h 15 min left"."""
        share = min(max(fraction, 0.0), 1.0)
        text = f"cnsim: {100 * share:.1f}% simulated, {duration_text(elapsed_s)} elapsed"
        if 0.0 < share < 1.0:
            text += f", about {duration_text(elapsed_s * (1 - share) / share)} left"
        return text


class SweepStatusLines(_Lines):
    """A sweep's status lines (`cnsim.sweep(..., progress=SweepStatusLines(60))`): runs done of
    runs in all, the time elapsed and, at the pace of the runs this call executed, the time left.

    The sweep counts its runs inside `counting`, calling `advance` once per finished run, as it
    does with the progress bar. A line is printed when a run finishes `every_s` or more after
    the last line, by a timer thread when `every_s` passes with no run finishing (runs longer
    than the interval still show the time going), and once when the sweep's runs are all done.
    """

    def __init__(
        self,
        every_s: float,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(every_s, stream, clock)
        self.total = 0
        self.done = 0
        self.failed = 0
        self.reused = 0
        self._lock = threading.Lock()  # the timer thread and `advance` both print

    @contextmanager
    def counting(
        self, total: int, *, reused: int = 0, timer: bool = True
    ) -> Iterator[SweepStatusLines]:
        """Count `total` runs in all, of which `reused` were finished before (found in the
        store), from now; the last line when the body ends without an exception. `timer`: the
        thread that prints when an interval passes with no run finishing."""
        with self._lock:
            self.total, self.done, self.failed, self.reused = total, reused, 0, reused
            self._start = self._last = self._clock()
        stop = threading.Event()
        thread = None
        if timer:
            thread = threading.Thread(
                target=self._tick_until, args=(stop,), name="cnsim-status", daemon=True
            )
            thread.start()
        try:
            yield self
        finally:
            stop.set()
            if thread is not None:
                thread.join()
        with self._lock:
            self._print(self.current_line(), self._clock())

    def advance(self, *, failed: bool = False) -> None:
        """One more run finished (`failed` when it did not end well)."""
        with self._lock:
            self.done += 1
            self.failed += failed
            self._line_if_due()

    def tick(self) -> None:
        """A line if `every_s` has passed since the last one (the timer thread's call)."""
        with self._lock:
            self._line_if_due()

    def _line_if_due(self) -> None:
        """The last line is `counting`'s, once the body has ended well."""
        now = self._clock()
        if self.done < self.total and self._due(now):
            self._print(self.current_line(now), now)

    def current_line(self, now: float | None = None) -> str:
        """The line for the counts so far."""
        elapsed_s = (self._clock() if now is None else now) - self._start
        return self.line(self.done, self.total, elapsed_s, failed=self.failed, reused=self.reused)

    @staticmethod
    def line(done: int, total: int, elapsed_s: float, *, failed: int = 0, reused: int = 0) -> str:
        """ "cnsim sweep: 37 of 150 runs done (24.7%), 2 min 03 s elapsed, about 6 min 15 s
        left": `done` counts the `reused` runs (found finished, so they say nothing of the
        pace) and the `failed` ones; the elapsed time is this call's."""
        share = done / total if total else 1.0
        text = f"cnsim sweep: {done} of {total} runs done ({100 * share:.1f}%"
        text += f", {reused} reused)" if reused else ")"
        if failed:
            text += f", {failed} failed"
        text += f", {duration_text(elapsed_s)} elapsed"
        executed = done - reused
        if executed > 0 and done < total:
            text += f", about {duration_text(elapsed_s * (total - done) / executed)} left"
        return text

    def _tick_until(self, stop: threading.Event) -> None:
        while True:
            with self._lock:
                wait_s = self.every_s - (self._clock() - self._last)
            if stop.wait(max(wait_s, TIMER_MIN_S)):
                return
            self.tick()
