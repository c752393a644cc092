"""Every JSON output validates against the schema the package ships for it:
this package's own (score, audit, the source-side audit, score-cached,
score-cached-batch, segment files, the API's report and segments) and, with
``--output-schema tame-mt-v1``, the reference implementation's v1 shape; and
the v1 document holds what v1 defines (exact keys, percentiles, percentages,
the TM's source)."""

from __future__ import annotations

import io
import json
import math
import zipfile
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.cache.entries import CacheOptions
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.report.v1_schema import V1_SEGMENT_KEYS, _percentile
from tests.test_cli import cli

SCHEMAS = resources.files("tame_mt_metric") / "schemas"
NAMES = [
    "tame-mt-metric.report",
    "tame-mt-metric.segment",
    "tame-mt-v1.report",
    "tame-mt-v1.segment",
]
V1 = ["--output-schema", "tame-mt-v1"]
TEXTS = [
    "--include-source-text",
    "--include-reference-text",
    "--include-hyp-text",
    "--include-neighbor-text",
]


def _validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def _valid(name: str, value: Any) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in _validator(name).iter_errors(value)]
    assert not errors, errors[:5]


def _invalid(name: str, value: Any) -> None:
    assert not _validator(name).is_valid(value)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The bundled example, two references per item, a fifth of the test set taken
    from training (every bin but near filled)."""
    d = example_corpus()
    root = tmp_path_factory.mktemp("schemas")
    sources = d["test_sources"][:40] + d["train_sources"][:10]
    refs = d["references"][:40] + d["train_targets"][:10]

    def write(name: str, lines: list[str]) -> Path:
        (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        return root / name

    return {
        "train": write("train.sw", d["train_sources"][:1500]),
        "train_tgt": write("train.zu", d["train_targets"][:1500]),
        "src": write("test.sw", sources),
        "ref": write("test.zu", refs),
        "ref2": write("test2.zu", [" ".join(r.split()[:-1]) for r in refs]),
        "hyp": write("hyp.zu", [" ".join(r.split()[1:]) for r in refs]),
        "root": root,
    }


def _train(d: dict[str, Path]) -> list[str | Path]:
    return ["--train-src", d["train"], "--train-tgt", d["train_tgt"]]


def _refs(d: dict[str, Path]) -> list[str | Path]:
    return ["--test-src", d["src"], "--ref", d["ref"], "--ref", d["ref2"]]


def test_the_schemas_are_draft_2020_12_and_ship_in_the_package() -> None:
    for name in NAMES:
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_wheel_ships_the_schemas(tmp_path: Path) -> None:
    from hatchling.builders.wheel import WheelBuilder

    root = Path(__file__).resolve().parent.parent
    (wheel,) = WheelBuilder(str(root)).build(directory=str(tmp_path), versions=["standard"])
    with zipfile.ZipFile(wheel) as built:
        shipped = set(built.namelist())
    assert {f"tame_mt_metric/schemas/{name}.schema.json" for name in NAMES} <= shipped


def test_every_default_output_validates_against_the_packages_schemas(
    data: dict[str, Path],
) -> None:
    out = data["root"]
    score: list[str | Path] = [
        "score",
        *_train(data),
        *_refs(data),
        "--hyp",
        data["hyp"],
        *TEXTS,
        "--quiet",
    ]
    cli(*score, "--json-out", out / "score.json", "--segment-out", out / "score.jsonl")
    audit: list[str | Path] = ["audit", *_train(data), *_refs(data), "--quiet"]
    cli(*audit, "--json-out", out / "audit.json", "--segment-out", out / "audit.jsonl")
    source_only: list[str | Path] = [
        "audit",
        "--train-src",
        data["train"],
        "--test-src",
        data["src"],
        "--quiet",
    ]
    cli(*source_only, "--json-out", out / "src.json", "--segment-out", out / "src.jsonl")
    cached: list[str | Path] = [
        "--segment-in",
        out / "audit.jsonl",
        "--ref",
        data["ref"],
        "--ref",
        data["ref2"],
    ]
    cli("score-cached", *cached, "--hyp", data["hyp"], "--json-out", out / "c.json", "--quiet")
    cli("score-cached-batch", *cached, "--system", f"a={data['hyp']}", "--json-out-dir", out)
    for report in ("score.json", "audit.json", "src.json", "c.json", "a.tame.json"):
        _valid("tame-mt-metric.report", _load(out / report))
    for segments in ("score.jsonl", "audit.jsonl", "src.jsonl"):
        rows = _rows(out / segments)
        assert len(rows) == 50
        for row in rows:
            _valid("tame-mt-metric.segment", row)
    assert _load(out / "audit.json")["quality"] is None
    assert {"source", "references", "hypothesis", "tm_hyp"} <= set(_rows(out / "score.jsonl")[0])
    # a v1 reader refuses our own document: the two shapes differ
    _invalid("tame-mt-v1.report", _load(out / "score.json"))
    _invalid("tame-mt-v1.segment", _rows(out / "score.jsonl")[0])


def test_the_apis_report_and_segments_validate(tmp_path: Path) -> None:
    import sentencepiece

    d = example_corpus()
    refs = d["references"][:30]
    model = io.BytesIO()  # a small SentencePiece model of the example, for spBLEU
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(d["train_targets"][:500]),
        model_writer=model,
        vocab_size=300,
        minloglevel=2,
    )
    (tmp_path / "example.spm").write_bytes(model.getvalue())
    result = score_tame(
        TrainingCorpus(d["train_sources"][:800], d["train_targets"][:800]),
        [r.upper() for r in refs],
        refs,
        d["test_sources"][:30],
        TameConfig(
            metrics=("bleu", "chrf", "spbleu"),
            spm_model=str(tmp_path / "example.spm"),
            n_bootstrap=5,
        ),
        include_neighbor_text=True,
        cache=CacheOptions(enabled=False),
    )
    report = json.loads(json.dumps(result.report.as_json(), allow_nan=False))
    _valid("tame-mt-metric.report", report)
    assert set(report["quality"]["details"]["system"]) == {"bleu", "spbleu"}
    for row in result.segments:
        _valid("tame-mt-metric.segment", row)


def test_v1_outputs_validate_against_v1s_schemas(data: dict[str, Path]) -> None:
    out = data["root"]
    score: list[str | Path] = [
        "score",
        *_train(data),
        *_refs(data),
        "--hyp",
        data["hyp"],
        *V1,
        "--quiet",
    ]
    cli(*score, *TEXTS, "--json-out", out / "v1.json", "--segment-out", out / "v1.jsonl")
    cli(*score, "--json-out", out / "v1-bare.json", "--segment-out", out / "v1-bare.jsonl")
    audit: list[str | Path] = ["audit", *_train(data), *_refs(data), *V1, "--quiet"]
    cli(*audit, "--json-out", out / "v1-audit.json", "--segment-out", out / "v1-audit.jsonl")
    source_only: list[str | Path] = [
        "audit",
        "--train-src",
        data["train"],
        "--test-src",
        data["src"],
        *V1,
    ]
    cli(*source_only, "--json-out", out / "v1-src.json", "--segment-out", out / "v1-src.jsonl")
    cli(*audit[:-3], "--segment-out", out / "ours.jsonl", "--quiet")
    cached: list[str | Path] = [
        "--segment-in",
        out / "ours.jsonl",
        "--ref",
        data["ref"],
        "--ref",
        data["ref2"],
    ]
    cli("score-cached", *cached, "--hyp", data["hyp"], *V1, "--json-out", out / "v1-c.json")
    batch = out / "v1-batch"
    cli("score-cached-batch", *cached, "--system", f"a={data['hyp']}", *V1, "--json-out-dir", batch)
    reports = ["v1.json", "v1-bare.json", "v1-audit.json", "v1-src.json", "v1-c.json"]
    for name in reports:
        _valid("tame-mt-v1.report", _load(out / name))
    _valid("tame-mt-v1.report", _load(batch / "a.tame.json"))
    for name in ("v1.jsonl", "v1-bare.jsonl", "v1-audit.jsonl", "v1-src.jsonl"):
        rows = _rows(out / name)
        assert len(rows) == 50
        for row in rows:
            _valid("tame-mt-v1.segment", row)
            assert list(row)[: len(V1_SEGMENT_KEYS)] == list(V1_SEGMENT_KEYS)
    # no sidecar: a v1 file is not for score-cached
    assert not (out / "v1.jsonl.meta.json").exists()
    assert _load(out / "v1-audit.json")["quality"] is None
    source = _load(out / "v1-src.json")["exposure"]
    assert source["target"] is None and source["pair"] is None
    assert _rows(out / "v1-src.jsonl")[0]["target_exposure"] is None
    # our own schema refuses v1's shape
    _invalid("tame-mt-metric.report", _load(out / "v1.json"))


def test_the_v1_report_holds_what_v1_defines(data: dict[str, Path]) -> None:
    out = data["root"]
    score: list[str | Path] = [
        "score",
        *_train(data),
        *_refs(data),
        "--hyp",
        data["hyp"],
        "--quiet",
    ]
    cli(*score, "--json-out", out / "ours.json", "--segment-out", out / "ours-s.jsonl", *TEXTS)
    cli(*score, *V1, *TEXTS, "--json-out", out / "v1.json", "--segment-out", out / "v1.jsonl")
    ours, v1 = _load(out / "ours.json"), _load(out / "v1.json")
    rows, v1_rows = _rows(out / "ours-s.jsonl"), _rows(out / "v1.jsonl")
    assert list(v1) == [
        "schema_version",
        "tame_version",
        "signature",
        "data",
        "config",
        "retrieval",
        "backend",
        "quality",
        "exposure",
        "bins",
        "generalization_gap",
        "approx_validation",
        "performance",
        "warnings",
    ]
    assert v1["signature"] == ours["signature"] and v1["warnings"] == ours["warnings"]
    assert v1["data"] == {k: ours["data"][k] for k in ("num_train", "num_test", "num_refs")}
    assert v1["quality"] == {k: ours["quality"][k] for k in ("system", "tm", "delta_tm")}
    assert v1["generalization_gap"] == ours["generalization_gap"]
    assert v1["approx_validation"] is None and v1["retrieval"]["approximate"] is False
    assert v1["performance"]["backend"] == ours["backend"]["name"]
    assert {"read inputs", "audit and score"} <= set(v1["performance"]["timings_sec"])
    columns = {"source": "source_exposure", "target": "target_exposure", "pair": "pair_exposure"}
    for side, column in columns.items():
        values = np.array([r[column] for r in rows])
        got = v1["exposure"][side]
        for key, q in (("median", 50), ("p05", 5), ("p25", 25), ("p75", 75), ("p95", 95)):
            assert math.isclose(got[key], float(np.percentile(values, q)), abs_tol=1e-12), key
        assert got["max"] == values.max()
        for key in ("mean", "exact_overlap", "at_threshold"):
            assert got[key] == ours["exposure"][side][key]
    assert [b["count"] for b in v1["bins"]] == [b["count"] for b in ours["bins"]]
    assert sum(b["percentage"] for b in v1["bins"]) == pytest.approx(100)
    for b, mine in zip(v1["bins"], ours["bins"], strict=True):
        assert b["percentage"] == pytest.approx(100 * mine["share"])
    assert {b["name"] for b in v1["bins"] if b["count"]} >= {"source_exact", "far"}
    refs = [data[k].read_text(encoding="utf-8").splitlines() for k in ("ref", "ref2")]
    for i, (mine, row) in enumerate(zip(rows, v1_rows, strict=True)):
        assert row["tm_source_index"] == mine["source_nn_index"]
        assert row["tm_source_similarity"] == mine["source_exposure"]
        assert row["pair_ref_index"] == mine["pair_ref_index"]
        assert row["reference_texts"] == [refs[0][i], refs[1][i]]
        assert row["reference_text"] == refs[0][i]
        assert row["neighbor_source_text"] == mine["source_nn_text"]
        assert row["tm_hyp"] == mine["tm_hyp"] and row["source_text"] == mine["source"]


@pytest.mark.parametrize("n", [1, 2, 3, 7, 20])
def test_percentiles_interpolate_as_numpy(n: int) -> None:
    values = sorted(np.random.default_rng(n).random(n).tolist())
    for q in (0, 5, 25, 50, 75, 95, 100):
        assert math.isclose(_percentile(values, q), float(np.percentile(values, q)))
