"""Status lines for long runs in logs and batch jobs: `cnsim run --status-every SECONDS`.

The progress bar is drawn only on a terminal or in a notebook (`terminal.py`), so a run whose
stderr goes to a file says nothing until it ends: 1 h 40 min for 5 simulated seconds of
`meta-fabric-6144`. With `--status-every`, the run prints one plain line to stderr every
SECONDS of wall time (and one when it completes): the share simulated, the time elapsed and, at
the pace so far, the time left. Like OMNeT++'s Cmdenv status lines, but asked for, so that logs
stay clean by default. No rich here: `cnsim run -q --status-every ...` imports nothing heavy.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["StatusLines", "duration_text"]


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


class StatusLines:
    """The native run's progress callback (it gets the share simulated, 0 to 1) that prints a
    status line at most every `every_s` seconds of wall time, and always at completion."""

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

    def __call__(self, fraction: float) -> None:
        now = self._clock()
        done = fraction >= 1.0
        if not done and now - self._last < self.every_s:
            return
        self._last = now
        print(self.line(fraction, now - self._start), file=self._stream or sys.stderr, flush=True)

    @staticmethod
    def line(fraction: float, elapsed_s: float) -> str:
        """ "cnsim: 24.0% simulated, 23 min 50 s elapsed, about 1 h 15 min left"."""
        share = min(max(fraction, 0.0), 1.0)
        text = f"cnsim: {100 * share:.1f}% simulated, {duration_text(elapsed_s)} elapsed"
        if 0.0 < share < 1.0:
            text += f", about {duration_text(elapsed_s * (1 - share) / share)} left"
        return text
