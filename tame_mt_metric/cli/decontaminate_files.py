"""The outputs of ``decontaminate``: the kept training pairs, copied byte for
byte as read (line endings, a byte-order mark, a last line without newline),
or a dataset's kept rows (``decontaminate_datasets.py``), the removed rows as
JSON lines, and the summary, all written under temporary names and renamed
only when every one is whole, so that an error or Ctrl-C leaves no output at
all.

The kept lines are copied from the raw bytes of a second pass over each file,
split into lines as the corpus reader splits them (at ``\\n``; a last piece
without newline is a line when it is not empty), never re-encoded from text.
"""

from __future__ import annotations

import gzip
import json
import zlib
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol

from tame_mt_metric.errors import MisalignedInputError
from tame_mt_metric.files import (
    atomic_folder,
    atomic_path,
    line_limit,
    line_too_long,
    output_stream,
    regular_file,
)
from tame_mt_metric.retrieval.inputs import BOM, gzip_damage, opening_whole

__all__ = [
    "KeptCopy",
    "KeptRows",
    "RemovedRow",
    "kept_lines",
    "removed_line",
    "write_outputs",
]

# Bytes read from a training file at a time.
_READ_BYTES = 8 << 20


class RemovedRow(Protocol):
    """What a removed row's JSON line is made of (``RemovedPair``'s fields)."""

    @property
    def train_index(self) -> int: ...
    @property
    def test_set(self) -> str: ...
    @property
    def test_index(self) -> int: ...
    @property
    def similarity(self) -> Fraction: ...
    @property
    def by(self) -> str: ...


class KeptRows(Protocol):
    """A copy of the training corpus without its removed rows: written to a
    temporary name (a file, or a folder when ``folder``) that is renamed to
    ``destination`` once every output is whole."""

    @property
    def destination(self) -> Path: ...
    @property
    def folder(self) -> bool: ...

    def write(self, tmp: Path, removed: Sequence[int], rows: int) -> None:
        """Write the rows but ``removed`` (0-based, increasing) to ``tmp``; the
        input must still hold ``rows`` rows, else ``MisalignedInputError``."""
        ...


@dataclass(frozen=True)
class KeptCopy:
    """One training file and where its kept lines go (``.gz``: compressed)."""

    source: Path
    destination: Path
    folder = False

    def write(self, tmp: Path, removed: Sequence[int], rows: int) -> None:
        """The kept lines, byte for byte (``kept_lines``)."""
        with output_stream(self.destination, tmp) as out:
            for piece in kept_lines(self.source, removed, rows):
                out.write(piece)


def removed_line(row: RemovedRow) -> dict[str, Any]:
    """A removed row as its JSON line: the similarity as a float and exactly."""
    similarity = Fraction(row.similarity)
    return {
        "train_index": row.train_index,
        "test_set": row.test_set,
        "test_index": row.test_index,
        "similarity": float(similarity),
        "similarity_exact": str(similarity),  # "7/10"; "1" for 1, as Fraction writes it
        "by": row.by,
    }


def _raw_pieces(path: Path) -> Iterator[bytes]:
    """The decompressed bytes of ``path`` in pieces of a few megabytes."""
    regular_file(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        try:
            while piece := f.read(_READ_BYTES):
                yield piece
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise gzip_damage(str(path), exc, 0) from exc


def kept_lines(path: Path, removed: Sequence[int], rows: int) -> Iterator[bytes]:
    """The raw bytes of ``path``'s lines but those numbered in ``removed``
    (0-based, increasing), each with its own line ending, in order; a byte-order
    mark opening the file opens the copy too. The file must hold ``rows`` lines:
    a file that changed since it was read is a ``MisalignedInputError``."""
    row = 0  # the number of the line that ``rest`` begins
    rest = b""
    opening = True
    for piece in opening_whole(_raw_pieces(path)):
        if opening and piece.startswith(BOM):
            yield BOM
            piece = piece[len(BOM) :]
        opening = False
        data = rest + piece
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            if len(data) > line_limit() + 2:
                raise line_too_long(f"{path}:{row + 1}")
            rest = data
            continue
        whole, rest = data[:cut], data[cut:]
        count = whole.count(b"\n")
        yield from _kept_of(whole, row, count, removed)
        row += count
    if rest:
        yield from _kept_of(rest, row, 1, removed)
        row += 1
    if row != rows:
        raise MisalignedInputError(
            f"{path}: {row:,} lines now, but {rows:,} when the corpus was read "
            "(the file changed while the command ran)"
        )


def _kept_of(whole: bytes, row: int, count: int, removed: Sequence[int]) -> Iterator[bytes]:
    """The kept lines of ``count`` lines that begin at line ``row``: the whole
    piece at once when none of them is removed."""
    lo = bisect_left(removed, row)
    hi = bisect_left(removed, row + count, lo)
    if lo == hi:
        yield whole
        return
    gone = set(removed[lo:hi])
    lines = whole.split(b"\n")
    if whole.endswith(b"\n"):
        lines.pop()
        ending = b"\n"
    else:
        ending = b""
    last = len(lines) - 1
    for i, line in enumerate(lines):
        if row + i not in gone:
            yield line + (b"\n" if i < last else ending)


def write_outputs(
    copies: Sequence[KeptRows],
    removed_rows: Sequence[RemovedRow],
    rows: int,
    removed_out: Path,
    documents: Iterable[tuple[Path, Any]] = (),
) -> None:
    """Every output of one decontamination, renamed into place together once all
    are whole: each file's kept lines, the removed rows (one JSON line each, in
    increasing ``train_index``) and the JSON ``documents`` (path, value). Each
    of ``copies`` writes its kept rows to a temporary name of its own."""
    removed = [row.train_index for row in removed_rows]
    if any(b <= a for a, b in pairwise(removed)):
        raise ValueError("removed rows must come in increasing train_index")
    with ExitStack() as stack:
        for copy in copies:
            staging = atomic_folder if copy.folder else atomic_path
            copy.write(stack.enter_context(staging(copy.destination)), removed, rows)
        lines = (json.dumps(removed_line(r), ensure_ascii=False) + "\n" for r in removed_rows)
        _write_text(stack, removed_out, lines)
        for path, value in documents:
            text = json.dumps(value, ensure_ascii=False, indent=1, allow_nan=False) + "\n"
            _write_text(stack, path, [text])


def _write_text(stack: ExitStack, path: Path, pieces: Iterable[str]) -> None:
    tmp = stack.enter_context(atomic_path(path))
    with output_stream(path, tmp) as out:
        for piece in pieces:
            out.write(piece.encode("utf-8"))
