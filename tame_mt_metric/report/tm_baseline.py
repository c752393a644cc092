"""The translation-memory (TM) baseline: for each test source, the training
target paired with its nearest training source. The reference is never used
to choose it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tame_mt_metric.retrieval.config import ZeroPolicy
from tame_mt_metric.retrieval.exposure import Exposures
from tame_mt_metric.retrieval.tm_candidates import tm_from_candidates

__all__ = ["tm_hypotheses"]


def tm_hypotheses(
    exposures: Exposures,
    train_targets: Mapping[int, str] | Sequence[str],
    zero_policy: ZeroPolicy = "empty",
) -> list[str]:
    """The TM hypothesis of every item. An item whose source shares no gram with
    any training source (exposure 0) gets "" under the ``empty`` policy, and the
    target of its tie-broken neighbour (the lowest row) under ``nearest``.
    ``train_targets``: the training targets by row (all, or those of the best rows).

    >>> from tame_mt_metric.retrieval.exposure import find_exposures
    >>> ex = find_exposures(["a house", "the sea"], ["ein Haus", "das Meer"], ["a mouse", "zzz"])
    >>> targets = ["ein Haus", "das Meer"]
    >>> tm_hypotheses(ex, targets), tm_hypotheses(ex, targets, "nearest")
    (['ein Haus', ''], ['ein Haus', 'ein Haus'])
    """
    candidates = [train_targets[item.source[0].row] for item in exposures]
    return tm_from_candidates(exposures, candidates, zero_policy)
