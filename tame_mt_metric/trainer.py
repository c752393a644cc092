"""``compute_metrics`` for ``transformers.Trainer`` / ``Seq2SeqTrainer``: decodes
the gathered token ids, then returns the TAME fields. The audit of the test set
is cached after the first evaluation, so later evaluations only score the new
predictions.

    trainer = Seq2SeqTrainer(..., compute_metrics=tame_compute_metrics(
        tokenizer, train=train_dataset, sources=eval_sources))

The Trainer itself needs ``torch`` and ``accelerate``; this module needs neither.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from tame_mt_metric.errors import InvalidOptionError, LossySourcesWarning, MisalignedInputError
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


def _lossy_items(tokenizer: Any, ids: np.ndarray, texts: list[str]) -> tuple[int, int]:
    """How many decoded ``texts`` are not the texts their ``ids`` encoded, and of them
    how many hold the unknown token: a row with the unknown token's id (decoded as
    nothing), or a text that the tokenizer, when it can encode, encodes to other
    ids than the row's (special tokens and padding aside on both sides)."""
    special = set(getattr(tokenizer, "all_special_ids", None) or ()) | {tokenizer.pad_token_id}
    unk = getattr(tokenizer, "unk_token_id", None)
    rows = ids.tolist()
    again = tokenizer(texts, add_special_tokens=False)["input_ids"] if callable(tokenizer) else None
    lossy = unknown = 0
    for i, row in enumerate(rows):
        if unk is not None and unk in row:
            lossy, unknown = lossy + 1, unknown + 1
        elif again is not None and [t for t in again[i] if t not in special] != [
            t for t in row if t not in special
        ]:
            lossy += 1
    return lossy, unknown


class TameComputeMetrics:
    """The callable given to ``Trainer(compute_metrics=...)``.

    Sources come from ``sources`` (the evaluation set's source texts, in order);
    when ``None``, from the metric's load-time sources (``load(sources=...)``);
    otherwise from the decoded ``inputs`` that ``TrainingArguments(
    include_for_metrics=["inputs"])`` adds (``input_key`` names the ids in the
    batch dict that ``batch_eval_metrics=True`` passes). Decoded sources that are
    not the texts that were encoded (ids of the tokenizer's unknown token, dropped
    in decoding; a decoded text that encodes to other ids) are counted, and the
    first evaluation that has any warns once (``LossySourcesWarning``). With
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
        self._lossy = [0, 0]  # this evaluation's lossy decoded sources, and of them with unk
        self._warned = False

    def _decode(self, array: Any, check: bool = False) -> list[str]:
        """Texts of token ids; with ``check``, those that are not the texts that were
        encoded are counted for the evaluation's warning."""
        assert self.tokenizer.pad_token_id is not None
        ids = _ids(array, self.tokenizer.pad_token_id)
        texts = self.tokenizer.batch_decode(ids, skip_special_tokens=True)
        if check:
            self._count_lossy(ids, texts)
        return [self.postprocess(t) for t in texts]

    def _count_lossy(self, ids: np.ndarray, texts: list[str]) -> None:
        lossy, unknown = _lossy_items(self.tokenizer, ids, texts)
        self._lossy[0] += lossy
        self._lossy[1] += unknown

    def _warn_lossy(self, items: int) -> None:
        lossy, unknown = self._lossy
        self._lossy = [0, 0]
        if not lossy or self._warned:
            return
        self._warned = True
        unk = getattr(self.tokenizer, "unk_token", None)
        why = [f"{unknown} hold the unknown token {unk!r}, dropped in decoding"] if unknown else []
        if lossy > unknown:
            why.append(f"{lossy - unknown} decode to text that encodes to other ids")
        warnings.warn(
            f"{lossy} of {items} sources decoded from the inputs' token ids are not the texts "
            f"that were encoded ({'; '.join(why)}): their exposures, bins and TM baseline are "
            "measured on changed text. Pass the evaluation set's source texts: "
            "tame_compute_metrics(..., sources=...) or load(..., sources=...).",
            LossySourcesWarning,
            stacklevel=3,
        )

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
            sources = self._decode(_input_ids(inputs, self.input_key), check=True)
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
            self._lossy = [0, 0]
            discard = getattr(self.metric, "discard_pending", None)
            if callable(discard):
                discard()
            raise
        items, self._seen = self._seen, 0
        self._warn_lossy(items)
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
