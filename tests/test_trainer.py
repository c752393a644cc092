"""``compute_metrics`` for Trainer: fed ``transformers.EvalPrediction`` objects
shaped as Trainer makes them after gathering (right-padded id matrices, with
-100 in the labels and in the padding added between gathered batches), and run
by a real ``Seq2SeqTrainer`` (a tiny T5 built from a config, on the CPU)."""

from __future__ import annotations

import math
import runpy
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
from transformers import (
    DataCollatorForSeq2Seq,
    EvalPrediction,
    PreTrainedTokenizerFast,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    T5Config,
    T5ForConditionalGeneration,
    set_seed,
)

import tame_mt_metric
from tame_mt_metric import InvalidOptionError, LossySourcesWarning
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


# A real Seq2SeqTrainer: a tiny randomly initialised T5 trained for two steps on
# the CPU, evaluated after each; nothing is downloaded.
EVAL_ITEMS = 24
MODEL_TRAIN_ITEMS = 32
TRAINER_KEYS = {"eval_loss", "eval_runtime", "eval_samples_per_second", "eval_steps_per_second"}


@pytest.fixture(scope="module")
def seq2seq() -> dict[str, Any]:
    """A word-level tokenizer trained on the bundled Bible data, the tokenized
    training and evaluation sets, and the raw evaluation texts."""
    d = example_corpus()
    sources, references = d["test_sources"][:EVAL_ITEMS], d["references"][:EVAL_ITEMS]
    train_sources = d["train_sources"][:MODEL_TRAIN_ITEMS]
    train_targets = d["train_targets"][:MODEL_TRAIN_ITEMS]
    core = Tokenizer(models.WordLevel(unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.train_from_iterator(
        sources + references + train_sources + train_targets,
        trainers.WordLevelTrainer(special_tokens=["<pad>", "</s>", "<unk>"]),
    )
    core.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", 1)]
    )
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=core, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    for texts in (sources, references):  # decoding gives the texts back
        assert tokenizer.batch_decode(tokenizer(texts)["input_ids"], skip_special_tokens=True) == (
            texts
        )

    def tokenized(src: list[str], tgt: list[str]) -> datasets.Dataset:
        encoded = dict(tokenizer(src))
        encoded["labels"] = tokenizer(tgt)["input_ids"]
        return datasets.Dataset.from_dict(encoded)

    return {
        "tokenizer": tokenizer,
        "train_set": tokenized(train_sources, train_targets),
        "eval_set": tokenized(sources, references),
        "sources": sources,
        "references": references,
        "train": {"source": d["train_sources"], "target": d["train_targets"]},
    }


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """A model this small runs no faster on more threads, and torch's threads
    slow down many times over when another process holds one of few cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _tiny_t5(tokenizer: PreTrainedTokenizerFast) -> T5ForConditionalGeneration:
    set_seed(0)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    config.decoder_start_token_id = tokenizer.pad_token_id  # T5's convention
    return T5ForConditionalGeneration(config)


@pytest.mark.parametrize("batch_eval_metrics", [False, True], ids=["gathered", "batched"])
@pytest.mark.parametrize("sources_from", ["argument", "inputs", "load_time"])
@pytest.mark.usefixtures("one_torch_thread")
def test_a_real_seq2seq_trainer_logs_what_compute_returns(
    tmp_path: Path, seq2seq: dict[str, Any], sources_from: str, batch_eval_metrics: bool
) -> None:
    tokenizer: PreTrainedTokenizerFast = seq2seq["tokenizer"]
    train, sources = seq2seq["train"], seq2seq["sources"]
    if sources_from == "argument":
        compute_metrics = tame_compute_metrics(tokenizer, train=train, sources=sources)
    elif sources_from == "inputs":
        compute_metrics = tame_compute_metrics(tokenizer, train=train)
    else:
        metric = tame_mt_metric.load(train=train, sources=sources, keep_in_memory=True)
        compute_metrics = tame_compute_metrics(tokenizer, metric=metric)
    model = _tiny_t5(tokenizer)
    args = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path),
        max_steps=2,
        eval_strategy="steps",
        eval_steps=1,
        save_strategy="no",
        per_device_train_batch_size=8,
        per_device_eval_batch_size=8,  # three evaluation batches
        predict_with_generate=True,
        generation_max_length=12,
        batch_eval_metrics=batch_eval_metrics,
        include_for_metrics=["inputs"] if sources_from == "inputs" else [],
        use_cpu=True,
        report_to=[],
        disable_tqdm=True,
    )
    trainer = Seq2SeqTrainer(
        model=model,
        args=args,
        train_dataset=seq2seq["train_set"],
        eval_dataset=seq2seq["eval_set"],
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        compute_metrics=compute_metrics,
    )
    trainer.train()
    logged = [entry for entry in trainer.state.log_history if "eval_loss" in entry]
    assert [entry["step"] for entry in logged] == [1, 2]

    # What the final model generates, decoded here, scored by a direct compute().
    predicted = trainer.predict(seq2seq["eval_set"])
    assert predicted.metrics is not None
    ids = np.asarray(predicted.predictions)
    decoded = tokenizer.batch_decode(
        np.where(ids < 0, tokenizer.pad_token_id, ids), skip_special_tokens=True
    )
    direct = tame_mt_metric.load(train=train, keep_in_memory=True).compute(
        predictions=[t.strip() for t in decoded],
        references=seq2seq["references"],
        sources=sources,
    )
    assert direct["signature"] == compute_metrics.signature
    expected = {f"eval_{k}": v for k, v in direct.items() if k != "signature"}
    for entry in logged:
        evaluated = {k for k in entry if k.startswith("eval_")}
        assert evaluated == set(expected) | TRAINER_KEYS and len(evaluated) == 43
    final = {k: v for k, v in logged[-1].items() if k in expected}
    assert _same(final, expected)  # the logged numbers are the returned ones, unrounded
    assert _same(
        {k.removeprefix("test_"): v for k, v in predicted.metrics.items() if k != "test_loss"},
        {k.removeprefix("eval_"): v for k, v in expected.items()}
        | {k: predicted.metrics[f"test_{k}"] for k in ("runtime", "samples_per_second")}
        | {"steps_per_second": predicted.metrics["test_steps_per_second"]},
    )


def _word_tokenizer(words: set[str], clean_up: bool = False) -> PreTrainedTokenizerFast:
    vocab = {"<pad>": 0, "<unk>": 1} | {w: i + 2 for i, w in enumerate(sorted(words))}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=core,
        pad_token="<pad>",
        unk_token="<unk>",
        clean_up_tokenization_spaces=clean_up,
    )


def _evaluate(
    compute: Any, tokenizer: PreTrainedTokenizerFast, data: dict[str, list[str]], batched: bool
) -> None:
    """One evaluation: the gathered arrays, or batches of 25 (``batch_eval_metrics``)."""
    if not batched:
        compute(_prediction(tokenizer, data))
        return
    for start in range(0, N, 25):
        part = {k: v[start : start + 25] for k, v in data.items() if not k.startswith("train")}
        compute(_prediction(tokenizer, part), compute_result=start + 25 >= N)


@pytest.mark.parametrize("batched", [False, True], ids=["gathered", "batched"])
def test_sources_decoded_with_unknown_tokens_are_warned_about_once(
    data: dict[str, list[str]], batched: bool
) -> None:
    # A vocabulary that misses the words only some sources hold.
    words = {w for k in ("predictions", "references") for t in data[k] for w in t.split()}
    words |= {w for t in data["test_sources"][::2] for w in t.split()}
    tokenizer = _word_tokenizer(words)
    unknown = sum(any(w not in words for w in t.split()) for t in data["test_sources"])
    assert 0 < unknown < N
    train = {"source": data["train_sources"], "target": data["train_targets"]}
    compute = tame_compute_metrics(tokenizer, train=train)
    with pytest.warns(LossySourcesWarning) as caught:
        _evaluate(compute, tokenizer, data, batched)
    (message,) = [str(w.message) for w in caught]
    assert message.startswith(
        f"{unknown} of {N} sources decoded from the inputs' token ids are not the texts that "
        f"were encoded ({unknown} hold the unknown token '<unk>', dropped in decoding): "
    )
    assert "sources=" in message
    with warnings.catch_warnings():  # once: the next evaluation says nothing
        warnings.simplefilter("error", LossySourcesWarning)
        _evaluate(compute, tokenizer, data, batched)


def test_sources_decoded_to_other_text_are_counted(data: dict[str, list[str]]) -> None:
    # Decoding cleans " ," up to ",": the text changes with no unknown token.
    spaced = [t.replace(",", " ,") if i % 3 == 0 else t for i, t in enumerate(data["test_sources"])]
    data = {**data, "test_sources": spaced}
    words = {
        w for k in ("predictions", "references", "test_sources") for t in data[k] for w in t.split()
    }
    tokenizer = _word_tokenizer(words, clean_up=True)
    changed = sum(
        tokenizer.decode(tokenizer(t)["input_ids"], skip_special_tokens=True) != t for t in spaced
    )
    assert changed == sum("," in t for t in spaced[::3]) > 0
    train = {"source": data["train_sources"], "target": data["train_targets"]}
    with pytest.warns(
        LossySourcesWarning,
        match=rf"^{changed} of {N} sources .* encoded \({changed} decode to text that encodes",
    ):
        tame_compute_metrics(tokenizer, train=train)(_prediction(tokenizer, data))


def test_sources_that_decode_to_themselves_or_are_given_warn_nothing(
    tokenizer: PreTrainedTokenizerFast, data: dict[str, list[str]]
) -> None:
    train = {"source": data["train_sources"], "target": data["train_targets"]}
    words = {w for k in ("predictions", "references") for t in data[k] for w in t.split()}
    lossy = _word_tokenizer(words)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossySourcesWarning)
        tame_compute_metrics(tokenizer, train=train)(_prediction(tokenizer, data))
        # The real sources given: the decoded inputs are not read.
        given = tame_compute_metrics(lossy, train=train, sources=data["test_sources"])
        given(_prediction(lossy, data))
