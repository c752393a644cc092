"""The translation-memory (TM) baseline: for each test source, the training
target paired with its nearest training source, scored like a system."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import sacrebleu

from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.exposure import Exposures

__all__ = ["ZeroPolicy", "corpus_scores", "tm_hypotheses"]

ZeroPolicy = Literal["empty", "nearest"]


def tm_hypotheses(
    exposures: Exposures, train_targets: Sequence[str], zero_policy: ZeroPolicy = "empty"
) -> list[str]:
    """The TM hypothesis of every item. An item whose source shares no gram with
    any training source (exposure 0) gets "" under the ``empty`` policy, and the
    target of its tie-broken neighbour (the lowest row) under ``nearest``."""
    if zero_policy not in ("empty", "nearest"):
        raise InvalidOptionError(
            f"tm_zero_policy: expected 'empty' or 'nearest', got {zero_policy!r}"
        )
    hyps = []
    for item in exposures:
        best = item.source[0]
        if best.overlap == 0 and zero_policy == "empty":
            hyps.append("")
        else:
            hyps.append(train_targets[best.row])
    return hyps


def corpus_scores(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], chrf_word_order: int = 2
) -> dict[str, float]:
    """Corpus BLEU (13a) and chrF (chrF++ when word order is 2), 0-100.
    ``references`` holds one stream per reference set."""
    refs = [list(r) for r in references]
    bleu = sacrebleu.corpus_bleu(list(hypotheses), refs)
    chrf = sacrebleu.corpus_chrf(list(hypotheses), refs, word_order=chrf_word_order)
    return {"bleu": float(bleu.score), "chrf": float(chrf.score)}
