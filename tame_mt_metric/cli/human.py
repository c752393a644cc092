"""The human report on stdout: aligned tables with percentages (JSON keeps
fractions), bins, warnings and the signature."""

from __future__ import annotations

import math

from tame_mt_metric.report.document import TameReport
from tame_mt_metric.report.exposure_summary import ExposureSummary, SideSummary

__all__ = ["render_exposure", "render_report"]


def _num(value: float, percent: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{100 * value:.2f}%" if percent else f"{value:.2f}"


def render_exposure(summary: ExposureSummary) -> list[str]:
    lines = ["Exposure", "--------"]
    sides: list[tuple[str, SideSummary]] = [("source", summary.source)]
    if not math.isnan(summary.target.mean):
        sides += [("target", summary.target), ("pair", summary.pair)]
    for name, side in sides:
        exact = _num(side.exact_overlap, True)
        lines.append(f"  {name:<7} mean {_num(side.mean):>6}   exact overlap {exact:>8}")
        for t, share in side.at_threshold.items():
            label = f"PairLeak@{t}" if name == "pair" else f">= {t}"
            lines.append(f"          {label:<16} {_num(share, True):>8}")
    lines += ["", "Bins (by source exposure)", "-------------------------"]
    for name, count in summary.bins.items():
        lines.append(f"  {name:<13} {count:>7}  {_num(count / summary.items, True):>8}")
    return lines


def render_report(report: TameReport) -> str:
    metrics = list(report.system)
    lines = ["Quality", "-------"]
    lines.append(f"  {'metric':<12} {'system':>9} {'TM':>9} {'delta':>9}")
    for m in metrics:
        lines.append(
            f"  {m:<12} {_num(report.system[m]):>9} {_num(report.tm[m]):>9} "
            f"{_num(report.delta_tm[m]):>9}"
        )
    lines += ["", *render_exposure(report.summary), ""]
    lines.append("Scores by bin")
    lines.append("-------------")
    header = "  " + f"{'bin':<13} {'N':>6} " + " ".join(f"{m:>10} {'TM-' + m:>12}" for m in metrics)
    lines.append(header)
    for b in report.bins.values():
        cells = " ".join(f"{_num(b.system[m]):>10} {_num(b.tm[m]):>12}" for m in metrics)
        lines.append(f"  {b.name:<13} {b.count:>6} {cells}")
    lines += ["", "Generalization gap (near - far)"]
    lines += [f"  {m:<12} {_num(v):>9}" for m, v in report.generalization_gap.items()]
    if report.warnings:
        lines += ["", "Warnings", "--------", *(f"- {w}" for w in report.warnings)]
    lines += ["", "Signature", "---------", report.signature]
    return "\n".join(lines)
