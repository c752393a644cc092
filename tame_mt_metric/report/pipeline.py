"""The TAME report of a system from its training corpus, test set and
hypotheses: exposures, the TM baseline, bins, scores, signature."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from tame_mt_core import __version__ as core_version

from tame_mt_metric._version import __version__
from tame_mt_metric.cache.entries import CacheOptions, find_cached_index
from tame_mt_metric.errors import EmptyTestSetError, InputTextError
from tame_mt_metric.interpreter import collector_paused, switching_often
from tame_mt_metric.report.audit import Audit, run_audit
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.document import ReportDocument, bin_scores, segment_rows, warnings_for
from tame_mt_metric.report.exposure_summary import summarize
from tame_mt_metric.report.scores import SACREBLEU_VERSION, Scorers, SegmentStatistics
from tame_mt_metric.retrieval.corpus import TrainingCorpus, TrainingStream
from tame_mt_metric.retrieval.exposure import Exposures, TrainingIndex
from tame_mt_metric.retrieval.inputs import (
    check_aligned,
    check_test_size,
    check_texts,
    check_unicode,
    references_per_item,
)

__all__ = [
    "ItemizedReport",
    "backend_of",
    "check_test_set",
    "report_from_audit",
    "score_tame",
    "signature",
]


def check_test_set(
    predictions: object, references: object, sources: object, start: int = 0
) -> tuple[list[str], list[list[str]], list[str]]:
    """The test set as lists; errors name the argument and the first bad item
    (numbered from ``start``, for batches of a longer test set)."""
    preds = check_texts("predictions", predictions, start)
    srcs = check_texts("sources", sources, start)
    check_aligned("predictions", preds, "sources", srcs)
    if not preds and start == 0:
        raise EmptyTestSetError("predictions: the test set is empty")
    check_test_size("predictions", start + len(preds))
    if references is None:
        raise InputTextError("references: required (one string or one list per prediction)")
    refs = references_per_item(references, len(preds), against="predictions", start=start)
    check_unicode("predictions", preds, start)
    check_unicode("sources", srcs, start)
    for i, item in enumerate(refs, start=start):
        if len(item) == 1:
            check_unicode("references", item, start=i)
        else:
            check_unicode(f"references[{i}]", item)
    return preds, refs, srcs


def signature(
    config: TameConfig, num_train: int, train_fingerprint: str, strategy: str, num_refs: int
) -> str:
    """Every setting that can change a number, the training corpus, the number of
    references per item and the versions."""
    return "|".join(
        [
            "tame-mt-metric",
            f"v:{__version__}",
            f"core:{core_version}",
            f"train:{num_train}_{train_fingerprint[:16]}",
            config.retrieval.signature(),
            f"idx:{config.retrieval.strategy}",
            f"backend:{strategy}",
            f"tm:src_nn_top1_zero_{config.tm_zero_policy}",
            config.bins_signature(),
            config.curve_signature(),
            config.scores_signature(num_refs),
            config.intervals_signature(),
            f"deps:sacrebleu_{SACREBLEU_VERSION}",
        ]
    )


@dataclass(frozen=True)
class ItemizedReport:
    """A report with the per-item pieces it was built from."""

    report: ReportDocument
    exposures: Exposures
    tm_hypotheses: list[str]
    tm_statistics: dict[str, list[list[int]]]
    train: TrainingCorpus | TrainingStream | None = None
    include_neighbor_text: bool = False

    @cached_property
    def segments(self) -> list[dict[str, Any]]:
        """One dict per test item (built on first use); neighbour texts only when asked
        for and the training corpus is at hand."""
        text = self.train if self.include_neighbor_text else None
        rows = [n.row for e in self.exposures for n in (e.source[0], e.target[0], e.pair) if n]
        return segment_rows(
            self.exposures,
            self.report.summary.item_bins,
            self.tm_hypotheses,
            text.sources_at(rows) if text else None,
            text.targets_at(rows) if text else None,
        )


def score_tame(
    train: TrainingCorpus | TrainingStream,
    predictions: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]],
    sources: Sequence[str],
    config: TameConfig | None = None,
    include_neighbor_text: bool = False,
    cache: CacheOptions | None = None,
    index: TrainingIndex | None = None,
) -> ItemizedReport:
    """Score a system against a training corpus: the whole TAME report.

    >>> train = TrainingCorpus(["the house is small", "a tree"], ["das Haus ist klein", "ein Baum"])
    >>> result = score_tame(train, ["das Haus ist alt"], ["das Haus ist alt"], ["the house is old"],
    ...                     cache=CacheOptions(enabled=False))
    >>> result.report.summary.item_bins, result.tm_hypotheses
    (('medium',), ['das Haus ist klein'])
    """
    config = config or TameConfig()
    cache = cache or CacheOptions()
    preds, refs, srcs = check_test_set(predictions, references, sources)
    with (
        collector_paused(),
        switching_often(),
        ThreadPoolExecutor(1, "tame-mt-scores") as background,
    ):
        # sacrebleu reads the references and the hypotheses while the corpus is
        # read and the core's audit runs without the GIL.
        system = background.submit(lambda: Scorers.for_references(config, refs).statistics(preds))
        saved_index = _index_saved(train, config, cache, index)
        audit = run_audit(train, srcs, refs, config, cache, index)
        num_train, fingerprint = audit.exposures.num_train, audit.train_fingerprint
        reused = saved_index and not audit.from_cache and audit.exposures.strategy == "indexed"
        report = report_from_audit(
            audit, num_train, fingerprint, preds, refs, config, system.result(), reused
        )
    return ItemizedReport(
        report,
        audit.exposures,
        audit.tm_hypotheses,
        audit.tm_statistics,
        train,
        include_neighbor_text,
    )


def _index_saved(
    train: TrainingCorpus | TrainingStream,
    config: TameConfig,
    cache: CacheOptions,
    index: TrainingIndex | None,
) -> bool:
    """An index of ``train`` exists before the audit: the one given, or the cache's."""
    if index is not None:
        return True
    if not isinstance(train, TrainingCorpus) or not cache.enabled:
        return False
    if config.retrieval.strategy == "streaming" or config.engine == "ray":
        return False
    cache.prepare()  # a folder that cannot be created is an error before the corpus is read
    return find_cached_index(train, config.retrieval, cache) is not None


def backend_of(
    config: TameConfig,
    strategy: str,
    index_reused: bool = False,
    audit_cached: bool = False,
    artifact_backend: str | None = None,
) -> dict[str, Any]:
    """The report's ``backend``: the spec's keys first (``name`` and ``resolved_mode``
    the strategy that searched the corpus, ``requested_mode`` the one configured),
    then this package's own. A report scored from a segment file names the
    strategy that made the file as ``artifact_backend``, and is itself ``cached``."""
    used = strategy if artifact_backend is None else "cached"
    backend: dict[str, Any] = {
        "name": used,
        "native": True,
        "exact": True,
        "requested_mode": config.retrieval.strategy,
        "resolved_mode": used,
        "index_reused": index_reused,
    }
    if artifact_backend is not None:
        backend["artifact_backend"] = artifact_backend
    backend.update(
        core_version=core_version,
        requested_strategy=config.retrieval.strategy,
        strategy=strategy,
        audit_cached=audit_cached,
    )
    return backend


def report_from_audit(
    audit: Audit,
    num_train: int,
    train_fingerprint: str,
    predictions: list[str],
    references: list[list[str]],
    config: TameConfig,
    system_statistics: SegmentStatistics | None = None,
    index_reused: bool = False,
    artifact_backend: str | None = None,
) -> ReportDocument:
    """The report of a system from an audit of its test set: only the predictions
    are read (the training corpus is known by its size and fingerprint), unless
    their statistics are given. ``index_reused``: the audit searched an index that
    existed before it; ``artifact_backend``: the audit was read from a segment file
    made by that strategy."""
    scorers = Scorers.for_references(config, references)
    exposures = audit.exposures
    summary = summarize(exposures, config)
    system_stats = system_statistics or scorers.statistics(predictions)
    tm_stats = scorers.from_rows(audit.tm_statistics)
    system, tm_scores = system_stats.score(), tm_stats.score()
    bins = {b.name: b for b in bin_scores(summary, exposures, system_stats, tm_stats)}
    return ReportDocument(
        config=config,
        signature=signature(
            config, num_train, train_fingerprint, exposures.strategy, len(references[0])
        ),
        summary=summary,
        system=system,
        tm=tm_scores,
        bins=bins,
        warnings=warnings_for(
            config, summary, system, tm_scores, bins, audit.sides, any(predictions)
        ),
        data={
            "num_train": num_train,
            "num_test": len(predictions),
            "num_refs": len(references[0]),
            "train_fingerprint": train_fingerprint,
        },
        backend=backend_of(
            config, exposures.strategy, index_reused, audit.from_cache, artifact_backend
        ),
        dependencies={"sacrebleu": SACREBLEU_VERSION},
        system_statistics=system_stats,
        tm_statistics=tm_stats,
        source_exposures=tuple(e.source[0].fraction for e in exposures),
    )
