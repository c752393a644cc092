"""``compute_metrics`` for ``transformers.Trainer`` / ``Seq2SeqTrainer``: decodes
the gathered token ids, then returns the TAME fields. The audit of the test set
is cached after the first evaluation, so later evaluations only score the new
predictions.

    trainer = Seq2SeqTrainer(..., compute_metrics=tame_compute_metrics(
        tokenizer, train=train_dataset, sources=eval_sources))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from tame_mt_metric.errors import InvalidOptionError, MisalignedInputError
from tame_mt_metric.loading import load

__all__ = ["TameComputeMetrics", "tame_compute_metrics"]


class Tokenizer(Protocol):
    pad_token_id: int | None

    def batch_decode(self, sequences: Any, skip_special_tokens: bool = ...) -> list[str]: ...


def _ids(array: Any, pad: int) -> np.ndarray:
    """Token ids with the label padding (-100) replaced by the pad id."""
    if isinstance(array, tuple):  # (generated ids, ...) from some models
        array = array[0]
    ids = np.asarray(array)
    return np.where(ids < 0, pad, ids)


class TameComputeMetrics:
    """The callable given to ``Trainer(compute_metrics=...)``.

    Sources come from ``sources`` (the evaluation set's source texts, in order) or,
    when ``None``, from the decoded ``inputs`` that ``TrainingArguments(
    include_for_metrics=["inputs"])`` adds. With ``batch_eval_metrics=True`` the
    batches are collected and scored when ``compute_result`` is true.
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
    ) -> None:
        if tokenizer.pad_token_id is None:
            raise InvalidOptionError("tokenizer: has no pad_token_id to replace -100 with")
        self.tokenizer = tokenizer
        self.metric = metric
        self.sources = None if sources is None else list(sources)
        self.keep_signature = keep_signature
        self.postprocess = postprocess
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
        if self.sources is not None:
            sources = self.sources[self._seen : self._seen + len(predictions)]
            if len(sources) != len(predictions):
                raise MisalignedInputError(
                    f"sources has {len(self.sources)} items but the evaluation reached "
                    f"item {self._seen + len(predictions)}"
                )
        elif getattr(eval_prediction, "inputs", None) is not None:
            sources = self._decode(eval_prediction.inputs)
        else:
            raise InvalidOptionError(
                "sources: give the evaluation sources, or set "
                "TrainingArguments(include_for_metrics=['inputs'])"
            )
        self._seen += len(predictions)
        return {"predictions": predictions, "references": references, "sources": sources}

    def __call__(self, eval_prediction: Any, compute_result: bool = True) -> dict[str, Any]:
        batch = self._batch(eval_prediction)
        if not compute_result:
            self.metric.add_batch(**batch)
            return {}
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
    **options: Any,
) -> TameComputeMetrics:
    """A ``compute_metrics`` for ``Trainer``: ``train`` and ``options`` are the
    metric's load-time options (or pass a loaded ``metric``)."""
    if metric is None:
        metric = load(train=train, keep_in_memory=True, **options)
    elif train is not None or options:
        raise InvalidOptionError("metric: give a loaded metric or its options, not both")
    return TameComputeMetrics(tokenizer, metric, sources, keep_signature)
