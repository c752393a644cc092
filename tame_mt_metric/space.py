"""What the Space demo (``app.py``) shows, computed without any UI: the report
of a system from uploaded files or the bundled example, its warnings, the
exposure histogram (in the bins' colours of the HTML report), each bin's count
and scores with their intervals, the most exposed items beside their
neighbours with the shared stretches marked, and the report files to
download. Scores are named and numbers written as on every human surface
(``report.labels``, ``report.html.field_label``)."""

from __future__ import annotations

import html
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rapidfuzz.distance import Indel

from tame_mt_metric.cache.entries import CacheOptions
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.errors import InputTextError
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.exposure_summary import BINS
from tame_mt_metric.report.html import (
    BIN_COLOURS,
    bin_scores_svg,
    bins_table,
    field_label,
    field_text,
    interval_text,
    neighbour_texts,
    render_html,
)
from tame_mt_metric.report.labels import exposure_text
from tame_mt_metric.report.pipeline import ItemizedReport, score_tame
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tame_mt_metric.retrieval.inputs import read_lines

__all__ = [
    "BIN_COLOURS",
    "BUCKETS",
    "CONCURRENCY",
    "EXAMPLE",
    "HEADLINE",
    "LIMITS",
    "MAX_QUEUE",
    "MAX_UPLOAD",
    "SpaceResult",
    "example_inputs",
    "highlight",
    "run",
    "simulated_system",
]

EXAMPLE = "Swahili -> Zulu Bible verses (bundled, CC0), simulated system"
# What a shared demo accepts, so that no upload can stall or exhaust it: each
# uploaded file (as sent, gzip or not; gradio refuses larger ones), the lines of
# each file and their text once decompressed (a gzip bomb stops at the bound).
MAX_UPLOAD = "20mb"
MAX_UPLOAD_LINES = 200_000
MAX_UPLOAD_TEXT = 100 << 20
# Requests scored at once, and requests that may wait: a later one is refused
# at once with gradio's "Queue is full" rather than left to wait without end.
CONCURRENCY = 1
MAX_QUEUE = 64
LIMITS = (
    f"Each upload: at most {MAX_UPLOAD.upper()} as sent, {MAX_UPLOAD_LINES:,} lines and "
    f"{MAX_UPLOAD_TEXT >> 20} MB of text once decompressed, lines of at most 1 MB. "
    "Larger corpora: the command line or the Python API."
)
# The flat fields the headline shows, named by ``field_label`` (chrF by its
# word order) and written by ``field_text``.
HEADLINE = (
    "bleu",
    "chrf",
    "tm_bleu",
    "tm_chrf",
    "delta_tm_bleu",
    "delta_tm_chrf",
    "source_exposure_mean",
    "target_exposure_mean",
    "pair_exposure_mean",
    "source_exact_rate",
    "pair_exact_rate",
    "pair_leak@0.70",
    "pair_leak@0.85",
    "far_bleu",
    "gen_gap_bleu",
)
BUCKETS = 20  # histogram buckets over [0, 1]
IN_MEMORY = CacheOptions(enabled=False)


def simulated_system(references: Sequence[str]) -> list[str]:
    """A stand-in system for the bundled example (it has no real system output):
    each reference with every fourth word dropped."""
    return [" ".join(w for i, w in enumerate(r.split()) if i % 4 != 3) for r in references]


def example_inputs() -> dict[str, Any]:
    data = example_corpus()
    return {
        "train": TrainingCorpus(data["train_sources"], data["train_targets"]),
        "sources": data["test_sources"],
        "references": data["references"],
        "predictions": simulated_system(data["references"]),
    }


def _read(name: str, path: str | None) -> list[str]:
    if not path:
        raise InputTextError(f"{name}: no file uploaded")
    return read_lines(path, name, MAX_UPLOAD_LINES, MAX_UPLOAD_TEXT)


def uploaded_inputs(
    train_src: str | None,
    train_tgt: str | None,
    test_src: str | None,
    references: Sequence[str] | None,
    hypotheses: str | None,
) -> dict[str, Any]:
    """Files as uploaded (plain or .gz); every error names the upload and line."""
    sources = _read("test sources", test_src)
    if not references:
        raise InputTextError("references: no file uploaded")
    refs = [
        _aligned(f"references {i + 1}", _read(f"references {i + 1}", path), sources)
        for i, path in enumerate(references)
    ]
    return {
        "train": TrainingCorpus(
            _read("training sources", train_src), _read("training targets", train_tgt)
        ),
        "sources": sources,
        "references": [list(r) for r in zip(*refs, strict=True)] if len(refs) > 1 else refs[0],
        "predictions": _aligned("hypotheses", _read("hypotheses", hypotheses), sources),
    }


def _aligned(name: str, lines: list[str], sources: list[str]) -> list[str]:
    """An upload of one line per test source, or an error naming it."""
    if len(lines) != len(sources):
        raise InputTextError(f"{name}: {len(lines)} lines, the test sources have {len(sources)}")
    return lines


def highlight(text: str, neighbour: str) -> tuple[str, str]:
    """Both texts as HTML, the stretches they share (Indel opcodes) in <mark>."""
    marked: tuple[list[str], list[str]] = ([], [])
    for op in Indel.opcodes(text, neighbour):
        for out, part in (
            (marked[0], text[op.src_start : op.src_end]),
            (marked[1], neighbour[op.dest_start : op.dest_end]),
        ):
            if part:
                escaped = html.escape(part)
                out.append(f"<mark>{escaped}</mark>" if op.tag == "equal" else escaped)
    return "".join(marked[0]), "".join(marked[1])


@dataclass(frozen=True)
class SpaceResult:
    result: ItemizedReport
    fields: dict[str, Any]
    histogram: list[dict[str, Any]]
    exposed_html: str
    report_file: Path
    segments_file: Path
    page_file: Path

    def headline_html(self) -> str:
        report = self.result.report
        metrics, word_order = list(report.system), report.config.chrf_word_order
        rows = []
        for key in HEADLINE:
            value = self.fields.get(key)
            if not isinstance(value, int | float):
                continue
            interval = report.intervals.get(key)
            rows.append(
                f"<tr><td>{html.escape(field_label(key, metrics, word_order))}</td>"
                f'<td data-key="{key}">{field_text(key, value)}</td>'
                f"<td>{interval_text(interval) if interval else ''}</td></tr>"
            )
        c = report.config
        head = f"<tr><th>score</th><th>value</th><th>{100 * c.confidence:g}% interval</th></tr>"
        return f'<table class="tame-headline">{head}{"".join(rows)}</table>'

    def warnings_html(self) -> str:
        warnings = self.result.report.warnings
        if not warnings:
            return '<p class="tame-warnings">No warnings.</p>'
        items = "".join(f"<li>{html.escape(w)}</li>" for w in warnings)
        return f'<ul class="tame-warnings"><b>Warnings</b>{items}</ul>'

    def bins_html(self) -> str:
        """Each bin's count, share and scores with their intervals, and the first
        metric's plot of them (system, TM), as on the HTML report."""
        report = self.result.report
        systems = {"system": report}
        metric = next(iter(report.system))
        return (
            '<div class="tame-bins" style="display:flex;flex-wrap:wrap;gap:1em;'
            'align-items:flex-start">'
            f"<div>{bin_scores_svg(systems, metric)}</div><div>{bins_table(systems)}</div></div>"
        )


def _histogram(result: ItemizedReport) -> list[dict[str, Any]]:
    """Items by source exposure (the lower bound of a bucket 1/BUCKETS wide, a
    number) and bin; every bucket and every bin has a row (zero where empty), so
    that the axis spans [0, 1] and the legend names every bin."""
    counts = {(b, name): 0 for b in range(BUCKETS) for name in BINS}
    for item, name in zip(result.exposures, result.report.summary.item_bins, strict=True):
        bucket = min(int(item.source[0].fraction * BUCKETS), BUCKETS - 1)
        counts[(bucket, name)] = counts.get((bucket, name), 0) + 1
    return [
        {"source exposure": b / BUCKETS, "items": n, "bin": name}
        for (b, name), n in sorted(counts.items())
    ]


def _exposed(result: ItemizedReport, inputs: dict[str, Any], show_text: bool, top: int = 8) -> str:
    train: TrainingCorpus = inputs["train"]
    order = sorted(
        range(len(result.exposures)), key=lambda i: -result.exposures[i].source[0].fraction
    )
    rows = []
    for i in order[:top]:
        best = result.exposures[i].source[0]
        if show_text:
            test, neighbour = highlight(inputs["sources"][i], train.sources[best.row])
        else:
            test, neighbour = "(text hidden)", "(text hidden)"
        rows.append(
            f"<tr><td>{i}</td><td>{exposure_text(best.score)}</td><td>{test}</td>"
            f"<td>{best.row}</td><td>{neighbour}</td></tr>"
        )
    names = ("item", "exposure", "test source", "row", "nearest training source")
    head = "<tr>" + "".join(f"<th>{name}</th>" for name in names) + "</tr>"
    return f'<table class="tame-exposed">{head}{"".join(rows)}</table>'


def run(inputs: dict[str, Any], config: TameConfig, show_text: bool = True) -> SpaceResult:
    """Score the inputs and prepare everything the page shows. Scored in memory,
    never through the package's cache: a shared demo keeps nothing of what a
    visitor uploads, and no answer (the report's ``audit_cached``) tells whether
    another visitor uploaded the same files."""
    result = score_tame(
        inputs["train"],
        inputs["predictions"],
        inputs["references"],
        inputs["sources"],
        config,
        cache=IN_MEMORY,
    )
    out = Path(tempfile.mkdtemp(prefix="tame-mt-space-"))
    report_file = out / "tame_report.json"
    report_file.write_text(
        json.dumps(result.report.as_json(), indent=1, allow_nan=False), encoding="utf-8"
    )
    segments_file = out / "tame_segments.jsonl"
    segments_file.write_text(
        "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in result.segments), encoding="utf-8"
    )
    page_file = out / "tame_report.html"
    neighbours = neighbour_texts(result) if show_text else None
    page = render_html(result.report, sources=inputs["sources"], neighbours=neighbours)
    page_file.write_text(page, encoding="utf-8")
    return SpaceResult(
        result,
        result.report.fields(),
        _histogram(result),
        _exposed(result, inputs, show_text),
        report_file,
        segments_file,
        page_file,
    )
