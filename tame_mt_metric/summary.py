"""Summaries of exposures: means, exact rates, leak rates and exposure bins,
with every threshold decided on exact fractions."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tame_mt_metric.config import threshold
from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.exposure import Exposures

__all__ = ["BINS", "ExposureSummary", "bin_of", "summarize"]

BINS = ("source_exact", "near", "medium", "far")


def bin_of(exact: bool, exposure: Fraction, near: Fraction, far: Fraction) -> str:
    """``source_exact`` if the normalised source is in training; else ``near``
    (exposure >= near), ``medium`` (far <= exposure < near) or ``far``."""
    if exact:
        return "source_exact"
    if exposure >= near:
        return "near"
    if exposure >= far:
        return "medium"
    return "far"


def _mean(values: list[Fraction]) -> float:
    return float(sum(values, Fraction(0)) / len(values)) if values else float("nan")


@dataclass(frozen=True)
class ExposureSummary:
    items: int
    source_exposure_mean: float
    target_exposure_mean: float
    pair_exposure_mean: float
    source_exact_rate: float
    target_exact_rate: float
    pair_exact_rate: float
    pair_leak: dict[str, float]
    bins: dict[str, int]
    item_bins: tuple[str, ...]


def summarize(
    exposures: Exposures,
    near: str | float = "0.70",
    far: str | float = "0.30",
    leak_thresholds: tuple[str | float, ...] = ("0.70", "0.85", "0.95"),
) -> ExposureSummary:
    """Thresholds are exact decimals (0.7 is 7/10), so ties are decided exactly."""
    near_at = threshold("near_threshold", near)
    far_at = threshold("far_threshold", far)
    if far_at > near_at:
        raise InvalidOptionError(f"far_threshold {far} exceeds near_threshold {near}")
    leaks = {str(t): threshold("leak_thresholds", t) for t in leak_thresholds}
    n = len(exposures)
    source = [e.source[0].fraction for e in exposures]
    target = [e.target[0].fraction for e in exposures if e.target]
    pair = [e.pair.fraction for e in exposures if e.pair]
    item_bins = tuple(
        bin_of(e.source_exact, s, near_at, far_at) for e, s in zip(exposures, source, strict=True)
    )
    rate = (lambda k: k / n) if n else (lambda k: float("nan"))
    has_pairs = len(pair) == n and n > 0
    return ExposureSummary(
        items=n,
        source_exposure_mean=_mean(source),
        target_exposure_mean=_mean(target),
        pair_exposure_mean=_mean(pair),
        source_exact_rate=rate(sum(exposures.source_exact)),
        target_exact_rate=rate(sum(exposures.target_exact)) if has_pairs else float("nan"),
        pair_exact_rate=rate(sum(exposures.pair_exact)) if has_pairs else float("nan"),
        pair_leak={
            name: rate(sum(p >= t for p in pair)) if has_pairs else float("nan")
            for name, t in leaks.items()
        },
        bins={b: item_bins.count(b) for b in BINS},
        item_bins=item_bins,
    )
