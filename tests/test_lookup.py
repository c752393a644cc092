"""Lookups in a saved index (``SavedIndex`` and ``tame-mt-metric lookup``): the
nearest training pairs equal the brute force's, with their text; sentences from
arguments or standard input; bad input is a typed error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from tame_mt_metric import IndexFileError, InvalidOptionError, RetrievalConfig
from tame_mt_metric.cache.corpus_file import (
    BLOCK_ROWS,
    CORPUS_FILE,
    corpus_of_index,
    texts_of_index,
)
from tame_mt_metric.cli import main
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.lookup import SavedIndex
from tame_mt_metric.retrieval.reference import brute_force_exposures
from tests.test_cli import cli

CLI = [sys.executable, "-m", "tame_mt_metric"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], list[str]]:
    d = example_corpus()
    sources, targets = d["train_sources"][:800], d["train_targets"][:800]
    root = tmp_path_factory.mktemp("lookup")
    (root / "train.src").write_text("\n".join(sources) + "\n", encoding="utf-8")
    (root / "train.tgt").write_text("\n".join(targets) + "\n", encoding="utf-8")
    argv = ["index", "build", "--train-src", str(root / "train.src")]
    argv += ["--train-tgt", str(root / "train.tgt"), "--out", str(root / "index"), "--quiet"]
    assert main(argv) == 0
    return root / "index", sources, targets


def test_matches_equal_the_brute_force(saved: tuple[Path, list[str], list[str]]) -> None:
    folder, sources, targets = saved
    queries = [*example_corpus()["test_sources"][:6], sources[17], ""]
    found = SavedIndex.open(folder).lookup(queries, top_k=3)
    want = brute_force_exposures(sources, targets, queries, config=RetrievalConfig(top_k=3))
    assert [[(m.row, m.overlap, m.union) for m in ms] for ms in found] == [
        [(n.row, n.overlap, n.union) for n in e.source] for e in want
    ]
    assert all(
        m.source == sources[m.row] and m.target == targets[m.row] for ms in found for m in ms
    )
    assert found[6][0].row == 17 and found[6][0].exposure == 1.0


def test_the_command_reads_arguments_or_stdin(saved: tuple[Path, list[str], list[str]]) -> None:
    folder, sources, _ = saved
    given = cli("lookup", "--index", folder, "--top-k", "2", "--json", sources[3], sources[5])
    lines = [json.loads(line) for line in given.stdout.splitlines()]
    assert [line["sentence"] for line in lines] == [sources[3], sources[5]]
    assert [line["matches"][0]["row"] for line in lines] == [3, 5]
    assert all(len(line["matches"]) == 2 for line in lines)
    piped = subprocess.run(
        [*CLI, "lookup", "--index", str(folder), "--json"],
        input=f"{sources[3]}\n{sources[5]}\n",
        capture_output=True,
        text=True,
        check=True,
    )
    assert [json.loads(line)["sentence"] for line in piped.stdout.splitlines()] == [
        sources[3],
        sources[5],
    ]
    human = cli("lookup", "--index", folder, "--top-k", "1", sources[3]).stdout
    assert "1. row 3  exposure 1.000" in human and f"source: {sources[3]}" in human


def test_bad_lookups_are_typed_errors(
    saved: tuple[Path, list[str], list[str]], tmp_path: Path
) -> None:
    folder, _, _ = saved
    with pytest.raises(InvalidOptionError, match="top_k"):
        SavedIndex.open(folder).lookup(["a"], top_k=0)
    with pytest.raises(IndexFileError):
        SavedIndex.open(tmp_path)
    # On the command line the setting is named by its option.
    assert (
        "error: --top-k: " in cli("lookup", "--index", folder, "--top-k", "0", "a", check=2).stderr
    )
    empty = subprocess.run(
        [*CLI, "lookup", "--index", str(folder)], input="", capture_output=True, text=True
    )
    assert empty.returncode == 1 and "none given" in empty.stderr


@pytest.fixture(scope="module")
def two_blocks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved index of more rows than one fingerprint block holds."""
    root = tmp_path_factory.mktemp("blocks")
    rows = 3 * BLOCK_ROWS
    (root / "train.src").write_text("".join(f"src {i:06d}\n" for i in range(rows)))
    (root / "train.tgt").write_text("".join(f"tgt {i:06d}\n" for i in range(rows)))
    argv = ["index", "build", "--train-src", str(root / "train.src")]
    argv += ["--train-tgt", str(root / "train.tgt"), "--out", str(root / "index"), "--quiet"]
    assert main(argv) == 0
    return root / "index"


def _damaged_copy(folder: Path, tmp: Path, old: bytes, new: bytes) -> Path:
    copy = tmp / "index"
    shutil.copytree(folder, copy)
    data = (copy / CORPUS_FILE).read_bytes()
    assert data.count(old) == 1
    (copy / CORPUS_FILE).write_bytes(data.replace(old, new))
    return copy


def test_rows_are_proved_block_by_block(two_blocks: Path, tmp_path: Path) -> None:
    row = 2 * BLOCK_ROWS + 4
    sources, targets = texts_of_index(two_blocks, [5, row])
    assert sources == {5: "src 000005", row: f"src {row:06d}"}
    assert targets == {5: "tgt 000005", row: f"tgt {row:06d}"}
    damaged = _damaged_copy(two_blocks, tmp_path, f"tgt {row:06d}".encode(), b"tgt 99999x")
    message = rf"rows {2 * BLOCK_ROWS}\.\. differ from their digest"
    with pytest.raises(IndexFileError, match=message):
        texts_of_index(damaged, [row])
    assert texts_of_index(damaged, [5])[1] == {5: "tgt 000005"}  # its block is intact
    with pytest.raises(IndexFileError, match="content differs from its fingerprint"):
        corpus_of_index(damaged)


def test_the_text_of_another_corpus_is_refused(two_blocks: Path, tmp_path: Path) -> None:
    """A corpus.arrow that proves itself but belongs to another corpus of the same size."""
    other = tmp_path / "other"
    other.mkdir()
    rows = 3 * BLOCK_ROWS
    (other / "train.src").write_text("".join(f"other {i}\n" for i in range(rows)))
    (other / "train.tgt").write_text("".join(f"andere {i}\n" for i in range(rows)))
    argv = ["index", "build", "--train-src", str(other / "train.src"), "--quiet"]
    assert main([*argv, "--train-tgt", str(other / "train.tgt"), "--out", str(other / "i")]) == 0
    copy = tmp_path / "index"
    shutil.copytree(two_blocks, copy)
    shutil.copyfile(other / "i" / CORPUS_FILE, copy / CORPUS_FILE)
    for read in (lambda: texts_of_index(copy, [5]), lambda: corpus_of_index(copy)):
        with pytest.raises(IndexFileError, match="the text of another corpus"):
            read()


def test_a_file_without_block_digests_is_checked_whole(two_blocks: Path, tmp_path: Path) -> None:
    copy = tmp_path / "index"
    shutil.copytree(two_blocks, copy)
    with pa.OSFile(str(copy / CORPUS_FILE)) as source:  # read into memory, not mapped
        table = pa.ipc.open_file(source).read_all()
    meta = {b"train_fingerprint": table.schema.metadata[b"train_fingerprint"]}
    stripped = table.replace_schema_metadata(meta)
    with (
        pa.OSFile(str(tmp_path / "plain.arrow"), "wb") as sink,
        pa.ipc.new_file(sink, stripped.schema) as writer,
    ):
        writer.write_table(stripped)
    os.replace(tmp_path / "plain.arrow", copy / CORPUS_FILE)
    row = 2 * BLOCK_ROWS + 4
    assert texts_of_index(copy, [row])[0] == {row: f"src {row:06d}"}
    damaged = _damaged_copy(copy, tmp_path / "again", b"src 000005", b"src 000006")
    with pytest.raises(IndexFileError, match="content differs from its fingerprint"):
        texts_of_index(damaged, [row])
