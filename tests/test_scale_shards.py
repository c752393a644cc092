"""The audit in shards, merged, on Ray (local mode) and from the command line:
every answer equals the one-machine audit, bit for bit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import datasets
import pyarrow as pa
import pytest
import ray

import tame_mt_metric
from tame_mt_metric import RetrievalConfig, TrainingCorpus, stream_exposures
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.digest import PROOF, proof
from tame_mt_metric.errors import InputTextError, InvalidOptionError
from tame_mt_metric.report.tm_baseline import tm_hypotheses
from tame_mt_metric.scale.ray_engine import TextFiles, ray_audit
from tame_mt_metric.scale.shards import (
    SHARD_ALIGN,
    PartialAudit,
    audit_shard,
    merge_partials,
    shard_ranges,
)
from tests.test_json_schemas import V1, _rows, _valid

ROWS = 2 * SHARD_ALIGN + 517  # three shards, the last one short


@pytest.fixture(scope="module")
def corpus() -> TrainingCorpus:
    d = example_corpus()
    n = len(d["train_sources"])
    return TrainingCorpus(
        [f"{d['train_sources'][i % n]} {i % 97}" for i in range(ROWS)],
        [f"{d['train_targets'][i % n]} {i % 89}" for i in range(ROWS)],
    )


@pytest.fixture(scope="module")
def test_set() -> tuple[list[str], list[list[str]]]:
    d = example_corpus()
    return d["test_sources"][:60], [[r] for r in d["references"][:60]]


@pytest.fixture(scope="module")
def whole(
    corpus: TrainingCorpus, test_set: tuple[list[str], list[list[str]]]
) -> tame_mt_metric.Exposures:
    sources, refs = test_set
    return stream_exposures(zip(corpus.sources, corpus.targets, strict=True), sources, refs)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_shard_ranges_start_on_blocks() -> None:
    assert shard_ranges(ROWS, 3) == [
        (0, SHARD_ALIGN),
        (SHARD_ALIGN, 2 * SHARD_ALIGN),
        (2 * SHARD_ALIGN, ROWS),
    ]
    assert shard_ranges(10, 4) == [(0, 10)]  # one block: one shard
    with pytest.raises(InvalidOptionError):
        shard_ranges(10, 0)


def test_merged_shards_equal_one_machine(
    corpus: TrainingCorpus,
    test_set: tuple[list[str], list[list[str]]],
    whole: tame_mt_metric.Exposures,
) -> None:
    sources, refs = test_set
    parts = [
        audit_shard(
            corpus.blocks(RetrievalConfig().block_rows, a, b),
            a,
            sources,
            refs,
            RetrievalConfig(),
        )
        for a, b in shard_ranges(corpus.num_rows, 3)
    ]
    merged = merge_partials(list(reversed(parts)))  # any order
    assert merged.exposures.items == whole.items
    assert merged.tm_hypotheses == tm_hypotheses(whole, corpus.targets)
    assert merged.fingerprint == corpus.fingerprint and merged.num_train == ROWS
    with pytest.raises(InvalidOptionError, match="are in no shard"):
        merge_partials([parts[0], parts[2]])
    other = audit_shard(
        [(corpus.sources[:10], corpus.targets[:10])],
        0,
        sources[:3],
        None,
        RetrievalConfig(),
    )
    with pytest.raises(InvalidOptionError, match="different test sets"):
        merge_partials([other, parts[1]])


def test_partial_audits_keep_the_reference_of_each_pair(
    corpus: TrainingCorpus, tmp_path: Path
) -> None:
    d = example_corpus()
    n = 30
    sources = d["test_sources"][:n]
    # Another item's reference first: most pairs reach their maximum on the second.
    refs = [[d["references"][(i + 1) % n], d["references"][i]] for i in range(n)]
    whole = stream_exposures(zip(corpus.sources, corpus.targets, strict=True), sources, refs)
    assert {e.pair.reference for e in whole if e.pair} == {0, 1}
    parts = []
    for i, (a, b) in enumerate(shard_ranges(corpus.num_rows, 3)):
        blocks = corpus.blocks(RetrievalConfig().block_rows, a, b)
        audit_shard(blocks, a, sources, refs, RetrievalConfig()).save(tmp_path / f"part{i}")
        parts.append(PartialAudit.load(tmp_path / f"part{i}"))
    assert merge_partials(parts).exposures.items == whole.items
    # A partial audit whose pairs name no reference (an earlier version's) is refused.
    table = pa.ipc.open_file(pa.BufferReader((tmp_path / "part0").read_bytes())).read_all()
    rows = [json.loads(r) for r in table.column("item").to_pylist()]
    lines = [json.dumps({**r, "pair": r["pair"][:3]}, ensure_ascii=False) for r in rows]
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    meta[PROOF] = proof(meta, lines)
    old = pa.table({"item": pa.array(lines, pa.large_string())}).replace_schema_metadata(meta)
    with pa.OSFile(str(tmp_path / "old"), "wb") as sink, pa.ipc.new_file(sink, old.schema) as w:
        w.write_table(old)
    with pytest.raises(InputTextError, match="name no reference"):
        PartialAudit.load(tmp_path / "old")


def test_ray_equals_one_machine(
    local_ray: None,
    corpus: TrainingCorpus,
    test_set: tuple[list[str], list[list[str]]],
    whole: tame_mt_metric.Exposures,
    tmp_path: Path,
) -> None:
    sources, refs = test_set
    dataset = datasets.Dataset.from_dict({"sw": corpus.sources, "zu": corpus.targets})
    (tmp_path / "train.sw").write_text("\n".join(corpus.sources) + "\n", encoding="utf-8")
    (tmp_path / "train.zu").write_text("\n".join(corpus.targets) + "\n", encoding="utf-8")
    files = TextFiles(tmp_path / "train.sw", tmp_path / "train.zu")
    for train in (corpus, dataset, files):
        columns = ("sw", "zu") if train is dataset else ("source", "target")
        merged = ray_audit(
            train,
            sources,
            refs,
            RetrievalConfig(),
            shards=3,
            source_column=columns[0],
            target_column=columns[1],
        )
        assert merged.exposures.items == whole.items, type(train)
        assert merged.fingerprint == corpus.fingerprint
        assert merged.tm_hypotheses == tm_hypotheses(whole, corpus.targets)


def test_the_metric_hands_the_audit_to_ray(
    local_ray: None, corpus: TrainingCorpus, test_set: tuple[list[str], list[list[str]]]
) -> None:
    sources, refs = test_set
    preds = [r[0] for r in refs]
    local = tame_mt_metric.load(train=corpus, keep_in_memory=True, use_cache=False)
    on_ray = tame_mt_metric.load(train=corpus, keep_in_memory=True, use_cache=False, engine="ray")
    a = local.compute(predictions=preds, references=refs, sources=sources)
    b = on_ray.compute(predictions=preds, references=refs, sources=sources)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "tame_mt_metric", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TAME_MT_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    return done


def test_shards_from_the_command_line_merge_to_the_full_score(
    corpus: TrainingCorpus, test_set: tuple[list[str], list[list[str]]], tmp_path: Path
) -> None:
    sources, refs = test_set
    for name, lines in (
        ("train.sw", corpus.sources),
        ("train.zu", corpus.targets),
        ("test.sw", sources),
        ("test.zu", [r[0] for r in refs]),
        ("hyp.zu", [r[0][:-3] for r in refs]),
    ):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    train = ["--train-src", tmp_path / "train.sw", "--train-tgt", tmp_path / "train.zu"]
    test = ["--test-src", tmp_path / "test.sw", "--ref", tmp_path / "test.zu"]
    for i in range(3):
        _cli("audit", *train, *test, "--shard", f"{i}/3", "--partial-out", tmp_path / f"part{i}")
    parts = [a for i in range(3) for a in ("--partial", tmp_path / f"part{i}")]
    _cli(
        "merge",
        *parts,
        *test,
        "--hyp",
        tmp_path / "hyp.zu",
        "--json-out",
        tmp_path / "merged.json",
        "--html-out",
        tmp_path / "merged.html",
        "--quiet",
    )
    _cli(
        "score",
        *train,
        *test,
        "--hyp",
        tmp_path / "hyp.zu",
        "--json-out",
        tmp_path / "full.json",
        "--quiet",
    )
    merged = json.loads((tmp_path / "merged.json").read_text(encoding="utf-8"))
    full = json.loads((tmp_path / "full.json").read_text(encoding="utf-8"))
    for key in ("signature", "quality", "exposure", "bins", "generalization_gap", "warnings"):
        assert merged[key] == full[key], key
    page = (tmp_path / "merged.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and full["signature"] in page.replace("<wbr>", "")
    # Without a system, the merged report is an audit's (quality null); in the v1
    # shape, report and segments validate against the v1 schemas.
    out = ["--json-out", tmp_path / "audit.json", "--segment-out", tmp_path / "seg.jsonl"]
    _cli("merge", *parts, *test, *out, "--quiet")
    audit = json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))
    assert audit["quality"] is None and audit["exposure"] == full["exposure"]
    _valid("tame-mt-metric.report", audit)
    _cli("merge", *parts, *test, "--hyp", tmp_path / "hyp.zu", *out, *V1, "--quiet")
    v1 = json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))
    _valid("tame-mt-v1.report", v1)
    assert v1["quality"]["system"] == full["quality"]["system"]
    for row in _rows(tmp_path / "seg.jsonl"):
        _valid("tame-mt-v1.segment", row)
