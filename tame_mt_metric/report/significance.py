"""Paired significance between systems on one test set, for the whole set
and for each exposure bin: sacrebleu's paired bootstrap resampling (``bs``)
and approximate randomisation (``ar``), run on the per-segment statistics the
report keeps, so that every bin is tested without rescoring text.

sacrebleu's own test functions do the work: each system's statistics are
handed to them through a metric that returns those statistics for the items of
the group (``GroupStatistics``), so on the whole test set every figure equals
``sacrebleu.significance.PairedTest`` (and the CLI's ``--paired-bs`` /
``--paired-ar``) for the same seed and sample count. Within a group every
system is resampled on the same items. The TM baseline is one of the systems
(``"tm"``), so "does the system beat reusing the training data, on the far
bin?" is a row of the table.

``bs-shift`` is the paired bootstrap with its null made by shifting the
resampled signed differences to mean zero, on ``bs``'s resamples (so the
same scores and intervals). sacrebleu's ``bs`` (the Moses script's test)
centres the *absolute* differences instead, which rejects a true null about
twice as often as its level: 0.115 and 0.12 at p < 0.05 for BLEU and chrF in
200 trials of two systems from one distribution, against 0.05 and 0.035 for
``ar`` (``benchmarks/bench_significance.py``). ``bs`` stays equal to
sacrebleu's; ``ar`` or ``bs-shift`` keep their level.

Intervals follow sacrebleu: the mean of the resampled scores and the half-width
between its 2.5th and 97.5th percentile (95%), as ``ci_low``/``ci_high``. The
sentence-mean metric ``chrf++_avg`` has no paired test in sacrebleu and is
left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from sacrebleu.significance import Result, estimate_ci

from tame_mt_metric.cache.entries import CacheOptions
from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.report.config import MAX_BOOTSTRAP, TameConfig
from tame_mt_metric.report.exposure_summary import BINS, rows_in_bins
from tame_mt_metric.report.sacrebleu_internals import (
    GroupStatistics,
    p_value,
    paired_ar_test,
    paired_bs_test,
    score_of_segments,
    score_of_sums,
    segment_statistics,
)
from tame_mt_metric.report.scores import SegmentStatistics
from tame_mt_metric.retrieval.corpus import TrainingCorpus, TrainingStream
from tame_mt_metric.retrieval.exposure import TrainingIndex

if TYPE_CHECKING:
    from tame_mt_metric.report.document import ReportDocument

__all__ = [
    "TESTS",
    "TM",
    "Comparison",
    "SystemResult",
    "compare",
    "comparison",
    "paired_table",
    "paired_tests",
]

TESTS = ("bs", "ar", "bs-shift")
TM = "tm"


@dataclass(frozen=True)
class SystemResult:
    """One system's figures for one metric and group."""

    score: float
    mean: float
    ci_low: float
    ci_high: float
    p_value: float | None
    delta: float

    def as_dict(self) -> dict[str, float | None]:
        def plain(value: float | None) -> float | None:
            return None if value is None or math.isnan(value) else float(value)

        return {
            "score": plain(self.score),
            "mean": plain(self.mean),
            "ci_low": plain(self.ci_low),
            "ci_high": plain(self.ci_high),
            "p_value": plain(self.p_value),
            "delta": plain(self.delta),
        }


Table = dict[str, dict[str, SystemResult]]


@dataclass(frozen=True)
class Comparison:
    """Each system's figures against the baseline, for the whole test set and
    each non-empty bin (system -> metric -> figures)."""

    whole: Table
    bins: dict[str, Table]
    settings: dict[str, Any]
    reports: dict[str, ReportDocument] = field(default_factory=dict, repr=False, compare=False)
    """Each system's own TAME report (where it was made)."""

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON (null where a value is undefined)."""

        def table(t: Table) -> dict[str, Any]:
            return {name: {m: r.as_dict() for m, r in row.items()} for name, row in t.items()}

        return {
            "whole": table(self.whole),
            "bins": {name: table(t) for name, t in self.bins.items()},
            "settings": self.settings,
        }


def _resamples(items: int, n: int, seed: int) -> np.ndarray:
    """sacrebleu's resampled items (``_bootstrap_resample``, ``_paired_bs_test``)."""
    return np.random.default_rng(seed).choice(items, size=(n, items), replace=True)


def _bootstrap_scores(metric: Any, stats: list[list[int]], idxs: np.ndarray) -> np.ndarray:
    """Each resample's score, summed and scored as sacrebleu does (float32 sums,
    one resample at a time, so never all resamples' statistics at once)."""
    stats_np = np.array(stats, dtype="float32")
    return np.array([score_of_sums(metric, stats_np[i].sum(0)).score for i in idxs])


def _shift_test(
    metric: Any, bl_scores: np.ndarray, stats: list[list[int]], idxs: np.ndarray, bl_score: float
) -> SystemResult:
    """The paired bootstrap with the null made by shifting the resampled signed
    differences to mean zero: p = P(|delta_b - mean(delta)| > |d|), + 1 smoothed
    as sacrebleu's p-values are. Same resamples, score and interval as ``bs``."""
    score = float(score_of_segments(metric, stats).score)
    scores = _bootstrap_scores(metric, stats, idxs)
    mean, ci = (float(v) for v in estimate_ci(scores))
    delta = scores - bl_scores
    p = p_value(np.abs(delta - delta.mean()), abs(score - bl_score))
    return SystemResult(score, mean, mean - ci, mean + ci, p, score - bl_score)


def paired_table(
    statistics: Mapping[str, SegmentStatistics],
    baseline: str,
    rows: list[int],
    test: str,
    n_samples: int,
    n_confidence: int,
    seed: int,
) -> Table:
    """One group's table (its items ``rows``): sacrebleu's test of every system
    against the baseline, as ``PairedTest`` runs it."""
    names = [baseline] + [n for n in statistics if n != baseline]
    out: Table = {name: {} for name in names}
    # Duck-typed metrics (``GroupStatistics``) where sacrebleu's types say Metric.
    run: Any = paired_ar_test if test == "ar" else paired_bs_test
    # PairedTest's baseline interval: the bootstrap's resamples, or for AR its own.
    baseline_n = n_confidence if test == "ar" else n_samples
    for metric_name, stats_name, metric in statistics[baseline].corpus_metrics():
        group = {
            name: GroupStatistics(metric, [statistics[name].rows()[stats_name][i] for i in rows])
            for name in names
        }
        items = list(range(len(rows)))
        bl = group[baseline]
        bl_stats = segment_statistics(bl, items)
        bl_score = float(score_of_segments(bl, bl_stats).score)
        mean, ci = math.nan, math.nan
        if baseline_n > 0:
            idxs = _resamples(len(rows), baseline_n, seed)
            bl_scores = _bootstrap_scores(bl, bl_stats, idxs)
            mean, ci = (float(v) for v in estimate_ci(bl_scores))
        out[baseline][metric_name] = SystemResult(bl_score, mean, mean - ci, mean + ci, None, 0.0)
        baseline_info = {metric_name: (bl_stats, Result(bl_score))}
        for name in names[1:]:
            if test == "bs-shift":
                stats = segment_statistics(group[name], items)
                out[name][metric_name] = _shift_test(metric, bl_scores, stats, idxs, bl_score)
                continue
            _, results = run(
                baseline_info,
                name,
                items,
                None,
                {metric_name: group[name]},
                n_samples=n_samples,
                n_ar_confidence=n_confidence if test == "ar" else -1,
                seed=seed or None,
            )
            r = results[metric_name]
            mean, ci = (math.nan, math.nan) if r.mean is None else (float(r.mean), float(r.ci))
            score = float(r.score)
            out[name][metric_name] = SystemResult(
                score, mean, mean - ci, mean + ci, float(r.p_value), score - bl_score
            )
    return out


def paired_tests(
    statistics: Mapping[str, SegmentStatistics],
    baseline: str,
    item_bins: Sequence[str],
    test: str = "bs",
    n_samples: int = 1000,
    n_confidence: int = 1000,
    seed: int = 12345,
) -> tuple[Table, dict[str, Table]]:
    """The tables of the whole test set and of each non-empty bin."""
    if test not in TESTS:
        raise InvalidOptionError(f"test: expected one of {TESTS}, got {test!r}")
    if baseline not in statistics:
        raise InvalidOptionError(
            f"baseline: {baseline!r} is not one of the systems {sorted(statistics)}"
        )
    for name, value, least in (("n_samples", n_samples, 1), ("n_confidence", n_confidence, 0)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidOptionError(f"{name}: expected an integer, got {value!r}")
        if not least <= value <= MAX_BOOTSTRAP:
            raise InvalidOptionError(
                f"{name}: expected an integer in [{least}, {MAX_BOOTSTRAP:,}], got {value!r}"
            )
    args = (test, n_samples, n_confidence, seed)
    whole = paired_table(statistics, baseline, list(range(len(item_bins))), *args)
    bins = {
        name: paired_table(statistics, baseline, rows, *args)
        for name, rows in rows_in_bins(item_bins).items()
        if rows
    }
    return whole, bins


def compare(
    systems: Mapping[str, Sequence[str]],
    references: Sequence[str] | Sequence[Sequence[str]],
    sources: Sequence[str],
    train: object,
    baseline: str,
    test: str = "bs",
    n_samples: int = 1000,
    seed: int = 12345,
    cache: CacheOptions | None = None,
    index: TrainingIndex | None = None,
    **options: Any,
) -> Comparison:
    """Paired significance of several systems on one test set, for the whole
    set and each exposure bin, against ``baseline`` (one of the systems, or
    ``"tm"``, the TM baseline, which is always one of the rows). ``train`` is
    what ``score_tame`` takes, or anything ``TrainingCorpus.from_any`` reads;
    ``options`` are the report settings (``n_bootstrap`` sets the resamples of
    the approximate-randomisation intervals)."""
    from tame_mt_metric.report.audit import run_audit
    from tame_mt_metric.report.exposure_summary import summarize
    from tame_mt_metric.report.pipeline import check_test_set, report_from_audit, signature
    from tame_mt_metric.report.scores import Scorers

    config = TameConfig.from_options(seed=seed, **options)
    if not systems:
        raise InvalidOptionError("systems: expected at least one named system")
    if TM in systems:
        raise InvalidOptionError(f"systems: {TM!r} names the TM baseline; rename that system")
    checked = {}
    for name, hypotheses in systems.items():
        if not isinstance(name, str) or not name:
            raise InvalidOptionError(f"systems: names must be non-empty strings, got {name!r}")
        checked[name] = check_test_set(hypotheses, references, sources)
    first = next(iter(checked.values()))
    _, refs, srcs = first
    corpus = (
        train
        if isinstance(train, (TrainingCorpus, TrainingStream))
        else TrainingCorpus.from_any(train)
    )
    audit = run_audit(corpus, srcs, refs, config, cache, index)
    summary = summarize(audit.exposures, config)
    scorers = Scorers.for_references(config, refs)
    statistics = {name: scorers.statistics(preds) for name, (preds, _, _) in checked.items()}
    statistics[TM] = scorers.from_rows(audit.tm_statistics)
    num_train, fingerprint = audit.exposures.num_train, audit.train_fingerprint
    reports = {
        name: report_from_audit(
            audit, num_train, fingerprint, preds, refs, config, statistics[name]
        )
        for name, (preds, _, _) in checked.items()
    }
    report_signature = signature(
        config, num_train, fingerprint, audit.exposures.strategy, len(refs[0])
    )
    return comparison(
        statistics, summary.item_bins, baseline, config, test, n_samples, report_signature, reports
    )


def comparison(
    statistics: Mapping[str, SegmentStatistics],
    item_bins: Sequence[str],
    baseline: str,
    config: TameConfig,
    test: str,
    n_samples: int,
    report_signature: str,
    reports: dict[str, ReportDocument] | None = None,
) -> Comparison:
    """The comparison of systems' statistics (the TM baseline's among them, as
    ``"tm"``) on a test set audited into ``item_bins``; ``config.seed`` seeds
    the resamples and ``config.n_bootstrap`` sizes the approximate
    randomisation's intervals."""
    seed = config.seed
    whole, bins = paired_tests(
        statistics, baseline, item_bins, test, n_samples, config.n_bootstrap, seed
    )
    return Comparison(
        whole,
        bins,
        {
            "test": test,
            "n_samples": n_samples,
            "n_confidence": config.n_bootstrap if test == "ar" else n_samples,
            "seed": seed,
            "baseline": baseline,
            "metrics": [m for m, _, _ in statistics[baseline].corpus_metrics()],
            "bin_counts": {name: list(item_bins).count(name) for name in BINS},
            "signature": f"{report_signature}|paired:{test}{n_samples}_seed{seed}",
        },
        reports or {},
    )
