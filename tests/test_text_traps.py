"""Text traps across input routes: the same pairs and test items given as text
files (the command line, ``TextFiles``, ``read_lines``), as Python lists
(``find_exposures``, ``TrainingCorpus``, ``score_tame``, the metric's
``compute()``), as a ``datasets.Dataset`` and as a Parquet file (in Python and
as ``--train-dataset``) are the same items, aligned the same way, with the
brute force's exposures; or a typed error that names the item.

A file is split at ``b"\\n"`` only, never where ``str.splitlines`` would split
(U+2028, U+2029, U+0085, ``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``); one
``\\r`` before the newline is part of the line ending; a byte-order mark at the
start of a file is not text. A text given in Python is never split."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tame_mt_metric import (
    EmptyCorpusError,
    EmptyTestSetError,
    InputTextError,
    TameError,
    TextFiles,
    TrainingCorpus,
    find_exposures,
    grams,
    normalize,
)
from tame_mt_metric.cli import main
from tame_mt_metric.report.pipeline import score_tame
from tame_mt_metric.retrieval import text_files
from tame_mt_metric.retrieval.exposure import Exposures, Neighbour
from tame_mt_metric.retrieval.inputs import lines_of, read_lines
from tame_mt_metric.retrieval.reference import brute_force_exposures


@dataclass(frozen=True)
class Trap:
    """A fragment put inside training texts (``train``) and test texts (``test``:
    the same unless a second form is tried, such as precomposed against combining)."""

    name: str
    train: str
    test: str | None = None
    in_files: bool = True  # False: a file cannot hold it (a newline)

    def pairs(self) -> tuple[list[str], list[str], list[str], list[str]]:
        """Training sources and targets, test sources and references, the fragment
        inside each text (never at a line's ends, where a file's rules apply)."""
        f, g = self.train, self.test if self.test is not None else self.train
        train_sources = [f"the{f}sea is blue", "a small house", f"le{f}ft", "ein", "x"]
        train_targets = [f"das{f}Meer ist blau", "ein kleines Haus", f"li{f}nks", "one", "y"]
        test_sources = [f"the{g}sea is blue", "a small house!", f"le{g}ft"]
        references = [f"das{g}Meer ist blau", "ein Haus", f"li{g}nks"]
        return train_sources, train_targets, test_sources, references


TRAPS = [
    Trap("line separator U+2028", "\u2028"),
    Trap("paragraph separator U+2029", "\u2029"),
    Trap("next line U+0085", "\x85"),
    Trap("carriage return alone", "\r"),
    Trap("two carriage returns", "\r\r"),
    Trap("vertical tab", "\v"),
    Trap("form feed", "\f"),
    Trap("file, group, record separators", "\x1c\x1d\x1e"),
    Trap("NUL", "\x00"),
    Trap("byte-order mark inside a line", "\ufeff"),
    Trap("combining mark against precomposed", "e\u0301", "\u00e9"),
    Trap("precomposed against combining mark", "\u00e9", "e\u0301"),
    Trap("CRLF inside a text given in Python", "\r\n", in_files=False),
    Trap("newline inside a text given in Python", "\n", in_files=False),
]
FILE_TRAPS = [t for t in TRAPS if t.in_files]


@dataclass(frozen=True)
class Layout:
    """How lines are written to a file: the ending, a byte-order mark, a last
    newline, gzip."""

    name: str
    ending: str = "\n"
    bom: bool = False
    last_newline: bool = True
    gz: bool = False

    def encode(self, lines: list[str]) -> bytes:
        text = self.ending.join(lines) + (self.ending if self.last_newline else "")
        data = (b"\xef\xbb\xbf" if self.bom else b"") + text.encode("utf-8")
        return gzip.compress(data, mtime=0) if self.gz else data


LAYOUTS = [
    Layout("LF"),
    Layout("CRLF", "\r\n"),
    Layout("BOM and LF", bom=True),
    Layout("BOM and CRLF", "\r\n", bom=True),
    Layout("CRLF, no last newline", "\r\n", last_newline=False),
    Layout("gzip, BOM and CRLF", "\r\n", bom=True, gz=True),
]


@pytest.fixture(autouse=True)
def _private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caches in a folder of the test's; one thread."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("TAME_MT_CACHE", str(tmp_path / "tame"))
    monkeypatch.setenv("TAME_MT_THREADS", "1")


def _files(folder: Path, layout: Layout, **texts: list[str]) -> dict[str, Path]:
    suffix = ".gz" if layout.gz else ""
    paths = {}
    for name, lines in texts.items():
        paths[name] = folder / f"{name}{suffix}"
        paths[name].write_bytes(layout.encode(lines))
    return paths


def _parquet(folder: Path, sources: list[str], targets: list[str]) -> Path:
    path = folder / "train.parquet"
    pq.write_table(pa.table({"source": sources, "target": targets}), path, row_group_size=2)
    return path


def _same_exposures(got: Exposures, expected: Exposures) -> None:
    assert len(got) == len(expected)
    assert got.items == expected.items  # every neighbour row, as exact fractions


def _triple(n: Neighbour | None) -> list[int]:
    assert n is not None
    return [n.row, n.overlap, n.union, n.reference]


def _check_segments(
    path: Path,
    expected: Exposures,
    train: tuple[list[str], list[str]],
    test: list[str],
    refs: list[str],
) -> None:
    """The segment file of an audit: one row per test item, its texts as given,
    its top neighbours (exact fractions) and their texts those of the brute force."""
    rows = [json.loads(line) for line in path.read_bytes().split(b"\n") if line]
    assert len(rows) == len(test) == len(expected)
    for i, (row, item) in enumerate(zip(rows, expected, strict=True)):
        assert row["index"] == i
        assert (row["source"], row["references"]) == (test[i], [refs[i]])
        assert row["exact"] == {
            "source": _triple(item.source[0]),
            "target": _triple(item.target[0]),
            "pair": _triple(item.pair),
        }
        exact = (row["source_exact"], row["target_exact"], row["pair_exact"])
        assert exact == (item.source_exact, item.target_exact, item.pair_exact)
        assert row["source_nn_text"] == train[0][item.source[0].row]
        assert row["target_nn_text"] == train[1][item.target[0].row]
        assert item.pair is not None
        assert (row["pair_nn_source"], row["pair_nn_target"]) == (
            train[0][item.pair.row],
            train[1][item.pair.row],
        )


def _audit(train: list[str | Path], test: Path, ref: Path, out: Path) -> int:
    return main(
        [
            "audit",
            *map(str, train),
            "--test-src",
            str(test),
            "--ref",
            str(ref),
            "--segment-out",
            str(out),
            "--include-source-text",
            "--include-reference-text",
            "--include-neighbor-text",
            "--quiet",
        ]
    )


# Python routes: lists, TrainingCorpus, a Dataset, a Parquet file.


@pytest.mark.parametrize("trap", TRAPS, ids=lambda t: t.name)
def test_python_routes_keep_every_text_whole(trap: Trap, tmp_path: Path) -> None:
    train_sources, train_targets, test, refs = trap.pairs()
    expected = brute_force_exposures(train_sources, train_targets, test, refs)
    _same_exposures(find_exposures(train_sources, train_targets, test, refs), expected)
    lists = TrainingCorpus(train_sources, train_targets)
    dataset = datasets.Dataset.from_dict({"source": train_sources, "target": train_targets})
    parquet = datasets.Dataset.from_parquet(
        str(_parquet(tmp_path, train_sources, train_targets)), cache_dir=str(tmp_path / "pq")
    )
    for corpus in (lists, TrainingCorpus.from_any(dataset), TrainingCorpus.from_any(parquet)):
        assert (corpus.sources, corpus.targets) == (train_sources, train_targets)
        assert corpus.fingerprint == lists.fingerprint
        result = score_tame(corpus, refs, refs, test)
        _same_exposures(result.exposures, expected)


# File routes: TextFiles, read_lines, the command line (text files, Parquet).


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.name)
@pytest.mark.parametrize("trap", FILE_TRAPS, ids=lambda t: t.name)
def test_text_files_split_at_newlines_only(trap: Trap, layout: Layout, tmp_path: Path) -> None:
    train_sources, train_targets, test, refs = trap.pairs()
    paths = _files(
        tmp_path, layout, train_src=train_sources, train_tgt=train_targets, test=test, ref=refs
    )
    assert [read_lines(paths[k]) for k in ("test", "ref")] == [test, refs]
    files = TextFiles(paths["train_src"], paths["train_tgt"])
    assert (files.sources, files.targets) == (train_sources, train_targets)
    assert [s[i] for s, _ in files.blocks(2) for i in range(len(s))] == train_sources
    lists = TrainingCorpus(train_sources, train_targets)
    assert (files.num_rows, files.fingerprint) == (lists.num_rows, lists.fingerprint)
    expected = brute_force_exposures(train_sources, train_targets, test, refs)
    _same_exposures(score_tame(files, refs, refs, test).exposures, expected)
    out = tmp_path / "segments.jsonl"
    train: list[str | Path] = ["--train-src", paths["train_src"], "--train-tgt", paths["train_tgt"]]
    assert _audit(train, paths["test"], paths["ref"], out) == 0
    _check_segments(out, expected, (train_sources, train_targets), test, refs)


@pytest.mark.parametrize("trap", TRAPS, ids=lambda t: t.name)
def test_a_parquet_corpus_on_the_command_line(trap: Trap, tmp_path: Path) -> None:
    train_sources, train_targets, test, refs = trap.pairs()
    if not trap.in_files:  # the test set is a file: the trap only in the corpus
        test, refs = (
            [t.replace(trap.train, " ") for t in test],
            [r.replace(trap.train, " ") for r in refs],
        )
    paths = _files(tmp_path, Layout("CRLF", "\r\n", bom=True), test=test, ref=refs)
    expected = brute_force_exposures(train_sources, train_targets, test, refs)
    out = tmp_path / "segments.jsonl"
    parquet = _parquet(tmp_path, train_sources, train_targets)
    assert _audit(["--train-dataset", parquet], paths["test"], paths["ref"], out) == 0
    _check_segments(out, expected, (train_sources, train_targets), test, refs)


@pytest.mark.parametrize("read_bytes", [1, 2, 3, 4, 5])
def test_a_byte_order_mark_is_dropped_however_the_reads_fall(
    read_bytes: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(text_files, "_READ_BYTES", read_bytes)
    lines = ["the\u2028sea", "", "a\rb", "\ufeffc"]
    for layout in (
        Layout("BOM and LF", bom=True),
        Layout("gzip, BOM, CRLF", "\r\n", bom=True, gz=True),
    ):
        paths = _files(tmp_path, layout, src=lines, tgt=lines[::-1])
        files = TextFiles(paths["src"], paths["tgt"])
        assert [s[i] for s, _ in files.blocks(3) for i in range(len(s))] == lines
        assert files.fingerprint == TrainingCorpus(lines, lines[::-1]).fingerprint
        assert (read_lines(paths["src"]), files.sources) == (lines, lines)


def test_a_file_of_only_a_byte_order_mark_has_no_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty file with a mark: no line in any reader (an empty line before)."""
    only = tmp_path / "bom.txt"
    only.write_bytes(b"\xef\xbb\xbf")
    assert read_lines(only) == []
    with pytest.raises(EmptyCorpusError, match=r"bom\.txt: the training corpus is empty"):
        _ = TextFiles(only, only).num_rows
    train = _files(tmp_path, Layout("LF"), src=["a house"], tgt=["ein Haus"])
    code = _audit(
        ["--train-src", train["src"], "--train-tgt", train["tgt"]], only, only, tmp_path / "s"
    )
    assert code == 1
    assert "test_sources: the test set is empty" in capsys.readouterr().err
    with pytest.raises(EmptyTestSetError):
        find_exposures(["a house"], ["ein Haus"], read_lines(only))


@pytest.mark.parametrize("read_bytes", [1, 8 << 20])
def test_one_carriage_return_before_a_newline_ends_the_line(
    read_bytes: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The readers of files, of blocks of files and of standard input agree."""
    monkeypatch.setattr(text_files, "_READ_BYTES", read_bytes)
    data = b"a\r\r\nb\rc\r\n\r\n\xc2\x85\r\nd\r"
    lines = ["a\r", "b\rc", "", "\x85", "d"]
    path = tmp_path / "endings.txt"
    path.write_bytes(data)
    files = TextFiles(path, path)
    assert [s[i] for s, _ in files.blocks(2) for i in range(len(s))] == lines
    assert read_lines(path) == list(lines_of(io.BytesIO(data), "standard input")) == lines


# Lone surrogates: no route carries one; each is a typed error naming the item.

SURROGATE = "a\ud800b"


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: find_exposures(["x", SURROGATE], ["x", "y"], ["x"], ["y"]), r"train_sources\[1\]"),
        (lambda: find_exposures(["x", "z"], ["x", SURROGATE], ["x"], ["y"]), r"train_targets\[1\]"),
        (lambda: find_exposures(["x"], ["y"], ["x", SURROGATE], ["y", "z"]), r"test_sources\[1\]"),
        (lambda: find_exposures(["x"], ["y"], ["x", "q"], ["y", SURROGATE]), r"references\[1\]"),
        (lambda: TrainingCorpus(["x", SURROGATE], ["x", "y"]).fingerprint, r"train_sources\[1\]"),
        (
            lambda: TrainingCorpus.from_any({"source": ["x"], "target": [SURROGATE]}).fingerprint,
            r"train_targets\[0\]",
        ),
        (
            lambda: score_tame(TrainingCorpus(["x"], ["y"]), ["y"], ["y"], [SURROGATE]),
            r"sources\[0\]",
        ),
        (lambda: normalize(SURROGATE), r"^text: "),
        (lambda: grams(SURROGATE), r"^text: "),
    ],
    ids=[
        "train_sources",
        "train_targets",
        "test_sources",
        "references",
        "TrainingCorpus",
        "from_any",
        "score_tame",
        "normalize",
        "grams",
    ],
)
def test_a_lone_surrogate_given_in_python_is_named(call: Callable[[], Any], named: str) -> None:
    with pytest.raises(InputTextError, match=named + r".*not valid Unicode"):
        call()


def test_arrow_and_files_cannot_hold_a_lone_surrogate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Dataset or a Parquet file cannot be made with one (pyarrow refuses it); a
    file's bytes for it (ED A0 80) are not UTF-8, named by file and line."""
    with pytest.raises(UnicodeEncodeError):
        datasets.Dataset.from_dict({"source": [SURROGATE], "target": ["y"]})
    with pytest.raises(UnicodeEncodeError):
        pa.array([SURROGATE])
    good = _files(tmp_path, Layout("LF"), src=["x", "y"], tgt=["x", "y"], test=["x"], ref=["y"])
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"x\ny\xed\xa0\x80z\n")
    with pytest.raises(InputTextError, match=r"bad\.txt:2: not valid UTF-8"):
        _ = TextFiles(good["src"], bad).num_rows
    with pytest.raises(InputTextError, match=r"bad\.txt:2: not valid UTF-8"):
        read_lines(bad)
    for train, test in (((good["src"], bad), good["test"]), ((good["src"], good["tgt"]), bad)):
        code = _audit(
            ["--train-src", train[0], "--train-tgt", train[1]], test, test, tmp_path / "s"
        )
        assert code == 1
        assert "bad.txt:2: not valid UTF-8" in capsys.readouterr().err


# The metric: evaluate's compute() over every trap a list can hold, at once.


def test_the_metrics_compute_keeps_every_text_whole(tmp_path: Path) -> None:
    import tame_mt_metric

    train_sources, train_targets, test, refs = [], [], [], []
    for trap in TRAPS:
        s, t, x, r = trap.pairs()
        train_sources += s
        train_targets += t
        test += x
        refs += r
    expected = brute_force_exposures(train_sources, train_targets, test, refs)
    metric = tame_mt_metric.load(
        train={"source": train_sources, "target": train_targets}, cache_dir=str(tmp_path / "ev")
    )
    out = metric.compute(predictions=refs, references=refs, sources=test, return_report=True)
    assert len(out["segments"]) == len(test)
    for row, item in zip(out["segments"], expected, strict=True):
        assert (row["source_nn_index"], row["source_exposure"]) == (
            item.source[0].row,
            float(item.source[0].fraction),
        )
        assert (row["target_nn_index"], row["target_exposure"]) == (
            item.target[0].row,
            float(item.target[0].fraction),
        )
        assert item.pair is not None
        assert (row["pair_nn_index"], row["pair_exposure"]) == (item.pair.row, item.pair.score)
        assert (row["source_exact"], row["target_exact"]) == (item.source_exact, item.target_exact)
    with pytest.raises(TameError, match=r"sources\[1\]: not valid Unicode"):
        metric.compute(predictions=["a", "b"], references=["a", "b"], sources=["a", SURROGATE])
