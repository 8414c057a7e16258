"""What the fluid models share: time courses (arrays over the same samples, cut to a window)
and a bottleneck capacity that may change at given times (a link's `schedule`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Self

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class TimeCourse:
    """A time course sampled at `time_s`; a subclass adds one array per quantity."""

    time_s: npt.NDArray[np.float64]

    def window(self, start_s: float, end_s: float = math.inf) -> Self:
        """The samples with start_s <= t <= end_s, every array cut alike."""
        keep = (self.time_s >= start_s) & (self.time_s <= end_s)
        return type(self)(**{f.name: getattr(self, f.name)[keep] for f in fields(self)})


def capacity_at(
    capacity_bps: float, schedule: tuple[tuple[float, float], ...], time_s: float
) -> float:
    """The capacity at `time_s`: `capacity_bps` until the first (at_s, rate_bps) change."""
    rate = capacity_bps
    for at_s, rate_bps in schedule:
        if at_s <= time_s:
            rate = rate_bps
    return rate


class CapacitySteps:
    """The capacity per integration step, for a loop that walks the steps in order."""

    def __init__(
        self, capacity_bps: float, schedule: tuple[tuple[float, float], ...], step_s: float
    ) -> None:
        self._rate = capacity_bps
        self._changes = [(round(at_s / step_s), rate) for at_s, rate in sorted(schedule)]
        self._next = 0

    def at_step(self, k: int) -> float:
        while self._next < len(self._changes) and self._changes[self._next][0] <= k:
            self._rate = self._changes[self._next][1]
            self._next += 1
        return self._rate
