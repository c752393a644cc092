"""The train-aware half of a report, done once per training corpus, test set
and settings: exposures, the TM hypotheses and the TM's per-segment
statistics. Cached as one Arrow file (``cache/audit_file.py``), so that a
later ``compute()`` on the same test set with new predictions only scores the
predictions."""

from __future__ import annotations

import logging
import warnings
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from tame_mt_metric._version import __version__
from tame_mt_metric.cache.audit_file import (
    AUDIT_FORMAT,
    Audit,
    audit_path,
    load_audit,
    save_audit,
)
from tame_mt_metric.cache.entries import CacheOptions, cached_index, find_cached_index, uncached
from tame_mt_metric.digest import digest
from tame_mt_metric.errors import CacheWarning, InvalidOptionError
from tame_mt_metric.progress import progress
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.scores import Scorers, statistics_names
from tame_mt_metric.report.swapped_sides import side_check
from tame_mt_metric.report.tm_baseline import tm_hypotheses
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.corpus import TrainingCorpus, TrainingStream
from tame_mt_metric.retrieval.exposure import (
    Exposures,
    TrainingIndex,
)
from tame_mt_metric.retrieval.sides import KeptRows, sample_rows
from tame_mt_metric.retrieval.strategy import choose_strategy
from tame_mt_metric.retrieval.streaming_pass import streaming_pass
from tame_mt_metric.retrieval.tm_candidates import tm_from_candidates

log = logging.getLogger("tame_mt_metric")

__all__ = ["Audit", "run_audit"]


# Audits used recently in this process, by key: a training loop's later
# evaluations find theirs here without reading the file.
_RECENT: OrderedDict[tuple[str, str], Audit] = OrderedDict()
_RECENT_SIZE = 8


def _choose(
    train: TrainingCorpus | TrainingStream,
    sources: list[str],
    references: list[list[str]],
    retrieval: RetrievalConfig,
    cache: CacheOptions,
    index: TrainingIndex | None,
) -> tuple[str, TrainingIndex | None]:
    """The strategy (``retrieval.strategy``, or the cheaper by the cost model of
    ``retrieval/strategy.py``) and the index at hand: ``index``, else the cache's
    index of the corpus when there is one."""
    if isinstance(train, TrainingStream):
        if retrieval.strategy == "indexed":
            raise InvalidOptionError(
                "strategy: 'indexed' needs the whole corpus at hand; a streamed corpus is "
                "read once (strategy='streaming' or 'auto')"
            )
        log.info("strategy: streaming (a streamed corpus is read once)")
        return "streaming", None
    wanted = index is None and retrieval.strategy != "streaming" and cache.enabled
    if wanted and find_cached_index(train, retrieval, cache) is not None:
        index = cached_index(train, retrieval, cache)
    volume = None
    if index is not None and retrieval.strategy == "auto":
        volume = index.search_volume(sources, references)
    return choose_strategy(retrieval, train.num_rows, len(sources), volume).strategy, index


def _local_audit(
    train: TrainingCorpus | TrainingStream,
    sources: list[str],
    references: list[list[str]],
    config: TameConfig,
    cache: CacheOptions,
    index: TrainingIndex | None = None,
    kept: KeptRows | None = None,
) -> tuple[Exposures, list[str]]:
    """Exposures and TM hypotheses on this machine: searched in an index (``index``,
    the cache's, or one built) or one streaming pass over the corpus's blocks,
    whichever ``_choose`` picks; ``kept`` keeps the side check's rows on that pass."""
    retrieval = config.retrieval
    strategy, index = _choose(train, sources, references, retrieval, cache, index)
    if strategy == "indexed":
        assert isinstance(train, TrainingCorpus)
        if index is None and cache.enabled:
            index = cached_index(train, retrieval, cache)
        elif index is None:
            with progress("indexing", 2 * train.num_rows) as advance:
                index = TrainingIndex.build(*train.whole(), retrieval, advance)
        exposures = index.find_exposures(sources, references)
        targets = train.targets_at([e.source[0].row for e in exposures])
        return exposures, tm_hypotheses(exposures, targets, config.tm_zero_policy)
    # The corpus is fingerprinted apart (the cache key; a stream as it is read).
    with progress("auditing", train.known_rows()) as advance:
        blocks = train.blocks(retrieval.block_rows)
        if kept is not None:
            blocks = kept.watch(blocks)
        exposures, candidates, _ = streaming_pass(
            blocks, 0, sources, references, retrieval, advance
        )
    return exposures, tm_from_candidates(exposures, candidates, config.tm_zero_policy)


def audit_key(
    train_key: str, sources: list[str], references: list[list[str]], config: TameConfig
) -> str:
    settings = "|".join(
        [
            f"audit_format:{AUDIT_FORMAT}",
            __version__,
            config.retrieval.signature(),
            f"tm:{config.tm_zero_policy}",
            config.scores_signature(len(references[0])),
            f"refs:{len(references[0])}",
        ]
    )
    return digest(train_key, settings, sources, (r for refs in references for r in refs))


def _provable(train: TrainingCorpus | TrainingStream, cache: CacheOptions) -> bool:
    """A cached audit of ``train`` can be proved to be its own: a corpus at hand has
    its fingerprint; a stream under a ``train_key`` is fingerprinted by a pass of its
    own first, which an iterator (read once) cannot spare for the audit."""
    if isinstance(train, TrainingCorpus):
        return True
    return cache.train_key is not None and iter(train.rows) is not train.rows


def _belongs(audit: Audit, train: TrainingCorpus | TrainingStream) -> bool:
    """The cached ``audit`` was made of this corpus: a ``train_key`` is a promise
    that one name always means one corpus, and promises break. A stream is
    fingerprinted here by one pass over it."""
    if isinstance(train, TrainingStream) and train.known_rows() is None:
        for _ in train.blocks(1 << 16):
            pass
    if audit.train_fingerprint == train.fingerprint:
        return True
    warnings.warn(
        f"recomputing the cached audit: it was made of the corpus {audit.train_fingerprint}, "
        f"not of the one at hand ({train.fingerprint}) with the same train_key",
        CacheWarning,
        stacklevel=4,
    )
    return False


def run_audit(
    train: TrainingCorpus | TrainingStream,
    sources: list[str],
    references: list[list[str]],
    config: TameConfig,
    cache: CacheOptions | None = None,
    index: TrainingIndex | None = None,
) -> Audit:
    """The audit of a test set: from the cache when an entry for the same training
    corpus, test set and settings exists, else computed (and stored); ``index``, an
    index of ``train`` opened by the caller, is at hand for the choice of strategy. A
    streamed corpus is looked up only under a ``train_key`` (its fingerprint is
    known once it is read) and stored under its key once read."""
    cache = cache or CacheOptions()
    cache.prepare()
    if index is not None and index.config.signature() != config.retrieval.signature():
        raise InvalidOptionError(
            f"index: built with {index.config.signature()}, but the report's settings are "
            f"{config.retrieval.signature()}"
        )
    if cache.enabled and _provable(train, cache):
        found = _cached_audit(train, sources, references, config, cache)
        if found is not None:
            return found
    # A corpus read by passes is sampled as the audit's own pass reads it.
    kept = sample_rows(train)
    if config.engine == "ray" and index is None:
        exposures, tm = _ray_audit(train, sources, references, config)
    else:
        exposures, tm = _local_audit(train, sources, references, config, cache, index, kept)
    # The side check runs in the core (without the GIL) while sacrebleu scores the TM.
    with ThreadPoolExecutor(1, "tame-mt-sides") as background:
        sides = background.submit(side_check, train, sources, references, config, kept)
        tm_statistics = Scorers.for_references(config, references).statistics(tm).rows()
        audit = Audit(exposures, tm, tm_statistics, train.fingerprint, sides=sides.result())
    if cache.enabled:
        _store(audit, audit_key(cache.key_of(train), sources, references, config), cache)
    return audit


def _cached_audit(
    train: TrainingCorpus | TrainingStream,
    sources: list[str],
    references: list[list[str]],
    config: TameConfig,
    cache: CacheOptions,
) -> Audit | None:
    """The audit of this corpus, test set and settings kept in this process or read
    from the cache, once it is proved to be of the corpus at hand; else None."""
    key = audit_key(cache.key_of(train), sources, references, config)
    path = audit_path(cache, key)
    recent = (str(path), key)
    if recent in _RECENT and _belongs(_RECENT[recent], train):
        _RECENT.move_to_end(recent)
        return _RECENT[recent]
    found = load_audit(path, key, len(sources), statistics_names(config))
    if found is not None and _belongs(found, train):
        return _remember(recent, found)
    return None


def _ray_audit(
    train: TrainingCorpus | TrainingStream,
    sources: list[str],
    references: list[list[str]],
    config: TameConfig,
) -> tuple[Exposures, list[str]]:
    """The exposures and TM hypotheses from shards of the corpus on Ray."""
    if isinstance(train, TrainingStream):
        raise InvalidOptionError(
            "engine: the Ray engine cuts the corpus into row ranges; give a Dataset or "
            "TextFiles, not a stream"
        )
    from tame_mt_metric.scale.ray_engine import ray_audit

    merged = ray_audit(
        train,
        sources,
        references,
        config.retrieval,
        config.tm_zero_policy,
        address=config.ray_address,
    )
    return merged.exposures, merged.tm_hypotheses


def _store(audit: Audit, key: str, cache: CacheOptions) -> None:
    """``audit`` written to the cache under ``key`` and kept in this process; a
    cache that cannot be written (read-only, full) is warned about, the numbers
    stand."""
    path = audit_path(cache, key)
    try:
        save_audit(path, audit, key)
    except OSError as exc:
        uncached(path.parent, exc)
    else:
        _remember((str(path), key), replace(audit, from_cache=True))


def _remember(recent: tuple[str, str], audit: Audit) -> Audit:
    _RECENT[recent] = audit
    while len(_RECENT) > _RECENT_SIZE:
        _RECENT.popitem(last=False)
    return audit
