"""Decontamination at scale: shards judged apart and merged, in this process and
as Ray tasks (local mode), give the one-process answer exactly (removed rows and
matches, counts, fingerprint, signature), which is the brute force's, on random
corpora and on real data; and the command with ``--engine ray`` writes the same
bytes as with ``--engine local``.

Shards start on multiples of ``SHARD_ALIGN``, the core's fingerprint block
(1,024 rows, fixed in the core), so the corpora here span a few blocks, with
leaks planted on both sides of each cut."""

from __future__ import annotations

import gzip
import random
from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import datasets
import pytest
import ray

import tame_mt_metric
from tame_mt_metric import Decontamination, RetrievalConfig, TameConfig, TrainingCorpus
from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.retrieval.decontaminate import (
    RULES,
    DecontaminationRequest,
    decontaminate,
    evaluation_sets,
)
from tame_mt_metric.retrieval.reference import brute_force_decontaminate
from tame_mt_metric.scale.decontamination import decontaminate_shard, merge_decontaminations
from tame_mt_metric.scale.ray_engine import ray_decontaminate
from tame_mt_metric.scale.shards import SHARD_ALIGN, shard_ranges
from tests.strategies import ALPHABET
from tests.test_decontaminate import DATA, _flores, _lines, _near_copy

# Three blocks, the last one short; leaks just before and after each cut.
ROWS = 2 * SHARD_ALIGN + 300
BOUNDARIES = (SHARD_ALIGN - 1, SHARD_ALIGN, 2 * SHARD_ALIGN - 1, 2 * SHARD_ALIGN, ROWS - 1)
CONFIG = RetrievalConfig(ngram_orders=(2, 3), block_rows=97, threads=1)

Corpus = tuple[list[str], list[str]]
Tests = tuple[dict[str, list[str]], dict[str, list[list[str]]]]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET[:8]) for _ in range(rng.randint(0, 9)))


def _random_case(seed: int) -> tuple[Corpus, Tests]:
    """Random texts over a small alphabet (many near matches), two test sets whose
    items are fresh, copied or edited training pairs, and the items' pairs planted
    again around the shard cuts."""
    rng = random.Random(seed)
    sources = [_text(rng) for _ in range(ROWS)]
    targets = [_text(rng) for _ in range(ROWS)]
    tests: dict[str, list[str]] = {}
    refs: dict[str, list[list[str]]] = {}
    for name in ("dev", "devtest"):
        items = []
        for _ in range(8):
            j = rng.randrange(ROWS)
            kind = rng.choice(("fresh", "copy", "edit"))
            x, r = (_text(rng), _text(rng)) if kind == "fresh" else (sources[j], targets[j])
            if kind == "edit":
                x, r = x + rng.choice(ALPHABET), r[1:]
            items.append((x, [r, _text(rng)]))
        tests[name] = [x for x, _ in items]
        refs[name] = [r for _, r in items]
    for k, row in enumerate(BOUNDARIES):
        name = ("dev", "devtest")[k % 2]
        sources[row] = tests[name][k % 8] if k % 3 != 1 else _text(rng)
        targets[row] = refs[name][k % 8][0] if k % 3 != 0 else _text(rng)
    return (sources, targets), (tests, refs)


def _real_case() -> tuple[Corpus, Tests]:
    """The bundled Swahili-Zulu Bible pairs (3,635 rows) with FLORES-200 dev
    Swahili-Zulu pairs planted every 120 rows (exact and near copies, on one side
    or both) and at the shard cuts; against dev and devtest."""
    train_sw = _lines(DATA / "bible_sw_zu" / "train.sw.gz")
    train_zu = _lines(DATA / "bible_sw_zu" / "train.zu.gz")
    sources, references = _flores()
    swahili, zulu = sources["dev.swh_Latn-zul_Latn"], references["dev.swh_Latn-zul_Latn"]
    rows = sorted({*range(7, len(train_sw), 120), *BOUNDARIES})
    for k, row in enumerate(rows):
        i = k % len(swahili)
        if k % 4 != 3:
            train_sw[row] = swahili[i] if k % 2 else _near_copy(swahili[i])
        if k % 4 != 2:
            train_zu[row] = zulu[i] if k % 3 else _near_copy(zulu[i])
    names = ("dev.swh_Latn-zul_Latn", "devtest.swh_Latn-zul_Latn")
    tests = {name: sources[name] for name in names}
    refs = {name: [[r] for r in references[name]] for name in names}
    return (train_sw, train_zu), (tests, refs)


CASES = {"random0": lambda: _random_case(0), "random1": lambda: _random_case(1), "real": _real_case}
THRESHOLDS = {"random0": Fraction(1, 2), "random1": Fraction(1), "real": Fraction(7, 10)}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> tuple[str, Corpus, Tests]:
    corpus, tests = CASES[request.param]()
    return request.param, corpus, tests


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _one_process(corpus: Corpus, tests: Tests, t: Fraction, by: str) -> Decontamination:
    train = {"source": corpus[0], "target": corpus[1]}
    return decontaminate(train, *tests, threshold=t, by=by, config=CONFIG, progress=False)


def _in_shards(
    corpus: Corpus, tests: Tests, t: Fraction, by: str, ranges: list[tuple[int, int]]
) -> Decontamination:
    train = TrainingCorpus(*corpus)
    request = DecontaminationRequest.of(*tests, t, by)
    parts = [
        decontaminate_shard(train.blocks(CONFIG.block_rows, a, b), a, request, CONFIG)
        for a, b in ranges
    ]
    return merge_decontaminations(list(reversed(parts)), request, CONFIG)  # any order


def _same(a: Decontamination, b: Decontamination) -> None:
    assert a.removed == b.removed
    assert a.removed_by_rule == b.removed_by_rule
    assert (a.num_rows, a.fingerprint, a.signature) == (b.num_rows, b.fingerprint, b.signature)
    assert a.summary() == b.summary() and a.kept_indices == b.kept_indices


@pytest.mark.parametrize("by", RULES)
def test_shards_merge_to_one_process_and_the_brute_force(
    case: tuple[str, Corpus, Tests], by: str
) -> None:
    """Every rule: one shard, one per block, cuts of uneven size, and more shards
    asked than there are blocks all give the one-process answer, the brute force's."""
    name, corpus, tests = case
    t = THRESHOLDS[name]
    whole = _one_process(corpus, tests, t, by)
    rows = len(corpus[0])
    blocks = -(-rows // SHARD_ALIGN)
    assert len(shard_ranges(rows, 50)) == blocks
    cuts = [
        shard_ranges(rows, 1),
        shard_ranges(rows, 2),
        shard_ranges(rows, 50),
        [(0, SHARD_ALIGN), (SHARD_ALIGN, rows)],
    ]
    for ranges in cuts:
        _same(_in_shards(corpus, tests, t, by, ranges), whole)
    # The brute force, over every row of a random corpus; over the rows around
    # each cut of the real one (each row is judged on its own).
    windows = [(0, rows)] if name != "real" else [(b - 40, b + 40) for b in BOUNDARIES[::2]]
    for lo, hi in windows:
        hi = min(hi, rows)
        removed, rules = brute_force_decontaminate(
            corpus[0][lo:hi],
            corpus[1][lo:hi],
            evaluation_sets(*tests),
            t,
            by,
            RetrievalConfig(ngram_orders=(2, 3)),
        )
        shifted = [replace(r, train_index=r.train_index + lo) for r in removed]
        assert [r for r in whole.removed if lo <= r.train_index < hi] == shifted
    if name != "real":
        assert whole.removed_by_rule == rules
    # Not vacuous: rows are removed, some of them next to a cut.
    assert {r.train_index for r in whole.removed} & set(BOUNDARIES)


def test_shards_must_start_on_blocks_and_cover_the_corpus() -> None:
    (sources, targets), tests = _random_case(2)
    train = TrainingCorpus(sources, targets)
    request = DecontaminationRequest.of(*tests, Fraction(1, 2), "any")
    with pytest.raises(InvalidOptionError, match="not a multiple of"):
        decontaminate_shard(train.blocks(100, 5, 10), 5, request, CONFIG)
    parts = [
        decontaminate_shard(train.blocks(100, a, b), a, request, CONFIG)
        for a, b in shard_ranges(ROWS, 3)
    ]
    with pytest.raises(InvalidOptionError, match="are in no shard"):
        merge_decontaminations([parts[0], parts[2]], request, CONFIG)
    with pytest.raises(InvalidOptionError, match="nothing to merge"):
        merge_decontaminations([], request, CONFIG)


def test_ray_gives_the_one_process_answer(local_ray: None) -> None:
    """On Ray, every rule: a Dataset (sent by its files) through the public
    ``decontaminate`` with ``engine="ray"``, and lists cut into three shards."""
    corpus, tests = _real_case()
    dataset = datasets.Dataset.from_dict({"source": corpus[0], "target": corpus[1]})
    on_ray = TameConfig(CONFIG, engine="ray")
    for by in RULES:
        whole = _one_process(corpus, tests, Fraction(7, 10), by)
        result = tame_mt_metric.decontaminate(
            dataset, *tests, threshold=Fraction(7, 10), by=by, config=on_ray
        )
        _same(result, whole)
        request = DecontaminationRequest.of(*tests, Fraction(7, 10), by)
        _same(ray_decontaminate(TrainingCorpus(*corpus), request, CONFIG, shards=3), whole)
    (sources, targets), tests = _random_case(0)
    request = DecontaminationRequest.of(*tests, Fraction(1, 2), "pair")
    _same(
        ray_decontaminate(TrainingCorpus(sources, targets), request, CONFIG, shards=3),
        _one_process((sources, targets), tests, Fraction(1, 2), "pair"),
    )


def test_ray_refuses_a_stream() -> None:
    rows = ({"source": "a b", "target": "c d"} for _ in range(3))
    with pytest.raises(InvalidOptionError, match="not a stream"):
        tame_mt_metric.decontaminate(rows, ["a b"], threshold=0.5, config=TameConfig(engine="ray"))


def test_the_command_on_ray_writes_the_same_bytes(local_ray: None, tmp_path: Path) -> None:
    """``--engine ray`` and ``--engine local``: the same kept lines, removed rows
    and summary, byte for byte (the corpus and an output gzip, two test sets)."""
    from tame_mt_metric.cli import main

    (train_sw, train_zu), (tests, refs) = _real_case()
    (tmp_path / "train.sw.gz").write_bytes(gzip.compress("\n".join(train_sw).encode()))
    (tmp_path / "train.zu").write_bytes("\r\n".join(train_zu).encode() + b"\r\n")
    words: list[str] = ["decontaminate", "--quiet", "--threshold", "0.7", "--by", "any"]
    words += ["--train-src", str(tmp_path / "train.sw.gz")]
    words += ["--train-tgt", str(tmp_path / "train.zu")]
    for name, items in tests.items():
        (tmp_path / f"{name}.sw").write_text("\n".join(items) + "\n")
        (tmp_path / f"{name}.zu").write_text("\n".join(r[0] for r in refs[name]) + "\n")
        words += ["--test-src", str(tmp_path / f"{name}.sw"), "--ref", str(tmp_path / f"{name}.zu")]
    outputs = ("kept.sw.gz", "kept.zu", "removed.jsonl", "summary.json")
    written = {}
    for engine in ("local", "ray"):
        out = tmp_path / engine
        paths = [str(out / name) for name in outputs]
        options = ["--out-src", paths[0], "--out-tgt", paths[1], "--removed-out", paths[2]]
        assert main([*words, *options, "--json-out", paths[3], "--engine", engine]) == 0
        written[engine] = [(out / name).read_bytes() for name in outputs]
    assert written["ray"] == written["local"]  # the gzip file too: no name or time in it
    kept = gzip.decompress(written["local"][0]).decode().splitlines()
    assert 20 <= written["local"][2].count(b"\n") == len(train_sw) - len(kept)
