"""The strategy ``auto`` picks: the cost model's inputs (the core's posting volumes
against the brute force), its choices, and the path that uses it."""

from __future__ import annotations

import gc
import json
import logging
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tame_mt_metric import RetrievalConfig, TameConfig
from tame_mt_metric.cache.entries import CacheOptions
from tame_mt_metric.report.pipeline import score_tame
from tame_mt_metric.retrieval import reference
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tame_mt_metric.retrieval.exposure import TrainingIndex
from tame_mt_metric.retrieval.strategy import choose_strategy, estimate
from tests.strategies import corpus, held_out
from tests.test_cli import cli


def _volume(
    train: list[tuple[str, str]], sources: list[str], refs: list[list[str]], config: RetrievalConfig
) -> tuple[int, int]:
    """The posting volumes by definition: each gram's list holds the distinct
    normalised texts of a side that contain it."""

    def texts(side: list[str]) -> list[frozenset[str]]:
        flags = config.normalization_flags()
        distinct = {reference.normalize(t, **flags) for t in side}
        return [reference.grams(t, config.ngram_orders) for t in distinct]

    def df(side: list[frozenset[str]], grams: frozenset[str]) -> int:
        return sum(len(grams & t) for t in side)

    def of(text: str) -> frozenset[str]:
        return reference.grams(
            reference.normalize(text, **config.normalization_flags()), config.ngram_orders
        )

    source_side, target_side = texts([s for s, _ in train]), texts([t for _, t in train])
    query = sum(df(source_side, of(s)) for s in sources)
    query += sum(df(target_side, of(r)) for item in refs for r in item)
    return query, sum(map(len, source_side)) + sum(map(len, target_side))


@given(corpus().flatmap(lambda train: st.tuples(st.just(train), held_out(train))), st.booleans())
def test_search_volume_equals_its_definition(
    drawn: tuple[list[tuple[str, str]], list[tuple[str, str]]], lowercase: bool
) -> None:
    train, test = drawn
    config = RetrievalConfig(ngram_orders=(2, 3), lowercase=lowercase)
    index = TrainingIndex.build([s for s, _ in train], [t for _, t in train], config)
    sources, refs = [s for s, _ in test], [[r] for _, r in test]
    assert index.search_volume(sources, refs) == _volume(train, sources, refs, config)


def test_the_model_searches_few_items_and_streams_many() -> None:
    auto = RetrievalConfig()
    # Figures of the synthetic corpus at 10^6 pairs (benchmarks/bench_strategy.py).
    index_postings, per_item = 651_498_773, 53_400_000
    few = choose_strategy(auto, 10**6, 32, (32 * per_item, index_postings))
    many = choose_strategy(auto, 10**6, 2000, (2000 * per_item, index_postings))
    assert (few.strategy, many.strategy) == ("indexed", "streaming")
    assert "postings" in few.reason and "modelled" in many.reason
    small = estimate(32 * per_item, index_postings, 32)
    assert small.indexed_s < small.streaming_s


def test_asked_for_and_index_free_choices() -> None:
    for strategy in ("indexed", "streaming"):
        got = choose_strategy(RetrievalConfig(strategy=strategy), 10, 5, (10**9, 1))
        assert got.strategy == strategy and "asked for" in got.reason
    assert choose_strategy(RetrievalConfig(), 10, 11).strategy == "indexed"
    assert choose_strategy(RetrievalConfig(), 10, 10).strategy == "streaming"


def _pairs(n: int) -> tuple[list[str], list[str]]:
    words = [
        "house",
        "tree",
        "river",
        "stone",
        "cloud",
        "bread",
        "candle",
        "window",
        "garden",
        "letter",
    ]
    sources = [f"the {words[i % 9]} near the {words[(i * 7) % 9]} number {i}" for i in range(n)]
    return sources, [s.upper() for s in sources]


def test_an_index_at_hand_is_searched_or_streamed_by_the_model(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """With an index at hand, a one-item test set is searched and a test set of
    every row streamed, as the model says; the answers are the same."""
    sources, targets = _pairs(400)
    train = TrainingCorpus(sources, targets)
    index = TrainingIndex.build(sources, targets)
    off = CacheOptions(enabled=False)
    caplog.set_level(logging.INFO, logger="tame_mt_metric")
    few = score_tame(train, targets[:1], targets[:1], sources[:1], cache=off, index=index)
    many = score_tame(train, targets, targets, sources, cache=off, index=index)
    assert few.report.backend["strategy"] == "indexed"
    assert many.report.backend["strategy"] == "streaming"
    assert many.exposures.items[:1] == few.exposures.items
    notes = [r.getMessage() for r in caplog.records if r.getMessage().startswith("strategy:")]
    assert notes[0].startswith("strategy: indexed (an index is at hand; modelled search")
    assert notes[1].startswith("strategy: streaming (an index is at hand; modelled search")
    asked = TameConfig(strategy="indexed")
    searched = score_tame(train, targets, targets, sources, asked, cache=off, index=index)
    assert searched.report.backend["strategy"] == "indexed"
    assert searched.exposures.items == many.exposures.items


def test_the_collector_and_the_switch_interval_are_back_as_they_were() -> None:
    sources, targets = _pairs(20)
    train, off = TrainingCorpus(sources, targets), CacheOptions(enabled=False)
    assert gc.isenabled()
    interval = sys.getswitchinterval()
    result = score_tame(train, targets, targets, sources, cache=off)
    assert gc.isenabled()
    assert sys.getswitchinterval() == interval
    result.report.as_json()  # intervals and curve, made on first use
    assert gc.isenabled()
    gc.disable()
    try:
        score_tame(train, targets, targets, sources, cache=off)
        assert not gc.isenabled()
    finally:
        gc.enable()


def _write_files(folder: Path) -> None:
    """300 training pairs and a test set of 40 of them, as the command line reads them."""
    sources, targets = _pairs(300)
    (folder / "train.src").write_text("\n".join(sources) + "\n")
    (folder / "train.tgt").write_text("\n".join(targets) + "\n")
    (folder / "test.src").write_text("\n".join(sources[:40]) + "\n")
    (folder / "test.ref").write_text("\n".join(targets[:40]) + "\n")


def test_the_command_line_shows_the_choice_it_made(tmp_path: Path) -> None:
    """``audit --index --verbose`` names the strategy it chose and why, and the
    report says the same."""
    _write_files(tmp_path)
    train: list[str | Path] = ["--train-src", tmp_path / "train.src"]
    train += ["--train-tgt", tmp_path / "train.tgt"]
    cli("index", "build", *train, "--out", tmp_path / "index", "--quiet")
    test: list[str | Path] = ["--test-src", tmp_path / "test.src", "--ref", tmp_path / "test.ref"]
    done = cli(
        "audit",
        "--index",
        tmp_path / "index",
        *test,
        "--json-out",
        tmp_path / "a.json",
        "--quiet",
        "--verbose",
        env={"TAME_MT_CACHE": str(tmp_path / "cache")},
    )
    chosen = json.loads((tmp_path / "a.json").read_text())["backend"]["strategy"]
    assert f"[strategy: {chosen} (an index is at hand; modelled search" in done.stderr


def test_the_command_line_shows_how_each_block_was_audited(tmp_path: Path) -> None:
    """``audit --strategy streaming --verbose`` says how many of the pass's blocks
    counted every test text's overlap and how many probed by prefixes."""
    _write_files(tmp_path)
    done = cli(
        "audit",
        "--train-src",
        tmp_path / "train.src",
        "--train-tgt",
        tmp_path / "train.tgt",
        "--test-src",
        tmp_path / "test.src",
        "--ref",
        tmp_path / "test.ref",
        "--strategy",
        "streaming",
        "--quiet",
        "--verbose",
        env={"TAME_MT_CACHE": str(tmp_path / "cache")},
    )
    said = re.search(
        r"streaming pass: (\d+) of (\d+) blocks counted every test text's overlap at once, "
        r"(\d+) probed each text by its prefix",
        done.stderr,
    )
    assert said is not None, done.stderr
    overlaps, blocks, prefixes = map(int, said.groups())
    assert blocks == 1 and overlaps + prefixes == blocks, said.group(0)
