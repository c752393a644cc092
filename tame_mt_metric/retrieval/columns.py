"""Text columns as the core reads them: Python lists of strings, or Arrow string
columns (``string`` or ``large_string``, chunked) whose buffers the core reads in
place, with no Python string per row. Nulls, and columns that hold no text, are
typed errors naming the column and the row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import pyarrow as pa
import tame_mt_core as _core

from tame_mt_metric.errors import InputTextError

__all__ = ["Column", "arrow_texts", "is_arrow", "string_column", "texts_at"]

# A column of training text: a list of strings or an Arrow column.
Column: TypeAlias = Sequence[str] | pa.ChunkedArray

_STRINGS = (pa.string(), pa.large_string())


def is_arrow(column: object) -> bool:
    return isinstance(column, pa.ChunkedArray | pa.Array)


def string_column(name: str, column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray:
    """``column`` as a chunked string column without nulls, or an error naming
    ``name`` and the first null row. Other text encodings (``string_view``, a
    dictionary of strings) are cast to ``large_string``."""
    if isinstance(column, pa.Array):
        column = pa.chunked_array([column], column.type)
    kind = column.type
    if kind not in _STRINGS:
        text_like = pa.types.is_string_view(kind) or (
            pa.types.is_dictionary(kind) and kind.value_type in _STRINGS
        )
        if not text_like:
            raise InputTextError(f"{name}: expected a column of strings, got Arrow type {kind}")
        column = column.cast(pa.large_string())
    if column.null_count:
        import pyarrow.compute as pc  # on this error only: its import takes 40 ms

        first = pc.index(pc.is_null(column), True).as_py()
        raise InputTextError(f"{name}[{first}]: expected a string, got None (a null)")
    return column


def arrow_texts(
    column: pa.ChunkedArray, start: int, stop: int, argument: str, row_base: int = 0
) -> _core.ArrowTexts:
    """Rows ``[start, stop)`` of a checked string column (``string_column``), read in
    place by the core; errors name ``argument`` and the row (``row_base + start`` first)."""
    chunks = []
    for chunk in column.slice(start, stop - start).chunks:
        if not len(chunk):
            continue
        _, offsets, data = chunk.buffers()
        chunks.append(
            (
                memoryview(offsets).cast("B"),
                memoryview(data if data is not None else b"").cast("B"),
                chunk.offset,
                len(chunk),
                chunk.type == pa.large_string(),
            )
        )
    return _core.ArrowTexts(chunks, argument, row_base + start)


def texts_at(column: Column, rows: Sequence[int]) -> dict[int, str]:
    """The texts of some rows, by row (an Arrow column is read only there)."""
    wanted = sorted(set(rows))
    if not is_arrow(column):
        return {r: column[r] for r in wanted}
    assert isinstance(column, pa.ChunkedArray)
    # Element by element: a few rows, and ``take`` would import pandas (0.2 s).
    return {r: column[r].as_py() for r in wanted}
