"""Training corpora in the forms users hold them, and their fingerprint."""

from __future__ import annotations

from collections.abc import Iterator

import datasets
import pytest
import xxhash

from tame_mt_metric import (
    EmptyCorpusError,
    InputTextError,
    InvalidOptionError,
    MisalignedInputError,
    MissingColumnError,
    TrainingCorpus,
)

SOURCES = ["a small house", "the old tree", ""]
TARGETS = ["ein kleines Haus", "der alte Baum", "leer"]


def test_dataset_dict_and_translation_forms_agree() -> None:
    plain = TrainingCorpus.from_any({"source": SOURCES, "target": TARGETS})
    named = TrainingCorpus.from_any(
        datasets.Dataset.from_dict({"en": SOURCES, "de": TARGETS}),
        source_column="en",
        target_column="de",
    )
    translation = datasets.Dataset.from_dict(
        {"translation": [{"en": s, "de": t} for s, t in zip(SOURCES, TARGETS, strict=True)]}
    )
    hf = TrainingCorpus.from_any(translation, source_lang="en", target_lang="de")
    assert plain == named == hf
    assert plain.fingerprint == hf.fingerprint


def test_fingerprint_is_xxh3_128_over_block_digests_of_length_prefixed_pairs() -> None:
    block = xxhash.xxh3_128()  # one block: fewer pairs than FINGERPRINT_BLOCK_ROWS
    for s, t in zip(SOURCES, TARGETS, strict=True):
        for text in (s, t):
            data = text.encode("utf-8")
            block.update(len(data).to_bytes(8, "little") + data)
    expected = xxhash.xxh3_128(block.intdigest().to_bytes(16, "little")).hexdigest()
    assert TrainingCorpus(SOURCES, TARGETS).fingerprint == expected
    swapped = TrainingCorpus(TARGETS, SOURCES)
    assert swapped.fingerprint != expected


def test_bad_corpora_name_the_column_and_row() -> None:
    with pytest.raises(MissingColumnError, match=r"no column 'source'.*\['en', 'de'\]"):
        TrainingCorpus.from_any(datasets.Dataset.from_dict({"en": SOURCES, "de": TARGETS}))
    with pytest.raises(
        MissingColumnError, match=r"no key 'target'; the dict has \['source', 'tgt'\]"
    ):
        TrainingCorpus.from_any({"source": SOURCES, "tgt": TARGETS})
    with pytest.raises(InputTextError, match=r"train\['target'\]\[1\]: expected a string"):
        TrainingCorpus.from_any({"source": SOURCES, "target": ["a", None, "c"]})
    with pytest.raises(MisalignedInputError, match="train sources has 3 items but train targets"):
        TrainingCorpus.from_any({"source": SOURCES, "target": TARGETS[:2]})
    with pytest.raises(EmptyCorpusError):
        TrainingCorpus.from_any({"source": [], "target": []})
    pairs = {"translation": [{"en": "a", "de": "b"}, {"en": "c"}]}
    with pytest.raises(MissingColumnError, match=r"train\['translation'\]\[1\]: no 'de' text"):
        TrainingCorpus.from_any(pairs, source_lang="en", target_lang="de")
    with pytest.raises(InvalidOptionError, match="give both or neither"):
        TrainingCorpus.from_any(pairs, source_lang="en")
    with pytest.raises(InvalidOptionError, match=r"one split.*train\['train'\]"):
        TrainingCorpus.from_any(datasets.DatasetDict({"train": datasets.Dataset.from_dict({})}))
    with pytest.raises(
        InvalidOptionError, match=r"expected a datasets\.Dataset, an IterableDataset"
    ):
        TrainingCorpus.from_any([("a", "b")])


def test_read_ahead_reads_the_next_block_on_another_thread_in_order() -> None:
    import threading

    from tame_mt_metric.retrieval.corpus import read_ahead

    asked = [threading.Event() for _ in range(4)]
    readers: set[int] = set()

    def blocks(error: bool) -> Iterator[tuple[list[str], list[str]]]:
        for i in range(3):
            asked[i].set()
            readers.add(threading.get_ident())
            yield [f"s{i}"], [f"t{i}"]
        asked[3].set()
        if error:
            raise InputTextError("train.src:7: not valid UTF-8")

    seen: list[object] = []
    for block in read_ahead(blocks(error=False)):
        # The next block is read while this one is at work.
        assert asked[len(seen) + 1].wait(30)
        seen.append(block)
    assert seen == [(["s0"], ["t0"]), (["s1"], ["t1"]), (["s2"], ["t2"])]
    assert readers and threading.get_ident() not in readers
    # An error comes where its block would have been, after the blocks before it.
    got: list[object] = []
    with pytest.raises(InputTextError, match=r"train\.src:7"):
        for block in read_ahead(blocks(error=True)):
            got.append(block)
    assert len(got) == 3


def test_read_ahead_stopped_early_closes_its_source_one_block_ahead() -> None:
    from tame_mt_metric.retrieval.corpus import read_ahead

    read: list[int] = []
    closed: list[bool] = []

    def endless() -> Iterator[tuple[list[str], list[str]]]:
        try:
            while True:
                read.append(len(read))
                yield [str(len(read))], ["t"]
        finally:
            closed.append(True)

    ahead = read_ahead(endless())
    assert next(ahead) == (["1"], ["t"])
    ahead.close()
    assert closed == [True]
    assert read == [0, 1]
