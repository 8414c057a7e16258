"""What a sweep keeps per run: the one definition `cnsim.sweep(keep=...)`, `cnsim sweep --keep`
and the store share (docs/sweeps.md, "The store").

runs.parquet is always written. Light on purpose (no pandas, no pydantic): the CLI names the
choices when it starts, which `cnsim --version` and `cnsim run -q` must not pay for.
"""

from __future__ import annotations

from enum import StrEnum

from cnsim.sweeps.errors import SweepError


class Keep(StrEnum):
    """What a sweep keeps per run (runs.parquet is always written)."""

    none = "none"  # only runs.parquet survives
    summary = "summary"  # each run's summary.json
    full = "full"  # and its timeseries.parquet (`timeseries_mean`) and flows.parquet

    @classmethod
    def parse(cls, value: object) -> Keep:
        """`value` ("none", "summary", "full" or a Keep) as a Keep; a SweepError names the
        choices otherwise."""
        if isinstance(value, str) and value in cls._value2member_map_:
            return cls(value)
        raise SweepError(f"keep: expected one of {', '.join(cls)} (got {value!r})")
