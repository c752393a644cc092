"""The exposure curve: scores as a function of source exposure. Test items
are sorted into bands by their source exposure (exact fractions), either
``curve_bands`` bands of (nearly) equal size, deciles by default, ties kept
together, or bands between user-set ``curve_edges``; each band gets its system
and TM scores, from re-summed statistics, with bootstrap intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise

from tame_mt_metric.report.intervals import Interval, band_intervals
from tame_mt_metric.report.scores import SegmentStatistics

__all__ = ["Band", "bands_of", "exposure_curve"]


@dataclass(frozen=True)
class Band:
    """One band: its items' source exposures lie in [low, high] (``high``
    excluded unless it is the last band's), with their scores and intervals."""

    low: float
    high: float
    count: int
    mean_source_exposure: float
    system: dict[str, float]
    tm: dict[str, float]
    system_ci: dict[str, Interval]
    tm_ci: dict[str, Interval]


def bands_of(
    exposures: Sequence[Fraction], bands: int, edges: Sequence[Fraction] | None
) -> list[tuple[Fraction, Fraction, list[int]]]:
    """Each band's bounds and items. With ``edges`` (increasing, inside (0, 1))
    the bands are [0, e1), [e1, e2), ..., [ek, 1]; otherwise items sorted by
    exposure are cut into ``bands`` runs of nearly equal size, a cut moved
    forward past items of the same exposure (so a band may be empty and is
    then left out)."""
    if edges is not None:
        bounds = [Fraction(0), *edges, Fraction(1)]
        out = []
        for k in range(len(bounds) - 1):
            low, high = bounds[k], bounds[k + 1]
            last = k == len(bounds) - 2
            rows = [i for i, e in enumerate(exposures) if low <= e and (e < high or last)]
            out.append((low, high, rows))
        return out
    # By exposure, then row. A float is compared first: float() never reverses
    # the order of two fractions, so only those of equal floats compare exactly.
    order = sorted(range(len(exposures)), key=lambda i: (float(exposures[i]), exposures[i], i))
    n = len(order)
    cuts = [0]
    for k in range(1, bands):
        cut = max(k * n // bands, cuts[-1])
        while 0 < cut < n and exposures[order[cut]] == exposures[order[cut - 1]]:
            cut += 1
        cuts.append(min(cut, n))
    cuts.append(n)
    out = []
    for start, end in pairwise(cuts):
        if end > start:
            rows = sorted(order[start:end])
            out.append((exposures[order[start]], exposures[order[end - 1]], rows))
    return out


def exposure_curve(
    exposures: Sequence[Fraction],
    system: SegmentStatistics,
    tm: SegmentStatistics,
    bands: int,
    edges: Sequence[Fraction] | None,
    confidence: float,
    n_bootstrap: int,
    seed: int,
) -> list[Band]:
    out = []
    for k, (low, high, rows) in enumerate(bands_of(exposures, bands, edges)):
        mean = (
            float(sum((exposures[i] for i in rows), Fraction(0)) / len(rows))
            if rows
            else float("nan")
        )
        system_ci, tm_ci = band_intervals(
            system, tm, rows, f"curve/{k}", confidence, n_bootstrap, seed
        )
        out.append(
            Band(
                float(low),
                float(high),
                len(rows),
                mean,
                system.score(rows),
                tm.score(rows),
                system_ci,
                tm_ci,
            )
        )
    return out
