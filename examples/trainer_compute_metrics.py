"""TAME inside a ``transformers`` training loop.

With a real model the only line that matters is the ``compute_metrics``
argument:

    trainer = Seq2SeqTrainer(
        model=model,
        args=Seq2SeqTrainingArguments(..., predict_with_generate=True,
                                      include_for_metrics=["inputs"]),
        train_dataset=tokenized_train,
        eval_dataset=tokenized_eval,
        compute_metrics=tame_compute_metrics(tokenizer, train=raw_train,
                                             source_lang="sw", target_lang="zu"),
    )

This script runs without a model (and without PyTorch): it builds a word-level
tokenizer for the bundled Swahili -> Zulu example and hands ``compute_metrics``
two evaluation steps shaped as Trainer gathers them, as if a model had
produced them. The first step audits the test set against the training corpus;
the second reuses that audit and only scores the new predictions.

    python examples/trainer_compute_metrics.py
"""

from __future__ import annotations

import time

import datasets
import numpy as np
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import EvalPrediction, PreTrainedTokenizerFast

from tame_mt_metric.demo import example_corpus
from tame_mt_metric.trainer import tame_compute_metrics


def word_tokenizer(texts: list[str]) -> PreTrainedTokenizerFast:
    words = sorted({w for t in texts for w in t.split()})
    vocab = {"<pad>": 0, "<unk>": 1} | {w: i + 2 for i, w in enumerate(words)}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=core, pad_token="<pad>", unk_token="<unk>"
    )


def gathered(tokenizer: PreTrainedTokenizerFast, texts: list[str], label: bool) -> np.ndarray:
    ids: np.ndarray = tokenizer(texts, padding=True, return_tensors="np")["input_ids"]
    if label:
        ids[ids == tokenizer.pad_token_id] = -100
    return ids


def main() -> None:
    data = example_corpus()
    train = datasets.Dataset.from_dict(
        {
            "translation": [
                {"sw": s, "zu": t}
                for s, t in zip(data["train_sources"], data["train_targets"], strict=True)
            ]
        }
    )
    sources, references = data["test_sources"], data["references"]
    tokenizer = word_tokenizer(sources + references)
    compute_metrics = tame_compute_metrics(
        tokenizer, train=train, source_lang="sw", target_lang="zu"
    )
    for step, drop_every in ((500, 3), (1000, 6)):  # the "model" improves
        outputs = [
            " ".join(w for i, w in enumerate(r.split()) if i % drop_every) for r in references
        ]
        prediction = EvalPrediction(
            predictions=gathered(tokenizer, outputs, label=False),
            label_ids=gathered(tokenizer, references, label=True),
            inputs=gathered(tokenizer, sources, label=False),
        )
        started = time.perf_counter()
        metrics = {f"eval_{k}": v for k, v in compute_metrics(prediction).items()}
        seconds = time.perf_counter() - started
        shown = ("eval_bleu", "eval_tm_bleu", "eval_delta_tm_bleu", "eval_far_bleu")
        print(
            f"step {step} ({seconds:.2f} s): " + ", ".join(f"{k} {metrics[k]:.2f}" for k in shown)
        )
    print(f"signature: {compute_metrics.signature}")


if __name__ == "__main__":
    main()
