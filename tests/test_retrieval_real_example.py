"""The bundled real corpus (Swahili -> Zulu Bible verses): both strategies
against the brute-force reference, and the main job end to end."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tame_mt_metric import RetrievalConfig, find_exposures
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.report.exposure_summary import summarize
from tame_mt_metric.retrieval.reference import brute_force_exposures

SAMPLE = slice(0, 400, 8)  # 50 items keep the brute force quick


@pytest.fixture(scope="module")
def corpus() -> dict[str, list[str]]:
    return example_corpus()


def test_bundled_corpus_shape(corpus: dict[str, list[str]]) -> None:
    assert len(corpus["train_sources"]) == len(corpus["train_targets"]) == 3635
    assert len(corpus["test_sources"]) == len(corpus["references"]) == 400


@pytest.mark.parametrize("strategy", ["indexed", "streaming"])
def test_core_equals_brute_force_on_real_text(corpus: dict[str, list[str]], strategy: str) -> None:
    config = RetrievalConfig(strategy=strategy, top_k=3, block_rows=1000)  # type: ignore[arg-type]
    test = corpus["test_sources"][SAMPLE]
    refs = corpus["references"][SAMPLE]
    args = (corpus["train_sources"], corpus["train_targets"], test, refs)
    got = find_exposures(*args, config=config)
    want = brute_force_exposures(*args, config=config)
    assert got.items == want.items


def test_strategies_and_threads_agree_on_the_full_example(corpus: dict[str, list[str]]) -> None:
    runs = [
        find_exposures(config=RetrievalConfig(strategy=s, threads=t), **corpus)
        for s in ("indexed", "streaming")
        for t in (1, 2)
    ]
    assert all(r.items == runs[0].items for r in runs)
    summary = summarize(runs[0])
    # Luke shares passages with Matthew and Mark: all four bins but the exact one
    # are populated, and most items are far (the common case in practice).
    assert summary.bins["near"] > 0 and summary.bins["medium"] > 0
    assert summary.bins["far"] > summary.items // 2


def test_main_job_prints_the_summary() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tame_mt_metric.demo", "--threads", "1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for needle in ("source exposure (mean)", "PairLeak@0.85", "TM-BLEU", "far", "signature"):
        assert needle in out
