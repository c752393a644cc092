"""The TAME report of one system: the flat metric dict that ``compute()``
returns, the JSON report, per-segment diagnostics and the warnings.

Warnings (each documented in the README):
- some test pairs occur exactly in training (pair exact overlap > 0);
- PairLeak@t is at least 1% for a configured leak threshold t (the highest such t is named);
- the system scores at or below its TM baseline (first configured metric, both scores
  named), or else the TM baseline reaches half the system's score or more (neither
  when every prediction is empty: an audit without a system);
- the training sides look swapped (``swapped_sides.py``: the test sources nearer a
  sample of the training targets than of its sources);
- the near or far bin holds fewer items than ``min_bin_size_warning``;
- GenGap is undefined because the near or far bin is empty.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any

from tame_mt_metric._version import __version__
from tame_mt_metric.interpreter import collector_paused
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.exposure_summary import (
    ExposureSummary,
    SideSummary,
    rows_in_bins,
)
from tame_mt_metric.report.labels import metric_label, rate_text, score_text
from tame_mt_metric.report.scores import SegmentStatistics
from tame_mt_metric.report.swapped_sides import swapped_warning
from tame_mt_metric.retrieval.exposure import Exposures
from tame_mt_metric.retrieval.sides import SideExposure

if TYPE_CHECKING:
    from tame_mt_metric.report.curve import Band
    from tame_mt_metric.report.intervals import Interval

__all__ = [
    "BinScores",
    "ReportDocument",
    "bin_scores",
    "segment_rows",
    "source_side_report_json",
    "warnings_for",
]

LEAK_WARNING_RATE = 0.01
TM_SHARE_WARNING = 0.5


def _minus(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {m: a[m] - b[m] for m in a}


@dataclass(frozen=True)
class BinScores:
    """Scores of one exposure bin (nan where the bin is empty)."""

    name: str
    count: int
    mean_source_exposure: float
    system: dict[str, float]
    tm: dict[str, float]

    @property
    def delta_tm(self) -> dict[str, float]:
        return _minus(self.system, self.tm)


def bin_scores(
    summary: ExposureSummary,
    exposures: Exposures,
    system: SegmentStatistics,
    tm: SegmentStatistics,
) -> list[BinScores]:
    out = []
    for name, rows in rows_in_bins(summary.item_bins).items():
        mean = (
            math.fsum(exposures[i].source[0].fraction for i in rows) / len(rows)
            if rows
            else float("nan")
        )
        out.append(BinScores(name, len(rows), mean, system.score(rows), tm.score(rows)))
    return out


def _tm_warnings(config: TameConfig, system: dict[str, float], tm: dict[str, float]) -> list[str]:
    """The TM baseline against the system, on the first configured metric: a system
    at or below its nearest-neighbour translation memory is told so (both scores);
    a TM at half the system's score or more explains a share of it."""
    metric = config.metrics[0]
    name = metric_label(metric, config.chrf_word_order)
    ours, theirs = system[metric], tm[metric]
    if math.isnan(ours) or math.isnan(theirs):
        return []
    if theirs >= ours:
        relation, does = ("equal to", "as high") if theirs == ours else ("below", "higher")
        return [
            f"System {name} ({score_text(ours)}) is {relation} its translation-memory "
            f"baseline, TM-{name} ({score_text(theirs)}): copying the target of each item's "
            f"nearest training source scores {does}. Check that the outputs are in the target "
            "language and in the references' order."
        ]
    if theirs >= TM_SHARE_WARNING * ours:
        return [
            f"TM-{name} ({score_text(theirs)}) is {theirs / ours:.1%} of system {name} "
            f"({score_text(ours)}): a nearest-neighbour translation memory explains a "
            "substantial share of the raw score."
        ]
    return []


def warnings_for(
    config: TameConfig,
    summary: ExposureSummary,
    system: dict[str, float],
    tm: dict[str, float],
    bins: dict[str, BinScores],
    sides: SideExposure | None = None,
    has_system: bool = True,
) -> list[str]:
    """The report's warnings; ``sides``: the audit's side check, where it was made;
    ``has_system`` False (every prediction empty: an audit without a system, as the
    ``audit`` command makes) leaves the TM baseline unjudged."""
    found = []
    if summary.pair.exact_overlap > 0:
        found.append(
            f"{rate_text(summary.pair.exact_overlap)} of test source/reference pairs occur "
            "exactly in training: report exact-pair overlap apart from general MT quality."
        )
    leaking = [t for t, rate in summary.pair_leak.items() if rate >= LEAK_WARNING_RATE]
    if leaking:
        t = leaking[-1]
        found.append(
            f"{rate_text(summary.pair_leak[t])} of test pairs have pair exposure >= "
            f"{t}: raw scores may partly reflect train-test near-duplication."
        )
    if has_system:
        found += _tm_warnings(config, system, tm)
    if (swap := swapped_warning(sides)) is not None:
        found.append(swap)
    for name in ("near", "far"):
        if bins[name].count < config.min_bin_size_warning:
            found.append(
                f"The {name} bin holds only {bins[name].count} items (fewer than "
                f"{config.min_bin_size_warning}): its scores are unstable."
            )
    if bins["near"].count == 0 or bins["far"].count == 0:
        found.append("GenGap is undefined: the near or far bin is empty.")
    return found


def _json(value: float) -> float | None:
    return None if math.isnan(value) else value


def _json_scores(scores: dict[str, float]) -> dict[str, float | None]:
    return {k: _json(v) for k, v in scores.items()}


def _side_json(side: SideSummary) -> dict[str, Any]:
    return {
        "mean": _json(side.mean),
        "exact_overlap": _json(side.exact_overlap),
        "at_threshold": _json_scores(side.at_threshold),
    }


def _intervals_json(intervals: Mapping[str, Interval]) -> dict[str, dict[str, float | None]]:
    return {m: {"low": _json(i.low), "high": _json(i.high)} for m, i in intervals.items()}


def _band_json(band: Band) -> dict[str, Any]:
    return {
        "low": band.low,
        "high": band.high,
        "count": band.count,
        "mean_source_exposure": _json(band.mean_source_exposure),
        "system": _json_scores(band.system),
        "tm": _json_scores(band.tm),
        "system_ci": _intervals_json(band.system_ci),
        "tm_ci": _intervals_json(band.tm_ci),
    }


def segment_rows(
    exposures: Exposures,
    item_bins: Sequence[str],
    tm_hypotheses: Sequence[str],
    train_sources: Mapping[int, str] | Sequence[str] | None = None,
    train_targets: Mapping[int, str] | Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """One dict per test item; training text only when the training sides are given
    (all, or by row those of the neighbours)."""
    rows = []
    for i, item in enumerate(exposures):
        source, target, pair = item.source[0], item.target[0], item.pair
        assert pair is not None
        row: dict[str, Any] = {
            "index": i,
            "source_exposure": source.score,
            "source_nn_index": source.row,
            "source_exact": item.source_exact,
            "target_exposure": target.score,
            "target_nn_index": target.row,
            "target_ref_index": target.reference,
            "target_exact": item.target_exact,
            "pair_exposure": pair.score,
            "pair_nn_index": pair.row,
            "pair_ref_index": pair.reference,
            "pair_exact": item.pair_exact,
            "bin": item_bins[i],
            "tm_hyp": tm_hypotheses[i],
        }
        if train_sources is not None and train_targets is not None:
            row["source_nn_text"] = train_sources[source.row]
            row["target_nn_text"] = train_targets[target.row]
            row["pair_nn_source"] = train_sources[pair.row]
            row["pair_nn_target"] = train_targets[pair.row]
        rows.append(row)
    return rows


@dataclass(frozen=True)
class ReportDocument:
    """Everything a TAME report holds, with views for each consumer."""

    config: TameConfig
    signature: str
    summary: ExposureSummary
    system: dict[str, float]
    tm: dict[str, float]
    bins: dict[str, BinScores]
    warnings: list[str]
    data: dict[str, Any]
    backend: dict[str, Any]
    dependencies: dict[str, str]
    system_statistics: SegmentStatistics = field(repr=False, compare=False)
    tm_statistics: SegmentStatistics = field(repr=False, compare=False)
    source_exposures: tuple[Fraction, ...] = field(repr=False, compare=False)

    @property
    def delta_tm(self) -> dict[str, float]:
        return _minus(self.system, self.tm)

    @cached_property
    def curve(self) -> list[Band]:
        """The exposure curve: each band's scores and intervals (made on first use)."""
        from tame_mt_metric.report.curve import exposure_curve

        c = self.config
        with collector_paused():
            return exposure_curve(
                self.source_exposures,
                self.system_statistics,
                self.tm_statistics,
                c.curve_bands,
                c.curve_edges,
                c.confidence,
                c.n_bootstrap,
                c.seed,
            )

    @cached_property
    def intervals(self) -> dict[str, Interval]:
        """Bootstrap intervals of every score, keyed as the flat fields (made on
        first use; empty when ``n_bootstrap`` is 0)."""
        from tame_mt_metric.report.intervals import score_intervals

        c = self.config
        with collector_paused():
            return score_intervals(
                self.system_statistics,
                self.tm_statistics,
                self.summary.item_bins,
                c.confidence,
                c.n_bootstrap,
                c.seed,
            )

    @property
    def generalization_gap(self) -> dict[str, float]:
        """Near-bin score minus far-bin score (nan when either bin is empty)."""
        return _minus(self.bins["near"].system, self.bins["far"].system)

    def fields(self, confidence_intervals: bool = False) -> dict[str, float | int | str]:
        """The flat metric dict: plain numbers (nan where undefined) and the signature;
        with ``confidence_intervals``, also ``<score>_ci_low`` and ``<score>_ci_high``
        for every score."""
        s, metrics = self.summary, list(self.system)
        sides = {"source": s.source, "target": s.target, "pair": s.pair}
        out: dict[str, float | int | str] = {
            **self.system,
            **{f"tm_{m}": self.tm[m] for m in metrics},
            **{f"delta_tm_{m}": self.delta_tm[m] for m in metrics},
            **{f"{name}_exposure_mean": side.mean for name, side in sides.items()},
            **{f"{name}_exact_rate": side.exact_overlap for name, side in sides.items()},
            **{f"pair_leak@{t}": rate for t, rate in s.pair_leak.items()},
            **{f"far_{m}": self.bins["far"].system[m] for m in metrics},
            **{f"gen_gap_{m}": self.generalization_gap[m] for m in metrics},
        }
        for name, b in self.bins.items():
            out[f"bin/{name}/count"] = b.count
            out.update({f"bin/{name}/{m}": b.system[m] for m in metrics})
            out.update({f"bin/{name}/tm_{m}": b.tm[m] for m in metrics})
        if confidence_intervals:
            for key, interval in self.intervals.items():
                if key in out:
                    out[f"{key}_ci_low"] = interval.low
                    out[f"{key}_ci_high"] = interval.high
        out["signature"] = self.signature
        return out

    def as_json(self, system: bool = True) -> dict[str, Any]:
        """The report structure of the TAME spec (null where a value is undefined).
        Without ``system`` (an audit: no hypotheses), ``quality``, the bins' system
        scores, GenGap, the intervals and the curve are null; the TM's stay."""
        s = self.summary
        rows = rows_in_bins(s.item_bins)
        return {
            "schema_version": "1.0",
            "tame_version": __version__,
            "signature": self.signature,
            "data": self.data,
            "backend": self.backend,
            "quality": {
                "system": _json_scores(self.system),
                "tm": _json_scores(self.tm),
                "delta_tm": _json_scores(self.delta_tm),
                "details": self._details(None, system),
            }
            if system
            else None,
            "exposure": {
                "source": _side_json(s.source),
                "target": _side_json(s.target),
                "pair": {**_side_json(s.pair), "leak": _json_scores(s.pair_leak)},
            },
            "bins": [
                _bin_json(
                    b.name,
                    b.count,
                    s.items,
                    b.mean_source_exposure,
                    b.system if system else None,
                    b.tm,
                    self._details(rows[b.name], system),
                )
                for b in self.bins.values()
            ],
            "generalization_gap": _json_scores(self.generalization_gap) if system else None,
            "intervals": {
                "confidence": self.config.confidence,
                "n_bootstrap": self.config.n_bootstrap,
                "seed": self.config.seed,
                "scores": _intervals_json(self.intervals),
            }
            if system
            else None,
            "curve": {
                "by": "source_exposure",
                "bands": [_band_json(b) for b in self.curve],
            }
            if system
            else None,
            "warnings": self.warnings,
            "config": {**self.config.as_dict(), "dependencies": self.dependencies},
        }

    def _details(self, rows: Sequence[int] | None, system: bool) -> dict[str, Any]:
        """BLEU's breakdown (``SegmentStatistics.bleu_details``) of the system and
        the TM over ``rows`` (all by default); the system's null without one."""
        return {
            "system": self.system_statistics.bleu_details(rows) if system else None,
            "tm": self.tm_statistics.bleu_details(rows),
        }


def _bin_json(
    name: str,
    count: int,
    items: int,
    mean_source_exposure: float,
    system: dict[str, float] | None,
    tm: dict[str, float] | None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    delta = _minus(system, tm) if system is not None and tm is not None else None
    return {
        "name": name,
        "count": count,
        "share": count / items,
        "mean_source_exposure": _json(mean_source_exposure),
        "system": None if system is None else _json_scores(system),
        "tm": None if tm is None else _json_scores(tm),
        "delta_tm": None if delta is None else _json_scores(delta),
        "details": details,
    }


def source_side_report_json(
    config: TameConfig,
    signature: str,
    summary: ExposureSummary,
    exposures: Exposures,
    data: dict[str, Any],
    backend: dict[str, Any],
    dependencies: dict[str, str],
) -> dict[str, Any]:
    """The report of a source-side audit (no references, no hypotheses): the
    structure of ``ReportDocument.as_json``, with the source's exposure and the bins;
    what needs a reference or a hypothesis is null."""
    bins = []
    for name, rows in rows_in_bins(summary.item_bins).items():
        values = [exposures[i].source[0].fraction for i in rows]
        mean = math.fsum(values) / len(rows) if rows else float("nan")
        bins.append(_bin_json(name, len(rows), summary.items, mean, None, None))
    return {
        "schema_version": "1.0",
        "tame_version": __version__,
        "signature": signature,
        "data": data,
        "backend": backend,
        "quality": None,
        "exposure": {"source": _side_json(summary.source), "target": None, "pair": None},
        "bins": bins,
        "generalization_gap": None,
        "intervals": None,
        "curve": None,
        "warnings": [],
        "config": {**config.as_dict(), "dependencies": dependencies},
    }
