"""The human report on stdout: aligned tables, bins, warnings and the
signature. Scores are named and numbers written as on every human surface
(``report.labels``: chrF by its word order, exposures as 0.734, rates as
18.40%; JSON keeps keys and fractions). Metrics that are one number (``chrf``
at word order 2 and ``chrf++``) share one row that names both keys."""

from __future__ import annotations

import math

from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.document import ReportDocument
from tame_mt_metric.report.exposure_summary import ExposureSummary, SideSummary
from tame_mt_metric.report.labels import exposure_text, metric_label, rate_text, score_text
from tame_mt_metric.report.scores import same_numbers

__all__ = ["metric_rows", "render_exposure", "render_report"]


def metric_rows(config: TameConfig) -> list[tuple[str, str, list[str]]]:
    """(the metric key shown, its human label, every key of the same number) for
    each distinct score of ``config.metrics``, in order. Two keys are one number
    when they read the same sacrebleu statistics the same way; the label then
    names both: ``chrF++ (chrf = chrf++)``."""
    rows = []
    for keys in same_numbers(config.metrics, config.chrf_word_order):
        label = metric_label(keys[0], config.chrf_word_order)
        if len(keys) > 1:
            label += f" ({' = '.join(keys)})"
        rows.append((keys[0], label, keys))
    return rows


def render_exposure(summary: ExposureSummary) -> list[str]:
    lines = ["Exposure", "--------"]
    sides: list[tuple[str, SideSummary]] = [("source", summary.source)]
    if not math.isnan(summary.target.mean):
        sides += [("target", summary.target), ("pair", summary.pair)]
    for name, side in sides:
        exact = rate_text(side.exact_overlap)
        lines.append(f"  {name:<7} mean {exposure_text(side.mean):>6}   exact overlap {exact:>8}")
        for t, share in side.at_threshold.items():
            label = f"PairLeak@{t}" if name == "pair" else f">= {t}"
            lines.append(f"          {label:<16} {rate_text(share):>8}")
    lines += ["", "Bins (by source exposure)", "-------------------------"]
    for name, count in summary.bins.items():
        part = rate_text(count / summary.items if summary.items else None)
        lines.append(f"  {name:<13} {count:>7}  {part:>8}")
    return lines


def render_report(report: ReportDocument) -> str:
    rows = metric_rows(report.config)
    width = max(12, *(len(label) for _, label, _ in rows))
    lines = ["Quality", "-------"]
    lines.append(f"  {'metric':<{width}} {'system':>9} {'TM':>9} {'delta':>9}")
    for m, label, _ in rows:
        lines.append(
            f"  {label:<{width}} {score_text(report.system[m]):>9} {score_text(report.tm[m]):>9} "
            f"{score_text(report.delta_tm[m]):>9}"
        )
    lines += ["", *render_exposure(report.summary), ""]
    lines.append("Scores by bin")
    lines.append("-------------")
    names = [metric_label(m, report.config.chrf_word_order) for m, _, _ in rows]
    columns = [(m, max(10, len(n)), n) for (m, _, _), n in zip(rows, names, strict=True)]
    header = "  " + f"{'bin':<13} {'N':>6} "
    header += " ".join(f"{n:>{w}} {'TM-' + n:>{w + 3}}" for _, w, n in columns)
    lines.append(header)
    for b in report.bins.values():
        cells = " ".join(
            f"{score_text(b.system[m]):>{w}} {score_text(b.tm[m]):>{w + 3}}" for m, w, _ in columns
        )
        lines.append(f"  {b.name:<13} {b.count:>6} {cells}")
    lines += ["", "Generalization gap (near - far)"]
    gap = report.generalization_gap
    lines += [f"  {label:<{width}} {score_text(gap[m]):>9}" for m, label, _ in rows]
    if report.warnings:
        lines += ["", "Warnings", "--------", *(f"- {w}" for w in report.warnings)]
    lines += ["", "Signature", "---------", report.signature]
    return "\n".join(lines)
