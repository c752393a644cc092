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
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tame_mt_metric.cli import decontaminate_files
from tame_mt_metric.cli.decontaminate_files import (
    KeptCopy,
    kept_lines,
    removed_line,
    write_outputs,
)
from tame_mt_metric.errors import InvalidOptionError, MisalignedInputError
from tame_mt_metric.files import NamedPath, refuse_overwrites
from tame_mt_metric.report import decontaminate as library
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.retrieval import reference
from tame_mt_metric.retrieval.config import RetrievalConfig


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
    bom=st.sampled_from([b"", b"\xef\xbb\xbf", b"\xef\xbb\xbf" * 2]),
)
def test_kept_lines_equal_a_plain_split_across_pieces(
    lines: list[bytes],
    endings: list[bytes],
    last_newline: bool,
    removed: set[int],
    piece: int,
    bom: bytes,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    raw = b"".join(line + end for line, end in zip(lines, endings, strict=False))
    if lines and not last_newline and lines[-1]:
        raw = raw.removesuffix(endings[len(lines) - 1])
    raw = bom + raw  # a byte-order mark, split across pieces when they are short
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
    assert removed_line(Removed(0, "t", 0, Fraction(1), "pair"))["similarity_exact"] == "1"


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
        KeptCopy(src, out / "kept.sw.gz"),
        KeptCopy(tgt, out / "kept.zu"),
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
        KeptCopy(src, out / "kept.sw"),
        KeptCopy(short, out / "kept.zu"),
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
        KeptCopy(src, out / "kept.sw"),
        KeptCopy(tgt, out / "kept.zu"),
    ]
    with pytest.raises(KeyboardInterrupt):
        write_outputs(copies, [], 2, out / "removed.jsonl")
    assert list(out.iterdir()) == []


def test_outputs_must_be_files_of_their_own(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    train = [NamedPath("--train-src", a)]
    with pytest.raises(InvalidOptionError, match=r"--out-tgt .*: the same file as --out-src"):
        refuse_overwrites(train, [NamedPath("--out-src", b), NamedPath("--out-tgt", b)])
    with pytest.raises(InvalidOptionError, match=r"--out-src .*: the same file as --train-src"):
        refuse_overwrites(train, [NamedPath("--out-src", tmp_path / "." / "a")])


# The command, with a stand-in for the library's decontaminate -------------------


@dataclass
class StandIn:
    """The contract's ``decontaminate`` by brute force over ``reference.py``,
    and a record of what the command asked of it."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    interrupt: bool = False

    def decontaminate(
        self,
        train: Any,
        test_sources: Any,
        references: Any = None,
        *,
        threshold: Fraction,
        by: str = "any",
        config: RetrievalConfig | TameConfig | None = None,
        progress: bool | None = None,
        index: Any = None,
    ) -> Result:
        assert index is None, "a saved index is tested with the real library"
        engine = (config.engine, config.ray_address) if isinstance(config, TameConfig) else None
        self.calls.append(
            {
                "train": train,
                "sources": test_sources,
                "references": references,
                "by": by,
                "engine": engine,
            }
        )
        if self.interrupt:
            raise KeyboardInterrupt
        config = config.retrieval if isinstance(config, TameConfig) else config
        config = config or RetrievalConfig()
        sets = {"test": test_sources} if isinstance(test_sources, list) else dict(test_sources)
        refs = None if references is None else dict(references)

        def similarity(a: str, b: str) -> Fraction:
            ga, gb = (
                reference.grams(
                    reference.normalize(t, **config.normalization_flags()), config.ngram_orders
                )
                for t in (a, b)
            )
            overlap, union = reference.jaccard(ga, gb)
            return Fraction(overlap, union)

        rules = ("source", "target") if by == "any" else (by,)
        removed, kept = [], []
        by_rule = dict.fromkeys(("source", "target", "pair"), 0)
        by_set = dict.fromkeys(sets, 0)
        for j, (u, v) in enumerate(zip(train.sources, train.targets, strict=True)):
            best: dict[str, tuple[Fraction, str, int]] = {}

            def offer(
                best: dict[str, tuple[Fraction, str, int]],
                side: str,
                s: Fraction,
                name: str,
                i: int,
            ) -> None:
                if side not in best or s > best[side][0]:
                    best[side] = (s, name, i)

            for name, items in sets.items():
                for i, x in enumerate(items):
                    on_source = similarity(x, u)
                    offer(best, "source", on_source, name, i)
                    if refs is not None:
                        on_target = max(similarity(r, v) for r in refs[name][i])
                        offer(best, "target", on_target, name, i)
                        offer(best, "pair", min(on_source, on_target), name, i)
            reached = [side for side in best if best[side][0] >= threshold]
            for side in reached:
                by_rule[side] += 1
            deciding = [side for side in rules if side in reached]
            if not deciding:
                kept.append(j)
                continue
            side = max(deciding, key=lambda d: (best[d][0], -rules.index(d)))
            s, name, i = best[side]
            by_set[name] += 1
            removed.append(Removed(j, name, i, s, side))
        summary = {
            "rows_read": len(kept) + len(removed),
            "rows_removed": len(removed),
            "rows_kept": len(kept),
            "removed_by_rule": by_rule,
            "removed_by_test_set": by_set,
            "threshold": float(threshold),
            "threshold_exact": str(threshold),
            "by": by,
            "test_sets": {name: len(items) for name, items in sets.items()},
            "fingerprint": "f" * 16,
            "signature": "stand-in",
            "tame_version": "0",
        }
        return Result(len(kept) + len(removed), kept, removed, summary)


@dataclass(frozen=True)
class Result:
    num_rows: int
    kept_indices: list[int]
    removed: list[Removed]
    answer: dict[str, Any]

    def summary(self) -> dict[str, Any]:
        return dict(self.answer)


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> StandIn:
    fake = StandIn()
    monkeypatch.setattr(library, "decontaminate", fake.decontaminate)
    monkeypatch.setenv("TAME_MT_THREADS", "1")
    return fake


TEST_SOURCES = ["the cat sat on the mat", "a storm is coming over the hills"]
TEST_REFS = ["le chat est assis sur le tapis", "une tempete arrive sur les collines"]
TRAIN = [
    ("the cat sat on the mat", "un chat sur un tapis"),  # the source, exactly
    ("rivers run to the sea", "les rivieres courent a la mer"),
    ("storms come over hills", "une tempete arrive sur les collines"),  # the reference
    ("the cat sat on a mat!", "le chat"),  # near the source
    ("nothing alike here", "rien de pareil"),
    ("a storm is coming over hills", "une tempete arrive sur des collines"),  # both sides
]


@pytest.fixture
def corpus(tmp_path: Path) -> dict[str, Path]:
    src, tgt = tmp_path / "train.en.gz", tmp_path / "train.fr"
    # gzip with Windows endings on one side, no last newline on the other
    src.write_bytes(gzip.compress(b"".join(s.encode() + b"\r\n" for s, _ in TRAIN)))
    tgt.write_bytes("\n".join(t for _, t in TRAIN).encode())
    test, ref = tmp_path / "dev.en", tmp_path / "dev.fr"
    test.write_text("\n".join(TEST_SOURCES) + "\n")
    ref.write_text("\n".join(TEST_REFS) + "\n")
    return {"train_src": src, "train_tgt": tgt, "test_src": test, "ref": ref}


def _run(*words: str | Path) -> int:
    from tame_mt_metric.cli import main

    return main([str(w) for w in words])


def _command(corpus: dict[str, Path], out: Path, *extra: str | Path) -> list[str | Path]:
    return [
        "decontaminate",
        "--train-src",
        corpus["train_src"],
        "--train-tgt",
        corpus["train_tgt"],
        "--test-src",
        corpus["test_src"],
        "--ref",
        corpus["ref"],
        "--out-src",
        out / "kept.en.gz",
        "--out-tgt",
        out / "kept.fr",
        "--removed-out",
        out / "removed.jsonl",
        *extra,
    ]


@pytest.mark.parametrize("by", ["source", "target", "pair", "any"])
def test_the_command_writes_the_kept_pairs_and_the_removed_rows(
    stand_in: StandIn,
    corpus: dict[str, Path],
    tmp_path: Path,
    by: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    words = _command(corpus, out, "--threshold", "0.5", "--by", by, "--json-out", out / "s.json")
    assert _run(*words) == 0
    [call] = stand_in.calls
    assert call["sources"] == {"dev.en": TEST_SOURCES}
    assert call["references"] == {"dev.en": [[r] for r in TEST_REFS]}
    result = StandIn().decontaminate(
        call["train"], call["sources"], call["references"], threshold=Fraction(1, 2), by=by
    )
    assert result.removed, "the example removes something under every rule"
    gone = {r.train_index for r in result.removed}
    src_raw = _raw_of(corpus["train_src"])
    tgt_raw = corpus["train_tgt"].read_bytes()
    assert _raw_of(out / "kept.en.gz") == _expected(src_raw, gone)
    assert (out / "kept.fr").read_bytes() == _expected(tgt_raw, gone)
    lines = (out / "removed.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [removed_line(r) for r in result.removed]
    assert json.loads((out / "s.json").read_text()) == result.summary()
    printed = capsys.readouterr().out
    assert f"rows removed  {len(gone)} (by {by}, threshold 0.5 (1/2))" in printed
    assert "by test set   dev.en" in printed


def test_each_ref_goes_with_the_test_set_before_it(
    stand_in: StandIn, corpus: dict[str, Path], tmp_path: Path
) -> None:
    other, other_ref = tmp_path / "devtest.en", tmp_path / "devtest.fr"
    other.write_text("a third sentence\n")
    other_ref.write_text("une troisieme phrase\n")
    words = _command(corpus, tmp_path / "out", "--threshold", "1")
    words += ["--test-src", other, "--ref", other_ref, "--ref", other_ref]
    words += ["--test-set-name", "dev", "--test-set-name", "devtest", "--quiet"]
    assert _run(*words) == 0
    [call] = stand_in.calls
    assert list(call["sources"]) == ["dev", "devtest"]
    assert call["references"]["devtest"] == [["une troisieme phrase"] * 2]
    assert call["references"]["dev"] == [[r] for r in TEST_REFS]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--threshold", "0"], "--threshold: must lie in (0, 1], got 0"),
        (["--threshold", "1.5"], "--threshold: must lie in (0, 1]"),
        (["--threshold", "high"], "--threshold: expected a number in (0, 1], got 'high'"),
        (["--threshold", "1", "--test-set-name", "a", "--test-set-name", "b"], "2 names for 1"),
        (["--threshold", "1", "--by", "nearest"], "invalid choice: 'nearest'"),
        (["--threshold", "1", "--ngram-orders", "3,x"], "--ngram-orders"),
    ],
)
def test_bad_options_are_usage_errors(
    stand_in: StandIn,
    corpus: dict[str, Path],
    tmp_path: Path,
    extra: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        _run(*_command(corpus, tmp_path / "out", *extra))
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
    assert not stand_in.calls
    assert not (tmp_path / "out").exists()


def test_references_are_needed_by_target_and_pair(
    stand_in: StandIn, corpus: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = _command(corpus, tmp_path / "out", "--threshold", "1", "--by", "pair")
    words.remove("--ref")
    words.remove(corpus["ref"])
    with pytest.raises(SystemExit):
        _run(*words)
    assert "--by pair: needs references" in capsys.readouterr().err
    words[words.index("pair")] = "source"
    assert _run(*words) == 0
    assert stand_in.calls[0]["references"] is None


def test_a_ref_before_any_test_set_and_a_set_without_refs_are_refused(
    stand_in: StandIn, corpus: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = _command(corpus, tmp_path / "out", "--threshold", "1")
    first = words.index("--test-src")
    words[first : first + 4] = ["--ref", corpus["ref"], "--test-src", corpus["test_src"]]
    with pytest.raises(SystemExit):
        _run(*words)
    assert "give the --test-src it goes with before it" in capsys.readouterr().err
    words = _command(corpus, tmp_path / "out", "--threshold", "1", "--test-src", corpus["ref"])
    with pytest.raises(SystemExit):
        _run(*words)
    assert "test set 'dev.fr' has none" in capsys.readouterr().err
    words = _command(corpus, tmp_path / "out", "--threshold", "1", "--test-src", corpus["test_src"])
    words += ["--ref", corpus["ref"]]
    with pytest.raises(SystemExit):
        _run(*words)
    assert "two test sets named 'dev.en'" in capsys.readouterr().err


def test_an_output_over_an_input_is_refused(
    stand_in: StandIn, corpus: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = _command(corpus, tmp_path / "out", "--threshold", "1")
    words[words.index("--out-tgt") + 1] = corpus["train_tgt"]
    with pytest.raises(SystemExit):
        _run(*words)
    assert "--out-tgt" in capsys.readouterr().err
    assert not stand_in.calls


def test_a_test_set_of_misaligned_lines_names_the_file(
    stand_in: StandIn, corpus: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus["ref"].write_text("only one line\n")
    assert _run(*_command(corpus, tmp_path / "out", "--threshold", "1")) == 1
    assert "dev.fr: 1 lines, but" in capsys.readouterr().err


def test_ctrl_c_leaves_no_output(
    stand_in: StandIn, corpus: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stand_in.interrupt = True
    out = tmp_path / "out"
    out.mkdir()
    assert _run(*_command(corpus, out, "--threshold", "1")) == 130
    assert "interrupted" in capsys.readouterr().err
    assert list(out.iterdir()) == []


def test_the_command_equals_the_library(tmp_path: Path) -> None:
    """The command in its own process on the bundled example (with two leaks
    planted), against the library's answer on the same files."""
    import subprocess

    from tame_mt_metric.demo import example_corpus
    from tame_mt_metric.retrieval.text_files import TextFiles

    d = example_corpus()
    sources, refs = d["test_sources"][:40], d["references"][:40]
    train_src = [*d["train_sources"][:600], sources[3], "x"]
    train_tgt = [*d["train_targets"][:600], "y", refs[7]]
    paths = {
        "train.sw": "\r\n".join(train_src),
        "train.zu": "\n".join(train_tgt) + "\n",
        "test.sw": "\n".join(sources) + "\n",
        "test.zu": "\n".join(refs) + "\n",
    }
    for name, text in paths.items():
        (tmp_path / name).write_bytes(text.encode())
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "tame_mt_metric",
        "decontaminate",
        *("--train-src", tmp_path / "train.sw", "--train-tgt", tmp_path / "train.zu"),
        *("--test-src", tmp_path / "test.sw", "--ref", tmp_path / "test.zu"),
        *("--threshold", "0.6", "--out-src", out / "kept.sw.gz", "--out-tgt", out / "kept.zu"),
        *("--removed-out", out / "removed.jsonl", "--json-out", out / "summary.json"),
    ]
    done = subprocess.run(
        [str(word) for word in command],
        capture_output=True,
        text=True,
        env={**os.environ, "TAME_MT_THREADS": "1"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result = library.decontaminate(
        TextFiles(tmp_path / "train.sw", tmp_path / "train.zu"),
        {"test.sw": sources},
        {"test.sw": [[r] for r in refs]},
        threshold=Fraction(3, 5),
    )
    gone = {r.train_index for r in result.removed}
    assert {len(train_src) - 2, len(train_src) - 1} <= gone
    assert _raw_of(out / "kept.sw.gz") == _expected((tmp_path / "train.sw").read_bytes(), gone)
    assert (out / "kept.zu").read_bytes() == _expected((tmp_path / "train.zu").read_bytes(), gone)
    lines = (out / "removed.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [removed_line(r) for r in result.removed]
    assert json.loads((out / "summary.json").read_text()) == result.summary()


def test_a_missing_training_file_is_named_before_any_work(
    stand_in: StandIn, corpus: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus["train_tgt"] = tmp_path / "absent.fr"
    assert _run(*_command(corpus, tmp_path / "out", "--threshold", "1")) == 1
    assert re.search(r"--train-tgt: \S*absent.fr: no such file", capsys.readouterr().err)
    assert not stand_in.calls


def test_the_engine_goes_to_the_library(
    stand_in: StandIn, corpus: dict[str, Path], tmp_path: Path
) -> None:
    """``--engine ray`` and ``--ray-address`` reach the library as its engine
    choice; both engines' outputs are compared in ``tests/test_decontaminate_scale.py``."""
    address = "ray://head:10001"
    for engine, extra in (("local", []), ("ray", ["--ray-address", address])):
        words = _command(corpus, tmp_path / engine, "--threshold", "1", "--engine", engine)
        assert _run(*words, *extra, "--quiet") == 0
    assert [call["engine"] for call in stand_in.calls] == [("local", None), ("ray", address)]
