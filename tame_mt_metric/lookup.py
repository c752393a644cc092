"""Interactive lookups in a saved index: the nearest training pairs of a few
sentences, with their source exposures, from a folder written by
``tame-mt-metric index build`` (the index and its ``corpus.arrow``), for a
notebook and ``tame-mt-metric lookup``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tame_mt_metric.cache.corpus_file import open_with_text, texts_of_index
from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.retrieval.exposure import TrainingIndex

__all__ = ["Match", "SavedIndex"]


@dataclass(frozen=True)
class Match:
    """A training pair near a looked-up sentence: its row, the exact Jaccard
    overlap and union of the two gram sets, and its text."""

    row: int
    overlap: int
    union: int
    source: str
    target: str

    @property
    def exposure(self) -> float:
        return self.overlap / self.union if self.union else 0.0


class SavedIndex:
    """A saved index and the training text beside it, opened once and asked many
    times. The index's arrays and settings are checked when it is opened
    (``open_with_text``); of the text, the blocks that hold the rows found, each
    time (``texts_of_index``)."""

    def __init__(self, folder: Path, index: TrainingIndex) -> None:
        self.folder = folder
        self.index = index

    @classmethod
    def open(cls, folder: str | Path, threads: int | None = None) -> SavedIndex:
        folder = Path(folder)
        return cls(folder, open_with_text(folder, threads=threads))

    def lookup(self, sentences: Sequence[str], top_k: int = 1) -> list[list[Match]]:
        """The ``top_k`` training pairs nearest each sentence by its source side, best
        first (ties to the lower row), exactly as an audit finds them."""
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise InvalidOptionError(f"top_k: must be a whole number of at least 1, got {top_k!r}")
        index = TrainingIndex(self.index._core, replace(self.index.config, top_k=top_k))
        found = index.find_exposures(list(sentences)).items
        rows = [n.row for e in found for n in e.source]
        sources, targets = texts_of_index(self.folder, rows)
        return [
            [Match(n.row, n.overlap, n.union, sources[n.row], targets[n.row]) for n in e.source]
            for e in found
        ]
