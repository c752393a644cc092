"""The streaming strategy's one pass over a training corpus's blocks: each
item's exposures and its TM candidate, taken from the block that holds its
best source row, so that rows are read once and never kept. The one-machine
audit runs it over the whole corpus, a shard over its rows."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

import tame_mt_core as _core

from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.corpus import Block, read_ahead
from tame_mt_metric.retrieval.exposure import Exposures, StreamingAudit

log = logging.getLogger("tame_mt_metric")

__all__ = ["streaming_pass"]


def streaming_pass(
    blocks: Iterable[Block],
    start: int,
    sources: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]] | None,
    config: RetrievalConfig,
    advance: Callable[[int], None] | None = None,
    fingerprint: _core.CorpusFingerprint | None = None,
) -> tuple[Exposures, list[str], int]:
    """One pass over ``blocks`` (lists of strings or ``ArrowTexts``; global rows from
    ``start``): the exposures, each item's TM candidate (the target of its best
    source row, taken from the block that holds that row, so that rows are read
    once and never kept) and the row after the last. The next block is read while
    one is audited (``read_ahead``). ``fingerprint`` takes in the rows on the way;
    ``advance(rows)`` after each block."""
    audit = StreamingAudit(sources, references, config)
    held_rows = [-1] * len(sources)
    candidates = [""] * len(sources)
    row = start
    for block_sources, block_targets in read_ahead(blocks):
        audit.feed(block_sources, block_targets, row)
        if fingerprint is not None:
            fingerprint.update(block_sources, block_targets)
        stop = row + len(block_sources)
        for i, best in enumerate(audit.best_source_rows()):
            if row <= best < stop and best != held_rows[i]:
                held_rows[i], candidates[i] = best, block_targets[best - row]
        row = stop
        if advance is not None:
            advance(len(block_sources))
    if row == start:
        return Exposures((), 0, "streaming"), [], row
    audited, by_overlaps = audit.blocks
    log.info(
        "streaming pass: %d of %d blocks counted every test text's overlap at once, "
        "%d probed each text by its prefix (the cheaper by the cost model of each block)",
        by_overlaps,
        audited,
        audited - by_overlaps,
    )
    return audit.result(), candidates, row
