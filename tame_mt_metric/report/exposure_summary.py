"""Summaries of exposures: means, exact rates, shares at thresholds, PairLeak
and exposure bins, with every threshold decided on exact fractions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from tame_mt_metric.report.config import TameConfig, format_threshold
from tame_mt_metric.retrieval.exposure import Exposures

__all__ = ["BINS", "ExposureSummary", "SideSummary", "bin_of", "rows_in_bins", "summarize"]

BINS = ("source_exact", "near", "medium", "far")


def rows_in_bins(item_bins: Sequence[str]) -> dict[str, list[int]]:
    """Each bin's items (indices in order), every bin present, empty or not."""
    rows: dict[str, list[int]] = {name: [] for name in BINS}
    for i, name in enumerate(item_bins):
        rows[name].append(i)
    return rows


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


@dataclass(frozen=True)
class SideSummary:
    """One side's exposures: mean, exact-overlap rate and the share of items at
    or above each leak threshold (keys like ``"0.85"``)."""

    mean: float
    exact_overlap: float
    at_threshold: dict[str, float]


def _side(values: Sequence[Fraction], exact: Sequence[bool], config: TameConfig) -> SideSummary:
    n = len(values)
    if n == 0:
        nan = float("nan")
        return SideSummary(nan, nan, {format_threshold(t): nan for t in config.leak_thresholds})
    return SideSummary(
        mean=float(sum(values, Fraction(0)) / n),
        exact_overlap=sum(exact) / n,
        at_threshold={
            format_threshold(t): sum(v >= t for v in values) / n for t in config.leak_thresholds
        },
    )


@dataclass(frozen=True)
class ExposureSummary:
    items: int
    source: SideSummary
    target: SideSummary
    pair: SideSummary
    item_bins: tuple[str, ...]

    @property
    def bins(self) -> dict[str, int]:
        return {b: self.item_bins.count(b) for b in BINS}

    @property
    def pair_leak(self) -> dict[str, float]:
        """PairLeak@t: the share of items whose pair exposure is at least t."""
        return self.pair.at_threshold


def summarize(exposures: Exposures, config: TameConfig | None = None) -> ExposureSummary:
    """Summaries of a test set's exposures; the target and pair sides need references.

    >>> from tame_mt_metric.retrieval.exposure import find_exposures
    >>> ex = find_exposures(
    ...     ["a house"], ["ein Haus"], ["a house", "a mouse"], ["ein Haus", "eine Maus"]
    ... )
    >>> s = summarize(ex)
    >>> s.item_bins, s.pair_leak["0.70"]
    (('source_exact', 'far'), 0.5)
    """
    config = config or TameConfig()
    source = [e.source[0].fraction for e in exposures]
    has_refs = all(e.target and e.pair for e in exposures)
    target = [e.target[0].fraction for e in exposures if e.target] if has_refs else []
    pair = [e.pair.fraction for e in exposures if e.pair] if has_refs else []
    return ExposureSummary(
        items=len(exposures),
        source=_side(source, exposures.source_exact, config),
        target=_side(target, exposures.target_exact, config),
        pair=_side(pair, exposures.pair_exact, config),
        item_bins=tuple(
            bin_of(e.source_exact, s, config.near_threshold, config.far_threshold)
            for e, s in zip(exposures, source, strict=True)
        ),
    )
