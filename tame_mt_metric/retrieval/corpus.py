"""The training corpus of a report, from what users hold: a ``datasets.Dataset``
with a source and a target column, one in the translation convention (a
``translation`` column of ``{lang: text}`` dicts), or a dict of two lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import tame_mt_core as _core

from tame_mt_metric.errors import (
    EmptyCorpusError,
    InputTextError,
    InvalidOptionError,
    MissingColumnError,
)
from tame_mt_metric.retrieval.inputs import check_aligned, check_texts

__all__ = ["TrainingCorpus"]


def _column(train: object, name: str, hint: str) -> object:
    """One column of a ``datasets.Dataset`` (read from its Arrow table) or of a dict."""
    if type(train).__name__ in ("DatasetDict", "IterableDatasetDict"):
        raise InvalidOptionError(
            f"train: expected one split, got a {type(train).__name__} (pass e.g. train['train'])"
        )
    if isinstance(train, Mapping):
        if name not in train:
            raise MissingColumnError(f"train: no key {name!r}; the dict has {list(train)} ({hint})")
        return train[name]
    names = getattr(train, "column_names", None)
    if isinstance(names, list) and hasattr(train, "data"):
        if name not in names:
            raise MissingColumnError(f"train: no column {name!r}; the dataset has {names} ({hint})")
        values: list[object] = train.data.column(name).to_pylist()
        return values
    raise InvalidOptionError(
        f"train: expected a datasets.Dataset or a dict of two lists, got {type(train).__name__}"
    )


def _translation_side(pairs: object, lang: str) -> list[object]:
    if isinstance(pairs, str | bytes) or not isinstance(pairs, Sequence):
        raise InputTextError(f"train['translation']: expected a list of dicts, got {pairs!r:.60}")
    side = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, Mapping) or lang not in pair:
            raise MissingColumnError(f"train['translation'][{i}]: no {lang!r} text in {pair!r:.80}")
        side.append(pair[lang])
    return side


@dataclass(frozen=True)
class TrainingCorpus:
    """Training pairs as two aligned lists of strings, with a content fingerprint.

    >>> TrainingCorpus.from_any({"source": ["a house"], "target": ["ein Haus"]}).num_rows
    1
    """

    sources: list[str]
    targets: list[str]

    def __post_init__(self) -> None:
        check_aligned("train sources", self.sources, "train targets", self.targets)
        if not self.sources:
            raise EmptyCorpusError("train: the training corpus is empty")

    @property
    def num_rows(self) -> int:
        return len(self.sources)

    @cached_property
    def fingerprint(self) -> str:
        """XXH3-128 of the pairs in row order (32 hexadecimal characters)."""
        hasher = _core.CorpusFingerprint()
        hasher.update(self.sources, self.targets)
        return hasher.hexdigest()

    @classmethod
    def from_any(
        cls,
        train: object,
        source_column: str = "source",
        target_column: str = "target",
        source_lang: str | None = None,
        target_lang: str | None = None,
    ) -> TrainingCorpus:
        """Read a training corpus; every error names ``train``, the column and the row."""
        if isinstance(train, TrainingCorpus):
            return train
        if (source_lang is None) != (target_lang is None):
            raise InvalidOptionError("source_lang and target_lang: give both or neither")
        if source_lang is not None and target_lang is not None:
            pairs = _column(train, "translation", "source_lang/target_lang name its languages")
            src: object = _translation_side(pairs, source_lang)
            tgt: object = _translation_side(pairs, target_lang)
            names = (f"translation.{source_lang}", f"translation.{target_lang}")
        else:
            src = _column(train, source_column, "set source_column, or source_lang/target_lang")
            tgt = _column(train, target_column, "set target_column, or source_lang/target_lang")
            names = (source_column, target_column)
        return cls(
            check_texts(f"train[{names[0]!r}]", src), check_texts(f"train[{names[1]!r}]", tgt)
        )
