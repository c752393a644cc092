"""Sentence-level scores of a system, one per segment, for segment-level
metric-human correlation: sacrebleu's sentence BLEU (effective order, as
``sacrebleu.sentence_bleu``), sentence chrF++ and, when a SentencePiece model
is given, sentence spBLEU over its pieces."""

from __future__ import annotations

from collections.abc import Sequence

from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF

from tame_mt_metric.errors import MisalignedInputError
from tame_mt_metric.report.spbleu import find_model, spbleu_metric

__all__ = ["sentence_scores"]


def sentence_scores(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    spm_model: str | None = None,
    spbleu_tokenize: str = "flores200",
) -> dict[str, list[float]]:
    """``{"bleu": [...], "chrf++": [...]}`` (and ``"spbleu"`` with a model), one
    score per hypothesis; ``references`` holds one list per hypothesis."""
    if len(hypotheses) != len(references):
        raise MisalignedInputError(
            f"hypotheses: {len(hypotheses)} segments, references: {len(references)}"
        )
    metrics = {"bleu": BLEU(effective_order=True), "chrf++": CHRF(word_order=2)}
    if spm_model is not None:
        spbleu = spbleu_metric(find_model(spbleu_tokenize, spm_model))
        spbleu.effective_order = True
        metrics["spbleu"] = spbleu
    return {
        name: [
            metric.sentence_score(h, list(refs)).score
            for h, refs in zip(hypotheses, references, strict=True)
        ]
        for name, metric in metrics.items()
    }
