"""sacrebleu's BLEU and chrF of many sums of sufficient statistics at once
(one row a resample), bit for bit what sacrebleu's own scoring of each row
gives.

Each score takes sacrebleu's steps in sacrebleu's order, on whole columns:
the same IEEE operations on the same operands (integer sums below 2^53, so
exactly the floats sacrebleu's ``int / int`` and ``float * int`` make), and
the logarithms and exponentials through ``math.log`` and ``math.exp``, the
functions sacrebleu calls (numpy's own may differ in the last bit). A metric
of another kind, or a subclass that changes how a score is computed, is scored
row by row by sacrebleu itself. What of sacrebleu's insides this follows
(the formulas of ``BLEU.compute_bleu`` and ``CHRF._compute_f_score``) is
named in ``sacrebleu_internals``, which pins it; the tests hold every row's
score to sacrebleu's own, on random statistics, in every setting.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF

from tame_mt_metric.errors import MisalignedInputError
from tame_mt_metric.report.sacrebleu_internals import score_of_sums, scored_as_sacrebleu

__all__ = ["score_rows"]

# sacrebleu's ``my_log`` of 0.
_LOG_ZERO = -9999999999.0


def score_rows(metric: Any, sums: np.ndarray) -> np.ndarray:
    """The score of each row of ``sums`` (integer statistics, one row a
    resample), as sacrebleu scores each (``score_of_sums(metric, row).score``)."""
    sums = np.asarray(sums)
    if sums.ndim != 2:
        raise MisalignedInputError(f"sums: expected a 2-d array, got {sums.ndim} dimensions")
    if scored_as_sacrebleu(metric, BLEU):
        return _bleu_rows(metric, sums)
    if scored_as_sacrebleu(metric, CHRF):
        return _chrf_rows(metric, sums)
    scores = [score_of_sums(metric, row).score for row in sums.tolist()]
    return np.array(scores, dtype=np.float64)


def _mapped(function: Any, values: np.ndarray) -> np.ndarray:
    return np.fromiter(map(function, values.tolist()), dtype=np.float64, count=values.size)


def _bleu_rows(metric: BLEU, sums: np.ndarray) -> np.ndarray:
    """``BLEU.compute_bleu`` on every row."""
    order = metric.max_ngram_order
    if sums.shape[1] != 2 + 2 * order:
        raise MisalignedInputError(
            f"sums: expected {2 + 2 * order} BLEU statistics, got {sums.shape[1]}"
        )
    method = metric.smooth_method
    value: Any = (
        BLEU.SMOOTH_DEFAULTS[method] if metric.smooth_value is None else metric.smooth_value
    )
    rows = sums.shape[0]
    sys_len = sums[:, 0].astype(np.float64)
    ref_len = sums[:, 1].astype(np.float64)
    correct = sums[:, 2 : 2 + order].astype(np.float64)
    total = sums[:, 2 + order :].astype(np.float64)
    any_correct = (sums[:, 2 : 2 + order] != 0).any(axis=1)

    # Brevity penalty: exp(1 - ref_len / sys_len) when the system is shorter.
    bp = np.ones(rows)
    short = sys_len < ref_len
    bp[short & (sys_len <= 0)] = 0.0
    shrunk = short & (sys_len > 0)
    bp[shrunk] = _mapped(math.exp, 1 - ref_len[shrunk] / sys_len[shrunk])

    # n-gram precisions, the loop stopping at the first order with no n-grams.
    precisions = np.zeros((rows, order))
    live = np.ones(rows, dtype=bool)
    eff_order = np.full(rows, order, dtype=np.float64)
    smooth_mteval = np.ones(rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        for n in range(order):
            c, t = correct[:, n], total[:, n]
            if method == "add-k" and n > 0:
                c, t = c + value, t + value
            live &= t != 0
            if metric.effective_order:
                eff_order[live] = n + 1
            zero = live & (c == 0)
            if method == "exp":
                smooth_mteval[zero] *= 2
                precisions[zero, n] = 100.0 / (smooth_mteval[zero] * t[zero])
            elif method == "floor":
                precisions[zero, n] = 100.0 * value / t[zero]
            hit = live & (c != 0)
            precisions[hit, n] = 100.0 * c[hit] / t[hit]

    logs = np.full((rows, order), _LOG_ZERO)
    positive = precisions != 0.0
    logs[positive] = _mapped(math.log, precisions[positive])
    # sum() over the first eff_order logs, left to right.
    total_log = np.zeros(rows)
    for n in range(order):
        total_log = np.where(n < eff_order, total_log + logs[:, n], total_log)
    scores: np.ndarray = bp * _mapped(math.exp, total_log / eff_order)
    scores[~any_correct] = 0.0
    return scores


def _chrf_rows(metric: CHRF, sums: np.ndarray) -> np.ndarray:
    """``CHRF._compute_f_score`` on every row."""
    order = metric.order
    if sums.shape[1] != 3 * order:
        raise MisalignedInputError(
            f"sums: expected {3 * order} chrF statistics, got {sums.shape[1]}"
        )
    eps = 1e-16
    factor = metric.beta**2
    rows = sums.shape[0]
    columns = np.ascontiguousarray(sums.T, dtype=np.float64)
    score = np.zeros(rows)
    avg_prec, avg_rec = np.zeros(rows), np.zeros(rows)
    effective_order = np.zeros(rows, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(order):
            n_hyp, n_ref, n_match = columns[3 * i : 3 * i + 3]
            prec = np.where(n_hyp > 0, n_match / n_hyp, eps)
            rec = np.where(n_ref > 0, n_match / n_ref, eps)
            denom = factor * prec + rec
            score = score + np.where(denom > 0, (1 + factor) * prec * rec / denom, eps)
            both = (n_hyp > 0) & (n_ref > 0)
            avg_prec = np.where(both, avg_prec + prec, avg_prec)
            avg_rec = np.where(both, avg_rec + rec, avg_rec)
            effective_order += both
        if metric.eps_smoothing:
            smoothed: np.ndarray = 100 * score / order
            return smoothed
        some = effective_order > 0
        avg_prec = np.where(some, avg_prec / effective_order, 0.0)
        avg_rec = np.where(some, avg_rec / effective_order, 0.0)
        f = (1 + factor) * avg_prec * avg_rec
        f = f / ((factor * avg_prec) + avg_rec)
    return np.where(avg_prec + avg_rec != 0, 100 * f, 0.0)
