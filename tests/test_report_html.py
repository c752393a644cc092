"""The HTML report in headless Chromium, as the Space is tested: the page loads
from a file with no console error and nothing fetched, its plots are drawn,
and every number in its tables equals the JSON report's and the comparison's.
The CLI writes the same page. The screenshot goes to $TAME_MT_REPORT_SCREENSHOT
when set."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from tame_mt_metric import TrainingCorpus, compare
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.report.html import MOST_EXPOSED, render_html
from tests.browser import chromium
from tests.test_cli import _train, cli, files  # noqa: F401  (the CLI's example files)


@pytest.fixture(scope="module")
def compared() -> Any:
    example = example_corpus()
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


def _value(cell: Any) -> float:
    text = cell.get_attribute("data-value")
    return math.nan if text == "nan" else float(text)


def _same(a: float, b: float | int | str | None) -> bool:
    """Equal numbers, or both undefined (nan on the page, null or nan in the report)."""
    undefined = b is None or (isinstance(b, float) and math.isnan(b))
    return math.isnan(a) if undefined else a == b


def test_the_page_draws_its_plots_and_its_numbers_are_the_reports(
    compared: Any, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    report = compared.reports["a"]
    page = render_html(report, compared)
    assert "<script" not in page and not re.search(r"(src|href)\s*=", page)
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    browser.get(path.as_uri())
    log = browser.get_log("browser")  # type: ignore[no-untyped-call]
    assert [e for e in log if e["level"] == "SEVERE"] == []

    bars = browser.find_elements(By.CSS_SELECTOR, "#histogram rect.bar")
    assert sum(int(b.get_attribute("data-count") or 0) for b in bars) == report.summary.items
    assert all(b.size["height"] > 0 and b.size["width"] > 0 for b in bars)
    for metric in report.system:
        shown = {
            b.get_attribute("data-key")
            for b in browser.find_elements(By.CSS_SELECTOR, f"#bins-{metric} rect.bar")
        }
        filled = {n for n, b in report.bins.items() if b.count}
        assert shown == {f"bin/{n}/{w}" for n in filled for w in (metric, f"tm_{metric}")}
        assert browser.find_elements(By.CSS_SELECTOR, f"#bins-{metric} line.whisker")
        lines = browser.find_elements(By.CSS_SELECTOR, f"#curve-{metric} polyline.line")
        assert len(lines) == 2
        points = browser.find_elements(By.CSS_SELECTOR, f"#curve-{metric} circle.point")
        assert len(points) == 2 * len(report.curve)

    want = report.as_json()
    fields = report.fields(confidence_intervals=True)
    rows = browser.find_elements(By.CSS_SELECTOR, "#scores tr[data-key]")
    assert {r.get_attribute("data-key") for r in rows} == {
        k for k, v in report.fields().items() if not isinstance(v, str)
    }
    for row in rows:
        key = row.get_attribute("data-key")
        value, low, high = (_value(c) for c in row.find_elements(By.TAG_NAME, "td")[1:])
        assert _same(value, fields[key]), key
        interval = want["intervals"]["scores"].get(key)
        if interval is None:
            assert math.isnan(low) and math.isnan(high), key
        else:
            assert _same(low, interval["low"]) and _same(high, interval["high"]), key
    assert (
        _value(browser.find_element(By.CSS_SELECTOR, '#scores tr[data-key="bleu"] td:nth-child(2)'))
        == want["quality"]["system"]["bleu"]
    )

    table = compared.as_dict()
    rows = browser.find_elements(By.CSS_SELECTOR, "#significance tr[data-group]")
    assert len(rows) == sum(3 * 2 for _ in ["whole", *table["bins"]])
    for row in rows:
        group, name = row.get_attribute("data-group"), row.get_attribute("data-system")
        metric = row.get_attribute("data-metric")
        expected = (table["whole"] if group == "whole" else table["bins"][group])[name][metric]
        score, low, high, delta, p = (_value(c) for c in row.find_elements(By.TAG_NAME, "td")[3:])
        assert _same(score, expected["score"]) and _same(p, expected["p_value"])
        assert _same(low, expected["ci_low"]) and _same(high, expected["ci_high"])
        assert _same(delta, expected["delta"] if expected["p_value"] is not None else None)

    exposed = browser.find_elements(By.CSS_SELECTOR, "#exposed tr[data-item]")
    assert len(exposed) == MOST_EXPOSED
    values = [_value(r.find_elements(By.TAG_NAME, "td")[1]) for r in exposed]
    assert values == sorted(values, reverse=True)
    assert values[0] == max(float(e) for e in report.source_exposures)
    assert len(exposed[0].find_elements(By.TAG_NAME, "td")) == 3  # no text unless given
    assert browser.find_element(By.ID, "signature").text == report.signature
    if os.environ.get("TAME_MT_REPORT_SCREENSHOT"):
        browser.save_screenshot(os.environ["TAME_MT_REPORT_SCREENSHOT"])


def test_text_appears_only_when_given_and_escaped(compared: Any) -> None:
    report = compared.reports["b"]
    plain = render_html(report)
    assert "Paired significance" not in plain
    sources = ["<b>x & y</b>"] * report.summary.items
    page = render_html(report, texts={"source": sources})
    assert "&lt;b&gt;x &amp; y&lt;/b&gt;" in page and "<b>x & y</b>" not in page
    assert "<b>x" not in plain


def test_the_cli_writes_the_page_of_its_report(files: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    test: list[str | Path] = ["--test-src", files["test_src"], "--ref", files["ref"]]
    test += ["--hyp", files["hyp"]]
    cli(
        "score",
        *_train(files),
        *test,
        "--html-out",
        tmp_path / "r.html",
        "--quiet",
        "--json-out",
        tmp_path / "r.json",
        "--include-source-text",
    )
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    import json

    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    match = re.search(r'<tr data-key="bleu"><td>bleu</td><td data-value="([^"]+)"', page)
    assert match and float(match.group(1)) == report["quality"]["system"]["bleu"]
    assert "<th>source</th>" in page and report["signature"] in page
