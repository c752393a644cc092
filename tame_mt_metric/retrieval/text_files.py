"""A training corpus as two line-aligned UTF-8 text files (``.gz`` too), read
block by block each time it is needed: the lines of a block are split by
Arrow (no Python string per line) and read in place by the core, so memory
holds one block, whatever the size of the files. The same rules as
``inputs.iter_lines``: a byte-order mark at the start is dropped, one ``\\r``
before a newline is not text, and errors name the file and the line."""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Iterator, Sequence
from functools import cached_property
from io import BufferedIOBase
from pathlib import Path

import pyarrow as pa
import tame_mt_core as _core

from tame_mt_metric.errors import EmptyCorpusError, InputTextError, MisalignedInputError
from tame_mt_metric.files import line_limit, line_too_long, regular_file
from tame_mt_metric.progress import progress
from tame_mt_metric.retrieval.columns import arrow_texts
from tame_mt_metric.retrieval.corpus import Block, TrainingCorpus, read_ahead, texts_in_blocks
from tame_mt_metric.retrieval.inputs import BOM, gzip_damage, opening_whole, read_lines

__all__ = ["TextFiles", "file_lines"]

# Bytes read from a file at a time.
_READ_BYTES = 8 << 20


def _open(path: Path) -> BufferedIOBase:
    regular_file(path)
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def _lines(data: bytes, path: Path, first_line: int) -> pa.Array:
    """The lines of ``data`` (whole lines, without their newlines) as a string array."""
    import pyarrow.compute as pc  # here, not at import: a lookup reads no text file

    # One binary value over the bytes, made from its buffers: ``pa.array`` of a
    # Python list would import pandas (half a second) to look for a DataFrame.
    offsets = pa.py_buffer(struct.pack("<2q", 0, len(data)))
    whole = pa.Array.from_buffers(pa.large_binary(), 1, [None, offsets, pa.py_buffer(data)])
    parts = pc.split_pattern(whole, b"\n").values
    if pc.any(pc.ends_with(parts, b"\r")).as_py():
        parts = pc.replace_substring_regex(parts, "\r$", "", max_replacements=1)
    lengths = pc.binary_length(parts)
    if pc.max(lengths).as_py() > line_limit():
        longest = pc.index(lengths, pc.max(lengths)).as_py()
        raise line_too_long(f"{path}:{first_line + longest}")
    try:
        return parts.cast(pa.large_string())
    except pa.ArrowInvalid:
        for i, line in enumerate(parts.to_pylist()):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputTextError(
                    f"{path}:{first_line + i}: not valid UTF-8 ({exc.reason})"
                ) from exc
        raise


def _whole_lines(path: Path) -> int:
    """The lines of a damaged gzip file that can be read whole. A read of many
    megabytes drops what it had decompressed when it meets the damage; ``read1``
    returns each piece as the decompressor gives it, so none is lost."""
    count = 0
    with gzip.open(path, "rb") as f:
        try:
            while piece := f.read1(1 << 20):
                count += piece.count(b"\n")
        except (EOFError, gzip.BadGzipFile, zlib.error):
            pass
    return count


def _reads(f: BufferedIOBase) -> Iterator[bytes]:
    while piece := f.read(_READ_BYTES):
        yield piece


def file_lines(path: Path) -> Iterator[pa.Array]:
    """The lines of a text file as string arrays of a few megabytes each, split as
    ``inputs.lines_of`` splits them (at ``b"\\n"`` only; a byte-order mark
    dropped however the first reads fall, and a file of nothing else has no line)."""
    line = 1
    with _open(path) as f:
        rest = b""
        try:
            for number, piece in enumerate(opening_whole(_reads(f))):
                data = rest + (piece.removeprefix(BOM) if number == 0 else piece)
                cut = data.rfind(b"\n")
                if cut < 0:
                    if len(data) > line_limit() + 1:  # one endless line: say so now
                        raise line_too_long(f"{path}:{line}")
                    rest = data
                    continue
                rest = data[cut + 1 :]
                lines = _lines(data[:cut], path, line)
                line += len(lines)
                yield lines
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise gzip_damage(str(path), exc, _whole_lines(path)) from exc
        if rest:
            yield _lines(rest, path, line)


class TextFiles(TrainingCorpus):
    """Training pairs as two line-aligned text files, read block by block when
    needed (never held whole); ``num_rows`` and ``fingerprint`` take one pass.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "train.en").write_text("a house\\nthe sea\\n")
    >>> _ = (folder / "train.de").write_text("ein Haus\\ndas Meer\\n")
    >>> files = TextFiles(folder / "train.en", folder / "train.de")
    >>> files.num_rows, files.targets_at([1])
    (2, {1: 'das Meer'})
    """

    def __init__(self, source: str | Path, target: str | Path) -> None:
        self.source, self.target = Path(source), Path(target)
        self.dataset = None

    def __repr__(self) -> str:
        return f"TextFiles({str(self.source)!r}, {str(self.target)!r})"

    def __getstate__(self) -> dict[str, Path]:  # the files, not what was read of them
        return {"source": self.source, "target": self.target}

    def __setstate__(self, state: dict[str, Path]) -> None:
        self.__init__(state["source"], state["target"])  # type: ignore[misc]

    @property
    def is_arrow(self) -> bool:
        return True

    def _pairs(self, rows: int) -> Iterator[tuple[pa.ChunkedArray, pa.ChunkedArray]]:
        """Aligned blocks of lines of both files, ``rows`` at a time (the last shorter)."""
        pending: list[list[pa.Array]] = [[], []]
        counts = [0, 0]
        sides = [file_lines(self.source), file_lines(self.target)]
        done = [False, False]
        while True:
            for s in (0, 1):
                while not done[s] and counts[s] < rows:
                    lines = next(sides[s], None)
                    if lines is None:
                        done[s] = True
                    elif len(lines):
                        pending[s].append(lines)
                        counts[s] += len(lines)
            n = min(rows, *counts)
            if n == 0:
                if counts[0] != counts[1]:
                    self._misaligned()
                return
            block = []
            for s in (0, 1):
                column = pa.chunked_array(pending[s], pa.large_string())
                block.append(column.slice(0, n))
                rest = column.slice(n)
                pending[s], counts[s] = list(rest.chunks), len(rest)
            yield block[0], block[1]

    def _misaligned(self) -> None:
        counts = [sum(len(lines) for lines in file_lines(p)) for p in (self.source, self.target)]
        raise MisalignedInputError(
            f"{self.target}: {counts[1]} lines, but {self.source} has {counts[0]}"
        )

    def blocks(self, rows: int, start: int = 0, stop: int | None = None) -> Iterator[Block]:
        row = 0
        for sources, targets in self._pairs(rows):
            first, n = row, len(sources)
            row += n
            if row <= start:
                continue
            if stop is not None and first >= stop:
                return
            lo, hi = max(start - first, 0), n if stop is None else min(n, stop - first)
            yield (
                arrow_texts(sources, lo, hi, "train_sources", first),
                arrow_texts(targets, lo, hi, "train_targets", first),
            )

    def block(self, start: int, stop: int) -> Block:
        sources: list[str] = []
        targets: list[str] = []
        for s, t in self.blocks(stop - start, start, stop):
            sources += [s[i] for i in range(len(s))]
            targets += [t[i] for i in range(len(t))]
        return sources, targets

    @cached_property
    def _count_and_fingerprint(self) -> tuple[int, str]:
        hasher = _core.CorpusFingerprint()
        with progress(f"reading {self.source.name}") as advance:
            for sources, targets in read_ahead(self.blocks(1 << 16)):
                hasher.update(sources, targets)
                advance(len(sources))
        if not hasher.rows:
            raise EmptyCorpusError(f"{self.source}: the training corpus is empty")
        return hasher.rows, hasher.hexdigest()

    @property
    def num_rows(self) -> int:
        return self._count_and_fingerprint[0]

    def known_rows(self) -> int | None:
        counted = self.__dict__.get("_count_and_fingerprint")
        return None if counted is None else int(counted[0])

    def whole(self) -> Block:
        return self.sources, self.targets

    @property
    def fingerprint(self) -> str:
        return self._count_and_fingerprint[1]

    def sources_at(self, rows: Sequence[int]) -> dict[int, str]:
        return texts_in_blocks(self.blocks(1 << 16), 0, rows)

    def targets_at(self, rows: Sequence[int]) -> dict[int, str]:
        return texts_in_blocks(self.blocks(1 << 16), 1, rows)

    @cached_property
    def sources(self) -> list[str]:
        return read_lines(self.source)

    @cached_property
    def targets(self) -> list[str]:
        return read_lines(self.target)
