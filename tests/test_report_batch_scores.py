"""Scores of many rows of summed statistics at once: each equals, bit for bit,
sacrebleu's score of that row, for BLEU and chrF in every setting sacrebleu
has, and a metric of another kind is scored by sacrebleu row by row."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF

from tame_mt_metric.errors import MisalignedInputError
from tame_mt_metric.report.batch_scores import score_rows

BLEUS = [
    BLEU(),
    BLEU(smooth_method="none"),
    BLEU(smooth_method="floor"),
    BLEU(smooth_method="floor", smooth_value=0.25),
    BLEU(smooth_method="add-k"),
    BLEU(smooth_method="add-k", smooth_value=3),
    BLEU(effective_order=True),
    BLEU(smooth_method="floor", effective_order=True),
    BLEU(max_ngram_order=2),
    BLEU(max_ngram_order=6, smooth_method="add-k", effective_order=True),
]
CHRFS = [
    CHRF(),
    CHRF(word_order=2),
    CHRF(word_order=1, char_order=4, beta=3),
    CHRF(word_order=2, eps_smoothing=True),
    CHRF(char_order=2, beta=1),
]

# Counts from a handful of segments to a large corpus's sums, zeros often.
count = st.one_of(st.just(0), st.integers(0, 12), st.integers(0, 10**12))


def _expected(metric: Any, rows: list[list[int]]) -> np.ndarray:
    scores = [metric._compute_score_from_stats(list(row)).score for row in rows]
    return np.array(scores, dtype=np.float64)


def _rows(width: int) -> st.SearchStrategy[list[list[int]]]:
    return st.lists(st.lists(count, min_size=width, max_size=width), min_size=1, max_size=30)


def _assert_bitwise(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == np.float64 and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), (got, want)


@pytest.mark.parametrize("metric", BLEUS, ids=lambda m: f"{m.smooth_method}-{m.max_ngram_order}")
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_bleu_of_every_row_is_sacrebleus_bit_for_bit(metric: BLEU, data: st.DataObject) -> None:
    rows = data.draw(_rows(2 + 2 * metric.max_ngram_order))
    _assert_bitwise(score_rows(metric, np.array(rows, dtype=np.int64)), _expected(metric, rows))


@pytest.mark.parametrize("metric", CHRFS, ids=lambda m: f"c{m.char_order}w{m.word_order}b{m.beta}")
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_chrf_of_every_row_is_sacrebleus_bit_for_bit(metric: CHRF, data: st.DataObject) -> None:
    rows = data.draw(_rows(3 * metric.order))
    _assert_bitwise(score_rows(metric, np.array(rows, dtype=np.int64)), _expected(metric, rows))


@pytest.mark.parametrize(
    ("metric", "row"),
    [
        (BLEU(), [3, 7, 3, 2, 1, 0, 3, 2, 1, 0]),  # shorter, no 4-gram match
        (BLEU(), [0, 5, 0, 0, 0, 0, 0, 0, 0, 0]),  # nothing matches
        (BLEU(smooth_method="floor"), [4, 4, 4, 0, 0, 0, 4, 0, 0, 0]),  # no bigrams at all
        (BLEU(effective_order=True), [2, 2, 2, 1, 0, 0, 2, 1, 0, 0]),
        (CHRF(), [0, 5, 0] * 6),  # an empty hypothesis
        (CHRF(word_order=2), [5, 0, 0] * 8),  # an empty reference
    ],
)
def test_the_edges_of_the_formulas_are_sacrebleus(metric: Any, row: list[int]) -> None:
    _assert_bitwise(score_rows(metric, np.array([row])), _expected(metric, [row]))


class _Rescaled(BLEU):
    """A BLEU whose scores are computed otherwise."""

    def _compute_score_from_stats(self, stats: list[int]) -> Any:
        score = super()._compute_score_from_stats(stats)
        score.score /= 2
        return score


def test_a_metric_that_scores_otherwise_is_scored_row_by_row() -> None:
    metric = _Rescaled()
    rows = [[9, 10, 8, 6, 4, 2, 9, 8, 7, 6], [3, 3, 3, 2, 1, 0, 3, 2, 1, 0]]
    got = score_rows(metric, np.array(rows))
    _assert_bitwise(got, _expected(metric, rows))
    assert got[0] == pytest.approx(BLEU()._compute_score_from_stats(rows[0]).score / 2)


@pytest.mark.parametrize(
    ("metric", "sums", "match"),
    [
        (BLEU(), np.zeros((3, 9), dtype=np.int64), "expected 10 BLEU statistics, got 9"),
        (CHRF(), np.zeros((3, 19), dtype=np.int64), "expected 18 chrF statistics, got 19"),
        (BLEU(), np.zeros(10, dtype=np.int64), "expected a 2-d array"),
    ],
)
def test_sums_of_the_wrong_shape_are_refused(metric: Any, sums: np.ndarray, match: str) -> None:
    with pytest.raises(MisalignedInputError, match=match):
        score_rows(metric, sums)
