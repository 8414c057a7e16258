"""What the fluid models' time courses share: arrays over the same samples, cut to a window."""

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
