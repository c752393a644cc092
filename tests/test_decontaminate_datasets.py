"""``decontaminate`` of a dataset (``--train-dataset``: a ``save_to_disk`` folder,
an Arrow file in either IPC format, a Parquet file): the same removed rows as
the text-file form of the same pairs, the kept rows written in the input's own
form with every column and in order, wrong mixes of options refused before any
work, and no output at all after an error or Ctrl-C; and in Python, a
Dataset's kept rows by ``select``, fingerprinted in the one pass."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tame_mt_metric.cli import decontaminate_datasets
from tame_mt_metric.cli.decontaminate_datasets import KeptDataset
from tame_mt_metric.cli.decontaminate_files import write_outputs
from tame_mt_metric.errors import InvalidOptionError, MisalignedInputError
from tame_mt_metric.retrieval import decontaminate as library
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tests.test_decontaminate_cli import TEST_REFS, TEST_SOURCES, TRAIN

PAIRS = [
    *TRAIN,
    ("birds sing at dawn", "les oiseaux chantent a l'aube"),
    ("the cat sat on the mat", "le chat est assis sur le tapis"),  # a second exact leak
    ("bread and butter", "du pain et du beurre"),
]
# Columns beyond the two sides, kept in the copy.
COLUMNS = {
    "source": [s for s, _ in PAIRS],
    "target": [t for _, t in PAIRS],
    "id": list(range(100, 100 + len(PAIRS))),
    "score": [i / 8 for i in range(len(PAIRS))],
    "origin": [None if i % 3 == 0 else f"crawl-{i}" for i in range(len(PAIRS))],
}
FORMS = ["save_to_disk", "arrow stream", "arrow file", "parquet"]


@pytest.fixture(autouse=True)
def _private_datasets_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Parquet input is converted into the datasets cache: a folder of the test's."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("TAME_MT_THREADS", "1")


def _table() -> pa.Table:
    return datasets.Dataset.from_dict(COLUMNS).data.table


def _write(form: str, folder: Path, table: pa.Table | None = None, chunk: int = 2) -> Path:
    """The corpus as a dataset of ``form``, in batches (row groups) of ``chunk`` rows."""
    table = _table() if table is None else table
    if form == "save_to_disk":
        path = folder / "train"
        datasets.Dataset(table).save_to_disk(str(path))
    elif form == "parquet":
        path = folder / "train.parquet"
        pq.write_table(table, path, row_group_size=chunk)
    else:
        path = folder / "train.arrow"
        new = pa.ipc.new_file if form == "arrow file" else pa.ipc.new_stream
        with pa.OSFile(str(path), "wb") as sink, new(sink, table.schema) as writer:
            for batch in table.to_batches(max_chunksize=chunk):
                writer.write_batch(batch)
    return path


def _read(form: str, path: Path) -> pa.Table:
    """A written dataset back as one table (its schema metadata included)."""
    if form == "save_to_disk":
        return datasets.load_from_disk(str(path)).data.table
    if form == "parquet":
        return pq.read_table(path)
    with pa.OSFile(str(path), "rb") as f:
        opening = f.read(6)
        f.seek(0)
        reader = pa.ipc.open_file(f) if opening == b"ARROW1" else pa.ipc.open_stream(f)
        assert (opening == b"ARROW1") == (form == "arrow file"), "the input's own format"
        return reader.read_all()


def _run(*words: str | Path) -> int:
    from tame_mt_metric.cli import main

    return main([str(w) for w in words])


def _tests(folder: Path) -> list[str | Path]:
    test, ref = folder / "dev.en", folder / "dev.fr"
    test.write_text("\n".join(TEST_SOURCES) + "\n")
    ref.write_text("\n".join(TEST_REFS) + "\n")
    return ["--test-src", test, "--ref", ref]


def _text_form(folder: Path) -> list[str | Path]:
    src, tgt = folder / "train.en", folder / "train.fr"
    src.write_text("".join(f"{s}\n" for s, _ in PAIRS))
    tgt.write_text("".join(f"{t}\n" for _, t in PAIRS))
    return ["--train-src", src, "--train-tgt", tgt]


def _removed(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# Each form: the text form's answer, the kept rows in the input's form -----------


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("by", ["source", "pair", "any"])
def test_a_dataset_gives_the_text_forms_answer_and_keeps_its_rows(
    form: str, by: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(decontaminate_datasets, "_BATCH_ROWS", 2)  # Parquet read in 2s
    tests = _tests(tmp_path)
    rule = ["--threshold", "0.5", "--by", by, "--quiet"]
    text_out = tmp_path / "text"
    assert (
        _run(
            "decontaminate",
            *_text_form(tmp_path),
            *tests,
            *rule,
            *("--out-src", text_out / "kept.en", "--out-tgt", text_out / "kept.fr"),
            *("--removed-out", text_out / "removed.jsonl", "--json-out", text_out / "s.json"),
        )
        == 0
    )
    source = _write(form, tmp_path)
    out = tmp_path / "out"
    kept_path = out / ("kept" + source.suffix)
    assert (
        _run(
            "decontaminate",
            *("--train-dataset", source),
            *tests,
            *rule,
            *("--out-dataset", kept_path, "--removed-out", out / "removed.jsonl"),
            *("--json-out", out / "s.json"),
        )
        == 0
    )
    removed = _removed(out / "removed.jsonl")
    assert removed == _removed(text_out / "removed.jsonl")
    assert removed, "the example removes rows under every rule"
    summary = json.loads((out / "s.json").read_text())
    assert summary == json.loads((text_out / "s.json").read_text())  # the fingerprint too
    gone = {r["train_index"] for r in removed}
    table = _table()
    kept = _read(form, kept_path)
    assert kept.schema == _read(form, source).schema
    assert kept.to_pylist() == [row for j, row in enumerate(table.to_pylist()) if j not in gone]
    text_kept = (text_out / "kept.en").read_text().splitlines()
    assert kept.column("source").to_pylist() == text_kept
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [kept_path.name, "removed.jsonl", "s.json"]
    )


def test_named_columns_and_every_row_removed(tmp_path: Path) -> None:
    table = _table().rename_columns(["en", "fr", "id", "score", "origin"])
    source = _write("parquet", tmp_path, table)
    out = tmp_path / "out"
    words: list[str | Path] = ["decontaminate", "--train-dataset", source]
    everything = tmp_path / "everything.en"  # every training source a test item
    everything.write_text("".join(f"{s}\n" for s, _ in PAIRS))
    words += ["--source-column", "en", "--target-column", "fr", "--test-src", everything]
    words += ["--threshold", "1", "--by", "source", "--quiet"]
    words += ["--out-dataset", out / "kept.parquet"]
    assert _run(*words, "--removed-out", out / "removed.jsonl") == 0
    assert len(_removed(out / "removed.jsonl")) == len(PAIRS)
    kept = pq.read_table(out / "kept.parquet")
    assert kept.num_rows == 0 and kept.schema == pq.read_table(source).schema


# Wrong mixes of options ------------------------------------------------------------


@pytest.fixture
def untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the options should have been refused before any work")

    monkeypatch.setattr(library, "decontaminate", refused)


@pytest.mark.parametrize(
    ("corpus", "outputs", "message"),
    [
        ("parquet", ["--out-src", "a"], "--out-src: go with --train-src/--train-tgt"),
        ("parquet", ["--out-src", "a", "--out-tgt", "b"], "--out-src, --out-tgt: go with"),
        ("parquet", [], "--out-dataset: needed with --train-dataset"),
        ("text", ["--out-dataset", "kept"], "--out-dataset: goes with --train-dataset"),
        ("text", ["--out-src", "a"], "--out-src and --out-tgt: both needed"),
        (
            "both",
            ["--out-dataset", "kept.parquet"],
            "give exactly one of --train-src/--train-tgt, --train-dataset "
            "(got --train-src/--train-tgt, --train-dataset)",
        ),
        ("none", ["--out-src", "a", "--out-tgt", "b"], "exactly one of --train-src/--train-tgt, "),
        ("parquet", ["--out-dataset", "kept.arrow"], "the input is a .parquet file"),
        ("jsonl", ["--out-dataset", "kept.jsonl"], "is read but not written back"),
        ("save_to_disk", ["--out-dataset", "."], "already exists"),
        ("src only", ["--out-src", "a", "--out-tgt", "b"], "--train-src and --train-tgt go"),
    ],
)
def test_wrong_options_are_usage_errors_before_any_work(
    untouched: None,
    tmp_path: Path,
    corpus: str,
    outputs: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    train: list[str | Path] = []
    if corpus in ("text", "both", "src only"):
        train += _text_form(tmp_path)[: 2 if corpus == "src only" else 4]
    if corpus in ("parquet", "both"):
        train += ["--train-dataset", _write("parquet", tmp_path)]
    if corpus == "save_to_disk":
        train += ["--train-dataset", _write("save_to_disk", tmp_path)]
    if corpus == "jsonl":
        (tmp_path / "train.jsonl").write_text('{"source": "a", "target": "b"}\n')
        train += ["--train-dataset", tmp_path / "train.jsonl"]
    named = [str(out / word) if not word.startswith("--") else word for word in outputs]
    words = ["decontaminate", *train, *_tests(tmp_path), "--threshold", "1", *named]
    with pytest.raises(SystemExit) as exited:
        _run(*words, "--removed-out", out / "removed.jsonl")
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
    assert list(out.iterdir()) == []


def test_a_dataset_over_an_output_and_a_missing_dataset_are_named(
    untouched: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _write("parquet", tmp_path)
    words: list[str | Path] = ["decontaminate", "--train-dataset", source, *_tests(tmp_path)]
    words += ["--threshold", "1", "--out-dataset", tmp_path / "kept.parquet"]
    with pytest.raises(SystemExit):
        _run(*words, "--removed-out", source)
    assert "--removed-out" in (err := capsys.readouterr().err)
    assert "the same file as --train-dataset" in err
    words[2] = tmp_path / "absent.parquet"
    assert _run(*words, "--removed-out", tmp_path / "removed.jsonl") == 1
    assert "--train-dataset" in capsys.readouterr().err
    assert not (tmp_path / "kept.parquet").exists()


# No output after an error or Ctrl-C --------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
def test_a_dataset_that_changed_since_it_was_read_leaves_no_output(
    form: str, tmp_path: Path
) -> None:
    source = _write(form, tmp_path)
    out = tmp_path / "out"
    kept = KeptDataset(source, out / ("kept" + source.suffix))
    rows = len(PAIRS) + 1  # the corpus read had one row more
    with pytest.raises(MisalignedInputError, match=f"{len(PAIRS)} rows now, but {rows} when"):
        write_outputs([kept], [], rows, out / "removed.jsonl")
    assert list(out.iterdir()) == []


def _interrupt_after(count: int) -> Callable[..., Iterator[Any]]:
    real = decontaminate_datasets._kept_batches

    def interrupted(*args: Any) -> Iterator[Any]:
        for n, batch in enumerate(real(*args)):
            if n == count:
                raise KeyboardInterrupt
            yield batch

    return interrupted


@pytest.mark.parametrize("form", FORMS)
def test_ctrl_c_while_a_dataset_is_written_leaves_no_output(
    form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _write(form, tmp_path)
    monkeypatch.setattr(decontaminate_datasets, "_BATCH_ROWS", 2)
    monkeypatch.setattr(decontaminate_datasets, "_kept_batches", _interrupt_after(2))
    real_save = datasets.Dataset.save_to_disk

    def save_then_interrupt(self: datasets.Dataset, path: str, **kwargs: Any) -> None:
        real_save(self, path, **kwargs)  # a whole folder under the temporary name
        raise KeyboardInterrupt

    monkeypatch.setattr(datasets.Dataset, "save_to_disk", save_then_interrupt)
    out = tmp_path / "out"
    out.mkdir()
    kept = KeptDataset(source, out / ("kept" + source.suffix))
    with pytest.raises(KeyboardInterrupt):
        write_outputs([kept], [], len(PAIRS), out / "removed.jsonl")
    assert list(out.iterdir()) == []


# In Python: select, and the fingerprint of the one pass ------------------------------


def test_select_gives_exactly_the_kept_rows_in_order() -> None:
    dataset = datasets.Dataset.from_dict(COLUMNS)
    result = library.decontaminate(
        dataset, TEST_SOURCES, [[r] for r in TEST_REFS], threshold=0.5, progress=False
    )
    gone = {r.train_index for r in result.removed}
    assert gone and len(gone) < len(PAIRS)
    kept = result.select(dataset)
    assert kept.to_list() == [row for j, row in enumerate(dataset.to_list()) if j not in gone]
    assert kept["id"] == [100 + j for j in range(len(PAIRS)) if j not in gone]
    assert kept.features == dataset.features
    for other in (
        dataset.select(range(len(PAIRS) - 1)),
        datasets.concatenate_datasets([dataset] * 2),
    ):
        with pytest.raises(MisalignedInputError, match=f"{len(other)} rows, but"):
            result.select(other)


def test_a_dataset_is_fingerprinted_in_the_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus fingerprint (the audit's cache key) comes from the pass that
    judges the rows, not from a pass of its own over them."""
    dataset = datasets.Dataset.from_dict(COLUMNS)
    expected = TrainingCorpus.from_any(dataset).fingerprint

    def second_pass(self: TrainingCorpus) -> str:
        raise AssertionError("the corpus was read a second time for its fingerprint")

    monkeypatch.setattr(TrainingCorpus, "fingerprint", property(second_pass))
    result = library.decontaminate(dataset, TEST_SOURCES, threshold=0.5, progress=False)
    assert result.fingerprint == expected
    assert f"train:{expected}" in result.signature


def test_kept_dataset_refuses_to_guess_a_form(tmp_path: Path) -> None:
    (tmp_path / "train.jsonl").write_text("{}\n")
    with pytest.raises(InvalidOptionError, match="read but not written back"):
        KeptDataset(tmp_path / "train.jsonl", tmp_path / "kept.jsonl").check()
