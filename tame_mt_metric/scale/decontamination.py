"""Decontamination of a training corpus in contiguous shards of rows, on any engine.

Each shard judges its rows (global row numbers) with ``retrieval``'s
``judge_rows``, the pass of the one-process ``decontaminate``, and yields a
``PartialDecontamination``: its removed rows with their matches, the rows it
read and the digests of its fingerprint blocks. Each row is judged on its own
and the shards' rows are disjoint, so the merge concatenates the removed rows
in row order, adds the counts and combines the fingerprint blocks: the merged
``Decontamination`` equals the one-process answer exactly (rows, matches,
counts, fingerprint, signature). Shards start on multiples of ``SHARD_ALIGN``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import tame_mt_core as _core

from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.corpus import Block
from tame_mt_metric.retrieval.decontaminate import (
    SIDES,
    Decontamination,
    DecontaminationRequest,
    JudgedRows,
    judge_rows,
)
from tame_mt_metric.scale.shards import SHARD_ALIGN

__all__ = ["PartialDecontamination", "decontaminate_shard", "merge_decontaminations"]


@dataclass(frozen=True)
class PartialDecontamination:
    """The decontamination of training rows ``[judged.start, judged.stop)`` of a
    corpus, with the digests of their fingerprint blocks."""

    judged: JudgedRows
    block_digests: list[str]


def decontaminate_shard(
    blocks: Iterable[Block],
    start: int,
    request: DecontaminationRequest,
    config: RetrievalConfig,
) -> PartialDecontamination:
    """The rows of ``blocks``, the first numbered ``start`` (a multiple of
    ``SHARD_ALIGN``), judged and fingerprinted, for merging with other shards."""
    if start % SHARD_ALIGN:
        raise InvalidOptionError(f"start: {start} is not a multiple of {SHARD_ALIGN}")
    fingerprint = _core.CorpusFingerprint()
    judged = judge_rows(blocks, start, request, config, fingerprint=fingerprint)
    return PartialDecontamination(judged, fingerprint.block_digests())


def merge_decontaminations(
    parts: Sequence[PartialDecontamination],
    request: DecontaminationRequest,
    config: RetrievalConfig,
) -> Decontamination:
    """The shards of one corpus, in any order, judged for ``request`` with
    ``config``, merged; they must cover its rows from 0 without gaps."""
    parts = sorted(parts, key=lambda p: p.judged.start)
    if not parts:
        raise InvalidOptionError("parts: nothing to merge")
    expected = 0
    for p in parts:
        if p.judged.start != expected:
            raise InvalidOptionError(f"parts: rows {expected}..{p.judged.start} are in no shard")
        expected = p.judged.stop
    rules = dict.fromkeys(SIDES, 0)
    for p in parts:
        for side, count in p.judged.removed_by_rule.items():
            rules[side] += count
    judged = JudgedRows(0, expected, [r for p in parts for r in p.judged.removed], rules)
    blocks = [d for p in parts for d in p.block_digests]
    return request.result(judged, _core.CorpusFingerprint.combine(blocks), config)
