"""Which way round a training corpus reads against a test set: the mean exposure
of the test sources and of the references to a fixed sample of training rows, on
each side, measured exactly by the core. A corpus given the wrong way round (its
sources in the target language) has the test sources nearer the sample's targets
than its sources, and the references nearer its sources. This module measures;
the report decides what counts as swapped (``report/swapped_sides.py``).

The sample is deterministic: up to ``SAMPLE_ROWS`` training rows spread evenly
over a corpus at hand (a Dataset, a table or lists read by row; text files
kept as the audit's pass reads them, ``KeptRows``), or a stream's first rows,
kept the same way; and up to ``SAMPLE_ITEMS`` test items spread
evenly. No number of the report depends on it.

>>> sides = measure_sides(["the house"], ["das Haus"], ["das Haus"], [["the house"]])
>>> sides.sources_to_sources, sides.sources_to_targets
(0.0, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.corpus import Block, TrainingCorpus, TrainingStream
from tame_mt_metric.retrieval.exposure import Exposures, stream_exposures
from tame_mt_metric.retrieval.text_files import TextFiles

__all__ = [
    "SAMPLE_ITEMS",
    "SAMPLE_ROWS",
    "KeptRows",
    "SideExposure",
    "measure_sides",
    "sample_of",
    "sample_rows",
    "spread",
]

# Training rows and test items the measure reads at most: on real pairs
# (FLORES-200, Multi30k, Bible verses) the means of 500 of each read the same
# way round as those of 2,000, at a sixteenth of the work.
SAMPLE_ROWS = 500
SAMPLE_ITEMS = 500


@dataclass(frozen=True)
class SideExposure:
    """Mean nearest-neighbour exposures of ``items`` test items to ``rows`` training
    rows: the test sources to the sample's sources and targets, the references
    (the best of each item's) to the sample's targets and sources."""

    rows: int
    items: int
    sources_to_sources: float
    sources_to_targets: float
    references_to_targets: float
    references_to_sources: float

    @property
    def straight(self) -> float:
        """The mean exposure with the corpus read as given."""
        return (self.sources_to_sources + self.references_to_targets) / 2

    @property
    def crossed(self) -> float:
        """The mean exposure with the corpus's two sides exchanged."""
        return (self.sources_to_targets + self.references_to_sources) / 2


def spread(total: int, count: int) -> list[int]:
    """``count`` indices spread evenly over ``range(total)``, the first included
    (every index when ``total <= count``).

    >>> spread(10, 4), spread(3, 4)
    ([0, 2, 5, 7], [0, 1, 2])
    """
    if total <= count:
        return list(range(total))
    return [i * total // count for i in range(count)]


def _means(exposures: Exposures) -> tuple[float, float]:
    items = exposures.items
    source = math.fsum(e.source[0].score for e in items) / len(items)
    target = math.fsum(e.target[0].score for e in items) / len(items)
    return source, target


def measure_sides(
    train_sources: Sequence[str],
    train_targets: Sequence[str],
    sources: Sequence[str],
    references: Sequence[Sequence[str]],
    config: RetrievalConfig | None = None,
) -> SideExposure:
    """The side exposures of a test set (up to ``SAMPLE_ITEMS`` of its items) to a
    sample of training rows, under the retrieval settings of ``config``."""
    # One pass over the sample with the test set indexed: the cheaper way at this
    # size (the test items outnumber the rows, and the sides share few grams). It
    # is streamed without choosing a strategy, so that the only strategy the log
    # names is the report's own.
    config = replace(config or RetrievalConfig(), top_k=1)
    items = spread(len(sources), SAMPLE_ITEMS)
    test = [sources[i] for i in items]
    refs = [list(references[i]) for i in items]
    straight = zip(train_sources, train_targets, strict=True)
    crossed = zip(train_targets, train_sources, strict=True)
    s_to_s, r_to_t = _means(stream_exposures(straight, test, refs, config))
    s_to_t, r_to_s = _means(stream_exposures(crossed, test, refs, config))
    return SideExposure(len(train_sources), len(items), s_to_s, s_to_t, r_to_t, r_to_s)


class KeptRows:
    """Some training rows (increasing) kept as a pass's blocks go by: the side
    check's sample read on the audit's own pass, with no pass of its own (a
    stream read once has no other time to be sampled).

    >>> kept = KeptRows(range(3))
    >>> [len(s) for s, _ in kept.watch([(["a", "b"], ["x", "y"]), (["c", "d"], ["z", "w"])])]
    [2, 2]
    >>> kept.sources, kept.targets, kept.complete
    (['a', 'b', 'c'], ['x', 'y', 'z'], True)
    """

    def __init__(self, rows: Iterable[int]) -> None:
        self.rows = list(rows)
        self.sources: list[str] = []
        self.targets: list[str] = []
        self._first = 0  # the first row of the next block

    @property
    def complete(self) -> bool:
        return len(self.sources) == len(self.rows)

    def take(self, block: Block) -> None:
        """Keep the wanted rows of the next block."""
        src, tgt = block
        while not self.complete and self.rows[len(self.sources)] < self._first + len(src):
            at = self.rows[len(self.sources)] - self._first
            self.sources.append(src[at])
            self.targets.append(tgt[at])
        self._first += len(src)

    def watch(self, blocks: Iterable[Block]) -> Iterator[Block]:
        for block in blocks:
            self.take(block)
            yield block


def sample_rows(train: TrainingCorpus | TrainingStream) -> KeptRows | None:
    """The rows the side check reads, to be kept on the audit's pass where a
    corpus is read by passes (a stream: its first rows; text files: rows spread
    evenly); None for a corpus read by row."""
    if isinstance(train, TrainingStream):
        return KeptRows(range(SAMPLE_ROWS))
    if isinstance(train, TextFiles):
        return KeptRows(spread(train.num_rows, SAMPLE_ROWS))
    return None


def sample_of(
    train: TrainingCorpus | TrainingStream, kept: KeptRows | None = None
) -> tuple[list[str], list[str]] | None:
    """The training rows the side check reads: those ``kept`` on the audit's pass
    (a stream's first rows: None when it kept none), else spread evenly over a
    corpus at hand (text files read up to the last one wanted)."""
    if isinstance(train, TrainingStream):
        if kept is None or not kept.sources:
            return None
        return kept.sources, kept.targets
    if kept is not None and not kept.complete:  # no pass was made (an index answered)
        for block in train.blocks(1 << 16):
            kept.take(block)
            if kept.complete:
                break
    if kept is not None:
        return kept.sources, kept.targets
    rows = spread(train.num_rows, SAMPLE_ROWS)
    sources, targets = train.sources_at(rows), train.targets_at(rows)
    return [sources[r] for r in rows], [targets[r] for r in rows]
