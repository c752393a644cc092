"""Whether an index may answer for a corpus and settings: built with the same
gram orders and normalisation, and naming the fingerprint and row count of the
corpus at hand. A saved index proves its own integrity when it is opened
(``cache/``); these checks prove that it belongs to what is asked."""

from __future__ import annotations

from tame_mt_metric.errors import IndexFileError
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.exposure import TrainingIndex

__all__ = ["check_index_corpus", "check_index_settings"]


def _shape(config: RetrievalConfig) -> tuple[tuple[int, ...], dict[str, bool]]:
    """The settings that shape an index: gram orders and normalisation flags."""
    return tuple(config.ngram_orders), dict(config.normalization_flags())


def check_index_settings(index: TrainingIndex, config: RetrievalConfig) -> None:
    """``index`` was built with ``config``'s gram orders and normalisation."""
    if _shape(index.config) != _shape(config):
        raise IndexFileError(
            f"index: built with {index.config.signature()}, but the settings asked for are "
            f"{config.signature()}; use the index's settings or build an index with these"
        )


def check_index_corpus(index: TrainingIndex, fingerprint: str, rows: int) -> None:
    """``index`` indexes the corpus of ``fingerprint`` and ``rows`` rows."""
    if index.train_fingerprint is None:
        raise IndexFileError(
            "index: it names no corpus fingerprint, so it cannot be proved to index this "
            "corpus; open a saved index (`tame-mt-metric index build --out` writes one)"
        )
    if (index.train_fingerprint, index.rows) != (fingerprint, rows):
        raise IndexFileError(
            f"index: indexes another corpus (fingerprint {index.train_fingerprint}, "
            f"{index.rows:,} rows; the corpus at hand: {fingerprint}, {rows:,} rows)"
        )
