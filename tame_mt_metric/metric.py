"""The ``evaluate`` metric: ``TameMT`` returns the TAME fields of a system."""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from typing import Any

import datasets
import evaluate

from tame_mt_metric.cache.entries import CacheOptions
from tame_mt_metric.digest import digest
from tame_mt_metric.errors import EmptyTestSetError, InvalidOptionError, MisalignedInputError
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.pipeline import check_test_set, score_tame
from tame_mt_metric.retrieval.corpus import TrainingCorpus, TrainingStream, training_corpus
from tame_mt_metric.retrieval.inputs import check_aligned, check_texts

__all__ = ["HOMEPAGE", "LICENSE", "TameMT"]

HOMEPAGE = "https://pypi.org/project/tame-mt-metric/"
LICENSE = "MIT"

_CITATION = """\
@software{tame_mt_2026,
  title = {TAME-MT: Training-Aware Machine Translation Evaluation for Machine Translation},
  year = {2026},
  version = {0.1.0},
  url = {https://github.com/hunterschep/TAME-MT}
}
"""

_DESCRIPTION = """\
TAME (training-aware MT evaluation) asks how much of a system's score is earned on
test items that are close to its training data. Besides system BLEU and chrF it
reports a translation-memory (TM) baseline (reuse the training target of the
nearest training source) and the system's margin over it; the exposure of test
sources, references and pairs to the training corpus (exact character n-gram
Jaccard nearest neighbours); PairLeak@t; scores per exposure bin (source_exact,
near, medium, far); Far-BLEU; and GenGap (near minus far). Every number comes
with a signature that names the settings, the versions and the training corpus.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): system translations.
    references (list of str, or list of lists of str): one reference per
        prediction, or the same number of references for every prediction.
    sources (list of str): the test sources, unless given at load time (then
        they may be given again only if equal, item for item, to those of the
        predictions of the call).
    train: the training corpus, unless given at load time: a ``datasets.Dataset``
        with ``source``/``target`` columns (names set by ``source_column`` and
        ``target_column`` at load time, or a ``translation`` column with
        ``source_lang``/``target_lang``; memory-mapped Arrow is read in place), a
        ``pyarrow.Table``, a dict of two lists, or a stream read once block by
        block: a ``datasets.IterableDataset`` (``streaming=True``) or any
        iterable of ``{source, target}`` rows or Arrow record batches.
    return_report (bool): also return ``report`` (the JSON report) and
        ``segments`` (per-item diagnostics). Default False.
    include_neighbor_text (bool): put the neighbours' training text in
        ``segments``. Default False.
    confidence_intervals (bool): also return ``<score>_ci_low`` and
        ``<score>_ci_high`` for every score (bootstrap over test items; the
        JSON report always holds them). Default False.

Load-time options (``evaluate.load("tame_mt", **options)``): ``train``;
``sources`` (the test sources, in order: ``compute`` and ``add_batch`` then
take predictions and references alone, as ``evaluate.combine`` passes them,
and the predictions must number as many as the sources); ``source_column``,
``target_column``, ``source_lang``, ``target_lang``; the cache
(``tame_cache_dir``, default ``HF_DATASETS_CACHE/tame_mt``; ``train_key``, a name
for the corpus instead of its content hash; ``use_cache``, default True); and the
report settings ``ngram_orders`` (3,4,5), ``lowercase``, ``strip_diacritics``,
``normalize_punctuation`` (False), ``far_threshold`` (0.30), ``near_threshold``
(0.70), ``leak_thresholds`` (0.70,0.85,0.95), ``metrics`` (bleu,chrf; also
spbleu, chrf++ and chrf++_avg), ``bleu_tokenize`` (13a), ``bleu_lowercase``
(False), ``chrf_word_order`` (2: chrF++), ``spbleu_tokenize`` (flores200),
``spm_model`` (path), ``tm_zero_policy`` (empty), ``min_bin_size_warning`` (30),
``confidence`` (0.95), ``n_bootstrap`` (1000; 0 turns intervals off), ``seed`` (12345),
``curve_bands`` (10) or ``curve_edges`` (the exposure curve),
``threads``, ``strategy`` (auto), ``block_rows``.

Returns:
    A flat dict of plain numbers (BLEU/chrF on the 0-100 scale, rates and
    exposures in [0, 1], nan where undefined): bleu, chrf, tm_bleu, tm_chrf,
    delta_tm_bleu, delta_tm_chrf, source/target/pair_exposure_mean,
    source/target/pair_exact_rate, pair_leak@<t> per leak threshold, far_bleu,
    far_chrf, gen_gap_bleu, gen_gap_chrf, bin/<bin>/{count,bleu,chrf,tm_bleu,tm_chrf}
    for the bins source_exact, near, medium and far; and signature.

    ``chrf`` is chrF with word n-grams up to ``chrf_word_order``: chrF++ by
    default (word order 2, the TAME-MT spec's default), while sacrebleu's
    ``chrf`` (``sacrebleu -m chrf``, ``CHRF()``) and evaluate's ``chrf``
    default to chrF2 (characters only, word order 0) and so give another
    number (usually a little higher); ``chrf_word_order=0`` gives theirs. The word order
    is in the signature (``nw:`` of the chrf piece), and human reports name
    the score chrF++ or chrF2 accordingly.

Examples:
    >>> import tame_mt_metric
    >>> train = {"source": ["the house is small", "the tree is tall"],
    ...          "target": ["das Haus ist klein", "der Baum ist hoch"]}
    >>> tame = tame_mt_metric.load(train=train, keep_in_memory=True)
    >>> out = tame.compute(predictions=["das Haus ist klein"],
    ...                    references=["das Haus ist klein"],
    ...                    sources=["the house is small"])
    >>> out["bin/source_exact/count"], out["tm_bleu"] == out["bleu"]
    (1, True)
    >>> out["signature"].split("|")[:2]
    ['tame-mt-metric', 'v:0.1.0']
    >>> fixed = tame_mt_metric.load(train=train, sources=["the house is small"],
    ...                             keep_in_memory=True)
    >>> fixed.compute(predictions=["das Haus ist klein"],
    ...               references=["das Haus ist klein"])["bin/source_exact/count"]
    1
"""

_BASE_OPTIONS = frozenset(inspect.signature(evaluate.EvaluationModule.__init__).parameters) - {
    "self",
    "kwargs",
}


_COMPUTE_ARGUMENTS = frozenset(
    {"sources", "train", "return_report", "include_neighbor_text", "confidence_intervals"}
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TameMT(evaluate.Metric):  # type: ignore[misc]
    """Training-aware MT evaluation (TAME) as an ``evaluate`` metric."""

    def __init__(
        self,
        train: object = None,
        sources: Sequence[str] | None = None,
        source_column: str = "source",
        target_column: str = "target",
        source_lang: str | None = None,
        target_lang: str | None = None,
        tame_cache_dir: str | None = None,
        train_key: str | None = None,
        use_cache: bool = True,
        **options: Any,
    ) -> None:
        base = {k: options.pop(k) for k in list(options) if k in _BASE_OPTIONS}
        if "seed" in base:  # evaluate's own seed (NumPy's legacy generator): 32 bits
            TameConfig(seed=base["seed"])
        self.tame_config = TameConfig.from_options(**options)
        self.cache = CacheOptions(tame_cache_dir, train_key, use_cache)
        self._last_corpus: tuple[object, object, TrainingCorpus | TrainingStream] | None = None
        self._columns: dict[str, Any] = {
            "source_column": source_column,
            "target_column": target_column,
            "source_lang": source_lang,
            "target_lang": target_lang,
        }
        self.train = None if train is None else self._corpus(train)
        self.sources: list[str] | None = None
        self.sources_digest: str | None = None
        if sources is not None:
            self.sources = check_texts("sources", sources)
            if not self.sources:
                raise EmptyTestSetError("sources: the test set is empty")
            if base.get("num_process", 1) != 1:
                raise InvalidOptionError(
                    "sources: load-time sources are matched to the predictions in the "
                    "order they are added, which needs num_process=1; give sources= "
                    "with each batch instead"
                )
            self.sources_digest = digest(self.sources)
        self._checked_items = 0
        super().__init__(**base)

    def _corpus(self, train: object) -> TrainingCorpus | TrainingStream:
        """The training corpus; the same dataset given again (same object, same
        fingerprint) is not read again."""
        fingerprint = getattr(train, "_fingerprint", None)
        last = self._last_corpus
        if last is not None and last[0] is train and last[1] == fingerprint:
            return last[2]
        corpus = training_corpus(train, **self._columns)
        if fingerprint is not None:
            self._last_corpus = (train, fingerprint, corpus)
        return corpus

    def _info(self) -> evaluate.MetricInfo:
        # With load-time sources the features are predictions and references
        # alone: evaluate.combine hands each metric only its features.
        string = datasets.Value("string")
        sources = {} if self.sources is not None else {"sources": string}
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features(
                    {"predictions": string, "references": datasets.List(string), **sources}
                ),
                datasets.Features({"predictions": string, "references": string, **sources}),
            ],
            reference_urls=["https://github.com/hunterschep/TAME-MT"],
            homepage=HOMEPAGE,
            license=LICENSE,
        )

    def _loaded_sources(self, given: object, count: int, start: int) -> list[str]:
        """The load-time sources of items ``start`` to ``start + count``; sources
        given with those items must be the same texts (compared by digest)."""
        assert self.sources is not None and self.sources_digest is not None
        total = len(self.sources)
        if start + count > total:
            raise MisalignedInputError(
                f"predictions reach item {start + count} but the sources given at load "
                f"time have {total} items"
            )
        expected = self.sources[start : start + count]
        if given is not None:
            texts = check_texts("sources", given, start)
            check_aligned("predictions", expected, "sources", texts)
            whole = start == 0 and count == total
            loaded = self.sources_digest if whole else digest(expected)
            if digest(texts) != loaded:
                first = next(
                    i for i, (a, b) in enumerate(zip(texts, expected, strict=True)) if a != b
                )
                raise MisalignedInputError(
                    f"sources[{start + first}] differs from the sources given at load time "
                    f"(digest {digest(texts)}, at load time {loaded}); give the test "
                    "sources at load time or per call, not different ones"
                )
        return expected

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """One item: checked and numbered like a batch of one."""
        # evaluate.combine's add() passes the plural names, as evaluate's own add() allows
        item = {"predictions": prediction, "references": reference, **kwargs}
        self.add_batch(**{name: [value] for name, value in item.items()})

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Checked like ``compute``'s inputs (items numbered across batches)."""
        start = self._checked_items
        if self.sources is None:
            sources = kwargs.get("sources")
        else:
            count = len(check_texts("predictions", predictions, start))
            sources = self._loaded_sources(kwargs.pop("sources", None), count, start)
        preds, _, _ = check_test_set(predictions, references, sources, start)
        self._checked_items += len(preds)
        super().add_batch(predictions=predictions, references=references, **kwargs)

    def compute(
        self, *, predictions: Any = None, references: Any = None, **kwargs: Any
    ) -> dict[str, Any] | None:
        """Checks every input before anything is written; a failed call leaves no
        rows, cache files or locks behind."""
        try:
            for name in kwargs:
                if name not in _COMPUTE_ARGUMENTS:
                    raise InvalidOptionError(
                        f"{name}: not an argument of compute() (arguments: "
                        f"{sorted(_COMPUTE_ARGUMENTS)}); report settings are load-time "
                        f"options: evaluate.load('tame_mt', {name}=...)"
                    )
            for flag in ("return_report", "include_neighbor_text", "confidence_intervals"):
                if not isinstance(kwargs.get(flag, False), bool):
                    raise InvalidOptionError(
                        f"{flag}: expected True or False, got {kwargs[flag]!r}"
                    )
            if "train" in kwargs:
                kwargs["train"] = self._corpus(kwargs["train"])
            elif self.train is None:
                raise InvalidOptionError(
                    "train: no training corpus; give train= to evaluate.load() or to compute()"
                )
            if self.sources is not None:
                self._check_against_loaded(predictions, references, kwargs.pop("sources", None))
            elif predictions is not None or references is not None:
                check_test_set(predictions, references, kwargs.get("sources"))
            out: dict[str, Any] | None = super().compute(
                predictions=predictions, references=references, **kwargs
            )
            return out
        except BaseException:
            self._discard_pending()
            raise
        finally:
            self._checked_items = 0

    def _check_against_loaded(self, predictions: Any, references: Any, given: object) -> None:
        """With load-time sources: the items added so far and those of this call
        are the whole test set, and sources given here are the same texts."""
        assert self.sources is not None
        start = self._checked_items
        count = 0
        if predictions is not None or references is not None:
            count = len(check_texts("predictions", predictions, start))
        if start + count == 0:
            raise EmptyTestSetError("predictions: the test set is empty")
        if start + count != len(self.sources):
            added = f" ({start} added before this call)" if start else ""
            raise MisalignedInputError(
                f"predictions has {start + count} items{added} but the sources given at "
                f"load time have {len(self.sources)}"
            )
        if count:
            sources = self._loaded_sources(given, count, start)
            check_test_set(predictions, references, sources, start)
        elif given is not None:
            raise InvalidOptionError("sources: given without predictions")

    def discard_pending(self) -> None:
        """Drop the items added so far (an evaluation given up half way)."""
        self._discard_pending()
        self._checked_items = 0

    def _discard_pending(self) -> None:
        """Drop rows added so far: close the writer, remove cache files, release locks."""
        if getattr(self, "writer", None) is not None:
            self.writer = None
        pending: list[tuple[str, Any]] = []
        path, lock = getattr(self, "cache_file_name", None), getattr(self, "filelock", None)
        if path is not None and lock is not None:
            pending.append((path, lock))
        paths, locks = getattr(self, "file_paths", None), getattr(self, "filelocks", None)
        pending += list(zip(paths or [], locks or [], strict=False))
        self.data = None
        for path, lock in pending:
            if os.path.exists(path):
                os.remove(path)
            lock.release()
        self.cache_file_name = None
        self.filelock = None
        self.file_paths = None
        self.filelocks = None
        self.buf_writer = None
        self.selected_feature_format = None

    def _compute(
        self,
        predictions: list[str],
        references: list[str] | list[list[str]],
        sources: list[str] | None = None,
        train: TrainingCorpus | TrainingStream | None = None,
        return_report: bool = False,
        include_neighbor_text: bool = False,
        confidence_intervals: bool = False,
    ) -> dict[str, Any]:
        corpus = train if train is not None else self.train
        sources = sources if sources is not None else self.sources
        assert corpus is not None and sources is not None  # checked in compute()
        result = score_tame(
            corpus,
            predictions,
            references,
            sources,
            self.tame_config,
            include_neighbor_text,
            self.cache,
        )
        out: dict[str, Any] = dict(result.report.fields(confidence_intervals))
        if return_report:
            out["report"] = result.report.as_json()
            out["segments"] = result.segments
        return out
