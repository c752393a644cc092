"""Which strategy answers a test set: searching an index or streaming the corpus
once. Both give the same answers; ``auto`` picks the cheaper by a model of the
work, measured on the corpus and the test set at hand:

- **searching an index** reads the posting lists of each item's grams (each
  source on the source side, each reference on the target side), pruned as
  near neighbours raise the bar; its time per item grows sublinearly with the
  posting volume of the item's grams (``q_item ** SEARCH_EXPONENT``);
- **streaming** reads every training row once as a gram set (the index's own
  posting volume, the same grams) and probes the test set's prefix index with
  it, which grows with the items.

The constants were fitted to alternating runs of both strategies on test sets
of 8 to 2,000 items at 10^5 and 10^6 training pairs of the synthetic corpus
(``benchmarks/bench_strategy.py``, which also checks the choice against both
timings, on other sizes); only their ratio matters, so they
hold on machines of other speeds. Without an index at hand, building one reads
the corpus as a stream does and more, so it pays only when the test set
outnumbers the corpus.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from tame_mt_metric.retrieval.config import RetrievalConfig

__all__ = ["Choice", "choose_strategy", "estimate"]

log = logging.getLogger("tame_mt_metric")

# Seconds on the reference machine (2 cores); see the module docstring.
SEARCH_SECONDS = 7.78e-8
SEARCH_EXPONENT = 0.778
STREAM_SECONDS_PER_POSTING = 1.5e-8
STREAM_SECONDS_PER_ITEM_POSTING = 1.75e-11


@dataclass(frozen=True)
class Choice:
    """The strategy of an audit, and why (shown under the CLI's ``--verbose``)."""

    strategy: str
    reason: str


@dataclass(frozen=True)
class Estimate:
    """Modelled seconds of each strategy on one test set against one index."""

    indexed_s: float
    streaming_s: float
    query_postings: int
    index_postings: int


def estimate(query_postings: int, index_postings: int, num_test: int) -> Estimate:
    """The model's seconds for a test set of ``num_test`` items whose grams have
    ``query_postings`` entries in an index of ``index_postings``."""
    per_item = query_postings / num_test if num_test else 0.0
    indexed = num_test * SEARCH_SECONDS * per_item**SEARCH_EXPONENT
    streaming = index_postings * (
        STREAM_SECONDS_PER_POSTING + STREAM_SECONDS_PER_ITEM_POSTING * num_test
    )
    return Estimate(indexed, streaming, query_postings, index_postings)


def choose_strategy(
    config: RetrievalConfig,
    num_train: int,
    num_test: int,
    volume: tuple[int, int] | None = None,
) -> Choice:
    """The strategy for a test set of ``num_test`` items: the one asked for, else
    the cheaper by the model when an index of the corpus is at hand (``volume``,
    its ``TrainingIndex.search_volume`` of the test set), else the index only
    when the test set outnumbers the corpus."""
    if config.strategy != "auto":
        choice = Choice(config.strategy, f"strategy={config.strategy!r} was asked for")
    elif volume is not None:
        e = estimate(*volume, num_test)
        strategy = "indexed" if e.indexed_s <= e.streaming_s else "streaming"
        choice = Choice(
            strategy,
            f"an index is at hand; modelled search {e.indexed_s:.2f} s "
            f"({e.query_postings:,} postings of the test items' grams) vs streaming "
            f"{e.streaming_s:.2f} s ({e.index_postings:,} postings in the corpus)",
        )
    elif num_test > num_train:
        choice = Choice("indexed", f"{num_test:,} test items outnumber {num_train:,} rows")
    else:
        choice = Choice("streaming", "no index at hand; building one costs more than a pass")
    log.info("strategy: %s (%s)", choice.strategy, choice.reason)
    return choice
