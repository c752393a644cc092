"""System quality from sacrebleu's sufficient statistics: each hypothesis set
is read once into per-segment statistics, and any subset of segments (a bin)
is scored by summing its rows, exactly as sacrebleu scores a corpus."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sacrebleu
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF

from tame_mt_metric.tame_config import TameConfig

__all__ = ["SACREBLEU_VERSION", "Scorers", "SegmentStatistics"]


def _column_sums(rows: list[list[int]]) -> list[int]:
    """Sums of the statistics over segments (sacrebleu's ``sum_of_lists``; integers,
    so exact in any order)."""
    return [sum(column) for column in zip(*rows, strict=True)]


class SegmentStatistics:
    """Per-segment statistics of one hypothesis set under each metric."""

    def __init__(self, metrics: dict[str, Any], stats: dict[str, list[list[int]]]) -> None:
        self._metrics = metrics
        self._stats = stats

    def __len__(self) -> int:
        return len(next(iter(self._stats.values()), []))

    def rows(self) -> dict[str, list[list[int]]]:
        """The per-segment statistics by metric (what an audit caches)."""
        return self._stats

    def score(self, rows: Sequence[int] | None = None) -> dict[str, float]:
        """Corpus scores (0-100) of the given segments (all by default); nan for none."""
        out = {}
        for name, metric in self._metrics.items():
            stats = self._stats[name]
            chosen = stats if rows is None else [stats[i] for i in rows]
            if not chosen:
                out[name] = float("nan")
            else:
                out[name] = float(metric._compute_score_from_stats(_column_sums(chosen)).score)
        return out


class Scorers:
    """The configured sacrebleu metrics with the references read once.

    >>> scorers = Scorers(TameConfig(), [["the cat sat on the mat"], ["a dog barked"]])
    >>> stats = scorers.statistics(["the cat sat on the mat", "a cat barked"])
    >>> {name: round(score, 2) for name, score in stats.score([0]).items()}
    {'bleu': 100.0, 'chrf': 100.0}
    """

    def __init__(self, config: TameConfig, references: Sequence[Sequence[str]]) -> None:
        """``references`` holds one list per item (the same count for every item)."""
        streams = [list(stream) for stream in zip(*references, strict=True)]
        self._metrics: dict[str, Any] = {}
        if "bleu" in config.metrics:
            self._metrics["bleu"] = BLEU(
                tokenize=config.bleu_tokenize,
                lowercase=config.bleu_lowercase,
                references=streams,
            )
        if "chrf" in config.metrics:
            self._metrics["chrf"] = CHRF(word_order=config.chrf_word_order, references=streams)

    def from_rows(self, stats: dict[str, list[list[int]]]) -> SegmentStatistics:
        """Statistics extracted earlier (by ``statistics(...).rows()``) with the same settings."""
        return SegmentStatistics(self._metrics, stats)

    def statistics(self, hypotheses: Sequence[str]) -> SegmentStatistics:
        hyps = list(hypotheses)
        return SegmentStatistics(
            self._metrics,
            {
                name: metric._extract_corpus_statistics(hyps, None)
                for name, metric in self._metrics.items()
            },
        )


SACREBLEU_VERSION: str = sacrebleu.__version__
