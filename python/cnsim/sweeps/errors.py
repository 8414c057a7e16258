"""The sweep's own error type, apart so that every sweep module (and api.py) can import it."""

from __future__ import annotations


class SweepError(ValueError):
    """A sweep file is wrong: the message names the key at fault and what was expected."""
