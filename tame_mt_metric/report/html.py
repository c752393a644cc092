"""The report to look at: one self-contained HTML file (inline SVG and CSS, no
script and nothing fetched) with the warnings first, the exposure histogram by
bin, each bin's count and its scores for every system and the TM with their
intervals, the exposure curve, the significance table when systems were
compared, the table of every score, the most exposed items beside their test
source (and their nearest training source only when asked for) and the
signature.

One interval convention holds on a page: every interval shown is a report's
own percentile bootstrap interval (``ReportDocument.intervals``, the curve's band
intervals for the curve), and the page says how many resamples, at what
confidence and with what seed. A comparison's p values come from its paired
test; its score intervals on the page are the reports'.

Scores are named as every human surface names them (``labels.metric_label``:
chrF by its word order) and numbers are written by ``labels``. Every number in
the tables carries its exact value in ``data-value`` (the table of scores is
keyed by the flat fields' names in ``data-key``, each system's cells by
``data-system``), so that a reader, or a test, can check the page against the
JSON report.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tame_mt_metric.report.document import ReportDocument
from tame_mt_metric.report.exposure_summary import BINS
from tame_mt_metric.report.labels import exposure_text, metric_label, rate_text, score_text
from tame_mt_metric.report.scores import same_numbers

if TYPE_CHECKING:
    from tame_mt_metric.report.intervals import Interval
    from tame_mt_metric.report.pipeline import ItemizedReport
    from tame_mt_metric.report.significance import Comparison

__all__ = [
    "BIN_COLOURS",
    "MOST_EXPOSED",
    "bin_scores_svg",
    "bins_table",
    "field_label",
    "field_text",
    "interval_text",
    "most_exposed",
    "neighbour_texts",
    "render_html",
    "round_ticks",
]

MOST_EXPOSED = 20
# The colour of each exposure bin, on the HTML report and in the Space.
BIN_COLOURS = {
    "source_exact": "#b2182b",
    "near": "#ef8a62",
    "medium": "#67a9cf",
    "far": "#2166ac",
}
SYSTEM_COLOURS = ("#1b7837", "#762a83", "#b35806", "#01665e", "#c51b7d", "#4d4d4d")
TM_COLOUR = "#999999"
WIDTH, HEIGHT, PAD = 640, 260, 44

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 980px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { border-bottom: 1px solid #ddd; padding: 2px 10px; text-align: right; }
td:first-child, th:first-child, td.text, th.text { text-align: left; }
td.text { max-width: 420px; }
code { font-size: 12px; }
#signature { overflow-wrap: anywhere; }
.legend span { display: inline-block; margin-right: 1em; }
.legend i, .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
.warnings li { color: #8a3b00; }
.note { color: #555; }
svg text { font-size: 11px; fill: #333; }
"""

EXPOSURE_MEANS = {"source_exposure_mean", "target_exposure_mean", "pair_exposure_mean"}
RATES = {"source_exact_rate", "target_exact_rate", "pair_exact_rate"}
EXPOSURE_LABELS = {
    "source_exposure_mean": "source exposure (mean)",
    "target_exposure_mean": "target exposure (mean)",
    "pair_exposure_mean": "pair exposure (mean)",
    "source_exact_rate": "source exact overlap",
    "target_exact_rate": "target exact overlap",
    "pair_exact_rate": "pair exact overlap",
}


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _score_name(metric: str, metrics: Sequence[str], word_order: int) -> str:
    label = metric_label(metric, word_order)
    for keys in same_numbers(metrics, word_order):  # one score, one name, said once
        if metric in keys[1:]:
            return f"{label} (the same as the {keys[0]} field)"
    return label


def field_label(key: str, metrics: Sequence[str], chrf_word_order: int) -> str:
    """The human name of a flat field of the report (``fields()``'s keys): a
    score named by ``labels.metric_label``, and a field that repeats another
    (``far_bleu`` is the far bin's BLEU) says so."""
    if key.startswith("bin/"):
        _, name, rest = key.split("/", 2)
        if rest == "count":
            return f"{name} bin: items"
        label = f"{name} bin: {field_label(rest, metrics, chrf_word_order)}"
        if name == "far" and rest in metrics:
            label += f" (= Far-{_score_name(rest, metrics, chrf_word_order)})"
        return label
    if key in EXPOSURE_LABELS:
        return EXPOSURE_LABELS[key]
    if key.startswith("pair_leak@"):
        return "PairLeak@" + key.removeprefix("pair_leak@")
    for prefix, pattern in (
        ("delta_tm_", "{} over TM"),
        ("tm_", "TM-{}"),
        ("far_", "Far-{0} (= far bin: {0})"),
        ("gen_gap_", "GenGap-{} (near bin minus far bin)"),
    ):
        if key.startswith(prefix) and key.removeprefix(prefix) in metrics:
            return pattern.format(_score_name(key.removeprefix(prefix), metrics, chrf_word_order))
    if key in metrics:
        return _score_name(key, metrics, chrf_word_order)
    return key


def field_text(key: str, value: float | int | None) -> str:
    """A flat field's value as the human surfaces write it."""
    if key.endswith("/count") and isinstance(value, int):
        return f"{value:,}"
    if key in EXPOSURE_MEANS:
        return exposure_text(value)
    if key in RATES or key.startswith("pair_leak@"):
        return rate_text(value)
    return score_text(value)


def _missing(value: float | None) -> bool:
    return value is None or math.isnan(value)


def interval_text(interval: Interval | None) -> str:
    """An interval as ``[27.79, 29.38]`` (``n/a`` when there is none)."""
    if interval is None or (_missing(interval.low) and _missing(interval.high)):
        return "n/a"
    return f"[{score_text(interval.low)}, {score_text(interval.high)}]"


def _value_cell(
    value: float | int | None, text: str, system: str | None = None, key: str | None = None
) -> str:
    undefined = value is None or (isinstance(value, float) and math.isnan(value))
    exact = "nan" if undefined else repr(value)
    attributes = "".join(
        f' data-{name}="{_e(v)}"' for name, v in (("key", key), ("system", system)) if v is not None
    )
    return f'<td{attributes} data-value="{exact}">{_e(text)}</td>'


def _interval_cell(interval: Interval | None, system: str | None = None) -> str:
    who = f' data-system="{_e(system)}"' if system is not None else ""
    if interval is None:
        return f'<td class="interval"{who} data-low="nan" data-high="nan">n/a</td>'
    return (
        f'<td class="interval"{who} data-low="{interval.low!r}" data-high="{interval.high!r}">'
        f"{interval_text(interval)}</td>"
    )


def round_ticks(top: float, most: int = 6, whole: bool = False) -> list[float]:
    """Round tick values from 0 to at least ``top``: steps of 1, 2 or 5 times a
    power of ten (``whole``: at least 1, for counts), at most ``most`` intervals."""
    if not top > 0:
        return [0.0, 1.0]
    raw = max(top / most, 1.0) if whole else top / most
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-12))
    count = math.ceil(top / step - 1e-9)
    return [round(k * step, 12) for k in range(count + 1)]


def _tick_text(value: float) -> str:
    return f"{value:g}"


class _Plot:
    """An SVG plot with linear axes: x in [x0, x1], y from 0 to the last y tick."""

    def __init__(
        self, ident: str, title: str, x: tuple[float, float], yticks: Sequence[float]
    ) -> None:
        self.ident, self.title, self.x = ident, title, x
        self.yticks = list(yticks)
        self.y = (self.yticks[0], self.yticks[-1])
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
        for v in self.yticks:
            axes.append(
                f'<text class="ytick" x="{PAD - 6}" y="{self.py(v) + 4:.1f}" '
                f'text-anchor="end">{_tick_text(v)}</text>'
            )
        for v, label in xticks:
            lines = label.split("\n")
            axes.append(
                f'<text class="xtick" x="{self.px(v):.1f}" y="{HEIGHT - PAD + 16}" '
                f'text-anchor="middle">{_e(lines[0])}'
                + "".join(
                    f'<tspan x="{self.px(v):.1f}" dy="13">{_e(more)}</tspan>' for more in lines[1:]
                )
                + "</text>"
            )
        axes.append(
            f'<text x="{WIDTH / 2}" y="{HEIGHT - 4}" text-anchor="middle">{_e(xlabel)}</text>'
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


def _whisker(plot: _Plot, x: float, interval: Interval | None) -> str:
    if interval is None or math.isnan(interval.low) or math.isnan(interval.high):
        return ""
    return (
        f'<line class="whisker" x1="{x:.1f}" y1="{plot.py(interval.low):.1f}" x2="{x:.1f}" '
        f'y2="{plot.py(interval.high):.1f}" stroke="#000"/>'
    )


EXPOSURE_TICKS = [(v / 10, f"{v / 10:.1f}") for v in range(0, 11, 2)]
SCORE_TICKS = round_ticks(100, 5)


def histogram_svg(report: ReportDocument, buckets: int = 20) -> str:
    """The test items by source exposure, stacked by bin in the bins' colours."""
    counts = {name: [0] * buckets for name in BINS}
    for exposure, name in zip(report.source_exposures, report.summary.item_bins, strict=True):
        counts[name][min(int(exposure * buckets), buckets - 1)] += 1
    tallest = max(sum(counts[n][k] for n in BINS) for k in range(buckets))
    plot = _Plot(
        "histogram", "Items by source exposure and bin", (0, 1), round_ticks(tallest, whole=True)
    )
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
                    f'height="{plot.py(base) - top:.1f}" fill="{BIN_COLOURS[name]}"/>'
                )
                base += n
    return plot.svg("source exposure", "items", EXPOSURE_TICKS)


def _series(systems: Mapping[str, ReportDocument]) -> list[tuple[str, str]]:
    """Each system's name and colour, then the TM's."""
    named = [(n, SYSTEM_COLOURS[k % len(SYSTEM_COLOURS)]) for k, n in enumerate(systems)]
    return [*named, ("TM", TM_COLOUR)]


def _series_legend(systems: Mapping[str, ReportDocument]) -> str:
    return (
        '<div class="legend">'
        + "".join(
            f'<span><i style="background:{colour}"></i>{_e(name)}</span>'
            for name, colour in _series(systems)
        )
        + "</div>"
    )


def bin_scores_svg(systems: Mapping[str, ReportDocument], metric: str) -> str:
    """Each bin's score of every system and of the TM, side by side, with the
    reports' intervals as whiskers and each bin's count under its name."""
    first = next(iter(systems.values()))
    label = metric_label(metric, first.config.chrf_word_order)
    plot = _Plot(f"bins-{metric}", f"{label} by bin", (0, len(BINS)), SCORE_TICKS)
    slot = (WIDTH - 2 * PAD) / len(BINS)
    series = _series(systems)
    bar = slot * 0.8 / len(series)
    for k, name in enumerate(BINS):
        b = first.bins[name]
        if not b.count:
            plot.add(
                f'<text class="empty" x="{PAD + (k + 0.5) * slot:.1f}" y="{HEIGHT - PAD - 8}" '
                'text-anchor="middle">no items</text>'
            )
            continue
        for j, (who, colour) in enumerate(series):
            report = first if who == "TM" else systems[who]
            key = f"bin/{name}/{'tm_' if who == 'TM' else ''}{metric}"
            value = (report.bins[name].tm if who == "TM" else report.bins[name].system)[metric]
            if math.isnan(value):
                continue
            x = PAD + k * slot + slot * 0.1 + j * bar
            plot.add(
                f'<rect class="bar" data-key="{key}" data-system="{_e(who)}" '
                f'data-value="{value!r}" x="{x:.1f}" y="{plot.py(value):.1f}" '
                f'width="{bar * 0.9:.1f}" height="{plot.py(0) - plot.py(value):.1f}" '
                f'fill="{colour}"/>'
            )
            plot.add(_whisker(plot, x + bar * 0.45, report.intervals.get(key)))
    ticks = [(k + 0.5, f"{n}\n{first.bins[n].count:,} items") for k, n in enumerate(BINS)]
    return plot.svg("", label, ticks)


def curve_svg(systems: Mapping[str, ReportDocument], metric: str) -> str:
    first = next(iter(systems.values()))
    label = metric_label(metric, first.config.chrf_word_order)
    plot = _Plot(f"curve-{metric}", f"{label} by source exposure", (0, 1), SCORE_TICKS)
    for who, colour in _series(systems):
        report = first if who == "TM" else systems[who]
        points = []
        for band in report.curve:
            score = band.tm[metric] if who == "TM" else band.system[metric]
            ci = (band.tm_ci if who == "TM" else band.system_ci).get(metric)
            if math.isnan(score):
                continue
            x, y = plot.px(band.mean_source_exposure), plot.py(score)
            points.append(f"{x:.1f},{y:.1f}")
            plot.add(
                f'<circle class="point" data-system="{_e(who)}" cx="{x:.1f}" cy="{y:.1f}" '
                f'r="3" fill="{colour}"/>'
            )
            plot.add(_whisker(plot, x, ci))
        plot.add(
            f'<polyline class="line" data-system="{_e(who)}" points="{" ".join(points)}" '
            f'fill="none" stroke="{colour}" stroke-width="2"/>'
        )
    return plot.svg("mean source exposure of the band", label, EXPOSURE_TICKS)


def bins_table(systems: Mapping[str, ReportDocument]) -> str:
    """Each bin's count and share, and every system's and the TM's scores with
    their intervals."""
    first = next(iter(systems.values()))
    metrics = list(first.system)
    wo = first.config.chrf_word_order
    head = (
        "<tr><th>bin</th><th>items</th><th>share</th><th>system</th>"
        + "".join(f"<th>{_e(_score_name(m, metrics, wo))}</th><th>interval</th>" for m in metrics)
        + "</tr>"
    )
    rows = []
    items = first.summary.items
    for name in BINS:
        b = first.bins[name]
        swatch = (
            '<i class="swatch" style="display:inline-block;width:10px;height:10px;'
            f'margin-right:4px;background:{BIN_COLOURS[name]}"></i>'
        )
        lead = (
            f'<td>{swatch}{_e(name)}</td><td data-key="bin/{name}/count" '
            f'data-value="{b.count}">{b.count:,}</td><td>{rate_text(b.count / items)}</td>'
        )
        series = [who for who, _ in _series(systems)] if b.count else ["-"]
        for who in series:
            cells = []
            for m in metrics:
                if who == "-":
                    cells.append("<td>n/a</td><td>n/a</td>")
                    continue
                report = first if who == "TM" else systems[who]
                key = f"bin/{name}/{'tm_' if who == 'TM' else ''}{m}"
                value = (report.bins[name].tm if who == "TM" else report.bins[name].system)[m]
                cells.append(
                    _value_cell(value, score_text(value), key=key)
                    + _interval_cell(report.intervals.get(key))
                )
            rows.append(
                f'<tr data-bin="{name}" data-system="{_e(who)}">{lead}<td>{_e(who)}</td>'
                + "".join(cells)
                + "</tr>"
            )
    return f'<table id="bins">{head}{"".join(rows)}</table>'


def _scores_table(systems: Mapping[str, ReportDocument]) -> str:
    first = next(iter(systems.values()))
    metrics = list(first.system)
    wo = first.config.chrf_word_order
    fields = {name: report.fields() for name, report in systems.items()}
    one = len(systems) == 1
    rows = []
    for key, value in fields[next(iter(systems))].items():
        if key == "signature" or isinstance(value, str):
            continue
        cells = []
        for name, report in systems.items():
            v = fields[name][key]
            assert not isinstance(v, str)
            who = None if one else name
            cells.append(_value_cell(v, field_text(key, v), who))
            cells.append(_interval_cell(report.intervals.get(key), who))
        rows.append(
            f'<tr data-key="{_e(key)}"><td>{_e(field_label(key, metrics, wo))}</td>'
            f"<td><code>{_e(key)}</code></td>{''.join(cells)}</tr>"
        )
    if one:
        columns = "<th>value</th><th>interval</th>"
    else:
        columns = "".join(f"<th>{_e(n)}</th><th>interval</th>" for n in systems)
    head = f"<tr><th>score</th><th>field</th>{columns}</tr>"
    return f'<table id="scores">{head}{"".join(rows)}</table>'


def _significance(comparison: Comparison, systems: Mapping[str, ReportDocument]) -> str:
    s = comparison.settings
    first = next(iter(systems.values()))
    metrics = list(first.system)
    wo = first.config.chrf_word_order
    head = (
        "<tr><th>group</th><th>system</th><th>metric</th><th>score</th><th>interval</th>"
        "<th>delta</th><th>p</th></tr>"
    )
    rows = []
    for group, table in {"whole": comparison.whole, **comparison.bins}.items():
        prefix = "" if group == "whole" else f"bin/{group}/"
        for name, row in table.items():
            report = systems.get(name, first if name == "tm" else None)
            for metric, r in row.items():
                key = f"{prefix}{'tm_' if name == 'tm' else ''}{metric}"
                interval = report.intervals.get(key) if report is not None else None
                delta = r.delta if r.p_value is not None else None
                rows.append(
                    f'<tr data-group="{_e(group)}" data-system="{_e(name)}" '
                    f'data-metric="{_e(metric)}"><td>{_e(group)}</td><td>{_e(name)}</td>'
                    f"<td>{_e(_score_name(metric, metrics, wo))}</td>"
                    f"{_value_cell(r.score, score_text(r.score))}{_interval_cell(interval)}"
                    f"{_value_cell(delta, 'n/a' if delta is None else f'{delta:+.2f}')}"
                    f"{_value_cell(r.p_value, 'n/a' if r.p_value is None else f'{r.p_value:.4f}')}"
                    "</tr>"
                )
    title = (
        f"<p>p values: {_e(s['test'])} with {s['n_samples']:,} samples, seed {s['seed']}, "
        f"baseline <b>{_e(s['baseline'])}</b>. The intervals are the reports' (see above), "
        "not the paired test's own.</p>"
    )
    return (
        f'<h2>Paired significance</h2>{title}<table id="significance">{head}{"".join(rows)}</table>'
    )


def most_exposed(report: ReportDocument, top: int = MOST_EXPOSED) -> list[int]:
    """The ``top`` items of highest source exposure (the lower index first on ties)."""
    exposures = report.source_exposures
    return sorted(range(len(exposures)), key=lambda i: (-exposures[i], i))[:top]


def neighbour_texts(result: ItemizedReport, top: int = MOST_EXPOSED) -> dict[int, str]:
    """The nearest training source of each of the most exposed items (training
    text: for the page only when the user allows it)."""
    if result.train is None:
        return {}
    rows = {i: result.exposures[i].source[0].row for i in most_exposed(result.report, top)}
    texts = result.train.sources_at(sorted(set(rows.values())))
    return {i: texts[row] for i, row in rows.items()}


def _exposed(
    report: ReportDocument,
    sources: Sequence[str] | None,
    neighbours: Mapping[int, str] | None,
    texts: Mapping[str, Sequence[str]] | None,
) -> str:
    columns: list[tuple[str, Mapping[int, str] | Sequence[str]]] = []
    if sources is not None:
        columns.append(("test source", sources))
    if neighbours is not None:
        columns.append(("nearest training source", neighbours))
    columns += [(name, column) for name, column in (texts or {}).items() if name != "source"]
    head = "<tr><th>item</th><th>source exposure</th><th>bin</th>" + "".join(
        f'<th class="text">{_e(n)}</th>' for n, _ in columns
    )
    rows = []
    for i in most_exposed(report):
        exposure = float(report.source_exposures[i])
        cells = "".join(f'<td class="text">{_e(column[i])}</td>' for _, column in columns)
        rows.append(
            f'<tr data-item="{i}"><td>{i}</td>{_value_cell(exposure, exposure_text(exposure))}'
            f"<td>{_e(report.summary.item_bins[i])}</td>{cells}</tr>"
        )
    return f'<table id="exposed">{head}</tr>{"".join(rows)}</table>'


def _warnings(systems: Mapping[str, ReportDocument]) -> list[str]:
    """Every system's warnings, once each; one that only some systems have is
    prefixed with their names."""
    seen: dict[str, list[str]] = {}
    for name, report in systems.items():
        for warning in report.warnings:
            seen.setdefault(warning, []).append(name)
    if len(systems) == 1:
        return list(seen)
    return [
        w if len(names) == len(systems) else f"{', '.join(names)}: {w}" for w, names in seen.items()
    ]


def _signature(signature: str) -> str:
    """The signature, free to wrap after each ``|`` (and nowhere else unless a
    piece is wider than the page)."""
    return "|<wbr>".join(_e(piece) for piece in signature.split("|"))


def intervals_note(report: ReportDocument) -> str:
    c = report.config
    if c.n_bootstrap == 0:
        return "No intervals: the report was made with n_bootstrap 0."
    return (
        f"Every interval on this page is a {100 * c.confidence:g}% percentile bootstrap "
        f"interval of the report: {c.n_bootstrap:,} resamples of the test items (of a bin's "
        f"own items for its scores, of a band's for the curve), seed {c.seed}."
    )


def render_html(
    report: ReportDocument,
    comparison: Comparison | None = None,
    texts: Mapping[str, Sequence[str]] | None = None,
    title: str = "TAME report",
    *,
    sources: Sequence[str] | None = None,
    neighbours: Mapping[int, str] | None = None,
) -> str:
    """The whole page. With a ``comparison`` holding its systems' reports, every
    system is plotted and tabled side by side. ``sources``: the test sources
    (the user's own text), shown beside the most exposed items' exposures;
    ``neighbours``: their nearest training sources (training text, by item;
    only when the user allows it); ``texts``: other columns of raw text (for
    example ``{"reference": ...}``), only when asked for. A ``"source"`` column
    of ``texts`` stands for ``sources``."""
    if sources is None and texts and "source" in texts:
        sources = texts["source"]
    systems: dict[str, ReportDocument] = (
        dict(comparison.reports) if comparison is not None and comparison.reports else {}
    ) or {"system": report}
    first = next(iter(systems.values()))
    legend = "".join(
        f'<span><i style="background:{BIN_COLOURS[n]}"></i>{_e(n)} '
        f"({first.summary.bins[n]:,})</span>"
        for n in BINS
    )
    metrics = list(first.system)
    warnings = _warnings(systems)
    parts = [
        f"<h1>{_e(title)}</h1>",
        f"<p>{first.summary.items:,} test items against {first.data['num_train']:,} "
        f"training pairs{'; systems ' + _e(', '.join(systems)) if len(systems) > 1 else ''}.</p>",
        "<h2>Warnings</h2>",
        '<ul class="warnings">'
        + ("".join(f"<li>{_e(w)}</li>" for w in warnings) or '<li class="none">none</li>')
        + "</ul>",
        f'<p class="note" id="intervals-note">{_e(intervals_note(first))}</p>',
        "<h2>Source exposure</h2>",
        f'<div class="legend">{legend}</div>',
        histogram_svg(first),
        "<h2>Scores by bin</h2>",
        _series_legend(systems),
        *(bin_scores_svg(systems, m) for m in metrics),
        bins_table(systems),
        "<h2>Exposure curve</h2>",
        _series_legend(systems),
        *(curve_svg(systems, m) for m in metrics),
    ]
    if comparison is not None:
        parts.append(_significance(comparison, systems))
    parts += [
        "<h2>Every score</h2>",
        _scores_table(systems),
        f"<h2>The {MOST_EXPOSED} most exposed items</h2>",
        _exposed(first, sources, neighbours, texts),
        "<h2>Signature</h2>",
        f'<p><code id="signature">{_signature(first.signature)}</code></p>',
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(parts)
        + "</body></html>\n"
    )
