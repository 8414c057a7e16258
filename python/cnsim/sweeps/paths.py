"""Summary paths: how a sweep names the scalar it collects from each run's summary.json.

Syntax: keys joined by dots, as TOML dotted keys read. A key that holds a dot or a double
quote is written in double quotes; anything else (including the `->` of port names) is bare:

    per_port.core->ep4.peak_queue_bytes
    window.fairness_index
    metrics.transient_duration_s
    per_port."sw.1->h0".peak_queue_bytes

The path must end at a scalar (number, bool, string or null), not at a table.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from cnsim.sweeps.errors import SweepError


def parse_path(text: str) -> tuple[str, ...]:
    """Split a summary path into its keys; SweepError on empty keys or unbalanced quotes."""
    keys: list[str] = []
    rest = text.strip()
    while rest:
        key, rest = _next_key(rest, text)
        keys.append(key)
        if rest and not rest.startswith("."):
            raise SweepError(f"metric path {text!r}: expected '.' after {key!r}")
        rest = rest[1:]
        if not rest and text.strip().endswith("."):
            raise SweepError(f"metric path {text!r}: ends with '.'")
    if not keys:
        raise SweepError("metric path is empty")
    return tuple(keys)


def _next_key(rest: str, text: str) -> tuple[str, str]:
    """The first key of `rest` and what follows it."""
    if rest.startswith('"'):
        end = rest.find('"', 1)
        if end < 0:
            raise SweepError(f"metric path {text!r}: unbalanced double quote")
        return rest[1:end], rest[end + 1 :]
    end = rest.find(".")
    key = rest if end < 0 else rest[:end]
    if not key or '"' in key:
        raise SweepError(f"metric path {text!r}: empty or half-quoted key")
    return key, rest[len(key) :]


def format_path(keys: tuple[str, ...] | list[str]) -> str:
    """Inverse of `parse_path`: quote the keys that need it."""
    return ".".join(f'"{k}"' if ("." in k or '"' in k or not k) else k for k in keys)


def extract(summary: Mapping[str, Any], path: str) -> Any:
    """The scalar at `path`; KeyError (with close names) when a key is missing.

    A table the run does not have (null in summary.json: `window` without a window, `flows`
    without a flow workload) gives None for every path through it.
    """
    node: Any = summary
    keys = parse_path(path)
    for depth, key in enumerate(keys):
        if node is None and depth > 0:
            return None
        if not isinstance(node, Mapping) or key not in node:
            raise KeyError(_missing_message(path, keys[:depth], key, node))
        node = node[key]
    if isinstance(node, Mapping | list):
        raise KeyError(f"metric path {path!r} is a table, not a number; pick one of its keys")
    return node


def _missing_message(path: str, parent: tuple[str, ...], key: str, node: Any) -> str:
    where = format_path(parent) or "the summary"
    if not isinstance(node, Mapping):
        return f"metric path {path!r}: {where} is not a table"
    known = [str(k) for k in node]
    close = difflib.get_close_matches(key, known, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}?" if close else f"{where} has {', '.join(known)}"
    return f"metric path {path!r}: no key {key!r} in {where}; {hint}"


def scalar_paths(node: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[str]:
    """Every path to a scalar under `node` (to list what a summary offers)."""
    out: list[str] = []
    for key, value in node.items():
        keys = (*prefix, str(key))
        if isinstance(value, Mapping):
            out.extend(scalar_paths(value, keys))
        elif not isinstance(value, list):
            out.append(format_path(keys))
    return out
