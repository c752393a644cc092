"""The translation-memory (TM) candidate rule: an item's TM hypothesis is the
training target of its best source row, or "" where its source shares no gram
with training and the zero policy is ``empty``."""

from __future__ import annotations

from collections.abc import Sequence

from tame_mt_metric.retrieval.config import ZeroPolicy
from tame_mt_metric.retrieval.exposure import Exposures

__all__ = ["tm_from_candidates"]


def tm_from_candidates(
    exposures: Exposures, candidates: Sequence[str], zero_policy: ZeroPolicy = "empty"
) -> list[str]:
    """The TM hypotheses from each item's candidate: "" for an item whose source
    shares no gram with training under the ``empty`` policy."""
    return [
        "" if item.source[0].overlap == 0 and zero_policy == "empty" else candidate
        for item, candidate in zip(exposures, candidates, strict=True)
    ]
