"""Every use of sacrebleu's private API, in one place: the report scores
sacrebleu's sufficient statistics itself (sums of any subset of segments), so
it calls what sacrebleu keeps behind an underscore. Each name is listed in
``PRIVATE_NAMES`` and pinned by ``tests/test_sacrebleu_internals.py``, so that
a sacrebleu release that moves one fails that test, naming it.

The rest of the package calls the functions here, never a private name:

- ``segment_statistics``: each hypothesis's statistics against the references
  the metric holds (``Metric._extract_corpus_statistics``);
- ``score_of_sums``: the score of summed statistics
  (``Metric._compute_score_from_stats``); ``score_of_segments``: of
  per-segment ones (``Metric._aggregate_and_compute``);
- ``hold_references``: references read once into a metric made without them
  (``Metric._cache_references``, ``Metric._ref_cache``);
- ``paired_bs_test``, ``paired_ar_test``, ``p_value``: sacrebleu's paired
  tests and their p-value (``sacrebleu.significance``), and
  ``GroupStatistics``, a metric they accept that hands them precomputed
  statistics;
- ``scored_as_sacrebleu``: whether a metric scores with sacrebleu's own
  formulas (``BLEU.compute_bleu``, ``CHRF._compute_f_score``), which
  ``batch_scores`` then follows on whole columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sacrebleu import significance
from sacrebleu.metrics.base import Metric
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF

__all__ = [
    "PRIVATE_NAMES",
    "REFERENCE_CACHE",
    "GroupStatistics",
    "hold_references",
    "p_value",
    "paired_ar_test",
    "paired_bs_test",
    "score_of_segments",
    "score_of_sums",
    "scored_as_sacrebleu",
    "segment_statistics",
]

# (owner, name): every private name of sacrebleu used here, and the formulas
# ``batch_scores`` follows (public names, pinned with the rest).
PRIVATE_NAMES: tuple[tuple[object, str], ...] = (
    (Metric, "_extract_corpus_statistics"),
    (Metric, "_compute_score_from_stats"),
    (Metric, "_aggregate_and_compute"),
    (Metric, "_cache_references"),
    (significance, "_paired_bs_test"),
    (significance, "_paired_ar_test"),
    (significance, "_compute_p_value"),
    (BLEU, "compute_bleu"),
    (CHRF, "_compute_f_score"),
)
# The attribute a metric holds its read references in (set by its constructor).
REFERENCE_CACHE = "_ref_cache"
# The methods that make a score from statistics, by metric kind.
_SCORING: dict[type, tuple[str, str]] = {
    BLEU: ("compute_bleu", "_compute_score_from_stats"),
    CHRF: ("_compute_f_score", "_compute_score_from_stats"),
}


def segment_statistics(metric: Any, hypotheses: Sequence[str] | Sequence[int]) -> list[list[int]]:
    """Each hypothesis's statistics against the references ``metric`` holds (the
    items' own, for a ``GroupStatistics``)."""
    stats: list[list[int]] = metric._extract_corpus_statistics(hypotheses, None)
    return stats


def score_of_sums(metric: Any, sums: Any) -> Any:
    """sacrebleu's score (its ``Score`` object) of statistics summed over segments."""
    return metric._compute_score_from_stats(sums)


def score_of_segments(metric: Any, stats: Any) -> Any:
    """sacrebleu's score of per-segment statistics, summed as it sums them."""
    return metric._aggregate_and_compute(stats)


def hold_references(metric: Any, references: Sequence[Sequence[str]]) -> None:
    """``metric`` (made without references) reads ``references`` (one stream per
    reference) once, as its constructor would have."""
    setattr(metric, REFERENCE_CACHE, metric._cache_references(references))


def scored_as_sacrebleu(metric: Any, kind: type) -> bool:
    """``metric`` is a ``kind`` (BLEU or chrF) whose scoring is sacrebleu's own (no
    subclass changes how a score is made from statistics)."""
    return isinstance(metric, kind) and all(
        getattr(type(metric), name) is getattr(kind, name) for name in _SCORING[kind]
    )


paired_bs_test: Any = significance._paired_bs_test
paired_ar_test: Any = significance._paired_ar_test


def p_value(stats: Any, real_difference: float) -> float:
    """sacrebleu's smoothed p-value of ``real_difference`` among ``stats``."""
    return float(significance._compute_p_value(stats, real_difference))


class GroupStatistics:
    """A sacrebleu metric whose "hypotheses" are item numbers: it returns the
    precomputed statistics of those items and scores as ``metric`` does (what
    sacrebleu's paired tests call, by its private names)."""

    def __init__(self, metric: Any, rows: list[list[int]]) -> None:
        self._metric = metric
        self._rows = rows

    def _extract_corpus_statistics(
        self, items: Sequence[int], _references: object
    ) -> list[list[int]]:
        return [self._rows[i] for i in items]

    def _aggregate_and_compute(self, stats: Any) -> Any:
        return score_of_segments(self._metric, stats)

    def _compute_score_from_stats(self, stats: Any) -> Any:
        return score_of_sums(self._metric, stats)
