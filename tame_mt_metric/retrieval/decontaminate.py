"""Decontamination: the training pairs within a chosen similarity of any test item,
found exactly, so that they can be taken out of the corpus.

For a threshold t and training pair j (source u, target v), with the report's
normalisation, gram orders and Jaccard s, over every item of every test set:
``source`` is the highest s(x_i, u), ``target`` the highest s(r, v) over the
items' references, ``pair`` the highest min(s(x_i, u), max_r s(r_i, v)). A pair
is removed when its rule's side reaches t (``by="any"``: source or target), every
comparison on integers. The corpus is read once, in blocks, and fingerprinted on
the way; the core judges each row against every test text indexed once.

>>> result = decontaminate(
...     {"source": ["a red house", "a green tree"], "target": ["x", "y"]},
...     ["the red house"],
...     threshold=0.5,
...     by="source",
... )
>>> result.kept_indices, [(r.train_index, r.similarity) for r in result.removed]
([1], [(0, Fraction(7, 11))])
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import tame_mt_core as _core

from tame_mt_metric._version import __version__
from tame_mt_metric.errors import (
    EmptyCorpusError,
    EmptyTestSetError,
    InputTextError,
    InvalidOptionError,
    MisalignedInputError,
)
from tame_mt_metric.progress import progress as progress_bar
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.config import threshold as read_threshold
from tame_mt_metric.retrieval.corpus import Block, TrainingStream, read_ahead, training_corpus
from tame_mt_metric.retrieval.exposure import TrainingIndex
from tame_mt_metric.retrieval.index_check import check_index_corpus, check_index_settings
from tame_mt_metric.retrieval.inputs import check_test_size, check_texts, references_per_item

__all__ = [
    "RULES",
    "SIDES",
    "Decontamination",
    "DecontaminationRequest",
    "EvaluationSet",
    "JudgedRows",
    "RemovedPair",
    "decontaminate",
    "judge_rows",
]

# The sides a row is judged on, and the rules that remove it.
SIDES = ("source", "target", "pair")
RULES = (*SIDES, "any")

# The name of a test set given as a plain list.
_ONE_SET = "test"

# The core compares thresholds in 64-bit parts.
_MOST_PART = (1 << 64) - 1


@dataclass(frozen=True)
class RemovedPair:
    """A removed training row and the test item that removed it: the deciding
    side's highest similarity and the (test set, item) that gives it."""

    train_index: int
    test_set: str
    test_index: int
    similarity: Fraction
    by: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, the similarity as a float and as the exact fraction."""
        return {
            "train_index": self.train_index,
            "test_set": self.test_set,
            "test_index": self.test_index,
            "similarity": float(self.similarity),
            "similarity_exact": str(self.similarity),
            "by": self.by,
        }


@dataclass(frozen=True)
class EvaluationSet:
    """One named test set: its sources and each item's references (none, or the
    same number per item)."""

    name: str
    sources: list[str]
    references: list[list[str]]


@dataclass(frozen=True)
class Decontamination:
    """What ``decontaminate`` found: the rows kept, the rows removed with their
    matches, and what was asked. Only the removed rows are held: ``kept_indices``
    is made from them on first use."""

    num_rows: int
    removed: list[RemovedPair]
    threshold: Fraction
    by: str
    test_sets: dict[str, int]
    fingerprint: str
    signature: str
    removed_by_rule: dict[str, int]

    @cached_property
    def kept_indices(self) -> list[int]:
        """The rows kept, increasing."""
        removed = {r.train_index for r in self.removed}
        return [j for j in range(self.num_rows) if j not in removed]

    def select(self, dataset: Any) -> Any:
        """The decontaminated ``datasets.Dataset``: ``dataset.select(kept_indices)``."""
        if len(dataset) != self.num_rows:
            raise MisalignedInputError(
                f"dataset: {len(dataset)} rows, but the decontaminated corpus had {self.num_rows}"
            )
        return dataset.select(self.kept_indices)

    def summary(self) -> dict[str, Any]:
        """JSON-ready: the counts (``removed_by_rule``: removed rows whose side reaches
        the threshold, a row under each such side), the threshold, the rule, the test
        sets, the corpus's fingerprint and the signature."""
        by_set = dict.fromkeys(self.test_sets, 0)
        for r in self.removed:
            by_set[r.test_set] += 1
        return {
            "rows_read": self.num_rows,
            "rows_removed": len(self.removed),
            "rows_kept": self.num_rows - len(self.removed),
            "removed_by_rule": dict(self.removed_by_rule),
            "removed_by_test_set": by_set,
            "threshold": float(self.threshold),
            "threshold_exact": str(self.threshold),
            "by": self.by,
            "test_sets": dict(self.test_sets),
            "fingerprint": self.fingerprint,
            "signature": self.signature,
            "tame_version": __version__,
        }


def checked_threshold(value: object) -> Fraction:
    """A threshold in (0, 1] as an exact fraction; 0 would remove every pair."""
    t = read_threshold("threshold", value)
    if t == 0:
        raise InvalidOptionError("threshold: must be above 0 (0 would remove every pair)")
    if t.denominator > _MOST_PART:
        raise InvalidOptionError(
            f"threshold: {t} has a denominator above 2**64 - 1; give a shorter fraction"
        )
    return t


def checked_rule(by: object) -> str:
    if not isinstance(by, str) or by not in RULES:
        raise InvalidOptionError(f"by: expected one of {', '.join(RULES)}, got {by!r}")
    return by


def evaluation_sets(test_sources: object, references: object = None) -> list[EvaluationSet]:
    """The test sets: a list of sources (one set named "test") or a mapping of names
    to lists; ``references`` in the same shape (per item a string or a list)."""
    if isinstance(test_sources, Mapping):
        if references is not None and not isinstance(references, Mapping):
            raise InputTextError(
                "references: the test sets are named, so give references as a mapping of "
                f"the same names, not a {type(references).__name__}"
            )
        named: dict[object, object] = dict(test_sources)
        refs: Mapping[object, object] = references or {}
    else:
        named, refs = {_ONE_SET: test_sources}, {} if references is None else {_ONE_SET: references}
    if not named:
        raise EmptyTestSetError("test_sources: no test set given")
    if refs and set(refs) != set(named):
        raise MisalignedInputError(
            f"references: test sets {sorted(map(str, refs))}, but test_sources has "
            f"{sorted(map(str, named))}"
        )
    sets = []
    for name, sources in named.items():
        if not isinstance(name, str) or not name:
            raise InputTextError(f"test_sources: a test set's name must be a string, got {name!r}")
        label = "test_sources" if name == _ONE_SET and len(named) == 1 else f"test_sources[{name}]"
        texts = check_texts(label, sources)
        if not texts:
            raise EmptyTestSetError(f"{label}: the test set has no items")
        per_item = references_per_item(refs.get(name), len(texts), label)
        sets.append(EvaluationSet(name, texts, per_item))
    check_test_size("test_sources", sum(len(s.sources) for s in sets))
    return sets


@dataclass(frozen=True)
class DecontaminationRequest:
    """What a decontamination asks, checked before any work: the test sets, the
    threshold (an exact fraction) and the rule. Every run of rows, in one process
    or a shard of many, is judged against it."""

    sets: list[EvaluationSet]
    threshold: Fraction
    by: str

    @classmethod
    def of(
        cls, test_sources: object, references: object, threshold: object, by: object
    ) -> DecontaminationRequest:
        """The request of ``decontaminate``'s arguments, each checked (see there)."""
        t = checked_threshold(threshold)
        rule = checked_rule(by)
        sets = evaluation_sets(test_sources, references)
        with_references = [s for s in sets if s.references]
        if rule in ("target", "pair") and not with_references:
            raise InvalidOptionError(
                f"by={rule!r} compares training targets with references: give them"
            )
        if with_references and len(with_references) != len(sets):
            raise MisalignedInputError("references: give them for every test set or for none")
        return cls(sets, t, rule)

    def test_texts(self) -> list[str]:
        """Every test set's sources, numbered across the sets in order."""
        return [x for s in self.sets for x in s.sources]

    def test_references(self) -> list[list[str]]:
        """Each item's references, in the same order (empty without references)."""
        return [r for s in self.sets for r in s.references]

    def found(self) -> _Found:
        """An empty collector of the rows this request removes."""
        firsts = [0]
        for s in self.sets[:-1]:
            firsts.append(firsts[-1] + len(s.sources))
        return _Found(self.by, [s.name for s in self.sets], firsts)

    def result(
        self, judged: JudgedRows, fingerprint: str, config: RetrievalConfig
    ) -> Decontamination:
        """The ``Decontamination`` of a whole corpus judged (rows from 0) whose
        fingerprint is ``fingerprint``."""
        if judged.start != 0:
            raise InvalidOptionError(f"judged: rows from {judged.start}, not from the first")
        if not judged.stop:
            raise EmptyCorpusError("train: the training corpus is empty")
        t = self.threshold
        return Decontamination(
            num_rows=judged.stop,
            removed=judged.removed,
            threshold=t,
            by=self.by,
            test_sets={s.name: len(s.sources) for s in self.sets},
            fingerprint=fingerprint,
            signature=(
                f"{config.signature()}|threshold:{t}|by:{self.by}|train:{fingerprint}"
                f"|version:{__version__}|core:{_core.__version__}"
            ),
            removed_by_rule=judged.removed_by_rule,
        )


@dataclass(frozen=True)
class JudgedRows:
    """Training rows ``[start, stop)`` judged: the removed ones, increasing, with
    their matches, and per side the removed rows that reach the threshold on it."""

    start: int
    stop: int
    removed: list[RemovedPair]
    removed_by_rule: dict[str, int]


def judge_rows(
    blocks: Iterable[Block],
    start: int,
    request: DecontaminationRequest,
    config: RetrievalConfig,
    advance: Callable[[int], None] | None = None,
    fingerprint: _core.CorpusFingerprint | None = None,
) -> JudgedRows:
    """The rows of ``blocks``, numbered from ``start``, judged by the core's
    ``Decontaminator`` (every test text indexed once), the next block read while
    the core works; each block also goes to ``fingerprint`` and ``advance``. The
    one pass of ``decontaminate`` and of each shard of ``scale/``."""
    judge = _core.Decontaminator(
        request.test_texts(),
        request.test_references(),
        config.gram_settings(),
        request.threshold.numerator,
        request.threshold.denominator,
        config.worker_threads(),
    )
    found = request.found()
    row = start
    for sources, targets in _read(blocks, advance, fingerprint):
        found.add(judge.feed(sources, targets, row))
        row += len(sources)
    return JudgedRows(start, row, found.removed, found.rules)


def decontaminate(
    train: object,
    test_sources: object,
    references: object = None,
    *,
    threshold: object,
    by: str = "any",
    config: RetrievalConfig | None = None,
    progress: bool | None = None,
    index: TrainingIndex | None = None,
) -> Decontamination:
    """Every training pair within ``threshold`` of a test item, by the rule ``by``
    (``"source"``, ``"target"``, ``"pair"`` or ``"any"``: source or target).

    ``train``: what ``compute(train=...)`` takes (a ``datasets.Dataset``, a
    ``pyarrow.Table``, a dict of two lists, a stream, ``TextFiles``), read once in
    blocks of ``config.block_rows``. ``test_sources``: a list of sources, or a
    mapping of test-set names to lists; ``references`` in the same shape (needed by
    ``target``, ``pair`` and the target half of ``any``). ``progress``: show a bar
    (None: as ``progress.shown()`` decides). ``index``: a saved index of this
    corpus (``tame-mt-metric index build``), searched once per test text instead of
    judging every row; used only when it was built with ``config``'s gram orders and
    normalisation and names the corpus's fingerprint and row count (read on the way,
    as without it), else an ``IndexFileError``. The answer is the same."""
    config = config or RetrievalConfig()
    request = DecontaminationRequest.of(test_sources, references, threshold, by)
    if index is not None:
        check_index_settings(index, config)
    corpus = training_corpus(train)
    hasher = None if isinstance(corpus, TrainingStream) else _core.CorpusFingerprint()
    with progress_bar("decontaminating", corpus.known_rows(), show=progress) as advance:
        blocks = corpus.blocks(config.block_rows)
        if index is None:
            judged = judge_rows(blocks, 0, request, config, advance, hasher)
        else:
            rows = sum(len(sources) for sources, _ in _read(blocks, advance, hasher))
    fingerprint = corpus.fingerprint if hasher is None else hasher.hexdigest()
    if index is not None:
        check_index_corpus(index, fingerprint, rows)
        judged = _searched(index, request, rows)
    return request.result(judged, fingerprint, config)


def _read(
    blocks: Iterable[Block],
    advance: Callable[[int], None] | None,
    fingerprint: _core.CorpusFingerprint | None,
) -> Iterator[Block]:
    """``blocks``, the next read while the caller works on one; each also goes to
    ``fingerprint`` and ``advance`` once the caller is done with it."""
    for sources, targets in read_ahead(blocks):
        yield sources, targets
        if fingerprint is not None:
            fingerprint.update(sources, targets)
        if advance is not None:
            advance(len(sources))


def _searched(index: TrainingIndex, request: DecontaminationRequest, rows: int) -> JudgedRows:
    """Rows ``[0, rows)`` judged by searching a saved index of them (proved to be
    theirs) for every test text."""
    found = request.found()
    t = request.threshold
    found.add(
        index._core.decontaminate(
            request.test_texts(), request.test_references(), t.numerator, t.denominator
        )
    )
    return JudgedRows(0, rows, found.removed, found.rules)


class _Found:
    """The removed rows, from the core's columns block by block."""

    def __init__(self, by: str, names: Sequence[str], firsts: Sequence[int]) -> None:
        self.by, self.names, self.firsts = by, names, firsts
        self.removed: list[RemovedPair] = []
        self.rules = dict.fromkeys(SIDES, 0)

    def add(self, columns: Mapping[str, Sequence[int]]) -> None:
        for k, row in enumerate(columns["rows"]):
            reached = {
                side: (
                    columns[f"{side}_item"][k],
                    columns[f"{side}_overlap"][k],
                    columns[f"{side}_union"][k],
                )
                for side in SIDES
                if columns[f"{side}_item"][k] >= 0
            }
            side = self._deciding(reached)
            if side is None:
                continue
            for name in reached:
                self.rules[name] += 1
            item, overlap, union = reached[side]
            n = bisect_right(self.firsts, item) - 1
            self.removed.append(
                RemovedPair(
                    row, self.names[n], item - self.firsts[n], Fraction(overlap, union), side
                )
            )

    def _deciding(self, reached: Mapping[str, tuple[int, int, int]]) -> str | None:
        """The side that removes the row under the rule, or None if it stays; for
        ``any``, the higher of source and target (a tie: source)."""
        if self.by != "any":
            return self.by if self.by in reached else None
        sides = [s for s in ("source", "target") if s in reached]
        if not sides:
            return None
        return max(sides, key=lambda s: (Fraction(*reached[s][1:]), s == "source"))
