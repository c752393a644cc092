"""The report to look at: one self-contained HTML file (inline SVG and CSS, no
script and nothing fetched) with the exposure histogram by bin, the per-bin
scores of the system and the TM with their intervals, the exposure curve, the
significance table when systems were compared, the table of every score, the
signature, the warnings and the most exposed items (indices and exposures;
text only when given).

Every number in the tables carries its exact value in ``data-value`` (the
table of scores is keyed by the flat fields' names in ``data-key``), so that a
reader, or a test, can check the page against the JSON report.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tame_mt_metric.report.document import TameReport
from tame_mt_metric.report.exposure_summary import BINS

if TYPE_CHECKING:
    from tame_mt_metric.report.significance import Comparison

__all__ = ["MOST_EXPOSED", "render_html"]

MOST_EXPOSED = 20
COLOURS = {"source_exact": "#b2182b", "near": "#ef8a62", "medium": "#67a9cf", "far": "#2166ac"}
SYSTEM, TM_COLOUR = "#1b7837", "#999999"
WIDTH, HEIGHT, PAD = 640, 260, 44

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 980px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { border-bottom: 1px solid #ddd; padding: 2px 10px; text-align: right; }
td:first-child, th:first-child { text-align: left; }
code { word-break: break-all; font-size: 12px; }
.legend span { display: inline-block; margin-right: 1em; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
.warnings li { color: #8a3b00; }
svg text { font-size: 11px; fill: #333; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _number(value: float | int | None, places: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return '<td data-value="nan">n/a</td>'
    text = str(value) if isinstance(value, int) else f"{value:.{places}f}"
    return f'<td data-value="{value!r}">{text}</td>'


class _Plot:
    """An SVG plot with linear axes: x in [x0, x1], y in [y0, y1]."""

    def __init__(self, ident: str, title: str, x: tuple[float, float], y: tuple[float, float]):
        self.ident, self.title, self.x, self.y = ident, title, x, y
        self.parts: list[str] = []

    def px(self, v: float) -> float:
        x0, x1 = self.x
        return PAD + (v - x0) / ((x1 - x0) or 1) * (WIDTH - 2 * PAD)

    def py(self, v: float) -> float:
        y0, y1 = self.y
        return HEIGHT - PAD + (v - y0) / ((y1 - y0) or 1) * (2 * PAD - HEIGHT)

    def add(self, part: str) -> None:
        self.parts.append(part)

    def svg(self, xlabel: str, ylabel: str, xticks: Sequence[tuple[float, str]]) -> str:
        axes = [
            f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
            'stroke="#333"/>',
            f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#333"/>',
        ]
        y0, y1 = self.y
        for k in range(5):
            v = y0 + (y1 - y0) * k / 4
            axes.append(
                f'<text x="{PAD - 6}" y="{self.py(v) + 4:.1f}" text-anchor="end">{v:g}</text>'
            )
        for v, label in xticks:
            axes.append(
                f'<text x="{self.px(v):.1f}" y="{HEIGHT - PAD + 16}" '
                f'text-anchor="middle">{_e(label)}</text>'
            )
        axes.append(
            f'<text x="{WIDTH / 2}" y="{HEIGHT - 6}" text-anchor="middle">{_e(xlabel)}</text>'
        )
        axes.append(
            f'<text x="12" y="{HEIGHT / 2}" transform="rotate(-90 12 {HEIGHT / 2})" '
            f'text-anchor="middle">{_e(ylabel)}</text>'
        )
        return (
            f'<svg id="{self.ident}" role="img" aria-label="{_e(self.title)}" '
            f'width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}">'
            + "".join(axes + self.parts)
            + "</svg>"
        )


def _whisker(plot: _Plot, x: float, low: float, high: float) -> str:
    if math.isnan(low) or math.isnan(high):
        return ""
    return (
        f'<line class="whisker" x1="{x:.1f}" y1="{plot.py(low):.1f}" x2="{x:.1f}" '
        f'y2="{plot.py(high):.1f}" stroke="#000"/>'
    )


def _histogram(report: TameReport) -> str:
    buckets = 20
    counts = {name: [0] * buckets for name in BINS}
    for exposure, name in zip(report.source_exposures, report.summary.item_bins, strict=True):
        counts[name][min(int(exposure * buckets), buckets - 1)] += 1
    tallest = max(sum(counts[n][k] for n in BINS) for k in range(buckets)) or 1
    plot = _Plot("histogram", "Items by source exposure and bin", (0, 1), (0, tallest))
    width = (WIDTH - 2 * PAD) / buckets
    for k in range(buckets):
        base = 0
        for name in BINS:
            n = counts[name][k]
            if n:
                top = plot.py(base + n)
                plot.add(
                    f'<rect class="bar" data-bin="{name}" data-count="{n}" '
                    f'x="{plot.px(k / buckets) + 1:.1f}" y="{top:.1f}" width="{width - 2:.1f}" '
                    f'height="{plot.py(base) - top:.1f}" fill="{COLOURS[name]}"/>'
                )
                base += n
    ticks = [(v / 10, f"{v / 10:.1f}") for v in range(0, 11, 2)]
    return plot.svg("source exposure", "items", ticks)


def _bin_scores(report: TameReport, metric: str) -> str:
    plot = _Plot(f"bins-{metric}", f"{metric} by bin", (0, len(BINS)), (0, 100))
    slot = (WIDTH - 2 * PAD) / len(BINS)
    for k, b in enumerate(report.bins.values()):
        if not b.count:
            continue
        for j, (who, value, colour) in enumerate(
            ((metric, b.system[metric], SYSTEM), (f"tm_{metric}", b.tm[metric], TM_COLOUR))
        ):
            x = PAD + k * slot + slot * (0.2 + 0.3 * j)
            plot.add(
                f'<rect class="bar" data-key="bin/{b.name}/{who}" x="{x:.1f}" '
                f'y="{plot.py(value):.1f}" width="{slot * 0.28:.1f}" '
                f'height="{plot.py(0) - plot.py(value):.1f}" fill="{colour}"/>'
            )
            interval = report.intervals.get(f"bin/{b.name}/{who}")
            if interval:
                plot.add(_whisker(plot, x + slot * 0.14, interval.low, interval.high))
    ticks = [(k + 0.5, b.name) for k, b in enumerate(report.bins.values())]
    return plot.svg("bin (system green, TM grey, 95% intervals)", metric, ticks)


def _curve(report: TameReport, metric: str) -> str:
    plot = _Plot(f"curve-{metric}", f"{metric} by source exposure", (0, 1), (0, 100))
    for who, colour in (("system", SYSTEM), ("tm", TM_COLOUR)):
        points = []
        for band in report.curve:
            score = band.system[metric] if who == "system" else band.tm[metric]
            ci = (band.system_ci if who == "system" else band.tm_ci).get(metric)
            x, y = plot.px(band.mean_source_exposure), plot.py(score)
            points.append(f"{x:.1f},{y:.1f}")
            plot.add(f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>')
            if ci:
                plot.add(_whisker(plot, x, ci.low, ci.high))
        plot.add(
            f'<polyline class="line" points="{" ".join(points)}" fill="none" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
    ticks = [(v / 10, f"{v / 10:.1f}") for v in range(0, 11, 2)]
    return plot.svg("mean source exposure of the band (system green, TM grey)", metric, ticks)


def _scores_table(report: TameReport) -> str:
    fields = report.fields()
    rows = []
    for key, value in fields.items():
        if key == "signature" or isinstance(value, str):
            continue
        interval = report.intervals.get(key)
        low, high = (interval.low, interval.high) if interval else (None, None)
        rows.append(
            f'<tr data-key="{_e(key)}"><td>{_e(key)}</td>{_number(value, 4)}'
            f"{_number(low, 4)}{_number(high, 4)}</tr>"
        )
    head = "<tr><th>field</th><th>value</th><th>interval low</th><th>interval high</th></tr>"
    return f'<table id="scores">{head}{"".join(rows)}</table>'


def _significance(comparison: Comparison) -> str:
    s = comparison.settings
    head = (
        "<tr><th>group</th><th>system</th><th>metric</th><th>score</th><th>CI low</th>"
        "<th>CI high</th><th>delta</th><th>p</th></tr>"
    )
    rows = []
    for group, table in {"whole": comparison.whole, **comparison.bins}.items():
        for name, row in table.items():
            for metric, r in row.items():
                rows.append(
                    f'<tr data-group="{_e(group)}" data-system="{_e(name)}" '
                    f'data-metric="{_e(metric)}"><td>{_e(group)}</td><td>{_e(name)}</td>'
                    f"<td>{_e(metric)}</td>{_number(r.score)}{_number(r.ci_low)}"
                    f"{_number(r.ci_high)}{_number(r.delta if r.p_value is not None else None)}"
                    f"{_number(r.p_value, 4)}</tr>"
                )
    title = (
        f"<p>{_e(s['test'])} with {s['n_samples']} samples, seed {s['seed']}, "
        f"baseline <b>{_e(s['baseline'])}</b>.</p>"
    )
    return (
        f'<h2>Paired significance</h2>{title}<table id="significance">{head}{"".join(rows)}</table>'
    )


def _exposed(report: TameReport, texts: Mapping[str, Sequence[str]] | None) -> str:
    order = sorted(
        range(len(report.source_exposures)), key=lambda i: (-report.source_exposures[i], i)
    )[:MOST_EXPOSED]
    names = list(texts or {})
    head = "<tr><th>item</th><th>source exposure</th><th>bin</th>" + "".join(
        f"<th>{_e(n)}</th>" for n in names
    )
    rows = []
    for i in order:
        cells = (
            "".join(f'<td style="text-align:left">{_e(texts[n][i])}</td>' for n in names)
            if texts
            else ""
        )
        rows.append(
            f'<tr data-item="{i}"><td>{i}</td>{_number(float(report.source_exposures[i]), 4)}'
            f"<td>{_e(report.summary.item_bins[i])}</td>{cells}</tr>"
        )
    return f'<table id="exposed">{head}</tr>{"".join(rows)}</table>'


def render_html(
    report: TameReport,
    comparison: Comparison | None = None,
    texts: Mapping[str, Sequence[str]] | None = None,
    title: str = "TAME report",
) -> str:
    """The whole page. ``texts``: columns of raw text for the most exposed items
    (for example ``{"source": ..., "reference": ...}``), only when asked for."""
    legend = "".join(f'<span><i style="background:{COLOURS[n]}"></i>{_e(n)}</span>' for n in BINS)
    metrics = list(report.system)
    bins = ", ".join(f"{k} {v}" for k, v in report.summary.bins.items())
    parts = [
        f"<h1>{_e(title)}</h1>",
        f"<p>{report.summary.items:,} test items against {report.data['num_train']:,} "
        f"training pairs; bins {_e(bins)}.</p>",
        "<h2>Source exposure</h2>",
        f'<div class="legend">{legend}</div>',
        _histogram(report),
        "<h2>Scores by bin</h2>",
        *(_bin_scores(report, m) for m in metrics),
        "<h2>Exposure curve</h2>",
        *(_curve(report, m) for m in metrics),
    ]
    if comparison is not None:
        parts.append(_significance(comparison))
    c = report.config
    parts += [
        "<h2>Every score</h2>",
        f"<p>Intervals: {c.confidence:g} bootstrap percentile intervals, "
        f"{c.n_bootstrap} resamples of the test items, seed {c.seed}.</p>",
        _scores_table(report),
        "<h2>Warnings</h2>",
        '<ul class="warnings">'
        + ("".join(f"<li>{_e(w)}</li>" for w in report.warnings) or "<li>none</li>")
        + "</ul>",
        f"<h2>The {MOST_EXPOSED} most exposed items</h2>",
        _exposed(report, texts),
        "<h2>Signature</h2>",
        f'<p><code id="signature">{_e(report.signature)}</code></p>',
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(parts)
        + "</body></html>\n"
    )
