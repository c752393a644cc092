"""Exposure of a test set to a training corpus: the typed results and the two
retrieval strategies of the Rust core."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import islice
from typing import Any

import tame_mt_core as _core

from tame_mt_metric.errors import (
    EmptyCorpusError,
    EmptyTestSetError,
    InvalidOptionError,
    MisalignedInputError,
)
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.inputs import (
    check_test_size,
    check_texts,
    check_training,
    references_per_item,
)
from tame_mt_metric.retrieval.strategy import choose_strategy

__all__ = [
    "Exposures",
    "ItemExposure",
    "Neighbour",
    "StreamingAudit",
    "TrainingIndex",
    "find_exposures",
    "stream_exposures",
]


@dataclass(frozen=True)
class Neighbour:
    """A training row and its similarity ``overlap / union`` (exact integers)."""

    row: int
    overlap: int
    union: int
    reference: int = 0

    @property
    def score(self) -> float:
        return self.overlap / self.union

    @property
    def fraction(self) -> Fraction:
        return Fraction(self.overlap, self.union)


@dataclass(frozen=True)
class ItemExposure:
    """What the training corpus holds near one test item.

    ``source`` and ``target`` list the top-k neighbours, best first (higher
    score, then lower training row); ``target`` neighbours carry the index of
    the reference that matched best. ``pair`` maximises min(source similarity,
    target similarity) over training pairs, and carries the index of the
    reference that matched its target best; None when there are no references.
    In both, equal references go to the lower index.
    """

    source: tuple[Neighbour, ...]
    target: tuple[Neighbour, ...]
    pair: Neighbour | None
    source_exact: bool
    target_exact: bool
    pair_exact: bool


@dataclass(frozen=True)
class Exposures(Sequence[ItemExposure]):
    """Per-item exposures of a test set, with column views."""

    items: tuple[ItemExposure, ...]
    num_train: int
    strategy: str

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> ItemExposure:  # type: ignore[override]
        return self.items[i]

    def __iter__(self) -> Iterator[ItemExposure]:
        return iter(self.items)

    @property
    def source_exposure(self) -> list[float]:
        return [e.source[0].score for e in self.items]

    @property
    def source_neighbor(self) -> list[int]:
        return [e.source[0].row for e in self.items]

    @property
    def target_exposure(self) -> list[float | None]:
        return [e.target[0].score if e.target else None for e in self.items]

    @property
    def target_neighbor(self) -> list[int | None]:
        return [e.target[0].row if e.target else None for e in self.items]

    @property
    def pair_exposure(self) -> list[float | None]:
        return [e.pair.score if e.pair else None for e in self.items]

    @property
    def pair_neighbor(self) -> list[int | None]:
        return [e.pair.row if e.pair else None for e in self.items]

    @property
    def source_exact(self) -> list[bool]:
        return [e.source_exact for e in self.items]

    @property
    def target_exact(self) -> list[bool]:
        return [e.target_exact for e in self.items]

    @property
    def pair_exact(self) -> list[bool]:
        return [e.pair_exact for e in self.items]


def _neighbours(
    rows: list[int], overlap: list[int], union: list[int], refs: list[int] | None = None
) -> tuple[Neighbour, ...]:
    return tuple(
        Neighbour(r, o, u, refs[i] if refs else 0)
        for i, (r, o, u) in enumerate(zip(rows, overlap, union, strict=True))
    )


def _from_core(raw: dict[str, Any], num_train: int, strategy: str) -> Exposures:
    items = []
    for i in range(len(raw["source_rows"])):
        pair = _neighbours(
            raw["pair_rows"][i],
            raw["pair_overlap"][i],
            raw["pair_union"][i],
            raw["pair_references"][i],
        )
        items.append(
            ItemExposure(
                source=_neighbours(
                    raw["source_rows"][i], raw["source_overlap"][i], raw["source_union"][i]
                ),
                target=_neighbours(
                    raw["target_rows"][i],
                    raw["target_overlap"][i],
                    raw["target_union"][i],
                    raw["target_references"][i],
                ),
                pair=pair[0] if pair else None,
                source_exact=raw["source_exact"][i],
                target_exact=raw["target_exact"][i],
                pair_exact=raw["pair_exact"][i],
            )
        )
    return Exposures(tuple(items), num_train, strategy)


def _settings(config: object) -> RetrievalConfig:
    """The retrieval settings given, or the defaults."""
    if config is None:
        return RetrievalConfig()
    if not isinstance(config, RetrievalConfig):
        raise InvalidOptionError(f"config: expected a RetrievalConfig, got {type(config).__name__}")
    return config


def _test_set(test_sources: object) -> list[str]:
    """The test sources as a list: strings, at least one."""
    sources = check_texts("test_sources", test_sources)
    if not sources:
        raise EmptyTestSetError("test_sources: the test set is empty")
    check_test_size("test_sources", len(sources))
    return sources


class TrainingIndex:
    """An index of a training corpus (both sides), reusable for many test sets.

    >>> index = TrainingIndex.build(["a small house"], ["ein kleines Haus"])
    >>> index.find_exposures(["a small house"], ["ein kleines Haus"]).pair_exact
    [True]
    """

    def __init__(
        self,
        core: _core.TrainingIndex,
        config: RetrievalConfig,
        train_fingerprint: str | None = None,
    ) -> None:
        self._core = core
        self.config = config
        # The fingerprint of the corpus indexed, where known (a saved index's
        # manifest names it): what proves that the index belongs to a corpus.
        self.train_fingerprint = train_fingerprint

    @classmethod
    def build(
        cls,
        train_sources: Sequence[str] | _core.ArrowTexts,
        train_targets: Sequence[str] | _core.ArrowTexts,
        config: RetrievalConfig | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> TrainingIndex:
        """An index of both sides: lists of strings or ``ArrowTexts`` (read a block
        at a time); ``progress`` is called with the rows of each block read."""
        config = _settings(config)
        if isinstance(train_sources, _core.ArrowTexts):
            sources, targets = _training_texts(train_sources, train_targets)
            if not len(sources):
                raise EmptyCorpusError("train_sources: the training corpus is empty")
        else:
            sources, targets = check_training(train_sources, train_targets)
        core = _core.TrainingIndex(
            sources,
            targets,
            config.gram_settings(),
            threads=config.resolved_threads(),
            progress=progress,
        )
        return cls(core, config)

    @property
    def rows(self) -> int:
        return self._core.rows

    @property
    def nbytes(self) -> int:
        """Bytes held by the index arrays."""
        return self._core.nbytes

    def find_exposures(
        self,
        test_sources: Sequence[str],
        references: Sequence[str] | Sequence[Sequence[str]] | None = None,
    ) -> Exposures:
        sources = _test_set(test_sources)
        refs = references_per_item(references, len(sources))
        raw = self._core.expose(sources, refs, top_k=self.config.top_k)
        return _from_core(raw, self.rows, "indexed")

    def search_volume(
        self,
        test_sources: Sequence[str],
        references: Sequence[str] | Sequence[Sequence[str]] | None = None,
    ) -> tuple[int, int]:
        """``(query_postings, index_postings)``: the posting entries of the test
        items' grams (what a search reads at most) and of the whole index (what
        a streaming pass reads as gram sets); the cost model's inputs."""
        sources = _test_set(test_sources)
        return self._core.search_volume(sources, references_per_item(references, len(sources)))


class StreamingAudit:
    """A test set audited against training pairs fed in row order, one pass.

    Audits of disjoint row ranges of one corpus (shards) merge exactly:

    >>> test, refs = ["the old house"], ["das alte Haus"]
    >>> left, right = StreamingAudit(test, refs), StreamingAudit(test, refs)
    >>> left.feed(["the house"], ["das Haus"], row_base=0)
    >>> right.feed(["an old house"], ["ein altes Haus"], row_base=1)
    >>> left.merge(right)
    >>> left.result().source_neighbor
    [1]
    """

    def __init__(
        self,
        test_sources: Sequence[str],
        references: Sequence[str] | Sequence[Sequence[str]] | None = None,
        config: RetrievalConfig | None = None,
    ) -> None:
        self.config = _settings(config)
        sources = _test_set(test_sources)
        self._core = _core.StreamingAudit(
            sources,
            references_per_item(references, len(sources)),
            self.config.gram_settings(),
            top_k=self.config.top_k,
            block_rows=self.config.block_rows,
            threads=self.config.resolved_threads(),
        )

    @property
    def next_row(self) -> int:
        """Rows fed so far end before this global index."""
        return self._core.next_row

    def feed(
        self,
        train_sources: Sequence[str] | _core.ArrowTexts,
        train_targets: Sequence[str] | _core.ArrowTexts,
        row_base: int,
    ) -> None:
        """Feed training pairs whose first has global index ``row_base``: lists of
        strings, or ``ArrowTexts`` (Arrow columns, checked when they were made)."""
        src, tgt = _training_texts(train_sources, train_targets, row_base)
        self._core.feed(src, tgt, row_base)

    @property
    def blocks(self) -> tuple[int, int]:
        """Blocks audited so far, and how many of them counted every test text's
        overlap at once; the others probed each text by its prefix (the cost
        model's choice, block by block)."""
        return self._core.blocks

    def best_source_rows(self) -> list[int]:
        """Every item's best source row over the rows fed so far (the TM's row)."""
        return self._core.best_source_rows()

    def merge(self, other: StreamingAudit) -> None:
        """Take in the audit of other rows of the same corpus (same test set and settings)."""
        self._core.merge(other._core)

    def result(self) -> Exposures:
        rows = self._core.rows_fed
        if rows == 0:
            raise EmptyCorpusError("train_sources: no training pairs were fed")
        return _from_core(self._core.result(), rows, "streaming")


def _training_texts(
    sources: Sequence[str] | _core.ArrowTexts,
    targets: Sequence[str] | _core.ArrowTexts,
    row_base: int = 0,
) -> tuple[Sequence[str] | _core.ArrowTexts, Sequence[str] | _core.ArrowTexts]:
    """Training texts for the core: ``ArrowTexts`` as they are, else checked lists."""
    if not isinstance(sources, _core.ArrowTexts):
        sources = check_texts("train_sources", sources, start=row_base)
    if not isinstance(targets, _core.ArrowTexts):
        targets = check_texts("train_targets", targets, start=row_base)
    if len(sources) != len(targets):
        raise MisalignedInputError(
            f"train_sources has {len(sources)} items but train_targets has {len(targets)}"
        )
    return sources, targets


def stream_exposures(
    train_pairs: Iterable[tuple[str, str]],
    test_sources: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]] | None = None,
    config: RetrievalConfig | None = None,
) -> Exposures:
    """One pass over training pairs from any iterable (e.g. two files zipped),
    holding only one block of them in memory at a time."""
    config = _settings(config)
    audit = StreamingAudit(test_sources, references, config)
    pairs = iter(train_pairs)
    while block := list(islice(pairs, config.block_rows)):
        audit.feed([p[0] for p in block], [p[1] for p in block], audit.next_row)
    if audit.next_row == 0:
        raise EmptyCorpusError("train_pairs: the training corpus is empty")
    return audit.result()


def find_exposures(
    train_sources: Sequence[str],
    train_targets: Sequence[str],
    test_sources: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]] | None = None,
    config: RetrievalConfig | None = None,
) -> Exposures:
    """Exact exposures of a test set to a training corpus.

    >>> ex = find_exposures(["the house", "a tree"], ["das Haus", "ein Baum"], ["the houses"],
    ...                     ["die Häuser"])
    >>> ex.source_neighbor, round(ex.source_exposure[0], 3)
    ([0], 0.857)
    """
    config = _settings(config)
    sources, targets = check_training(train_sources, train_targets)
    test = _test_set(test_sources)
    if choose_strategy(config, len(sources), len(test)).strategy == "indexed":
        return TrainingIndex.build(sources, targets, config).find_exposures(test, references)
    # The lists are checked already: feed them in blocks as they are.
    audit = StreamingAudit(test, references, config)
    for start in range(0, len(sources), config.block_rows):
        end = start + config.block_rows
        audit._core.feed(sources[start:end], targets[start:end], start)
    return audit.result()
