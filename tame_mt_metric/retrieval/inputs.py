"""Checks and readers for user-supplied texts: every failure names the
argument or file and the item or line."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

from tame_mt_metric.errors import (
    EmptyCorpusError,
    InputTextError,
    InputTooLargeError,
    MisalignedInputError,
)
from tame_mt_metric.files import limit_of, line_limit, line_too_long, regular_file

__all__ = [
    "BOM",
    "TEST_ITEMS_ENV",
    "check_aligned",
    "check_test_size",
    "check_text",
    "check_texts",
    "check_training",
    "check_unicode",
    "gzip_damage",
    "iter_lines",
    "lines_of",
    "max_test_items",
    "opening_whole",
    "read_lines",
    "references_per_item",
]


# The most test items one report takes (``TAME_MT_MAX_TEST_ITEMS`` moves it):
# every item costs a few kilobytes while its exposures, TM hypotheses,
# statistics and segment rows are made, so a test set of millions of lines
# (a file of newlines, a corpus given as the test set) is refused before any
# work instead of exhausting the machine.
TEST_ITEMS_ENV = "TAME_MT_MAX_TEST_ITEMS"
DEFAULT_MAX_TEST_ITEMS = 1 << 18
_MOST_TEST_ITEMS = 1 << 26


def max_test_items() -> int:
    """The most test items one report takes (262,144 unless ``TAME_MT_MAX_TEST_ITEMS``)."""
    return limit_of(TEST_ITEMS_ENV, DEFAULT_MAX_TEST_ITEMS, _MOST_TEST_ITEMS)


def check_test_size(name: str, count: int) -> None:
    """A test set of at most ``max_test_items()`` items, or an error naming the limit."""
    if count > (limit := max_test_items()):
        raise InputTooLargeError(
            f"{name}: {count:,} test items, over the limit of {limit:,} ({TEST_ITEMS_ENV} "
            "raises it; each item costs a few kilobytes of memory while a report is made)"
        )


def check_texts(name: str, items: object, start: int = 0) -> list[str]:
    """A list of strings, or an error naming the argument and the first bad item
    (numbered from `start`, for blocks of a longer stream)."""
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise InputTextError(f"{name}: expected a list of strings, got {type(items).__name__}")
    if not set(map(type, items)) <= {str}:  # a C-speed pass; the loop names the culprit
        for i, item in enumerate(items, start=start):
            if not isinstance(item, str):
                raise InputTextError(f"{name}[{i}]: expected a string, got {type(item).__name__}")
    return list(items)


def check_text(name: str, text: object) -> str:
    """One string that UTF-8 can hold, or an error naming the argument."""
    if not isinstance(text, str):
        raise InputTextError(f"{name}: expected a string, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputTextError(f"{name}: not valid Unicode ({exc.reason})") from exc
    return text


def check_unicode(name: str, items: Sequence[str], start: int = 0) -> None:
    """Strings that UTF-8 can hold (a lone surrogate cannot), or an error naming
    the first that cannot: for texts written to Arrow before the core reads them."""
    try:
        "".join(items).encode("utf-8")
    except UnicodeEncodeError:
        for i, item in enumerate(items, start=start):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InputTextError(f"{name}[{i}]: not valid Unicode ({exc.reason})") from exc


def check_aligned(
    left_name: str, left: Sequence[object], right_name: str, right: Sequence[object]
) -> None:
    if len(left) != len(right):
        raise MisalignedInputError(
            f"{left_name} has {len(left)} items but {right_name} has {len(right)}"
        )


def check_training(sources: object, targets: object) -> tuple[list[str], list[str]]:
    src = check_texts("train_sources", sources)
    tgt = check_texts("train_targets", targets)
    check_aligned("train_sources", src, "train_targets", tgt)
    if not src:
        raise EmptyCorpusError("train_sources: the training corpus is empty")
    return src, tgt


def references_per_item(
    references: object, num_items: int, against: str = "test_sources", start: int = 0
) -> list[list[str]]:
    """References as one list per item: accepts None (no references), a list of
    strings (one per item), or a list of lists with the same count per item."""
    if references is None:
        return []
    if isinstance(references, str | bytes) or not isinstance(references, Sequence):
        raise InputTextError(f"references: expected a list, got {type(references).__name__}")
    if len(references) != num_items:
        raise MisalignedInputError(
            f"references has {len(references)} items but {against} has {num_items}"
        )
    if references and isinstance(references[0], str):
        return [[r] for r in check_texts("references", references, start)]
    per_item: list[list[str]] = []
    for i, refs in enumerate(references, start=start):
        per_item.append(check_texts(f"references[{i}]", refs))
        if len(per_item[-1]) != len(per_item[0]):
            raise MisalignedInputError(
                f"references[{i}] has {len(per_item[-1])} references, references[{start}] has "
                f"{len(per_item[0])}"
            )
    if per_item and not per_item[0]:
        raise InputTextError(f"references[{start}]: an item needs at least one reference")
    return per_item


# A UTF-8 byte-order mark: at the start of a text file it is not text.
BOM = b"\xef\xbb\xbf"


def opening_whole(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """``pieces`` (of a file, in order), the first of them holding the file's first
    bytes up to a byte-order mark's length (or the whole file, if shorter), so
    that a mark is seen whole however the reads fall."""
    opening = b""
    for piece in pieces:
        opening += piece
        if len(opening) >= len(BOM):
            break
    if opening:
        yield opening
    yield from pieces


class _Readable(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...


def iter_lines(
    path: str | Path,
    what: str = "",
    max_lines: int | None = None,
    max_bytes: int | None = None,
    lines_limit: str = "",
) -> Iterator[str]:
    """Lines of a UTF-8 text file (``.gz`` is decompressed), without newlines,
    as ``lines_of`` splits them. The path must name a regular file
    (``files.regular_file``); the bounds are those of ``lines_of``."""
    p = regular_file(path, what)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rb") as f:
        name = f"{what}: {p}" if what else str(p)
        yield from lines_of(f, name, max_lines, max_bytes, lines_limit)


def lines_of(
    stream: _Readable,
    name: str,
    max_lines: int | None = None,
    max_bytes: int | None = None,
    lines_limit: str = "",
) -> Iterator[str]:
    """Lines of a UTF-8 byte stream (a file, standard input), as every text input
    is split (``text_files.file_lines`` too): at ``b"\\n"`` only, so that U+2028,
    U+2029, U+0085, ``\\v``, ``\\f``, a lone ``\\r`` and NUL stay inside their
    line (``str.splitlines`` would split at most of them); one ``\\r`` before
    the newline (or ending the last line) is not text; a byte-order mark at the
    start is not text either, and a stream of nothing else has no line; a last
    line without newline is a line. A line at a time, none past the line limit
    (``files.line_limit``, counted without the mark), at most ``max_lines`` lines
    and ``max_bytes`` bytes (decompressed), so that no stream (``/dev/zero``, a
    gzip bomb) is held whole; errors name the stream and the line;
    ``lines_limit`` names the limit ``max_lines`` stands for."""
    limit = line_limit()
    number = size = 0
    try:
        # The first line is read with room for a byte-order mark, dropped here.
        while raw := stream.readline(limit + 2 + (0 if number else len(BOM))):
            if not number:
                raw = raw.removeprefix(BOM)
                if not raw:
                    break
            number += 1
            size += len(raw)
            if len(raw.rstrip(b"\n").removesuffix(b"\r")) > limit:
                raise line_too_long(f"{name}:{number}")
            if max_lines is not None and number > max_lines:
                over = f": over {lines_limit}" if lines_limit else ""
                raise InputTooLargeError(f"{name}: more than {max_lines:,} lines{over}")
            if max_bytes is not None and size > max_bytes:
                raise InputTooLargeError(f"{name}: more than {max_bytes:,} bytes of text")
            try:
                line: str = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputTextError(f"{name}:{number}: not valid UTF-8 ({exc.reason})") from exc
            yield line.removesuffix("\n").removesuffix("\r")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise gzip_damage(name, exc, number) from exc


def gzip_damage(name: str, exc: Exception, whole_lines: int) -> InputTextError:
    """The error of a ``.gz`` file that cannot be read to its end, naming the file
    and the last whole line read: truncated (it stops before gzip's end-of-stream
    marker: a copy or download cut short), damaged (corrupt data, a failed
    checksum), or no gzip file at all."""
    where = f"after line {whole_lines:,}" if whole_lines else "within its first line"
    if isinstance(exc, EOFError):
        return InputTextError(
            f"{name}: a truncated gzip file: it ends {where}, before gzip's end-of-stream "
            "marker (a copy or download cut short?)"
        )
    reason = str(exc) or type(exc).__name__
    if whole_lines == 0 and reason.startswith("Not a gzipped file"):
        return InputTextError(f"{name}: not a gzip file, though its name ends in .gz ({reason})")
    return InputTextError(f"{name}: a damaged gzip file: unreadable {where} ({reason})")


def read_lines(
    path: str | Path,
    what: str = "",
    max_lines: int | None = None,
    max_bytes: int | None = None,
    lines_limit: str = "",
) -> list[str]:
    return list(iter_lines(path, what, max_lines, max_bytes, lines_limit))
