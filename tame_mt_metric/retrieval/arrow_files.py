"""The Arrow files behind a memory-mapped ``datasets.Dataset``, read as a stream of
record batches. Read through the memory map, every page of a corpus stays in the
process's resident memory until the map is closed (gigabytes at 10^7 pairs);
read from the file, a block's batches are freed once the core has read them,
so memory holds about one block. Used only where the files hold exactly the
Dataset's rows (no row selection, no transform but new metadata)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

__all__ = ["DatasetFiles", "dataset_files"]

# What datasets may replay on a memory-mapped table without changing its rows.
_HARMLESS = {"replace_schema_metadata"}


@dataclass(frozen=True)
class DatasetFiles:
    """Arrow stream files whose rows, in order, are a corpus's rows."""

    paths: tuple[Path, ...]

    def blocks(
        self,
        rows: int,
        columns: Callable[[pa.Table], tuple[pa.ChunkedArray, pa.ChunkedArray]],
        start: int = 0,
        stop: int | None = None,
    ) -> Iterator[tuple[pa.ChunkedArray, pa.ChunkedArray, int]]:
        """Blocks of rows ``[start, stop)``: ``(sources, targets, first row)``, about
        ``rows`` each; ``columns`` picks the two sides of a table of batches."""
        pending: list[pa.RecordBatch] = []
        held, row = 0, 0  # rows pending; the global row of the first pending
        for batch in self._batches():
            end = row + held + batch.num_rows
            if end <= start:  # before the range: skipped whole
                row = end
                continue
            pending.append(batch)
            held += batch.num_rows
            if held >= rows or (stop is not None and end >= stop):
                yield from self._cut(pending, row, start, stop, rows, columns)
                pending, row, held = [], end, 0
            if stop is not None and end >= stop:
                return
        if pending:
            yield from self._cut(pending, row, start, stop, rows, columns)

    def _batches(self) -> Iterator[pa.RecordBatch]:
        for path in self.paths:
            with pa.OSFile(str(path), "rb") as f:
                yield from pa.ipc.open_stream(f)
        pa.default_memory_pool().release_unused()

    @staticmethod
    def _cut(
        pending: list[pa.RecordBatch],
        row: int,
        start: int,
        stop: int | None,
        rows: int,
        columns: Callable[[pa.Table], tuple[pa.ChunkedArray, pa.ChunkedArray]],
    ) -> Iterator[tuple[pa.ChunkedArray, pa.ChunkedArray, int]]:
        """The pending batches' rows in the range, at most ``rows`` a block."""
        table = pa.Table.from_batches(pending)
        lo = max(start - row, 0)
        hi = table.num_rows if stop is None else min(table.num_rows, stop - row)
        for first in range(lo, hi, rows):
            sources, targets = columns(table.slice(first, min(rows, hi - first)))
            yield sources, targets, row + first


def dataset_files(dataset: Any) -> DatasetFiles | None:
    """The file of a memory-mapped Dataset that holds exactly its rows, or None: one
    memory-mapped table (datasets maps it from that file, whole), no row
    selection, nothing replayed on it but metadata, and the file's schema."""
    data: Any = getattr(dataset, "data", None)
    if type(data).__name__ != "MemoryMappedTable" or getattr(dataset, "_indices", 1) is not None:
        return None
    if any(replay[0] not in _HARMLESS for replay in getattr(data, "replays", None) or [("?",)]):
        return None
    path = Path(getattr(data, "path", ""))
    if [Path(f["filename"]) for f in dataset.cache_files] != [path]:
        return None
    try:
        with pa.OSFile(str(path), "rb") as f:
            schema = pa.ipc.open_stream(f).schema  # reads the schema message only
    except (OSError, pa.ArrowException):
        return None
    if schema.remove_metadata() != data.schema.remove_metadata():
        return None
    return DatasetFiles((path,))
