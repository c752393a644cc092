"""The HTML report in headless Chromium, as the Space is tested: the page loads
from a file with no console error and nothing fetched, its plots are drawn
(every compared system's, side by side), and every number in its tables
equals the JSON report's and the comparison's, with one interval convention
on the page. The CLI writes the same page. The screenshot goes to
$TAME_MT_REPORT_SCREENSHOT when set."""

from __future__ import annotations

import html
import json
import math
import os
import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from tame_mt_metric import TrainingCorpus, compare
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.exposure_summary import BINS
from tame_mt_metric.report.html import (
    BIN_COLOURS,
    MOST_EXPOSED,
    field_label,
    interval_text,
    most_exposed,
    render_html,
    round_ticks,
)
from tame_mt_metric.report.pipeline import score_tame
from tests.browser import chromium
from tests.test_cli import _train, cli, files  # noqa: F401  (the CLI's example files)


@pytest.fixture(scope="module")
def example() -> dict[str, list[str]]:
    return example_corpus()


@pytest.fixture(scope="module")
def compared(example: dict[str, list[str]]) -> Any:
    refs = example["references"]
    systems = {
        "a": [" ".join(r.split()[1:]) for r in refs],
        "b": [" ".join(r.split()[:-2]) for r in refs],
    }
    corpus = TrainingCorpus(example["train_sources"], example["train_targets"])
    return compare(
        systems, refs, example["test_sources"], corpus, "tm", n_samples=100, n_bootstrap=100
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with chromium() as driver:
        yield driver


def _value(cell: Any, name: str = "data-value") -> float:
    text = cell.get_attribute(name)
    return math.nan if text == "nan" else float(text)


def _same(a: float, b: float | int | str | None) -> bool:
    """Equal numbers, or both undefined (nan on the page, null or nan in the report)."""
    undefined = b is None or (isinstance(b, float) and math.isnan(b))
    return math.isnan(a) if undefined else a == b


def _interval(cell: Any) -> tuple[float, float]:
    return _value(cell, "data-low"), _value(cell, "data-high")


def test_the_page_draws_every_system_and_its_numbers_are_the_reports(
    compared: Any, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    reports = compared.reports
    first = reports["a"]
    page = render_html(first, compared)
    assert "<script" not in page and not re.search(r"(src|href)\s*=", page)
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    browser.get(path.as_uri())
    log = browser.get_log("browser")  # type: ignore[no-untyped-call]
    assert [e for e in log if e["level"] == "SEVERE"] == []

    bars = browser.find_elements(By.CSS_SELECTOR, "#histogram rect.bar")
    assert sum(int(b.get_attribute("data-count") or 0) for b in bars) == first.summary.items
    assert all(b.size["height"] > 0 and b.size["width"] > 0 for b in bars)
    assert {b.get_attribute("fill") for b in bars} <= set(BIN_COLOURS.values())
    filled = {n for n, b in first.bins.items() if b.count}
    for metric in first.system:
        shown = {
            (b.get_attribute("data-system"), b.get_attribute("data-key"))
            for b in browser.find_elements(By.CSS_SELECTOR, f"#bins-{metric} rect.bar")
        }
        want = {(s, f"bin/{n}/{metric}") for s in reports for n in filled}
        assert shown == want | {("TM", f"bin/{n}/tm_{metric}") for n in filled}
        assert browser.find_elements(By.CSS_SELECTOR, f"#bins-{metric} line.whisker")
        lines = browser.find_elements(By.CSS_SELECTOR, f"#curve-{metric} polyline.line")
        assert [line.get_attribute("data-system") for line in lines] == ["a", "b", "TM"]
        for name in ("a", "b", "TM"):
            points = browser.find_elements(
                By.CSS_SELECTOR, f'#curve-{metric} circle.point[data-system="{name}"]'
            )
            assert len(points) == len(first.curve)

    rows = browser.find_elements(By.CSS_SELECTOR, "#scores tr[data-key]")
    assert {r.get_attribute("data-key") for r in rows} == {
        k for k, v in first.fields().items() if not isinstance(v, str)
    }
    page_intervals: dict[tuple[str, str], tuple[float, float]] = {}
    for name, report in reports.items():
        fields, want = report.fields(), report.as_json()["intervals"]["scores"]
        for row in rows:
            key = row.get_attribute("data-key") or ""
            value, interval = row.find_elements(By.CSS_SELECTOR, f'td[data-system="{name}"]')
            assert _same(_value(value), fields[key]), key
            low, high = _interval(interval)
            page_intervals[(name, key)] = (low, high)
            if key not in want:
                assert math.isnan(low) and math.isnan(high), key
            else:
                assert _same(low, want[key]["low"]) and _same(high, want[key]["high"]), key

    # One interval convention: the significance table shows the reports' own
    # intervals, so a score's interval reads the same in every table.
    table = compared.as_dict()
    rows = browser.find_elements(By.CSS_SELECTOR, "#significance tr[data-group]")
    assert len(rows) == sum(3 * 2 for _ in ["whole", *table["bins"]])
    for row in rows:
        group, name, metric = (
            row.get_attribute(f"data-{a}") or "" for a in ("group", "system", "metric")
        )
        expected = (table["whole"] if group == "whole" else table["bins"][group])[name][metric]
        cells = row.find_elements(By.TAG_NAME, "td")[3:]
        score, delta, p = (_value(cells[k]) for k in (0, 2, 3))
        assert _same(score, expected["score"]) and _same(p, expected["p_value"])
        assert _same(delta, expected["delta"] if expected["p_value"] is not None else None)
        prefix = "" if group == "whole" else f"bin/{group}/"
        owner = "a" if name == "tm" else name  # the TM's intervals: in every report
        key = prefix + ("tm_" if name == "tm" else "") + metric
        assert _interval(cells[1]) == page_intervals[(owner, key)], (group, name, metric)
    note = browser.find_element(By.ID, "intervals-note").text
    assert "95% percentile bootstrap" in note and "100 resamples" in note and "12345" in note

    exposed = browser.find_elements(By.CSS_SELECTOR, "#exposed tr[data-item]")
    assert len(exposed) == MOST_EXPOSED
    values = [_value(r.find_elements(By.TAG_NAME, "td")[1]) for r in exposed]
    assert values == sorted(values, reverse=True)
    assert values[0] == max(float(e) for e in first.source_exposures)
    assert len(exposed[0].find_elements(By.TAG_NAME, "td")) == 3  # no text unless given
    assert browser.find_element(By.ID, "signature").text == first.signature
    if os.environ.get("TAME_MT_REPORT_SCREENSHOT"):
        browser.save_screenshot(os.environ["TAME_MT_REPORT_SCREENSHOT"])


def test_the_signature_wraps_only_at_its_bars(
    compared: Any, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    report = compared.reports["a"]
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    browser.get(path.as_uri())
    lines = browser.execute_script(
        """const code = document.getElementById('signature');
        const tops = new Set(); const split = [];
        for (const node of code.childNodes) {
          if (node.nodeType !== Node.TEXT_NODE) continue;
          const range = document.createRange(); range.selectNodeContents(node);
          const rects = [...range.getClientRects()];
          if (new Set(rects.map(r => r.top)).size > 1) split.push(node.textContent);
          rects.forEach(r => tops.add(r.top));
        }
        return [tops.size, split];"""
    )
    assert lines[0] > 1 and lines[1] == []  # several lines, no piece broken


def test_each_bin_shows_its_count_and_interval_and_the_warnings_are_first(
    compared: Any,
) -> None:
    report = compared.reports["b"]
    page = render_html(report)
    assert report.warnings  # the example's near bin is small
    warnings = page.index('<ul class="warnings">')
    assert warnings < page.index('<svg id="histogram"')
    for warning in report.warnings:
        assert f"<li>{warning}</li>" in page
    table = page[page.index('<table id="bins">') :]
    table = table[: table.index("</table>")]
    for name in BINS:
        b = report.bins[name]
        assert f'data-key="bin/{name}/count" data-value="{b.count}">{b.count:,}<' in table
        assert f"{b.count:,} items</tspan>" in page  # under the bin's bars
        if b.count:
            for m in report.system:
                for key in (f"bin/{name}/{m}", f"bin/{name}/tm_{m}"):
                    assert interval_text(report.intervals[key]) in table, key
                    assert interval_text(report.intervals[key]).startswith("[")
    assert "no items" in page  # the empty source_exact bin is said to be empty


def test_axis_ticks_are_round_numbers(compared: Any) -> None:
    assert round_ticks(123) == [0, 50, 100, 150]
    assert round_ticks(100, 5) == [0, 20, 40, 60, 80, 100]
    assert round_ticks(3, whole=True) == [0, 1, 2, 3]
    assert round_ticks(3) == [0, 0.5, 1, 1.5, 2, 2.5, 3]
    assert round_ticks(0.37) == [0, 0.1, 0.2, 0.3, 0.4]
    page = render_html(compared.reports["a"])
    for svg in re.findall(r"<svg.*?</svg>", page):
        ticks = [float(v) for v in re.findall(r'class="ytick"[^>]*>([^<]+)<', svg)]
        steps = {round(b - a, 9) for a, b in pairwise(ticks)}
        assert ticks[0] == 0 and len(steps) == 1, ticks
        (step,) = steps
        assert round(step / 10 ** math.floor(math.log10(step)), 9) in {1, 2, 5}, ticks
    assert "30.75" not in page and "92.25<" not in page  # the old quarter ticks


def test_a_chrf_score_is_named_by_its_word_order(example: dict[str, list[str]]) -> None:
    corpus = TrainingCorpus(example["train_sources"][:300], example["train_targets"][:300])
    refs = example["references"][:40]
    config = TameConfig(chrf_word_order=0, n_bootstrap=20)
    result = score_tame(corpus, refs, refs, example["test_sources"][:40], config)
    page = render_html(result.report)
    assert "chrF++" not in page and "chrF2" in page
    metrics = list(result.report.system)
    assert field_label("chrf", metrics, 0) == "chrF2"
    assert field_label("chrf", metrics, 2) == "chrF++"
    assert field_label("tm_chrf", metrics, 2) == "TM-chrF++"
    both = [*metrics, "chrf++"]
    assert field_label("chrf++", both, 2) != field_label("chrf", both, 2)
    # a number shown twice says so under both names
    assert "far bin" in field_label("far_bleu", metrics, 2)
    assert "Far-BLEU" in field_label("bin/far/bleu", metrics, 2)


def test_text_appears_only_when_given_and_escaped(compared: Any) -> None:
    report = compared.reports["b"]
    plain = render_html(report)
    assert "Paired significance" not in plain
    sources = ["<b>x & y</b>"] * report.summary.items
    page = render_html(report, sources=sources)
    assert "&lt;b&gt;x &amp; y&lt;/b&gt;" in page and "<b>x & y</b>" not in page
    assert "<b>x" not in plain and "test source" in page
    assert "nearest training source" not in page
    neighbours = {i: f"training line {i}" for i in most_exposed(report)}
    page = render_html(report, sources=sources, neighbours=neighbours)
    assert "nearest training source" in page
    assert all(f'<td class="text">{text}</td>' in page for text in neighbours.values())


def _exposed_rows(page: str) -> list[tuple[str, str]]:
    table = page[page.index('<table id="exposed">') :]
    return re.findall(r'<tr data-item="(\d+)">(.*?)</tr>', table[: table.index("</table>")])


def test_the_cli_page_shows_the_test_source_and_neighbours_only_when_allowed(
    files: dict[str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    test: list[str | Path] = ["--test-src", files["test_src"], "--ref", files["ref"]]
    test += ["--hyp", files["hyp"], "--quiet", "--n-bootstrap", "20"]
    for name, extra in (("plain", []), ("neighbours", ["--include-neighbor-text"])):
        cli(
            "score",
            *_train(files),
            *test,
            *extra,
            "--html-out",
            tmp_path / f"{name}.html",
            "--json-out",
            tmp_path / f"{name}.json",
            "--segment-out",
            tmp_path / f"{name}.jsonl",
        )
    sources = files["test_src"].read_text(encoding="utf-8").splitlines()
    segments = [
        json.loads(line) for line in (tmp_path / "neighbours.jsonl").read_text().splitlines()
    ]
    for name in ("plain", "neighbours"):
        page = (tmp_path / f"{name}.html").read_text(encoding="utf-8")
        report = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        match = re.search(r'<tr data-key="bleu">.*?<td data-value="([^"]+)"', page)
        assert match and float(match.group(1)) == report["quality"]["system"]["bleu"]
        assert report["signature"] in page.replace("|<wbr>", "|")
        rows = _exposed_rows(page)
        assert len(rows) == 20
        for item, cells in rows:
            texts = re.findall(r'<td class="text">(.*?)</td>', cells)
            assert texts[0] == html.escape(sources[int(item)])  # the test source, always
            neighbour = html.escape(segments[int(item)]["source_nn_text"])
            if name == "plain":
                assert len(texts) == 1 and (neighbour not in page or neighbour == texts[0])
            else:
                assert texts[1] == neighbour
        assert ("nearest training source" in page) == (name == "neighbours")


def test_compare_writes_one_page_with_both_systems(
    files: dict[str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    cli(
        "compare",
        *_train(files),
        "--test-src",
        files["test_src"],
        "--ref",
        files["ref"],
        "--system",
        f"a={files['hyp']}",
        "--system",
        f"b={files['hyp_b']}",
        "--paired-n",
        "50",
        "--n-bootstrap",
        "20",
        "--html-out",
        tmp_path / "compare.html",
        "--quiet",
    )
    page = (tmp_path / "compare.html").read_text(encoding="utf-8")
    for name in ("a", "b", "TM"):
        assert f'class="line" data-system="{name}"' in page
        assert re.search(rf'rect class="bar" data-key="bin/\w+/\w+" data-system="{name}"', page)
    assert 'data-system="b" data-value' in page  # b's column in the table of every score
    assert "Paired significance" in page and "TAME report: a, b" in page
