"""Bootstrap confidence intervals of every score of a report, from the
per-segment statistics it already keeps: each resample of test items re-sums
those statistics (never rescoring text), and the sums are scored as sacrebleu
scores them (``scores.resampler``: all resamples of a group at once).

Items are resampled with replacement within the group a score is about: the
whole test set for the system and TM scores, each bin for its own scores. The
system and the TM baseline are scored on the same resamples, so the interval of
their difference (delta over TM) is paired; GenGap resamples the near and far
bins jointly (independently within each, one draw of both per resample).
Intervals are percentile intervals of the resampled scores at ``confidence``.
Every group draws from its own generator seeded with ``seed`` and the group's
name, so a group's interval does not depend on the other groups.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tame_mt_metric.report.exposure_summary import rows_in_bins
from tame_mt_metric.report.scores import SegmentStatistics, resampler

__all__ = ["Interval", "band_intervals", "resample_chunks", "resample_counts", "score_intervals"]

WHOLE = "whole"


@dataclass(frozen=True)
class Interval:
    """A confidence interval (nan bounds where the group is empty)."""

    low: float
    high: float


NAN_INTERVAL = Interval(float("nan"), float("nan"))


# Draws held at once: resamples are made in chunks of at most this many cells,
# so that a large test set does not hold n_bootstrap x items counts at once.
CHUNK_CELLS = 1 << 22


def resample_chunks(
    items: int, n_bootstrap: int, seed: int, group: str, cells: int = CHUNK_CELLS
) -> Iterator[np.ndarray]:
    """How often each of ``items`` items is drawn in each of ``n_bootstrap``
    resamples of ``items`` draws with replacement, as ``(resamples, items)``
    arrays of consecutive resamples, from a generator seeded by ``seed`` and the
    group's name. The draws are the same whatever the chunks."""
    rng = np.random.default_rng([seed, zlib.crc32(group.encode("utf-8"))])
    per_chunk = max(1, cells // max(items, 1))
    for start in range(0, n_bootstrap, per_chunk):
        rows = min(per_chunk, n_bootstrap - start)
        draws = rng.integers(items, size=(rows, items))
        draws += np.arange(rows)[:, None] * items
        counts = np.bincount(draws.ravel(), minlength=rows * items)
        yield counts.reshape(rows, items).astype(np.float64)


def resample_counts(items: int, n_bootstrap: int, seed: int, group: str) -> np.ndarray:
    """All of ``resample_chunks`` as one ``(n_bootstrap, items)`` array."""
    return np.vstack(list(resample_chunks(items, n_bootstrap, seed, group)))


def _interval(samples: np.ndarray, confidence: float) -> Interval:
    if samples.size == 0 or np.isnan(samples).all():
        return NAN_INTERVAL
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(samples, [tail, 1.0 - tail])
    return Interval(float(low), float(high))


Samples = dict[str, np.ndarray]


def _samples(
    system: SegmentStatistics,
    tm: SegmentStatistics,
    rows: list[int],
    group: str,
    n_bootstrap: int,
    seed: int,
) -> tuple[Samples, Samples]:
    """The system's and the TM's scores on the same resamples of ``rows``
    (none for an empty group)."""
    if not rows:
        return {}, {}
    score = resampler([system, tm], rows)
    parts = [score(counts) for counts in resample_chunks(len(rows), n_bootstrap, seed, group)]

    def joined(side: int) -> Samples:
        return {m: np.concatenate([p[side][m] for p in parts]) for m in parts[0][side]}

    return joined(0), joined(1)


def band_intervals(
    system: SegmentStatistics,
    tm: SegmentStatistics,
    rows: list[int],
    group: str,
    confidence: float,
    n_bootstrap: int,
    seed: int,
) -> tuple[dict[str, Interval], dict[str, Interval]]:
    """The system's and the TM's intervals, by metric, on resamples of ``rows``
    (the group's name seeds them); empty when ``n_bootstrap`` is 0."""
    if n_bootstrap == 0:
        return {}, {}
    sys_samples, tm_samples = _samples(system, tm, rows, group, n_bootstrap, seed)
    none = np.array([])
    return (
        {m: _interval(sys_samples.get(m, none), confidence) for m in system.metric_names},
        {m: _interval(tm_samples.get(m, none), confidence) for m in system.metric_names},
    )


def score_intervals(
    system: SegmentStatistics,
    tm: SegmentStatistics,
    item_bins: Sequence[str],
    confidence: float,
    n_bootstrap: int,
    seed: int,
) -> dict[str, Interval]:
    """Intervals keyed as the report's flat fields: ``bleu``, ``tm_bleu``,
    ``delta_tm_bleu``, ``far_bleu``, ``gen_gap_bleu``, ``bin/<bin>/bleu``,
    ``bin/<bin>/tm_bleu`` and ``bin/<bin>/delta_tm_bleu`` (and so for every
    metric). Empty when ``n_bootstrap`` is 0."""
    if n_bootstrap == 0:
        return {}
    groups = {WHOLE: list(range(len(item_bins))), **rows_in_bins(item_bins)}
    resampled = {
        group: _samples(system, tm, rows, group, n_bootstrap, seed)
        for group, rows in groups.items()
    }
    out: dict[str, Interval] = {}
    for group, (sys_samples, tm_samples) in resampled.items():
        prefix = "" if group == WHOLE else f"bin/{group}/"
        for metric in system.metric_names:
            if metric not in sys_samples:
                for key in (metric, f"tm_{metric}", f"delta_tm_{metric}"):
                    out[prefix + key] = NAN_INTERVAL
                continue
            s, t = sys_samples[metric], tm_samples[metric]
            out[prefix + metric] = _interval(s, confidence)
            out[f"{prefix}tm_{metric}"] = _interval(t, confidence)
            out[f"{prefix}delta_tm_{metric}"] = _interval(s - t, confidence)
    near, far = resampled["near"][0], resampled["far"][0]
    for metric in system.metric_names:
        out[f"far_{metric}"] = out[f"bin/far/{metric}"]
        both = metric in near and metric in far
        gap = near[metric] - far[metric] if both else np.array([])
        out[f"gen_gap_{metric}"] = _interval(gap, confidence)
    return out
