"""Streamed outputs: a run's flow records and probe rows written as Parquet row groups while the
run goes, so the memory they take stays bounded (docs/outputs.md, "Streamed files").

The core hands the rows over in batches (`cnsim._native.run(..., sink=StreamWriter)`: every
2^16 events, and once at the end); they are gathered into row groups of at least ROW_GROUP_ROWS
rows (the last one smaller) of `timeseries.parquet` and `flows.parquet`. The files hold the
rows, columns, types and order of the files an in-memory run writes (`outputs.write_run`):
`Result.load` gives equal tables (tests/test_stream.py). Only pyarrow: a streamed run imports
pandas only if asked for a DataFrame.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cnsim.outputs import FLOWS_FILE, TIMESERIES_FILE
from cnsim.result import (
    FLOW_COLUMNS,
    TIMESERIES_COLUMNS,
    NativeFlows,
    NativeTimeseries,
    _arrow_array,
    _as_built,
    _codes,
    _dictionary,
)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

# Entity codes of a streamed time series: the entities are named as the run goes (a rate
# limiter on first use), so the width an in-memory run picks from their final count is not
# known when the first row group is written. pandas reads the codes back to the same type.
ENTITY_CODES = np.int32
# Rows gathered into one row group: what the writer holds at most besides the batch at hand
# (about 6.5 MB of flow records, 1.5 MB of probe rows).
ROW_GROUP_ROWS = 1 << 16


class Folder:
    """Where a run's files are: the hidden temporary directory while it is written, then the
    run directory (`outputs.staged_run_dir` moves it)."""

    def __init__(self, path: Path) -> None:
        self.path = path


class StreamWriter:
    """The sink of a streamed run: `hosts(names)` once, then `batch(series, flows)` per batch;
    `close(late_drops)` when the run has returned. Holds the rows of one row group in the
    making (under ROW_GROUP_ROWS before the batch at hand), plus the entity and host names."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._hosts: list[str] = []
        self._metrics: list[str] = []
        self._entities: list[str] = []
        self._series: pq.ParquetWriter | None = None
        self._flows: pq.ParquetWriter | None = None
        self._parts: dict[str, list[dict[str, np.ndarray]]] = {TIMESERIES_FILE: [], FLOWS_FILE: []}
        self._held = {TIMESERIES_FILE: 0, FLOWS_FILE: 0}
        self.rows = {TIMESERIES_FILE: 0, FLOWS_FILE: 0}
        self.batches = 0

    def hosts(self, names: Sequence[str]) -> None:
        self._hosts = list(names)

    def batch(self, series: Mapping[str, Any], flows: Mapping[str, Any]) -> None:
        """One batch from the core: the probe rows and flow records since the last one."""
        self.batches += 1
        self._metrics = list(series["metrics"])
        self._entities.extend(series["entities"])
        for name, columns in ((TIMESERIES_FILE, series), (FLOWS_FILE, flows)):
            rows = len(columns["time_s" if name == TIMESERIES_FILE else "flow_id"])
            if rows:
                keys = TIMESERIES_COLUMNS if name == TIMESERIES_FILE else FLOW_COLUMNS
                part = {k: np.asarray(columns[k]) for k in keys if k in columns}
                self._parts[name].append(part)
                self._held[name] += rows
            if self._held[name] >= ROW_GROUP_ROWS:
                self._flush(name)

    def _flush(self, name: str) -> None:
        """Write the rows held for `name` as one row group."""
        parts = self._parts[name]
        if not parts:
            return
        columns = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        self._parts[name], self._held[name] = [], 0
        if name == TIMESERIES_FILE:
            table = self._series_table(columns)
            if self._series is None:
                self._series = _open(self.folder / name, table.schema)
            self._series.write_table(table)
        else:
            table = NativeFlows.from_native(columns, self._hosts).arrow()
            if self._flows is None:
                self._flows = _open(self.folder / name, table.schema)
            self._flows.write_table(table)
        self.rows[name] += table.num_rows

    def _series_table(self, series: Mapping[str, Any]) -> pa.Table:
        """A batch as `NativeTimeseries.arrow()` makes the whole table, entity codes int32."""
        import pyarrow as pa

        codes = _codes(np.asarray(series["entity"]), self._entities).astype(ENTITY_CODES)
        metric = _codes(np.asarray(series["metric"]), self._metrics)
        return pa.table(
            {
                "time_s": _arrow_array(np.asarray(series["time_s"], dtype=np.float64)),
                "metric": _dictionary(metric, self._metrics),
                "entity": _dictionary(codes, self._entities),
                "value": _arrow_array(np.asarray(series["value"], dtype=np.float64)),
            }
        )

    def close(self, late_drops: Sequence[tuple[int, int]] = ()) -> None:
        """Finish the files (a time series without rows as an in-memory run writes it), patch
        `frames_dropped` of the flows listed in `late_drops`, and sync them."""
        self._flush(TIMESERIES_FILE)
        self._flush(FLOWS_FILE)
        if self._series is None:
            empty: dict[str, Any] = {name: np.zeros(0, np.uint32) for name in TIMESERIES_COLUMNS}
            empty.update(metrics=self._metrics, entities=self._entities)
            table = NativeTimeseries.from_native(empty).arrow()
            self._series = _open(self.folder / TIMESERIES_FILE, table.schema)
            self._series.write_table(table)
        self.abort()
        if late_drops:
            patch_frames_dropped(self.folder / FLOWS_FILE, dict(late_drops))
        for name in (TIMESERIES_FILE, FLOWS_FILE):
            if (self.folder / name).exists():
                _fsync(self.folder / name)

    def abort(self) -> None:
        """Close the open files (the run failed: the temporary directory is then removed)."""
        for writer in (self._series, self._flows):
            if writer is not None:
                writer.close()

    def tables(self, folder: Folder) -> tuple[StoredTable, StoredTable | None, list[str]]:
        """The time series and the flows (None when no flow started) as read from `folder`,
        and the host names."""
        flows = StoredTable(folder, FLOWS_FILE, self.rows[FLOWS_FILE])
        series = StoredTable(folder, TIMESERIES_FILE, self.rows[TIMESERIES_FILE])
        return series, (flows if self.rows[FLOWS_FILE] else None), self._hosts


def _open(path: Path, schema: pa.Schema) -> pq.ParquetWriter:
    """A Parquet writer with `outputs._write_parquet`'s settings (snappy)."""
    import pyarrow.parquet as pq

    try:
        return pq.ParquetWriter(path, schema, compression="snappy")
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def patch_frames_dropped(path: Path, counts: Mapping[int, int]) -> None:
    """Rewrite `path` (flows.parquet) row group by row group with `frames_dropped` of the
    given flow ids replaced: frames lost after their flow's row was written (a transport's
    spurious copy dropped after the last ACK). Holds one row group at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = np.fromiter(counts.keys(), dtype=np.int64)
    values = np.fromiter(counts.values(), dtype=np.int64)
    order = np.argsort(ids)
    ids, values = ids[order], values[order]
    source = pq.ParquetFile(path)
    patched = path.with_name(path.name + ".patch")
    writer = _open(patched, source.schema_arrow)
    try:
        for group in range(source.num_row_groups):
            table = source.read_row_group(group)
            flow_id = table.column("flow_id").to_numpy().astype(np.int64)
            dropped = table.column("frames_dropped").to_numpy().copy()
            at = np.searchsorted(ids, flow_id)
            hit = (at < len(ids)) & (ids[np.minimum(at, len(ids) - 1)] == flow_id)
            dropped[hit] = values[at[hit]]
            column = table.schema.get_field_index("frames_dropped")
            table = table.set_column(column, "frames_dropped", pa.array(dropped))
            writer.write_table(table)
    finally:
        writer.close()
    os.replace(patched, path)


class StoredTable:
    """A streamed table, read from its file when first asked for (`Result` holds it where an
    in-memory run holds the native columns)."""

    def __init__(self, folder: Folder, name: str, rows: int) -> None:
        self.folder = folder
        self.name = name
        self.rows = rows

    @property
    def path(self) -> Path:
        return self.folder.path / self.name

    def __len__(self) -> int:
        return self.rows

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return _as_built(pd.read_parquet(self.path))

    def arrow(self) -> pa.Table:
        import pyarrow.parquet as pq

        return pq.read_table(self.path)


__all__ = ["Folder", "StoredTable", "StreamWriter", "patch_frames_dropped"]
