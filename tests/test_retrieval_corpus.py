"""Training corpora in the forms users hold them, and their fingerprint."""

from __future__ import annotations

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
