"""The metrics a report scores, one entry per metric key: its human name, the
sacrebleu statistics it reads, how its sacrebleu metric is made, and its
piece of the signature. ``TameConfig`` checks metric keys against it,
``scores`` scores from it, ``labels`` names from it and the signature is made
from it: a new metric is one entry here (and its statistics, if new, scored by
sacrebleu's own metric). Loads without sacrebleu: each entry imports it when
used.

>>> [entry.statistics(2) for entry in REGISTRY.values()]
['bleu', 'chrf_wo2', 'spbleu', 'chrf_wo2', 'chrf_wo2']
>>> REGISTRY["chrf"].label(0), REGISTRY["chrf++_avg"].label(0)
('chrF2', 'chrF++ (sentence mean)')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

__all__ = [
    "METRICS",
    "REGISTRY",
    "MetricEntry",
    "ScoreSettings",
    "bleu_signature",
    "chrf_label",
    "chrf_signature",
]


class ScoreSettings(Protocol):
    """The settings of the scores (a ``TameConfig`` holds them)."""

    @property
    def bleu_tokenize(self) -> str: ...
    @property
    def bleu_lowercase(self) -> bool: ...
    @property
    def chrf_word_order(self) -> int: ...
    @property
    def spbleu_tokenize(self) -> str: ...
    @property
    def spm_model(self) -> str | None: ...


References = Sequence[Sequence[str]]


@dataclass(frozen=True)
class MetricEntry:
    """One metric key of the report.

    label: its human name, given chrF's word order setting.
    statistics: the sacrebleu statistics it reads, given that word order (keys
        that read the same statistics share one sacrebleu metric).
    make: its sacrebleu metric, from the settings and the reference streams.
    sacrebleu_signature: sacrebleu's own signature of that metric for a number of
        references per item, or None where sacrebleu's would not say it.
    own_signature: a piece of the report's signature of its own (spBLEU's model).
    check: what must hold of the settings when it is chosen (spBLEU's model found).
    sentence_mean: the mean of sentence scores, not a corpus score of summed
        statistics."""

    key: str
    label: Callable[[int], str]
    statistics: Callable[[int], str]
    make: Callable[[ScoreSettings, References], Any]
    sacrebleu_signature: Callable[[ScoreSettings, int], str | None]
    own_signature: Callable[[ScoreSettings], str | None] = lambda settings: None
    check: Callable[[ScoreSettings], None] = lambda settings: None
    sentence_mean: bool = False


def chrf_label(word_order: int) -> str:
    """chrF's name for this word order: chrF2 (0), chrF++ (2), else sacrebleu's (chrF2+...)."""
    return "chrF++" if word_order == 2 else "chrF2" + "+" * word_order


@cache
def bleu_signature(tokenize: str, lowercase: bool, num_refs: int) -> str:
    """sacrebleu's signature of its BLEU with these settings (its tokenizer's own
    signature among them: MeCab's names its version)."""
    from sacrebleu.metrics.bleu import BLEU

    metric = BLEU(tokenize=tokenize, lowercase=lowercase)
    metric.num_refs = num_refs  # what sacrebleu learns from the references it is given
    return str(metric.get_signature().format())


@cache
def chrf_signature(word_order: int, num_refs: int) -> str:
    """sacrebleu's signature of its chrF of this word order."""
    from sacrebleu.metrics.chrf import CHRF

    metric = CHRF(word_order=word_order)
    metric.num_refs = num_refs
    return str(metric.get_signature().format())


def _bleu(settings: ScoreSettings, references: References) -> Any:
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(
        tokenize=settings.bleu_tokenize, lowercase=settings.bleu_lowercase, references=references
    )


def _spbleu(settings: ScoreSettings, references: References) -> Any:
    from tame_mt_metric.report.spbleu import find_model, spbleu_metric

    return spbleu_metric(find_model(settings.spbleu_tokenize, settings.spm_model), references)


def _spm_model_signature(settings: ScoreSettings) -> str:
    from tame_mt_metric.report.spbleu import find_model

    return f"spbleu:{find_model(settings.spbleu_tokenize, settings.spm_model).signature()}"


def _find_spm_model(settings: ScoreSettings) -> None:
    from tame_mt_metric.report.spbleu import find_model

    find_model(settings.spbleu_tokenize, settings.spm_model)  # a missing model fails here


def _chrf(word_order: int | None) -> Callable[[ScoreSettings, References], Any]:
    """chrF of a fixed word order, or of the ``chrf_word_order`` setting (None)."""

    def make(settings: ScoreSettings, references: References) -> Any:
        from sacrebleu.metrics.chrf import CHRF

        order = settings.chrf_word_order if word_order is None else word_order
        return CHRF(word_order=order, references=references)

    return make


def _chrf_entry(
    key: str, word_order: int | None, name: str | None = None, sentence_mean: bool = False
) -> MetricEntry:
    """A chrF key: of a fixed word order, or of the setting (None); named by its
    word order unless ``name`` is given."""

    def order(setting: int) -> int:
        return setting if word_order is None else word_order

    return MetricEntry(
        key,
        label=lambda setting: name or chrf_label(order(setting)),
        statistics=lambda setting: f"chrf_wo{order(setting)}",
        make=_chrf(word_order),
        sacrebleu_signature=lambda s, refs: chrf_signature(order(s.chrf_word_order), refs),
        sentence_mean=sentence_mean,
    )


REGISTRY: dict[str, MetricEntry] = {
    "bleu": MetricEntry(
        "bleu",
        label=lambda setting: "BLEU",
        statistics=lambda setting: "bleu",
        make=_bleu,
        sacrebleu_signature=lambda s, refs: bleu_signature(s.bleu_tokenize, s.bleu_lowercase, refs),
    ),
    "chrf": _chrf_entry("chrf", None),
    "spbleu": MetricEntry(
        "spbleu",
        label=lambda setting: "spBLEU",
        statistics=lambda setting: "spbleu",
        make=_spbleu,
        sacrebleu_signature=lambda s, refs: None,  # sacrebleu's names no model file
        own_signature=_spm_model_signature,
        check=_find_spm_model,
    ),
    "chrf++": _chrf_entry("chrf++", 2),
    "chrf++_avg": _chrf_entry("chrf++_avg", 2, "chrF++ (sentence mean)", sentence_mean=True),
}
# The metric keys, in the order the options list them.
METRICS: tuple[str, ...] = tuple(REGISTRY)
