"""Training corpora read in place: Arrow columns (string and large_string,
chunked, sliced, memory-mapped, the translation convention, a Dataset's row
selection), streams (IterableDataset from local JSON and Parquet, iterables of
rows and of record batches) and text files. Each gives the answers and the
fingerprint of the same pairs as Python lists, and bad input is a typed error
naming the column, the row, or the file and line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tame_mt_core as _core

import tame_mt_metric
from tame_mt_metric import RetrievalConfig, TrainingCorpus
from tame_mt_metric.cache import CacheOptions
from tame_mt_metric.errors import InputTextError, InvalidOptionError, MisalignedInputError
from tame_mt_metric.retrieval.columns import arrow_texts, string_column
from tame_mt_metric.retrieval.corpus import TrainingStream, training_corpus
from tame_mt_metric.retrieval.text_files import TextFiles

SOURCES = [
    f"the {w} house number {i} is {'small' if i % 3 else 'tall'}"
    for i, w in enumerate(["red", "old", "big", "new", "blue", "tiny", "vast"] * 9)
]
TARGETS = [
    f"das {w} Haus {i} ist {'klein' if i % 3 else 'hoch'} ✓"
    for i, w in enumerate(["rote", "alte", "große", "neue", "blaue", "winzige", "weite"] * 9)
]
TEST = ["the red house number 7 is tall", "a blue house is small", "nothing alike here"]
REFS = ["das rote Haus 7 ist hoch ✓", "ein blaues Haus ist klein", "gar nichts"]
CONFIG = RetrievalConfig(block_rows=10)  # many blocks


def _json(fields: object) -> str:
    """Fields as JSON (nan equals nan there)."""
    return json.dumps(fields, sort_keys=True, default=str)


def _report(train: object, **options: Any) -> dict[str, Any]:
    metric = tame_mt_metric.load(
        train=train, keep_in_memory=True, use_cache=False, block_rows=10, **options
    )
    out = metric.compute(predictions=REFS, references=REFS, sources=TEST, return_report=True)
    assert out is not None
    return {"fields": _json({k: v for k, v in out.items() if k != "report"})}


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    return _report({"source": SOURCES, "target": TARGETS})


def _chunked(texts: list[str], kind: pa.DataType, size: int = 7) -> pa.ChunkedArray:
    return pa.chunked_array(
        [pa.array(texts[i : i + size], kind) for i in range(0, len(texts), size)], kind
    )


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_arrow_columns_give_the_answers_and_fingerprint_of_lists(
    kind: pa.DataType, expected: dict[str, Any]
) -> None:
    table = pa.table({"source": _chunked(SOURCES, kind), "target": _chunked(TARGETS, kind, 5)})
    corpus = TrainingCorpus.from_any(table)
    assert corpus.is_arrow
    assert corpus.fingerprint == TrainingCorpus(SOURCES, TARGETS).fingerprint
    assert corpus == TrainingCorpus(SOURCES, TARGETS)
    assert _report(table) == expected
    # a slice of a column starts inside its buffers: offsets are read from there
    sliced = TrainingCorpus(
        table.column("source").slice(3, 20), table.column("target").slice(3, 20)
    )
    assert sliced.fingerprint == TrainingCorpus(SOURCES[3:23], TARGETS[3:23]).fingerprint
    assert sliced.targets_at([0, 19]) == {0: TARGETS[3], 19: TARGETS[22]}


def test_a_memory_mapped_dataset_is_read_in_place(tmp_path: Path, expected: dict[str, Any]) -> None:
    datasets.Dataset.from_dict({"source": SOURCES, "target": TARGETS}).save_to_disk(tmp_path / "d")
    dataset: Any = datasets.load_from_disk(str(tmp_path / "d"))
    corpus = TrainingCorpus.from_any(dataset)
    assert corpus.is_arrow and corpus.dataset is dataset
    assert corpus.files is not None  # its file is read as a stream of batches
    assert _report(dataset) == expected
    # blocks of any size and range, across the file's record batches
    table = pa.table({"source": SOURCES, "target": TARGETS})
    with (
        pa.OSFile(str(tmp_path / "b.arrow"), "wb") as sink,
        pa.ipc.new_stream(sink, table.schema) as writer,
    ):
        for batch in table.to_batches(max_chunksize=5):
            writer.write_batch(batch)
    batched = datasets.Dataset.from_file(str(tmp_path / "b.arrow"))
    for rows, start, stop in ((7, 0, None), (10, 13, 41), (100, 60, 63), (3, 4, 6)):
        files = TrainingCorpus.from_any(batched)
        assert files.files is not None
        got = [s[i] for s, _ in files.blocks(rows, start, stop) for i in range(len(s))]
        assert got == SOURCES[start:stop]
        read = [
            (len(s), first) for s, _, first in files.files.blocks(rows, files._sides, start, stop)
        ]
        assert all(n <= rows for n, _ in read) and read[0][1] == start
        assert sum(n for n, _ in read) == len(SOURCES[start:stop])
    renamed = dataset.rename_column("source", "en")  # replayed on the map: read through it
    assert TrainingCorpus.from_any(renamed, source_column="en").files is None
    assert _report(renamed, source_column="en") == expected
    # select/shuffle: the rows the Dataset shows, in its order
    picked = dataset.select([5, 2, 9])
    assert TrainingCorpus.from_any(picked) == TrainingCorpus(
        [SOURCES[i] for i in (5, 2, 9)], [TARGETS[i] for i in (5, 2, 9)]
    )


def test_the_translation_convention_reads_the_struct_children(expected: dict[str, Any]) -> None:
    rows = [{"en": s, "de": t} for s, t in zip(SOURCES, TARGETS, strict=True)]
    dataset = datasets.Dataset.from_dict({"translation": rows})
    corpus = TrainingCorpus.from_any(dataset, source_lang="en", target_lang="de")
    assert corpus.is_arrow and corpus.fingerprint == TrainingCorpus(SOURCES, TARGETS).fingerprint
    assert _report(dataset, source_lang="en", target_lang="de") == expected
    with pytest.raises(tame_mt_metric.MissingColumnError, match="no 'fr' text"):
        TrainingCorpus.from_any(dataset, source_lang="fr", target_lang="de")


def test_nulls_and_other_types_are_errors_naming_the_row() -> None:
    table = pa.table({"source": ["a", None, "c"], "target": ["x", "y", "z"]})
    with pytest.raises(
        InputTextError, match=r"train\['source'\]\[1\]: expected a string, got None"
    ):
        TrainingCorpus.from_any(table)
    with pytest.raises(InputTextError, match="expected a column of strings, got Arrow type int64"):
        TrainingCorpus.from_any(pa.table({"source": [1, 2], "target": ["x", "y"]}))
    dictionary = pa.array(["a", "b", "a"]).dictionary_encode()
    corpus = TrainingCorpus.from_any(pa.table({"source": dictionary, "target": ["x", "y", "z"]}))
    assert corpus.fingerprint == TrainingCorpus(["a", "b", "a"], ["x", "y", "z"]).fingerprint


def test_damaged_buffers_are_refused_by_the_core() -> None:
    good = pa.array(["ab", "c"])
    _, offsets, data = good.buffers()
    bad_utf8 = pa.py_buffer(b"a\xffc")
    with pytest.raises(InputTextError, match=r"train_sources\[9\]: not valid UTF-8"):
        _core.ArrowTexts(
            [(memoryview(offsets).cast("B"), memoryview(bad_utf8).cast("B"), 0, 2, False)],
            "train_sources",
            9,
        )
    with pytest.raises(InvalidOptionError, match="offsets buffer holds 3 offsets, 4 are needed"):
        _core.ArrowTexts(
            [(memoryview(offsets).cast("B"), memoryview(data).cast("B"), 0, 3, False)], "t", 0
        )
    texts = arrow_texts(string_column("x", good), 0, 2, "x")
    assert (len(texts), texts[0], texts[1], texts.data_bytes) == (2, "ab", "c", 3)


def _files(
    tmp_path: Path, sources: list[str], targets: list[str], crlf: bool = False, gz: bool = False
) -> TextFiles:
    paths = []
    for name, lines in (("train.en", sources), ("train.de", targets)):
        data = ("\r\n" if crlf else "\n").join(lines).encode() + b"\n"
        path = tmp_path / (name + (".gz" if gz else ""))
        path.write_bytes(gzip.compress(data) if gz else data)
        paths.append(path)
    return TextFiles(*paths)


@pytest.mark.parametrize(("crlf", "gz"), [(False, False), (True, False), (False, True)])
def test_text_files_are_read_in_blocks_of_lines(
    tmp_path: Path, crlf: bool, gz: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tame_mt_metric.retrieval.text_files._READ_BYTES", 37)  # lines cross reads
    files = _files(tmp_path, SOURCES, TARGETS, crlf, gz)
    lists = TrainingCorpus(SOURCES, TARGETS)
    assert (files.num_rows, files.fingerprint) == (lists.num_rows, lists.fingerprint)
    assert files.targets_at([0, 40, 62]) == {r: TARGETS[r] for r in (0, 40, 62)}
    got = [(list(s[i] for i in range(len(s))), len(t)) for s, t in files.blocks(10, 15, 38)]
    assert [text for texts, _ in got for text in texts] == SOURCES[15:38]


def test_text_files_keep_empty_lines_drop_a_bom_and_name_bad_lines(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"\xef\xbb\xbfone\n\nthree\n")
    (tmp_path / "b").write_bytes(b"eins\nzwei\n\n")
    files = TextFiles(tmp_path / "a", tmp_path / "b")
    assert (
        files.fingerprint == TrainingCorpus(["one", "", "three"], ["eins", "zwei", ""]).fingerprint
    )
    (tmp_path / "c").write_bytes(b"x\ny\n")
    with pytest.raises(MisalignedInputError, match=r"c: 2 lines, but .*a has 3"):
        _ = TextFiles(tmp_path / "a", tmp_path / "c").num_rows
    (tmp_path / "d").write_bytes(b"x\ny\n\xff\n")
    with pytest.raises(InputTextError, match=r"d:3: not valid UTF-8"):
        _ = TextFiles(tmp_path / "a", tmp_path / "d").num_rows


def test_the_cli_audits_text_files_as_it_did_lists(tmp_path: Path) -> None:
    files = _files(tmp_path, SOURCES, TARGETS)
    a = tame_mt_metric.score_tame(files, REFS, REFS, TEST, cache=CacheOptions(enabled=False))
    b = tame_mt_metric.score_tame(
        TrainingCorpus(SOURCES, TARGETS),
        REFS,
        REFS,
        TEST,
        cache=CacheOptions(enabled=False),
    )
    assert _json(a.report.fields()) == _json(b.report.fields())


def _rows() -> list[dict[str, str]]:
    return [{"source": s, "target": t} for s, t in zip(SOURCES, TARGETS, strict=True)]


def test_streamed_datasets_give_the_answers_of_the_whole_dataset(
    tmp_path: Path, expected: dict[str, Any]
) -> None:
    with open(tmp_path / "train.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in _rows())
    pq.write_table(pa.Table.from_pylist(_rows()), tmp_path / "train.parquet", row_group_size=9)
    for kind, name in (("json", "train.jsonl"), ("parquet", "train.parquet")):
        stream = datasets.load_dataset(
            kind, data_files=str(tmp_path / name), split="train", streaming=True
        )
        assert isinstance(training_corpus(stream), TrainingStream)
        assert _report(stream) == expected, kind
    assert _report(iter(_rows())) == expected
    batches = pa.Table.from_pylist(_rows()).to_batches(max_chunksize=8)
    assert _report(iter(batches)) == expected


def test_a_stream_is_fingerprinted_as_it_is_read_and_cached_under_its_key(
    tmp_path: Path,
) -> None:
    cache = CacheOptions(cache_dir=tmp_path)
    streamed = tame_mt_metric.score_tame(
        TrainingStream(iter(_rows())), REFS, REFS, TEST, cache=cache
    )
    whole = tame_mt_metric.score_tame(
        TrainingCorpus(SOURCES, TARGETS), REFS, REFS, TEST, cache=cache
    )
    assert whole.report.backend["audit_cached"]  # stored under the stream's fingerprint
    assert _json(streamed.report.fields()) == _json(whole.report.fields())
    stream = TrainingStream(iter(_rows()))
    with pytest.raises(InvalidOptionError, match="counted only once it is read"):
        _ = stream.num_rows
    list(stream.blocks(10))
    assert stream.num_rows == len(SOURCES)
    with pytest.raises(InvalidOptionError, match="read already"):
        list(stream.blocks(10))


def test_bad_rows_of_a_stream_name_the_global_row() -> None:
    rows = _rows()
    rows[23] = {"source": None, "target": "x"}  # type: ignore[dict-item]
    with pytest.raises(InputTextError, match=r"train\['source'\]\[23\]"):
        list(TrainingStream(iter(rows)).blocks(10))
    with pytest.raises(InputTextError, match=r"train\[3\]: expected a row"):
        list(TrainingStream(iter([*_rows()[:3], "text"])).blocks(10))
    with pytest.raises(InvalidOptionError, match="needs the whole corpus"):
        tame_mt_metric.score_tame(
            TrainingStream(iter(_rows())),
            REFS,
            REFS,
            TEST,
            tame_mt_metric.TameConfig.from_options(strategy="indexed"),
            cache=CacheOptions(enabled=False),
        )


def test_an_index_is_built_from_arrow_columns_with_progress() -> None:
    table = pa.table(
        {"source": _chunked(SOURCES, pa.large_string()), "target": _chunked(TARGETS, pa.string())}
    )
    corpus = TrainingCorpus.from_any(table)
    done: list[int] = []
    index = tame_mt_metric.TrainingIndex.build(*corpus.whole(), CONFIG, done.append)
    lists = tame_mt_metric.TrainingIndex.build(SOURCES, TARGETS, CONFIG)
    assert index.find_exposures(TEST, REFS) == lists.find_exposures(TEST, REFS)
    assert sum(done) == 2 * len(SOURCES)
