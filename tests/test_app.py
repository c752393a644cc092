"""The Space demo for real: ``app.py`` runs on localhost and headless Chromium
(Debian's chromium and chromedriver, driven by Selenium) scores the bundled
example; the numbers on the page (the headline, each bin's count and
intervals, the warnings) equal ``compute()``'s. The upload boxes show only
when uploads are chosen, with a file's name whole; a failed upload shows a
readable message. The screenshot goes to $TAME_MT_SCREENSHOT when set.

By default the app runs from this checkout with this interpreter;
$TAME_MT_SPACE_DIR and $TAME_MT_SPACE_PYTHON run it instead from another copy
of the repository with another interpreter (``.ci/check-space``: a clean copy
and a fresh environment built from requirements.txt, as the Hub builds a
Space)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait

import tame_mt_metric
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.exposure_summary import BINS
from tame_mt_metric.report.html import field_label, field_text
from tame_mt_metric.report.labels import score_text
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tame_mt_metric.space import BIN_COLOURS, BUCKETS, HEADLINE, LIMITS, example_inputs, run
from tests.browser import chromium
from tests.space_load import serve

REPO = Path(__file__).resolve().parent.parent
SPACE = Path(os.environ.get("TAME_MT_SPACE_DIR", REPO))
SPACE_PYTHON = os.environ.get("TAME_MT_SPACE_PYTHON", sys.executable)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve(tmp_path_factory.mktemp("space"), SPACE, SPACE_PYTHON) as app:
        yield app.url


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with chromium() as driver:
        yield driver


def _expected() -> dict[str, Any]:
    inputs = example_inputs()
    metric = tame_mt_metric.load(train=inputs["train"], keep_in_memory=True)
    out = metric.compute(
        predictions=inputs["predictions"],
        references=inputs["references"],
        sources=inputs["sources"],
        return_report=True,
    )
    return {k: field_text(k, out[k]) for k in HEADLINE} | {
        "signature": out["signature"],
        "report": out["report"],
    }


def _interval_text(interval: dict[str, float | None]) -> str:
    return f"[{score_text(interval['low'])}, {score_text(interval['high'])}]"


def test_the_bundled_example_on_the_page_equals_compute(
    url: str, browser: webdriver.Chrome
) -> None:
    browser.get(url)
    wait = WebDriverWait(browser, 120)
    wait.until(ready.element_to_be_clickable((By.ID, "score"))).click()
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#headline td[data-key]"))
    page = {
        cell.get_attribute("data-key"): cell.text
        for cell in browser.find_elements(By.CSS_SELECTOR, "#headline td[data-key]")
    }
    expected = _expected()
    report = expected["report"]
    for key in HEADLINE:
        assert page[key] == expected[key], key
    labels = [row.text for row in browser.find_elements(By.CSS_SELECTOR, "#headline td")]
    metrics = report["config"]["metrics"]
    word_order = report["config"]["chrf_word_order"]
    assert field_label("chrf", metrics, word_order) in labels  # chrF by its word order
    assert field_label("far_bleu", metrics, word_order) in labels  # says it is the far bin's
    warnings = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#warnings li")]
    assert warnings == report["warnings"] and warnings  # the near bin is small
    intervals = report["intervals"]["scores"]
    for b in report["bins"]:
        name = b["name"]
        count = browser.find_element(By.CSS_SELECTOR, f'#bins td[data-key="bin/{name}/count"]')
        assert count.text == f"{b['count']:,}"
        for key in (f"bin/{name}/{m}" for m in ("bleu", "chrf", "tm_bleu", "tm_chrf")):
            cells = browser.find_elements(By.CSS_SELECTOR, f'#bins td[data-key="{key}"]')
            assert len(cells) == (1 if b["count"] else 0), key
            for cell in cells:
                shown = cell.find_element(By.XPATH, "following-sibling::td[1]").text
                assert shown == _interval_text(intervals[key]), key
        assert f"{b['count']:,} items" in browser.find_element(By.ID, "bins").text
    signature = browser.find_element(By.CSS_SELECTOR, "#signature textarea").get_attribute("value")
    assert signature == expected["signature"]
    marks = browser.find_elements(By.CSS_SELECTOR, "#exposed mark")
    assert marks, "the shared stretches of the most exposed items are marked"
    links = [
        a.get_attribute("href") or ""
        for a in browser.find_elements(By.CSS_SELECTOR, "#html-report a")
    ]
    assert any(link.endswith("tame_report.html") for link in links), links
    if os.environ.get("TAME_MT_SCREENSHOT"):
        browser.save_screenshot(os.environ["TAME_MT_SCREENSHOT"])


LONG_NAME = "swahili_training_sources_of_the_bible_corpus_2024_edition.sw.txt"


def test_uploads_show_only_when_chosen_with_names_whole_and_a_missing_one_is_a_message(
    url: str, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    browser.get(url)
    wait = WebDriverWait(browser, 120)
    upload = wait.until(
        lambda b: b.find_element(By.XPATH, "//*[@id='source']//label[contains(., 'My own files')]")
    )
    wait.until(lambda b: b.find_element(By.ID, "score").is_displayed())
    page = browser.find_element(By.TAG_NAME, "body")
    assert "Drop File Here" not in page.text  # no upload box while the example is chosen
    assert not any(e.is_displayed() for e in browser.find_elements(By.ID, "limits"))
    upload.click()
    wait.until(lambda b: any(e.is_displayed() for e in b.find_elements(By.ID, "limits")))
    assert page.text.count("Drop File Here") == 5
    (tmp_path / LONG_NAME).write_text("a house\n", encoding="utf-8")
    browser.find_elements(By.CSS_SELECTOR, "#uploads input[type=file]")[0].send_keys(
        str(tmp_path / LONG_NAME)
    )
    name = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, "#uploads td.filename"))
    inside, gap, text = browser.execute_script(
        """const td = arguments[0], box = td.getBoundingClientRect();
        const rects = (node) => {
          const range = document.createRange(); range.selectNodeContents(node);
          return [...range.getClientRects()].filter(r => r.width > 0);
        };
        const stem = rects(td.querySelector('.stem')), ext = rects(td.querySelector('.ext'));
        return [[...stem, ...ext].every(r => r.left >= box.left - 1 && r.right <= box.right + 1),
                ext[0].left - stem[stem.length - 1].right,
                td.innerText.replace(/\\s+/g, '')];""",
        name,
    )
    # the whole name, none of it cut off, the extension right after the stem
    assert text == LONG_NAME and inside and abs(gap) < 1
    browser.find_element(By.ID, "score").click()
    wait.until(lambda b: "Could not score" in b.find_element(By.ID, "status").text)
    text = browser.find_element(By.ID, "status").text
    assert "test sources: no file uploaded" in text and "Traceback" not in browser.page_source


def test_an_upload_over_the_limit_is_refused_and_the_limit_shown(url: str) -> None:
    """The server refuses an upload past ``MAX_UPLOAD`` before reading it, and the
    page says what the limits are."""
    import httpx

    big = httpx.post(f"{url}gradio_api/upload", files={"files": ("big.txt", bytes(21 << 20))})
    assert big.status_code == 413 and "maximum allowed size" in big.text
    small = httpx.post(f"{url}gradio_api/upload", files={"files": ("small.txt", b"a house\n")})
    assert small.status_code == 200
    config = httpx.get(f"{url}config").json()
    assert config["max_file_size"] == 20 << 20
    assert LIMITS in json.dumps(config, ensure_ascii=False)
    (histogram,) = [
        c["props"] for c in config["components"] if c.get("props", {}).get("elem_id") == "histogram"
    ]
    # a numeric exposure axis, binned, in the HTML report's colours of the bins
    assert histogram["x_bin"] == 1 / BUCKETS and histogram["x_lim"] == [0, 1]
    assert histogram["color_map"] == BIN_COLOURS and set(BIN_COLOURS) == set(BINS)


def test_the_space_names_chrf_by_its_word_order() -> None:
    """No browser: the headline and the bins' table of a report made with
    chrF's word order 0 say chrF2, never chrF++."""
    inputs = example_inputs()
    train = inputs["train"]
    small = {
        "train": TrainingCorpus(train.sources[:300], train.targets[:300]),
        **{k: inputs[k][:40] for k in ("sources", "references", "predictions")},
    }
    for word_order, name, other in ((0, "chrF2", "chrF++"), (2, "chrF++", "chrF2")):
        shown = run(small, TameConfig(chrf_word_order=word_order, n_bootstrap=20))
        for part in (shown.headline_html(), shown.bins_html()):
            assert name in part and other not in part, (word_order, part)
        assert f"TM-{name}" in shown.headline_html()
