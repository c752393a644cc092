"""``compute_metrics`` for ``transformers.Trainer`` / ``Seq2SeqTrainer``: decodes
the gathered token ids, then returns the TAME fields. The audit of the test set
is cached after the first evaluation, so later evaluations only score the new
predictions.

    trainer = Seq2SeqTrainer(..., compute_metrics=tame_compute_metrics(
        tokenizer, train=train_dataset, sources=eval_sources))

The Trainer itself needs ``torch`` and ``accelerate``; this module needs neither.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from tame_mt_metric.errors import InvalidOptionError, MisalignedInputError
from tame_mt_metric.loading import load

__all__ = ["TameComputeMetrics", "tame_compute_metrics"]


class Tokenizer(Protocol):
    pad_token_id: int | None

    def batch_decode(self, sequences: Any, skip_special_tokens: bool = ...) -> list[str]: ...


def _ids(array: Any, pad: int) -> np.ndarray:
    """Token ids with the label padding (-100) replaced by the pad id: from the
    gathered numpy arrays, or the tensors of one batch (``batch_eval_metrics``)."""
    if isinstance(array, tuple):  # (generated ids, ...) from some models
        array = array[0]
    if hasattr(array, "detach"):  # a torch tensor, possibly on an accelerator
        array = array.detach().cpu().numpy()
    ids = np.asarray(array)
    if not np.issubdtype(ids.dtype, np.integer):
        raise InvalidOptionError(
            f"expected token ids (integers), got an array of {ids.dtype}; pass generated ids "
            "(Seq2SeqTrainingArguments(predict_with_generate=True)) or reduce logits to ids "
            "with preprocess_logits_for_metrics"
        )
    return np.where(ids < 0, pad, ids)


def _input_ids(inputs: Any, key: str) -> Any:
    """The ids of the inputs: with ``batch_eval_metrics=True`` Trainer passes the
    batch's input dict (ids, attention mask, labels), otherwise the gathered ids."""
    if isinstance(inputs, Mapping):
        if key not in inputs:
            raise InvalidOptionError(
                f"inputs: the batch has no {key!r} (keys: {sorted(inputs)}); "
                "give input_key= or the evaluation sources"
            )
        return inputs[key]
    return inputs


class TameComputeMetrics:
    """The callable given to ``Trainer(compute_metrics=...)``.

    Sources come from ``sources`` (the evaluation set's source texts, in order);
    when ``None``, from the metric's load-time sources (``load(sources=...)``);
    otherwise from the decoded ``inputs`` that ``TrainingArguments(
    include_for_metrics=["inputs"])`` adds (``input_key`` names the ids in the
    batch dict that ``batch_eval_metrics=True`` passes). With
    ``batch_eval_metrics=True`` the batches are collected and scored when
    ``compute_result`` is true.
    ``signature`` holds the last signature; it is left out of the returned dict
    unless ``keep_signature`` (loggers expect numbers).
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        metric: Any,
        sources: Sequence[str] | None = None,
        keep_signature: bool = False,
        postprocess: Callable[[str], str] = str.strip,
        input_key: str = "input_ids",
    ) -> None:
        if tokenizer.pad_token_id is None:
            raise InvalidOptionError("tokenizer: has no pad_token_id to replace -100 with")
        self.tokenizer = tokenizer
        self.metric = metric
        self.sources = None if sources is None else list(sources)
        self.keep_signature = keep_signature
        self.postprocess = postprocess
        self.input_key = input_key
        self.signature: str | None = None
        self._seen = 0

    def _decode(self, array: Any) -> list[str]:
        assert self.tokenizer.pad_token_id is not None
        ids = _ids(array, self.tokenizer.pad_token_id)
        texts = self.tokenizer.batch_decode(ids, skip_special_tokens=True)
        return [self.postprocess(t) for t in texts]

    def _batch(self, eval_prediction: Any) -> dict[str, list[str]]:
        predictions = self._decode(eval_prediction.predictions)
        references = self._decode(eval_prediction.label_ids)
        batch = {"predictions": predictions, "references": references}
        inputs = getattr(eval_prediction, "inputs", None)
        if self.sources is not None:
            sources = self.sources[self._seen : self._seen + len(predictions)]
            if len(sources) != len(predictions):
                raise MisalignedInputError(
                    f"sources has {len(self.sources)} items but the evaluation reached "
                    f"item {self._seen + len(predictions)}"
                )
            batch["sources"] = sources
        elif getattr(self.metric, "sources", None) is not None:
            pass  # the metric's load-time sources: it matches them to the items
        elif inputs is not None:
            sources = self._decode(_input_ids(inputs, self.input_key))
            if len(sources) != len(predictions):
                raise MisalignedInputError(
                    f"inputs has {len(sources)} items but predictions has {len(predictions)} "
                    "(with several processes and batch_eval_metrics=True, Trainer passes "
                    "one process's inputs with every process's predictions); give the "
                    "evaluation sources instead"
                )
            batch["sources"] = sources
        else:
            raise InvalidOptionError(
                "sources: give the evaluation sources, load the metric with sources=, or "
                "set TrainingArguments(include_for_metrics=['inputs'])"
            )
        self._seen += len(predictions)
        return batch

    def __call__(self, eval_prediction: Any, compute_result: bool = True) -> dict[str, Any]:
        try:
            batch = self._batch(eval_prediction)
            if not compute_result:
                self.metric.add_batch(**batch)
                return {}
        except BaseException:
            # The evaluation is given up: the next one starts from the first item.
            self._seen = 0
            discard = getattr(self.metric, "discard_pending", None)
            if callable(discard):
                discard()
            raise
        self._seen = 0
        out: dict[str, Any] = self.metric.compute(**batch)
        self.signature = out["signature"]
        if not self.keep_signature:
            del out["signature"]
        return out


def tame_compute_metrics(
    tokenizer: Tokenizer,
    train: object = None,
    sources: Sequence[str] | None = None,
    keep_signature: bool = False,
    metric: Any = None,
    input_key: str = "input_ids",
    **options: Any,
) -> TameComputeMetrics:
    """A ``compute_metrics`` for ``Trainer``: ``train`` and ``options`` are the
    metric's load-time options (or pass a loaded ``metric``)."""
    if metric is None:
        metric = load(train=train, keep_in_memory=True, **options)
    elif train is not None or options:
        raise InvalidOptionError("metric: give a loaded metric or its options, not both")
    return TameComputeMetrics(tokenizer, metric, sources, keep_signature, input_key=input_key)
