"""``compute_metrics`` for Trainer, fed ``transformers.EvalPrediction`` objects
shaped as Trainer makes them after gathering: right-padded id matrices, with
-100 in the labels and in the padding added between gathered batches."""

from __future__ import annotations

import math
import runpy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import EvalPrediction, PreTrainedTokenizerFast

import tame_mt_metric
from tame_mt_metric import InvalidOptionError
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.trainer import tame_compute_metrics

REPO = Path(__file__).resolve().parent.parent
N = 60


@pytest.fixture(scope="module")
def data() -> dict[str, list[str]]:
    d = example_corpus()
    d["predictions"] = [" ".join(r.split()[1:]) for r in d["references"]]
    return {k: v[:N] if not k.startswith("train") else v for k, v in d.items()}


@pytest.fixture(scope="module")
def tokenizer(data: dict[str, list[str]]) -> PreTrainedTokenizerFast:
    words = {
        w
        for key in ("predictions", "references", "test_sources")
        for t in data[key]
        for w in t.split()
    }
    vocab = {"<pad>": 0, "<unk>": 1} | {w: i + 2 for i, w in enumerate(sorted(words))}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=core, pad_token="<pad>", unk_token="<unk>"
    )


def _ids(tokenizer: PreTrainedTokenizerFast, texts: list[str], pad: int) -> np.ndarray:
    """Two gathered batches: each padded with the pad id, joined with -100 padding."""
    halves = [texts[: len(texts) // 2], texts[len(texts) // 2 :]]
    encoded = [tokenizer(h, padding=True, return_tensors="np")["input_ids"] for h in halves]
    width = max(e.shape[1] for e in encoded) + 3
    rows = [np.pad(e, ((0, 0), (0, width - e.shape[1])), constant_values=pad) for e in encoded]
    return np.concatenate(rows)


def _prediction(tokenizer: PreTrainedTokenizerFast, data: dict[str, list[str]]) -> EvalPrediction:
    pad = tokenizer.pad_token_id
    labels = _ids(tokenizer, data["references"], pad)
    labels[labels == pad] = -100
    return EvalPrediction(
        predictions=_ids(tokenizer, data["predictions"], -100),
        label_ids=labels,
        inputs=_ids(tokenizer, data["test_sources"], pad),
    )


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(
        (isinstance(v, float) and math.isnan(v) and math.isnan(b[k])) or v == b[k]
        for k, v in a.items()
    )


def _expected(data: dict[str, list[str]]) -> dict[str, Any]:
    train = {"source": data["train_sources"], "target": data["train_targets"]}
    metric = tame_mt_metric.load(train=train, keep_in_memory=True)
    return dict(
        metric.compute(
            predictions=data["predictions"],
            references=data["references"],
            sources=data["test_sources"],
        )
    )


def test_decoded_eval_predictions_score_like_compute(
    tokenizer: PreTrainedTokenizerFast, data: dict[str, list[str]]
) -> None:
    train = {"source": data["train_sources"], "target": data["train_targets"]}
    expected = _expected(data)
    from_inputs = tame_compute_metrics(tokenizer, train=train)
    out = from_inputs(_prediction(tokenizer, data))
    signature = expected.pop("signature")
    assert _same(out, expected) and from_inputs.signature == signature
    given = tame_compute_metrics(tokenizer, train=train, sources=data["test_sources"])
    prediction = _prediction(tokenizer, data)
    prediction.inputs = None
    assert _same(given(prediction), expected)
    assert _same(given(prediction), expected)  # a second evaluation: the cached audit


def test_batch_eval_metrics(tokenizer: PreTrainedTokenizerFast, data: dict[str, list[str]]) -> None:
    train = {"source": data["train_sources"], "target": data["train_targets"]}
    expected = _expected(data)
    del expected["signature"]
    compute = tame_compute_metrics(tokenizer, train=train, sources=data["test_sources"])
    for start in range(0, N, 25):
        part = {k: v[start : start + 25] for k, v in data.items() if not k.startswith("train")}
        out = compute(_prediction(tokenizer, part), compute_result=start + 25 >= N)
    assert _same(out, expected)


def test_missing_sources_are_named(
    tokenizer: PreTrainedTokenizerFast, data: dict[str, list[str]]
) -> None:
    compute = tame_compute_metrics(tokenizer, train={"source": ["a"], "target": ["b"]})
    prediction = _prediction(tokenizer, data)
    prediction.inputs = None
    with pytest.raises(InvalidOptionError, match="include_for_metrics"):
        compute(prediction)
    short = tame_compute_metrics(tokenizer, train={"source": ["a"], "target": ["b"]}, sources=["x"])
    with pytest.raises(ValueError, match="sources has 1 items"):
        short(_prediction(tokenizer, data))


def test_an_evaluation_given_up_half_way_leaves_nothing_behind(
    tokenizer: PreTrainedTokenizerFast, data: dict[str, list[str]]
) -> None:
    train = {"source": data["train_sources"], "target": data["train_targets"]}
    expected = _expected(data)
    del expected["signature"]
    metric = tame_mt_metric.load(train=train, sources=data["test_sources"], keep_in_memory=True)
    compute = tame_compute_metrics(tokenizer, metric=metric)
    parts = [
        {k: v[start : start + 25] for k, v in data.items() if not k.startswith("train")}
        for start in range(0, N, 25)
    ]
    compute(_prediction(tokenizer, parts[0]), compute_result=False)
    broken = _prediction(tokenizer, parts[1])
    broken.predictions = np.zeros((25, 4, 7), dtype=np.float32)
    with pytest.raises(InvalidOptionError, match="token ids"):
        compute(broken, compute_result=False)
    for i, part in enumerate(parts):  # the next evaluation, whole
        out = compute(_prediction(tokenizer, part), compute_result=i == len(parts) - 1)
    assert _same(out, expected)


def test_logits_are_refused_with_the_way_to_ids(
    tokenizer: PreTrainedTokenizerFast, data: dict[str, list[str]]
) -> None:
    compute = tame_compute_metrics(tokenizer, train={"source": ["a"], "target": ["b"]})
    prediction = _prediction(tokenizer, data)
    prediction.predictions = np.zeros((N, 4, 7), dtype=np.float32)
    with pytest.raises(InvalidOptionError, match="predict_with_generate"):
        compute(prediction)


def test_the_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(REPO / "examples" / "trainer_compute_metrics.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "eval_tm_bleu" in out and "signature: tame-mt-metric|" in out


def test_batch_dict_inputs_are_decoded(
    tokenizer: PreTrainedTokenizerFast, data: dict[str, list[str]]
) -> None:
    """With batch_eval_metrics=True, Trainer passes each batch's input dict (as
    tensors) where the gathered input ids would be."""
    train = {"source": data["train_sources"], "target": data["train_targets"]}
    expected = _expected(data)
    del expected["signature"]
    compute = tame_compute_metrics(tokenizer, train=train)
    for start in range(0, N, 25):
        part = {k: v[start : start + 25] for k, v in data.items() if not k.startswith("train")}
        prediction = _prediction(tokenizer, part)
        ids = torch.as_tensor(prediction.inputs)
        # EvalPrediction annotates inputs as arrays; Trainer passes the batch dict here
        prediction.inputs = {"input_ids": ids, "attention_mask": ids != 0}  # type: ignore[assignment]
        out = compute(prediction, compute_result=start + 25 >= N)
    assert _same(out, expected)
    prediction.inputs = {"attention_mask": ids}  # type: ignore[assignment]
    with pytest.raises(InvalidOptionError, match="no 'input_ids'"):
        compute(prediction)
