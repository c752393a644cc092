"""The Space demo for real: ``app.py`` runs on localhost and headless Chromium
(Debian's chromium and chromedriver, driven by Selenium) scores the bundled
example; the numbers on the page equal ``compute()``'s. A failed upload shows
a readable message. The screenshot goes to $TAME_MT_SCREENSHOT when set.

By default the app runs from this checkout with this interpreter;
$TAME_MT_SPACE_DIR and $TAME_MT_SPACE_PYTHON run it instead from another copy
of the repository with another interpreter (``.ci/check-space``: a clean copy
and a fresh environment built from requirements.txt, as the Hub builds a
Space)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait

import tame_mt_metric
from tame_mt_metric.space import HEADLINE, LIMITS, PERCENT, example_inputs
from tests.browser import chromium

REPO = Path(__file__).resolve().parent.parent
SPACE = Path(os.environ.get("TAME_MT_SPACE_DIR", REPO))
SPACE_PYTHON = os.environ.get("TAME_MT_SPACE_PYTHON", sys.executable)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = _free_port()
    env = {
        **os.environ,
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    app = subprocess.Popen(
        [SPACE_PYTHON, "app.py"],
        cwd=SPACE,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert app.poll() is None, app.communicate()[0]
                time.sleep(0.5)
        else:
            raise AssertionError("the app did not start in 120 s")
        yield f"http://127.0.0.1:{port}/"
    finally:
        app.terminate()
        app.communicate(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with chromium() as driver:
        yield driver


def _expected() -> dict[str, str]:
    inputs = example_inputs()
    metric = tame_mt_metric.load(train=inputs["train"], keep_in_memory=True)
    out = metric.compute(
        predictions=inputs["predictions"],
        references=inputs["references"],
        sources=inputs["sources"],
    )
    shown = {k: f"{100 * out[k]:.2f}%" if k in PERCENT else f"{out[k]:.2f}" for k, _ in HEADLINE}
    return {**shown, "signature": out["signature"]}


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
    for key, _ in HEADLINE:
        assert page[key] == expected[key], key
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


def test_a_missing_upload_is_a_message_not_a_traceback(url: str, browser: webdriver.Chrome) -> None:
    browser.get(url)
    wait = WebDriverWait(browser, 120)
    upload = wait.until(
        lambda b: b.find_element(By.XPATH, "//*[@id='source']//label[contains(., 'My own files')]")
    )
    upload.click()
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
