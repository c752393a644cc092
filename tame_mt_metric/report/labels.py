"""How every human surface (the text report, the Space, the HTML report, the
demo) names a score and writes a number, so that one number reads the same
everywhere.

- A chrF score is named by its word n-gram order: chrF2 (characters only,
  word order 0), chrF++ (2, as the NLLB paper and Popović name it), and
  sacrebleu's own name otherwise (chrF2+ for 1, chrF2+++ for 3...).
  The JSON key stays ``chrf`` (the spec's), its word order in the signature.
- An exposure (a Jaccard similarity, or the mean of some) is a fraction with
  three decimals, as thresholds are written: ``0.734``.
- A rate (a share of test items: exact overlap, PairLeak@t, a bin's share) is
  a percentage with two decimals: ``18.40%``. JSON keeps fractions.

>>> metric_label("chrf", 2), metric_label("chrf", 0), metric_label("bleu", 2)
('chrF++', 'chrF2', 'BLEU')
>>> exposure_text(0.73449), rate_text(0.184), score_text(float("nan"))
('0.734', '18.40%', 'n/a')
"""

from __future__ import annotations

import math

from tame_mt_metric.report.metric_registry import REGISTRY, chrf_label

__all__ = ["chrf_label", "exposure_text", "metric_label", "rate_text", "score_text"]


def metric_label(metric: str, chrf_word_order: int) -> str:
    """The human name of a report's metric key (``chrf`` by its word order), as
    ``metric_registry`` names it."""
    entry = REGISTRY.get(metric)
    return metric if entry is None else entry.label(chrf_word_order)


def _missing(value: float | None) -> bool:
    return value is None or math.isnan(value)


def exposure_text(value: float | None) -> str:
    """An exposure (similarity in [0, 1]) as a fraction with three decimals."""
    return "n/a" if _missing(value) else f"{value:.3f}"


def rate_text(value: float | None) -> str:
    """A share of test items as a percentage with two decimals."""
    return "n/a" if _missing(value) else f"{100 * value:.2f}%"  # type: ignore[operator]


def score_text(value: float | None) -> str:
    """A score on sacrebleu's 0-100 scale with two decimals."""
    return "n/a" if _missing(value) else f"{value:.2f}"
