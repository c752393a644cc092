"""The evaluate metric: loading, inputs, outputs, bad input, and what a
failed call leaves behind."""

from __future__ import annotations

import doctest
import math
import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path
from typing import Any

import datasets
import evaluate
import pytest
from filelock import FileLock, Timeout

import tame_mt_metric
from tame_mt_metric import (
    EmptyTestSetError,
    InputTextError,
    InvalidOptionError,
    MisalignedInputError,
    MissingColumnError,
    TameConfig,
    TrainingCorpus,
    score_tame,
)
from tame_mt_metric.demo import example_corpus

REPO = Path(__file__).resolve().parent.parent
REQUIRED_KEYS = [
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
    "target_exact_rate",
    "pair_exact_rate",
    "pair_leak@0.70",
    "pair_leak@0.85",
    "pair_leak@0.95",
    "far_bleu",
    "far_chrf",
    "gen_gap_bleu",
    "gen_gap_chrf",
    *(
        f"bin/{b}/{k}"
        for b in ("source_exact", "near", "medium", "far")
        for k in ("count", "bleu", "chrf", "tm_bleu", "tm_chrf")
    ),
    "signature",
]


@pytest.fixture(scope="module")
def example() -> dict[str, list[str]]:
    data = example_corpus()
    data["predictions"] = [
        " ".join(w for i, w in enumerate(r.split()) if i % 4 != 3) for r in data["references"]
    ]
    return data


@pytest.fixture(scope="module")
def train(example: dict[str, list[str]]) -> datasets.Dataset:
    return datasets.Dataset.from_dict(
        {"sw": example["train_sources"], "zu": example["train_targets"]}
    )


def _test_set(example: dict[str, list[str]], n: int = 400) -> dict[str, list[str]]:
    return {
        "predictions": example["predictions"][:n],
        "references": example["references"][:n],
        "sources": example["test_sources"][:n],
    }


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    for k, v in a.items():
        w = b[k]
        if isinstance(v, float) and math.isnan(v):
            if not (isinstance(w, float) and math.isnan(w)):
                return False
        elif v != w:
            return False
    return True


def _metric(tmp_path: Path, **options: Any) -> Any:
    return tame_mt_metric.load(cache_dir=str(tmp_path), **options)


def _cache_files(tmp_path: Path) -> list[Path]:
    """Rows left in evaluate's cache, and locks still held (evaluate leaves released
    lock files behind even after a successful call)."""
    left = [p for p in tmp_path.rglob("*.arrow")]
    for lock_file in tmp_path.rglob("*.lock"):
        lock = FileLock(str(lock_file))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            left.append(lock_file)
        else:
            lock.release()
    return left


def test_compute_returns_the_tame_fields(
    tmp_path: Path, example: dict[str, list[str]], train: datasets.Dataset
) -> None:
    metric = _metric(tmp_path, train=train, source_column="sw", target_column="zu")
    assert metric.name == "tame_mt"
    out = metric.compute(**_test_set(example))
    assert list(out) == REQUIRED_KEYS
    assert all(isinstance(v, float | int) for k, v in out.items() if k != "signature")
    corpus = TrainingCorpus(example["train_sources"], example["train_targets"])
    test = _test_set(example)
    direct = score_tame(
        corpus, test["predictions"], test["references"], test["sources"]
    ).report.fields()
    assert _same(out, direct)
    assert out["bin/far/count"] == 324 and 0 < out["far_bleu"] < 100
    assert _cache_files(tmp_path) == []


def test_the_metric_card_names_its_license_homepage_and_chrf(tmp_path: Path) -> None:
    info = _metric(tmp_path, train={"source": ["a b"], "target": ["c d"]})._info()
    assert info.license == "MIT"
    assert info.homepage == "https://pypi.org/project/tame-mt-metric/"
    # The card says that chrf is chrF++ here and chrF2 in sacrebleu and evaluate.
    assert "chrF++" in info.inputs_description and "chrF2" in info.inputs_description


def test_train_at_compute_time_and_the_translation_convention(
    tmp_path: Path, example: dict[str, list[str]]
) -> None:
    pairs = [
        {"sw": s, "zu": t}
        for s, t in zip(example["train_sources"], example["train_targets"], strict=True)
    ]
    dataset = datasets.Dataset.from_dict({"translation": pairs})
    metric = _metric(tmp_path, source_lang="sw", target_lang="zu", near_threshold=0.5)
    out = metric.compute(**_test_set(example, 50), train=dataset, return_report=True)
    assert out["report"]["config"]["near_threshold"] == 0.5
    assert len(out["segments"]) == 50 and out["segments"][7]["index"] == 7
    assert "source_nn_text" not in out["segments"][0]
    with pytest.raises(InvalidOptionError, match="no training corpus"):
        metric.compute(**_test_set(example, 5))


def test_multiple_references_and_batches(
    tmp_path: Path, example: dict[str, list[str]], train: datasets.Dataset
) -> None:
    metric = _metric(tmp_path, train=train, source_column="sw", target_column="zu")
    refs = [[r, p] for r, p in zip(example["references"], example["predictions"], strict=True)]
    for start in range(0, 100, 30):
        metric.add_batch(
            predictions=example["predictions"][start : min(start + 30, 100)],
            references=refs[start : min(start + 30, 100)],
            sources=example["test_sources"][start : min(start + 30, 100)],
        )
    batched = metric.compute()
    whole = metric.compute(
        predictions=example["predictions"][:100],
        references=refs[:100],
        sources=example["test_sources"][:100],
    )
    assert _same(batched, whole)
    assert whole["bleu"] == 100.0 or whole["bleu"] > 99.99  # a reference equals the prediction
    assert _cache_files(tmp_path) == []


BAD_INPUTS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"predictions": ["a", "b"]}, MisalignedInputError, "predictions has 2 items but sources"),
    ({"references": ["a"]}, MisalignedInputError, "references has 1 items but predictions"),
    ({"sources": ["a", "b", 3]}, InputTextError, r"sources\[2\]: expected a string"),
    ({"predictions": ["a", None, "c"]}, InputTextError, r"predictions\[1\]: expected a string"),
    (
        {"references": [["a", "b"], ["a"], ["a", "b"]]},
        MisalignedInputError,
        r"references\[1\] has 1 references, references\[0\] has 2",
    ),
    ({"predictions": [], "references": [], "sources": []}, EmptyTestSetError, "empty"),
    ({"train": {"source": ["a"], "tgt": ["b"]}}, MissingColumnError, "no key 'target'"),
    ({"train": {"source": ["a", "b"], "target": ["b"]}}, MisalignedInputError, "train sources"),
    ({"train": {"source": [], "target": []}}, ValueError, "empty"),
]


@pytest.mark.parametrize(("change", "error", "message"), BAD_INPUTS)
def test_bad_input_is_a_typed_value_error_and_caches_nothing(
    tmp_path: Path, change: dict[str, Any], error: type[Exception], message: str
) -> None:
    metric = _metric(tmp_path, train={"source": ["a b c", "d e f"], "target": ["x y z", "u v w"]})
    good = {"predictions": ["x y z"] * 3, "references": ["x y z"] * 3, "sources": ["a b c"] * 3}
    with pytest.raises(error, match=message) as caught:
        metric.compute(**{**good, **change})
    assert isinstance(caught.value, ValueError)
    assert _cache_files(tmp_path) == []
    after = metric.compute(**good)  # nothing of the failed call is left in the metric
    assert after["bin/source_exact/count"] == 3
    assert _cache_files(tmp_path) == []


def test_a_bad_batch_is_refused_with_its_global_index(tmp_path: Path) -> None:
    metric = _metric(tmp_path, train={"source": ["a b c"], "target": ["x y z"]})
    metric.add_batch(predictions=["p"] * 3, references=["r"] * 3, sources=["s"] * 3)
    with pytest.raises(InputTextError, match=r"predictions\[4\]"):
        metric.add_batch(predictions=["p", 5], references=["r"] * 2, sources=["s"] * 2)
    with pytest.raises(InvalidOptionError, match="strategy: not an argument of compute"):
        metric.compute(train={"source": ["a"], "target": ["b"]}, strategy="fast")
    assert _cache_files(tmp_path) == []


def test_load_time_options_are_checked() -> None:
    with pytest.raises(InvalidOptionError, match="near_treshold: not an option"):
        tame_mt_metric.load(near_treshold=0.8)
    with pytest.raises(InvalidOptionError, match="far_threshold"):
        tame_mt_metric.load(far_threshold=1.5)
    with pytest.raises(InvalidOptionError, match="leak_thresholds: expected a non-empty list"):
        tame_mt_metric.load(leak_thresholds="0.5,0.9")
    with pytest.raises(InvalidOptionError, match="far_threshold: expected a number"):
        tame_mt_metric.load(far_threshold="0.3")
    metric = tame_mt_metric.load(leak_thresholds=(0.5, Fraction(9, 10)), chrf_word_order=0)
    assert metric.tame_config == TameConfig.from_options(
        leak_thresholds=(0.5, 0.9), chrf_word_order=0
    )


def test_combine_passes_the_corpus_given_at_load_time(tmp_path: Path) -> None:
    train = {
        "source": ["the house is small", "a tree"],
        "target": ["das Haus ist klein", "ein Baum"],
    }
    strict = _metric(tmp_path / "a", train=train, metrics=("bleu",))
    loose = _metric(tmp_path / "b", train=train, metrics=("chrf",), experiment_id="loose")
    combined = evaluate.combine([strict, loose], force_prefix=True)
    out = combined.compute(
        predictions=["das Haus ist alt"],
        references=["das Haus ist alt"],
        sources=["the house is old"],
    )
    assert out["tame_mt_0_bleu"] == 100.0 or out["tame_mt_0_bleu"] > 99.99
    assert "tame_mt_1_chrf" in out


# A metric of predictions and references only, as most evaluate metrics are
# (sacrebleu, chrf, ...), written here since those are fetched from the Hub.
WORDS_MATCH = """
import datasets
import evaluate


class WordsMatch(evaluate.Metric):
    def _info(self):
        string = datasets.Value("string")
        return evaluate.MetricInfo(
            description="share of exact matches",
            citation="",
            features=datasets.Features({"predictions": string, "references": string}),
        )

    def _compute(self, predictions, references):
        return {"exact_match": sum(map(str.__eq__, predictions, references)) / len(predictions)}
"""


def _words_match(tmp_path: Path) -> Any:
    script = tmp_path / "words_match.py"
    script.write_text(WORDS_MATCH, encoding="utf-8")
    return evaluate.load(str(script), keep_in_memory=True)


def test_combine_with_a_predictions_and_references_metric_takes_sources_at_load_time(
    tmp_path: Path, example: dict[str, list[str]]
) -> None:
    test = _test_set(example, 40)
    train = {"source": example["train_sources"], "target": example["train_targets"]}
    per_call = _metric(tmp_path / "a", train=train).compute(**test)
    tame = _metric(tmp_path / "b", train=train, sources=test["sources"])
    assert "sources" not in tame._feature_names()
    combined = evaluate.combine([tame, _words_match(tmp_path)])
    out = combined.compute(predictions=test["predictions"], references=test["references"])
    assert _same({k: v for k, v in out.items() if k != "exact_match"}, per_call)
    assert out["exact_match"] == 0.0
    combined.add_batch(predictions=test["predictions"][:30], references=test["references"][:30])
    for prediction, reference in zip(
        test["predictions"][30:], test["references"][30:], strict=True
    ):
        combined.add(prediction=prediction, reference=reference)
    assert _same(combined.compute(), out)
    # Sources given per call reach every metric, and one that takes only
    # predictions and references refuses them.
    per_call_tame = _metric(tmp_path / "c", train=train)
    with pytest.raises(TypeError, match="sources"):
        evaluate.combine([per_call_tame, _words_match(tmp_path)]).compute(**test)
    assert _cache_files(tmp_path) == []


def test_sources_given_at_load_time_are_checked_against_every_call(
    tmp_path: Path, example: dict[str, list[str]]
) -> None:
    test = _test_set(example, 6)
    train = {"source": example["train_sources"], "target": example["train_targets"]}
    metric = _metric(tmp_path, train=train, sources=test["sources"])
    assert metric.sources_digest is not None
    out = metric.compute(predictions=test["predictions"], references=test["references"])
    assert _same(metric.compute(**test), out)  # the same sources again: allowed
    changed = [*test["sources"][:4], "another sentence", test["sources"][5]]
    refused: list[tuple[dict[str, Any], str]] = [
        ({"sources": changed}, r"sources\[4\] differs from the sources given at load time"),
        ({"sources": test["sources"][:5]}, "predictions has 6 items but sources has 5"),
        (
            {"predictions": test["predictions"][:5], "references": test["references"][:5]},
            "predictions has 5 items but the sources given at load time have 6",
        ),
        (
            {"predictions": test["predictions"] * 2, "references": test["references"] * 2},
            "predictions has 12 items but the sources given at load time have 6",
        ),
    ]
    for change, message in refused:
        with pytest.raises(MisalignedInputError, match=message):
            metric.compute(**{**test, **change})
    metric.add_batch(predictions=test["predictions"][:4], references=test["references"][:4])
    with pytest.raises(MisalignedInputError, match=r"sources\[5\] differs"):
        metric.add_batch(
            predictions=test["predictions"][4:],
            references=test["references"][4:],
            sources=[test["sources"][4], "x"],
        )
    with pytest.raises(MisalignedInputError, match="predictions reach item 7"):
        metric.add_batch(predictions=["a"] * 3, references=["b"] * 3)
    with pytest.raises(MisalignedInputError, match=r"has 4 items \(4 added before this call\)"):
        metric.compute()
    assert _cache_files(tmp_path) == []
    metric.add_batch(predictions=test["predictions"][:4], references=test["references"][:4])
    last = {k: v[4:] for k, v in test.items()}
    assert _same(metric.compute(**last), out)  # sources of the call's items: allowed
    assert _cache_files(tmp_path) == []


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"sources": []}, EmptyTestSetError, "sources: the test set is empty"),
        ({"sources": "a sentence"}, InputTextError, "sources: expected a list of strings"),
        ({"sources": ["a", None]}, InputTextError, r"sources\[1\]: expected a string"),
        ({"sources": ["a"], "num_process": 2}, InvalidOptionError, "needs num_process=1"),
    ],
)
def test_load_time_sources_are_a_checked_text_list(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        tame_mt_metric.load(**options)


def _run(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HF_EVALUATE_OFFLINE": "1",
        "HF_HOME": str(cwd / "hf"),
        "HF_DATASETS_OFFLINE": "1",
    }
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_evaluate_load_by_name_offline_in_a_fresh_process(tmp_path: Path) -> None:
    script = f"""
        import evaluate
        train = {{"source": ["a small house"], "target": ["ein kleines Haus"]}}
        by_name = evaluate.load("tame_mt", train=train, near_threshold=0.8)
        by_path = evaluate.load({str(REPO / "tame_mt_metric.py")!r}, train=train)
        for metric in (by_name, by_path):
            out = metric.compute(predictions=["ein Haus"], references=["ein kleines Haus"],
                                 sources=["a small house"])
            print(type(metric).__module__.split(".")[0], metric.name, out["bin/source_exact/count"])
        print(by_name.tame_config.near_threshold)
    """
    done = _run(script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["tame_mt_metric tame_mt 1"] * 2 + ["4/5"]
    assert "Couldn't find" not in done.stderr and "cached" not in done.stderr


def test_the_hook_leaves_other_names_alone(tmp_path: Path) -> None:
    done = _run(
        """
        import evaluate
        try:
            evaluate.load("no_such_metric_anywhere")
        except FileNotFoundError as exc:
            print("not found")
        """,
        tmp_path,
    )
    assert done.stdout.strip() == "not found", done.stderr


def test_the_documented_examples_run() -> None:
    from tame_mt_metric import metric

    parser = doctest.DocTestParser()
    test = parser.get_doctest(metric._KWARGS_DESCRIPTION, {}, "_KWARGS_DESCRIPTION", None, 0)
    assert len(test.examples) >= 4
    results = doctest.DocTestRunner().run(test)
    assert results.failed == 0 and results.attempted == len(test.examples)
