"""System quality from sacrebleu's sufficient statistics: each hypothesis set
is read once into per-segment statistics, and any subset of segments (a bin)
is scored from its rows: corpus metrics sum them, exactly as sacrebleu scores
a corpus; ``chrf++_avg`` averages the sentence scores of the rows.

Metrics: ``bleu`` (tokenizer ``bleu_tokenize``), ``chrf`` (word order
``chrf_word_order``; chrF++ by default), ``spbleu`` (BLEU over FLORES
SentencePiece pieces), ``chrf++`` (corpus chrF++) and ``chrf++_avg`` (the mean
of sentence-level chrF++: the FLORES protocol reports both, as they differ).
"""

from __future__ import annotations

import atexit
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sacrebleu
from sacrebleu.metrics.bleu import BLEU

from tame_mt_metric.digest import digest
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.metric_registry import REGISTRY
from tame_mt_metric.report.sacrebleu_internals import score_of_sums, segment_statistics

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "SACREBLEU_VERSION",
    "Scorers",
    "SegmentStatistics",
    "resampler",
    "same_numbers",
    "statistics_names",
]

SACREBLEU_VERSION: str = sacrebleu.__version__


@dataclass(frozen=True)
class MetricDef:
    """A reported metric under the settings at hand (``metric_registry``'s entry
    resolved): the sacrebleu statistics it reads, and how it aggregates."""

    name: str
    statistics: str
    sentence_mean: bool = False


def _defs(metrics: Sequence[str], chrf_word_order: int) -> list[MetricDef]:
    return [
        MetricDef(m, REGISTRY[m].statistics(chrf_word_order), REGISTRY[m].sentence_mean)
        for m in metrics
    ]


def metric_defs(config: TameConfig) -> list[MetricDef]:
    return _defs(config.metrics, config.chrf_word_order)


def same_numbers(metrics: Sequence[str], chrf_word_order: int) -> list[list[str]]:
    """The metric keys grouped by the number they give, in order: keys that read
    the same sacrebleu statistics the same way (``chrf`` and ``chrf++`` at word
    order 2) are one number, which every human surface shows once.

    >>> same_numbers(["bleu", "chrf", "chrf++"], 2), same_numbers(["chrf", "chrf++"], 0)
    ([['bleu'], ['chrf', 'chrf++']], [['chrf'], ['chrf++']])
    """
    groups: dict[tuple[str, bool], list[str]] = {}
    for d in _defs(metrics, chrf_word_order):
        groups.setdefault((d.statistics, d.sentence_mean), []).append(d.name)
    return list(groups.values())


def _column_sums(rows: list[list[int]]) -> list[int]:
    """Sums of the statistics over segments (sacrebleu's ``sum_of_lists``; integers,
    so exact in any order)."""
    return [sum(column) for column in zip(*rows, strict=True)]


class SegmentStatistics:
    """Per-segment statistics of one hypothesis set, by sacrebleu metric."""

    def __init__(
        self, defs: list[MetricDef], metrics: dict[str, Any], stats: dict[str, list[list[int]]]
    ) -> None:
        self._defs = defs
        self._metrics = metrics
        self._stats = stats
        # Made on first use by the resampler: every segment's statistics as one
        # array, and the sentence scores of a sentence mean.
        self._arrays: dict[str, np.ndarray] = {}
        self._sentences: dict[str, np.ndarray] = {}

    def _array(self, name: str) -> np.ndarray:
        """The statistics ``name`` of every segment, one row each (integers held
        exactly as floats, for the matrix product)."""
        import numpy as np

        found = self._arrays.get(name)
        if found is None:
            segments = self._stats[name]
            width = len(segments[0]) if segments else 0
            found = np.array(segments, dtype=np.float64).reshape(len(segments), width)
            self._arrays[name] = found
        return found

    def _sentence_scores(self, name: str) -> np.ndarray:
        """Every segment's own score by the metric of statistics ``name``."""
        from tame_mt_metric.report.batch_scores import score_rows

        found = self._sentences.get(name)
        if found is None:
            found = score_rows(self._metrics[name], self._array(name).astype("int64"))
            self._sentences[name] = found
        return found

    def rows(self) -> dict[str, list[list[int]]]:
        """The per-segment statistics by sacrebleu metric (what an audit caches)."""
        return self._stats

    @property
    def metric_names(self) -> list[str]:
        return [d.name for d in self._defs]

    def corpus_metrics(self) -> list[tuple[str, str, Any]]:
        """(metric, statistics name, sacrebleu metric) of each corpus-level metric."""
        return [
            (d.name, d.statistics, self._metrics[d.statistics])
            for d in self._defs
            if not d.sentence_mean
        ]

    def resampler(self, rows: Sequence[int]) -> Callable[[np.ndarray], dict[str, np.ndarray]]:
        """Scores of resamples of the given segments (``resampler`` of this one)."""
        joint = resampler([self], rows)
        return lambda counts: joint(counts)[0]

    def bleu_details(self, rows: Sequence[int] | None = None) -> dict[str, dict[str, Any] | None]:
        """BLEU's breakdown of the given segments (all by default) for each BLEU-like
        metric (``bleu``, ``spbleu``): sacrebleu's four n-gram precisions, brevity
        penalty, length ratio and hypothesis and reference lengths of the summed
        statistics; None for no segments."""
        out: dict[str, dict[str, Any] | None] = {}
        for d in self._defs:
            if not isinstance(self._metrics[d.statistics], BLEU):
                continue
            stats = self._stats[d.statistics]
            chosen = stats if rows is None else [stats[i] for i in rows]
            if not chosen:
                out[d.name] = None
                continue
            found = score_of_sums(self._metrics[d.statistics], _column_sums(chosen))
            out[d.name] = {
                "precisions": [float(p) for p in found.precisions],
                "bp": float(found.bp),
                "ratio": float(found.ratio),
                "sys_len": int(found.sys_len),
                "ref_len": int(found.ref_len),
            }
        return out

    def score(self, rows: Sequence[int] | None = None) -> dict[str, float]:
        """Scores (0-100) of the given segments (all by default); nan for none."""
        out = {}
        for d in self._defs:
            stats = self._stats[d.statistics]
            chosen = stats if rows is None else [stats[i] for i in rows]
            metric = self._metrics[d.statistics]
            if not chosen:
                out[d.name] = float("nan")
            elif d.sentence_mean:
                scores = [score_of_sums(metric, s).score for s in chosen]
                out[d.name] = float(sum(scores) / len(scores))
            else:
                out[d.name] = float(score_of_sums(metric, _column_sums(chosen)).score)
        return out


# The most work (rows x inner x columns) of one matrix product of resample
# counts and statistics: OpenBLAS, numpy's own, runs a product this small on
# the calling thread, where a larger one wakes its worker threads, and those
# then spin between products, taking a core from the interpreter's own work
# on a machine of few cores. The sums are integers, so exact in any order.
PRODUCT_WORK = 1 << 18


def _product(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``counts @ values``, a few rows of ``counts`` at a time."""
    import numpy as np

    rows = max(1, PRODUCT_WORK // max(1, values.shape[0] * values.shape[1]))
    out: np.ndarray = np.empty((counts.shape[0], values.shape[1]))
    for start in range(0, counts.shape[0], rows):
        np.matmul(counts[start : start + rows], values, out=out[start : start + rows])
    return out


def resampler(
    statistics: Sequence[SegmentStatistics], rows: Sequence[int]
) -> Callable[[np.ndarray], list[dict[str, np.ndarray]]]:
    """Scores of resamples of the given segments, for several hypothesis sets
    on the same resamples (a system and its TM baseline): the returned function
    takes ``counts`` (``counts[b, j]``: how often resample ``b`` draws segment
    ``rows[j]``) and gives, for each set, each metric's score of every
    resample. Corpus metrics re-sum the statistics (integers, so exact; every
    set's statistics in one matrix product) and score the sums of all
    resamples at once as sacrebleu scores each (``batch_scores``); a sentence
    mean averages the drawn segments' scores."""
    import numpy as np

    from tame_mt_metric.report.batch_scores import score_rows

    chosen = np.asarray(rows, dtype=np.intp)
    blocks: list[np.ndarray] = []
    columns: dict[tuple[int, str], slice] = {}
    means: list[dict[str, np.ndarray]] = []
    for k, stats in enumerate(statistics):
        means.append({})
        for d in stats._defs:
            if d.sentence_mean:
                means[k][d.name] = stats._sentence_scores(d.statistics)[chosen] / len(rows)
            elif (k, d.statistics) not in columns:
                first = sum(b.shape[1] for b in blocks)
                blocks.append(stats._array(d.statistics)[chosen])
                columns[k, d.statistics] = slice(first, first + blocks[-1].shape[1])
    values = np.hstack(blocks) if blocks else np.zeros((len(rows), 0))

    def score(counts: np.ndarray) -> list[dict[str, np.ndarray]]:
        sums = np.rint(_product(counts, values)).astype(np.int64)
        out: list[dict[str, np.ndarray]] = []
        for k, stats in enumerate(statistics):
            out.append({})
            for d in stats._defs:
                if d.sentence_mean:
                    out[k][d.name] = counts @ means[k][d.name]
                else:
                    metric = stats._metrics[d.statistics]
                    out[k][d.name] = score_rows(metric, sums[:, columns[k, d.statistics]])
        return out

    return score


def statistics_names(config: TameConfig) -> set[str]:
    """The sacrebleu statistics the configured metrics read (an audit's keys)."""
    return {d.statistics for d in metric_defs(config)}


_RECENT: OrderedDict[tuple[str, str], Scorers] = OrderedDict()
_RECENT_SIZE = 4
# Emptied at exit, before the interpreter's last collections, which would
# otherwise walk every n-gram table of the references (0.1 s off each process's
# exit in a warm compute() at 10^6 pairs).
atexit.register(_RECENT.clear)
# Held while the scorers of some references are found or made: a call on
# another thread that needs the same ones waits for them instead of reading
# the references again.
_RECENT_LOCK = threading.Lock()


class Scorers:
    """The configured sacrebleu metrics with the references read once.

    >>> scorers = Scorers(TameConfig(), [["the cat sat on the mat"], ["a dog barked"]])
    >>> stats = scorers.statistics(["the cat sat on the mat", "a cat barked"])
    >>> {name: round(score, 2) for name, score in stats.score([0]).items()}
    {'bleu': 100.0, 'chrf': 100.0}
    """

    def __init__(self, config: TameConfig, references: Sequence[Sequence[str]]) -> None:
        """``references`` holds one list per item (the same count for every item)."""
        streams = [list(stream) for stream in zip(*references, strict=True)]
        self._references = [list(refs) for refs in references]
        self._defs = metric_defs(config)
        self._metrics: dict[str, Any] = {}
        for d in self._defs:
            if d.statistics not in self._metrics:
                self._metrics[d.statistics] = REGISTRY[d.name].make(config, streams)

    @classmethod
    def for_references(cls, config: TameConfig, references: Sequence[Sequence[str]]) -> Scorers:
        """Scorers of these references, reused while the same references come back
        (a training loop evaluates one test set many times)."""
        num_refs = len(references[0]) if references else 0
        key = (config.scores_signature(num_refs), digest(t for refs in references for t in refs))
        with _RECENT_LOCK:
            found = _RECENT.get(key)
            if found is None or found._references != references:
                found = _RECENT[key] = cls(config, references)
                while len(_RECENT) > _RECENT_SIZE:
                    _RECENT.popitem(last=False)
            _RECENT.move_to_end(key)
            return found

    def from_rows(self, stats: dict[str, list[list[int]]]) -> SegmentStatistics:
        """Statistics extracted earlier (by ``statistics(...).rows()``) with the same settings."""
        return SegmentStatistics(self._defs, self._metrics, stats)

    def statistics(self, hypotheses: Sequence[str]) -> SegmentStatistics:
        hyps = list(hypotheses)
        stats = {name: segment_statistics(metric, hyps) for name, metric in self._metrics.items()}
        return SegmentStatistics(self._defs, self._metrics, stats)
