"""``decontaminate`` on the command line: the kept pairs copied byte for byte
as read (plain or gzip, any line ending, a last line without newline), the
removed rows as JSON lines, the summary, and no output at all after an error.

The command's own tests run it in this process with a stand-in for the
library's ``decontaminate`` (the brute force of ``retrieval/reference.py``
over the same definition), so that they check what the command adds: options,
files, messages. ``test_the_command_equals_the_library`` runs the real one.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tame_mt_metric.cli import decontaminate_files
from tame_mt_metric.cli.decontaminate_files import (
    KeptCopy,
    check_output_paths,
    kept_lines,
    removed_line,
    write_outputs,
)
from tame_mt_metric.errors import InvalidOptionError, MisalignedInputError


def _reader_lines(raw: bytes) -> list[bytes]:
    """The lines of ``raw`` as the corpus reader counts them, each with its ending."""
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    lines = raw.split(b"\n")
    last = lines.pop()
    out = [line + b"\n" for line in lines]
    return [*out, last] if last else out


def _expected(raw: bytes, removed: set[int]) -> bytes:
    bom = b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b""
    return bom + b"".join(line for i, line in enumerate(_reader_lines(raw)) if i not in removed)


def _copy(path: Path, removed: Sequence[int]) -> bytes:
    rows = len(_reader_lines(_raw_of(path)))
    return b"".join(kept_lines(path, sorted(removed), rows))


def _raw_of(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


@dataclass(frozen=True)
class Removed:
    train_index: int
    test_set: str
    test_index: int
    similarity: Fraction
    by: str


# The kept lines, byte for byte -----------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"one\ntwo\nthree\n",
        b"one\r\ntwo\r\nthree",  # Windows endings, a last line without newline
        b"\xef\xbb\xbfone\ntwo\n",  # a byte-order mark opens the copy too
        b"caf\xc3\xa9\r\n\nlone\rreturn\n\n",  # empty lines, a carriage return inside
    ],
)
@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_kept_lines_are_the_bytes_read(tmp_path: Path, raw: bytes, suffix: str) -> None:
    path = tmp_path / f"train.sw{suffix}"
    path.write_bytes(gzip.compress(raw) if suffix else raw)
    rows = len(_reader_lines(raw))
    for removed in ([], [0], [rows - 1], list(range(0, rows, 2)), list(range(rows))):
        assert _copy(path, removed) == _expected(raw, set(removed)), removed


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=7).map(lambda b: b.replace(b"\n", b"")), max_size=30),
    endings=st.lists(st.sampled_from([b"\n", b"\r\n"]), min_size=30, max_size=30),
    last_newline=st.booleans(),
    removed=st.sets(st.integers(0, 29)),
    piece=st.integers(1, 16),
)
def test_kept_lines_equal_a_plain_split_across_pieces(
    lines: list[bytes],
    endings: list[bytes],
    last_newline: bool,
    removed: set[int],
    piece: int,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    raw = b"".join(line + end for line, end in zip(lines, endings, strict=False))
    if lines and not last_newline and lines[-1]:
        raw = raw.removesuffix(endings[len(lines) - 1])
    path = tmp_path_factory.mktemp("pieces") / "train.txt"
    path.write_bytes(raw)
    rows = len(_reader_lines(raw))
    chosen = sorted(r for r in removed if r < rows)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(decontaminate_files, "_READ_BYTES", piece)
        copied = b"".join(kept_lines(path, chosen, rows))
    assert copied == _expected(raw, set(chosen))


def test_a_file_that_changed_since_it_was_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "train.sw"
    path.write_bytes(b"a\nb\nc\n")
    with pytest.raises(MisalignedInputError, match=r"train.sw: 3 lines now, but 4 when"):
        list(kept_lines(path, [1], 4))


def test_a_removed_row_is_one_json_line_with_its_exact_similarity() -> None:
    row = removed_line(Removed(5, "devtest", 17, Fraction(7, 10), "source"))
    assert row == {
        "train_index": 5,
        "test_set": "devtest",
        "test_index": 17,
        "similarity": 0.7,
        "similarity_exact": "7/10",
        "by": "source",
    }
    assert removed_line(Removed(0, "t", 0, Fraction(1), "pair"))["similarity_exact"] == "1/1"


# Every output whole, or none ---------------------------------------------------


def _pair(folder: Path, sources: list[str], targets: list[str]) -> tuple[Path, Path]:
    src, tgt = folder / "train.sw", folder / "train.zu.gz"
    src.write_text("".join(f"{s}\n" for s in sources), encoding="utf-8")
    tgt.write_bytes(gzip.compress("".join(f"{t}\r\n" for t in targets).encode()))
    return src, tgt


def test_write_outputs_writes_every_file_whole(tmp_path: Path) -> None:
    src, tgt = _pair(tmp_path, ["a", "b", "c"], ["x", "y", "z"])
    out = tmp_path / "out"
    removed = [Removed(1, "test", 0, Fraction(3, 4), "target")]
    copies = [
        KeptCopy(src, out / "kept.sw.gz", "--train-src"),
        KeptCopy(tgt, out / "kept.zu", "--train-tgt"),
    ]
    summary = {"rows_read": 3}
    write_outputs(copies, removed, 3, out / "removed.jsonl", [(out / "summary.json", summary)])
    assert gzip.decompress((out / "kept.sw.gz").read_bytes()) == b"a\nc\n"
    assert (out / "kept.zu").read_bytes() == b"x\r\nz\r\n"
    lines = (out / "removed.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [removed_line(removed[0])]
    assert json.loads((out / "summary.json").read_text()) == summary
    assert sorted(p.name for p in out.iterdir()) == [
        "kept.sw.gz",
        "kept.zu",
        "removed.jsonl",
        "summary.json",
    ]


def test_an_error_midway_leaves_no_output(tmp_path: Path) -> None:
    src, _ = _pair(tmp_path, ["a", "b", "c"], [])
    short = tmp_path / "short.zu"
    short.write_text("x\ny\n")  # one line fewer than the corpus read
    out = tmp_path / "out"
    copies = [
        KeptCopy(src, out / "kept.sw", "--train-src"),
        KeptCopy(short, out / "kept.zu", "--train-tgt"),
    ]
    with pytest.raises(MisalignedInputError):
        write_outputs(copies, [], 3, out / "removed.jsonl")
    assert list(out.iterdir()) == []


def test_an_interruption_midway_leaves_no_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, tgt = _pair(tmp_path, ["a", "b"], ["x", "y"])
    out = tmp_path / "out"
    pieces = 0

    def interrupted(path: Path) -> Iterator[bytes]:
        nonlocal pieces
        pieces += 1
        if pieces == 2:  # the second file: Ctrl-C
            raise KeyboardInterrupt
        yield path.read_bytes()

    monkeypatch.setattr(decontaminate_files, "_raw_pieces", interrupted)
    copies = [
        KeptCopy(src, out / "kept.sw", "--train-src"),
        KeptCopy(tgt, out / "kept.zu", "--train-tgt"),
    ]
    with pytest.raises(KeyboardInterrupt):
        write_outputs(copies, [], 2, out / "removed.jsonl")
    assert list(out.iterdir()) == []


def test_outputs_must_be_files_of_their_own(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    with pytest.raises(InvalidOptionError, match=r"--out-tgt .*: the same file as --out-src"):
        check_output_paths([("--train-src", a)], [("--out-src", b), ("--out-tgt", b)])
    with pytest.raises(InvalidOptionError, match=r"--out-src .*: the same file as --train-src"):
        check_output_paths([("--train-src", a)], [("--out-src", tmp_path / "." / "a")])
