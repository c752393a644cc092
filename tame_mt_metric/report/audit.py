"""The train-aware half of a report, done once per training corpus, test set
and settings: exposures, the TM hypotheses and the TM's per-segment
statistics. Cached as one Arrow file, so that a later ``compute()`` on the
same test set with new predictions only scores the predictions."""

from __future__ import annotations

import json
import logging
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from tame_mt_metric._version import __version__
from tame_mt_metric.cache.entries import (
    CacheOptions,
    cached_index,
    discard,
    find_cached_index,
    uncached,
)
from tame_mt_metric.digest import PROOF, digest, proof, proved
from tame_mt_metric.errors import CacheWarning, InvalidOptionError
from tame_mt_metric.files import regular_file, write_arrow
from tame_mt_metric.progress import progress
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.scores import Scorers, statistics_names
from tame_mt_metric.report.tm_baseline import tm_hypotheses
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.corpus import TrainingCorpus, TrainingStream
from tame_mt_metric.retrieval.exposure import (
    Exposures,
    ItemExposure,
    Neighbour,
    TrainingIndex,
)
from tame_mt_metric.retrieval.strategy import choose_strategy
from tame_mt_metric.scale.shards import stream_audit, tm_from_candidates

log = logging.getLogger("tame_mt_metric")

__all__ = ["Audit", "run_audit"]


@dataclass(frozen=True)
class Audit:
    exposures: Exposures
    tm_hypotheses: list[str]
    tm_statistics: dict[str, list[list[int]]]
    train_fingerprint: str
    from_cache: bool = False


# Audits used recently in this process, by key: a training loop's later
# evaluations find theirs here without reading the file.
_RECENT: OrderedDict[tuple[str, str], Audit] = OrderedDict()
_RECENT_SIZE = 8
# Bumped whenever the audit file's columns or their meaning change.
AUDIT_FORMAT = 5


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
) -> tuple[Exposures, list[str]]:
    """Exposures and TM hypotheses on this machine: searched in an index (``index``,
    the cache's, or one built) or one streaming pass over the corpus's blocks,
    whichever ``_choose`` picks."""
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
        exposures, candidates, _ = stream_audit(blocks, 0, sources, references, retrieval, advance)
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
            config.scores_signature(),
            f"refs:{len(references[0])}",
        ]
    )
    return digest(train_key, settings, sources, (r for refs in references for r in refs))


# Neighbour fields in the order of its constructor.
_COLUMNS = {
    "source": ("row", "overlap", "union"),
    "target": ("row", "overlap", "union", "reference"),
    "pair": ("row", "overlap", "union"),
}


def _array(values: Any, kind: pa.DataType, length: int | None = None) -> pa.Array:
    """``values`` (a NumPy array of ``kind``'s width) as an Arrow array over its
    buffer: ``pa.array`` of Python objects imports pandas to look for a
    DataFrame, a fifth of a second of a fresh process that has no other use for it."""
    count = len(values) if length is None else length
    return pa.Array.from_buffers(kind, count, [None, pa.py_buffer(values)])


def _strings(values: list[str]) -> pa.Array:
    encoded = [v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    data = pa.py_buffer(b"".join(encoded))
    return pa.Array.from_buffers(
        pa.large_string(), len(values), [None, pa.py_buffer(offsets), data]
    )


def _int_lists(rows: list[list[int]]) -> pa.Array:
    offsets = np.zeros(len(rows) + 1, np.int32)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    flat = np.fromiter((v for r in rows for v in r), np.int64, int(offsets[-1]))
    return pa.ListArray.from_arrays(_array(offsets, pa.int32()), _array(flat, pa.int64()))


def _to_table(audit: Audit, key: str) -> pa.Table:
    items = audit.exposures.items
    data: dict[str, object] = {}
    for side, fields in _COLUMNS.items():
        for f in fields:
            values = [getattr(getattr(e, side)[0] if side != "pair" else e.pair, f) for e in items]
            data[f"{side}_{f}"] = _array(np.asarray(values, np.uint64), pa.uint64())
    for side in _COLUMNS:
        flags = np.asarray([getattr(e, f"{side}_exact") for e in items], bool)
        bits = np.packbits(flags, bitorder="little")
        data[f"{side}_exact"] = _array(bits, pa.bool_(), len(flags))
    data["tm_hyp"] = _strings(audit.tm_hypotheses)
    for metric, stats in audit.tm_statistics.items():
        data[f"tm_stats_{metric}"] = _int_lists(stats)
    table = pa.table(data)
    meta = {
        "tame_mt.audit": key,
        "num_train": str(audit.exposures.num_train),
        "train_fingerprint": audit.train_fingerprint,
        "strategy": audit.exposures.strategy,
    }
    meta[PROOF] = proof(meta, _lines(_columns(table)))
    return table.replace_schema_metadata(meta)


def _columns(table: pa.Table) -> dict[str, list[Any]]:
    return {name: table.column(name).to_pylist() for name in table.column_names}


def _lines(cols: dict[str, list[Any]]) -> Iterator[str]:
    """Every value of every column, as the lines its proof covers."""
    return (json.dumps([name, cols[name]]) for name in sorted(cols))


def _from_table(table: pa.Table, key: str, num_items: int, statistics: set[str]) -> Audit:
    meta = table.schema.metadata or {}
    if meta.get(b"tame_mt.audit") != key.encode() or table.num_rows != num_items:
        raise ValueError("the file holds another audit")
    cols = _columns(table)
    fields = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in meta.items()}
    if not proved(fields, _lines(cols)):
        raise ValueError("its content differs from the digest it was written with")
    source, target, pair = (
        [Neighbour(*row) for row in zip(*(cols[f"{side}_{f}"] for f in fields), strict=True)]
        for side, fields in _COLUMNS.items()
    )
    items = tuple(
        ItemExposure((s,), (t,), p, se, te, pe)
        for s, t, p, se, te, pe in zip(
            source,
            target,
            pair,
            cols["source_exact"],
            cols["target_exact"],
            cols["pair_exact"],
            strict=True,
        )
    )
    exposures = Exposures(items, int(meta[b"num_train"]), meta[b"strategy"].decode())
    stats = {n.removeprefix("tm_stats_"): v for n, v in cols.items() if n.startswith("tm_stats_")}
    if set(stats) != statistics:
        raise ValueError(f"statistics of {sorted(stats)}, expected {sorted(statistics)}")
    fingerprint = meta[b"train_fingerprint"].decode()
    return Audit(exposures, cols["tm_hyp"], stats, fingerprint, from_cache=True)


def _audit_path(cache: CacheOptions, key: str) -> Path:
    return cache.root() / "audit" / f"{key}.arrow"


def _load(path: Path, key: str, num_items: int, statistics: set[str]) -> Audit | None:
    """The cached audit, or None when there is none; a damaged entry is removed
    (with a ``CacheWarning``), so that it is recomputed."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        regular_file(path, "cached audit")
        with pa.memory_map(str(path), "r") as source:
            table = pa.ipc.open_file(source).read_all()
            # Damaged offsets or lengths must fail here, not crash a read below.
            table.validate(full=True)
            return _from_table(table, key, num_items, statistics)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as exc:
        warnings.warn(
            f"recomputing the cached audit {path.name}: {exc}", CacheWarning, stacklevel=3
        )
        discard(path)
        return None


def _save(path: Path, table: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_arrow(path, table)


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
        stacklevel=3,
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
        key = audit_key(cache.key_of(train), sources, references, config)
        path = _audit_path(cache, key)
        recent = (str(path), key)
        if recent in _RECENT and _belongs(_RECENT[recent], train):
            _RECENT.move_to_end(recent)
            return _RECENT[recent]
        found = _load(path, key, len(sources), statistics_names(config))
        if found is not None and _belongs(found, train):
            return _remember(recent, found)
    if config.engine == "ray" and index is None:
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
        exposures, tm = merged.exposures, merged.tm_hypotheses
    else:
        exposures, tm = _local_audit(train, sources, references, config, cache, index)
    tm_statistics = Scorers.for_references(config, references).statistics(tm).rows()
    audit = Audit(exposures, tm, tm_statistics, train.fingerprint)
    if cache.enabled:
        key = audit_key(cache.key_of(train), sources, references, config)
        path = _audit_path(cache, key)
        try:
            _save(path, _to_table(audit, key))
        except OSError as exc:  # a read-only or full cache: the numbers stand
            uncached(path.parent, exc)
        else:
            _remember((str(path), key), replace(audit, from_cache=True))
    return audit


def _remember(recent: tuple[str, str], audit: Audit) -> Audit:
    _RECENT[recent] = audit
    while len(_RECENT) > _RECENT_SIZE:
        _RECENT.popitem(last=False)
    return audit
