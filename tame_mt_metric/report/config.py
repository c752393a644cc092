"""Every setting of a TAME report, with the spec's names and defaults, checked
once; thresholds kept as exact fractions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from typing import Any, TypedDict, Unpack

from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.report.metric_registry import METRICS, REGISTRY
from tame_mt_metric.retrieval.config import (
    ZERO_POLICIES,
    RetrievalConfig,
    Strategy,
    ZeroPolicy,
    threshold,
)

__all__ = [
    "DEFAULT_METRICS",
    "MAX_BOOTSTRAP",
    "MAX_CHRF_WORD_ORDER",
    "MAX_CURVE_BANDS",
    "MAX_SEED",
    "METRICS",
    "OPTIONS",
    "RETRIEVAL_OPTIONS",
    "TameConfig",
    "TameOptions",
    "ZeroPolicy",
    "format_threshold",
]

DEFAULT_METRICS = ("bleu", "chrf")
ENGINES = ("local", "ray")
BLEU_TOKENIZERS = (
    "none",
    "zh",
    "13a",
    "intl",
    "char",
    "ja-mecab",
    "ko-mecab",
    "spm",
    "flores101",
    "flores200",
    "spBLEU-1K",
)


def format_threshold(value: Fraction) -> str:
    """A threshold as the shortest decimal with at least two places (0.7 -> "0.70")."""
    for places in range(2, 40):
        scaled = value * 10**places
        if scaled.denominator == 1:
            return f"{scaled.numerator / 10**places:.{places}f}"
    return str(value)


def _thresholds(name: str, values: object) -> tuple[Fraction, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise InvalidOptionError(f"{name}: expected a non-empty list of numbers, got {values!r}")
    exact = tuple(threshold(name, v) for v in values)
    if len(set(exact)) != len(exact):
        raise InvalidOptionError(f"{name}: repeated threshold in {values!r}")
    return tuple(sorted(exact))


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidOptionError(f"{name}: expected True or False, got {value!r}")
    return value


def _integer(name: str, value: object, minimum: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise InvalidOptionError(
            f"{name}: expected an integer in [{minimum}, {maximum:,}], got {value!r}"
        )
    return value


# Upper bounds of the count options, each tied to the work it causes, checked
# before any work starts: resamples (each re-sums every item's statistics for
# every score), exposure-curve bands (each scored with its own intervals), chrF's
# word n-gram order (sacrebleu counts every order up to it, for every segment),
# and the seed (a 32-bit seed, as NumPy's legacy generators and evaluate take).
MAX_BOOTSTRAP = 100_000
MAX_CURVE_BANDS = 100
MAX_CHRF_WORD_ORDER = 6
MAX_SEED = 2**32 - 1
MAX_MIN_BIN_SIZE = 10**9


class TameOptions(TypedDict, total=False):
    """The options a ``TameConfig`` is made of, each by its flat name (the
    retrieval ones are held in its ``retrieval``)."""

    ngram_orders: tuple[int, ...]
    lowercase: bool
    strip_diacritics: bool
    normalize_punctuation: bool
    far_threshold: Fraction
    near_threshold: Fraction
    leak_thresholds: tuple[Fraction, ...]
    metrics: tuple[str, ...]
    bleu_tokenize: str
    bleu_lowercase: bool
    chrf_word_order: int
    spbleu_tokenize: str
    spm_model: str | None
    tm_zero_policy: ZeroPolicy
    min_bin_size_warning: int
    confidence: float
    n_bootstrap: int
    seed: int
    curve_bands: int
    curve_edges: tuple[Fraction, ...] | None
    strategy: Strategy
    threads: int | None
    block_rows: int
    engine: str
    ray_address: str | None


# Every option by its flat name, in the order the report's settings list them.
OPTIONS: tuple[str, ...] = tuple(TameOptions.__annotations__)
# The options a report's ``RetrievalConfig`` holds: all of its settings but the
# neighbours kept per side (a report keeps one).
RETRIEVAL_OPTIONS = tuple(f.name for f in fields(RetrievalConfig) if f.name != "top_k")


def _ngram_orders(value: object) -> object:
    """``"3,4"`` (the command line's and ``evaluate.load``'s form) as (3, 4); anything
    else as given, for ``RetrievalConfig`` to check."""
    if not isinstance(value, str):
        return value
    orders = value.split(",")
    if not all(o.strip().isdigit() for o in orders):
        raise InvalidOptionError(f"ngram_orders: expected comma-separated integers, got {value!r}")
    return tuple(int(o) for o in orders)


@dataclass(frozen=True, init=False)
class TameConfig:
    """Settings of a TAME report (the TAME-MT spec's options).

    Made of flat options (``TameConfig(strategy="indexed")``); the retrieval ones
    are held in ``retrieval``, a ``RetrievalConfig``, and read through it.

    Retrieval: ngram_orders, lowercase, strip_diacritics, normalize_punctuation,
        strategy ("auto", "indexed", "streaming"), threads, block_rows.
    Bins and leaks: far_threshold (0.30), near_threshold (0.70), leak_thresholds
        (0.70, 0.85, 0.95); decimals are read exactly ("0.7" and 0.7 are 7/10).
    Scores: metrics (default "bleu", "chrf"; chrf is chrF++ when chrf_word_order is 2;
        also "spbleu", "chrf++" and "chrf++_avg", the mean of sentence chrF++),
        bleu_tokenize ("13a"), bleu_lowercase, chrf_word_order (2; at most 6), spbleu_tokenize
        ("flores200" or "flores101"), spm_model (the SentencePiece model's path; see
        ``tame_mt_metric.report.spbleu``).
    TM baseline: tm_zero_policy ("empty": an item whose source shares no gram with
        training gets an empty TM hypothesis; "nearest": the lowest row's target).
    Warnings: min_bin_size_warning (30).
    Intervals: confidence (0.95), n_bootstrap (1000 resamples of the test items, at
        most 100,000; 0 turns them off), seed (12345; below 2**32); see
        ``tame_mt_metric.report.intervals``.
    Exposure curve: curve_bands (10: deciles of source exposure; at most 100), or
        curve_edges (increasing thresholds inside (0, 1), read exactly); see
        ``tame_mt_metric.report.curve``.
    Engine: "local", or "ray" to audit the training corpus in shards on Ray
        (``ray_address``: an existing cluster); the answers are the same.
    """

    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    far_threshold: Fraction = field(default=Fraction(3, 10))
    near_threshold: Fraction = field(default=Fraction(7, 10))
    leak_thresholds: tuple[Fraction, ...] = (Fraction(7, 10), Fraction(85, 100), Fraction(95, 100))
    metrics: tuple[str, ...] = DEFAULT_METRICS
    bleu_tokenize: str = "13a"
    bleu_lowercase: bool = False
    chrf_word_order: int = 2
    spbleu_tokenize: str = "flores200"
    spm_model: str | None = None
    tm_zero_policy: ZeroPolicy = "empty"
    min_bin_size_warning: int = 30
    confidence: float = 0.95
    n_bootstrap: int = 1000
    seed: int = 12345
    curve_bands: int = 10
    curve_edges: tuple[Fraction, ...] | None = None
    engine: str = "local"
    ray_address: str | None = None

    def __init__(
        self, retrieval: RetrievalConfig | None = None, **options: Unpack[TameOptions]
    ) -> None:
        """Flat options; retrieval ones given by name replace those of ``retrieval``."""
        given: dict[str, Any] = dict(options)
        for name in given:
            if name not in OPTIONS:  # as Python says it of any unknown keyword
                raise TypeError(
                    f"TameConfig.__init__() got an unexpected keyword argument {name!r}"
                )
        for f in fields(self):  # every field but ``retrieval`` has a plain default
            if f.name != "retrieval":
                object.__setattr__(self, f.name, given.get(f.name, f.default))
        self._check_bins()
        self._check_scores()
        self._check_baseline_and_warnings()
        self._check_intervals()
        self._check_curve()
        if self.engine not in ENGINES:
            raise InvalidOptionError(f"engine: expected one of {ENGINES}, got {self.engine!r}")
        object.__setattr__(self, "retrieval", self._retrieval_of(retrieval, given))

    @staticmethod
    def _retrieval_of(base: RetrievalConfig | None, given: dict[str, Any]) -> RetrievalConfig:
        """The retrieval settings (which check themselves): ``base`` with the
        retrieval options given by name. A report keeps one neighbour per side."""
        named = {k: given[k] for k in RETRIEVAL_OPTIONS if k in given}
        if "ngram_orders" in named:
            named["ngram_orders"] = _ngram_orders(named["ngram_orders"])
        retrieval = replace(base or RetrievalConfig(), **named)
        if retrieval.top_k != 1:
            raise InvalidOptionError(
                f"retrieval: a report keeps one neighbour per side (top_k 1), got {retrieval.top_k}"
            )
        return retrieval

    def _check_bins(self) -> None:
        """Thresholds as exact fractions, far at most near; leaks sorted, distinct."""
        set_ = object.__setattr__
        set_(self, "far_threshold", threshold("far_threshold", self.far_threshold))
        set_(self, "near_threshold", threshold("near_threshold", self.near_threshold))
        if self.far_threshold > self.near_threshold:
            raise InvalidOptionError(
                f"far_threshold {format_threshold(self.far_threshold)} exceeds "
                f"near_threshold {format_threshold(self.near_threshold)}"
            )
        set_(self, "leak_thresholds", _thresholds("leak_thresholds", self.leak_thresholds))

    def _check_scores(self) -> None:
        """Known, distinct metrics (a list or "bleu,chrf"); their settings."""
        metrics = self.metrics
        if isinstance(metrics, str):
            metrics = tuple(m.strip() for m in metrics.split(","))
        if not isinstance(metrics, Sequence) or not metrics:
            raise InvalidOptionError(f"metrics: expected a list drawn from {METRICS}")
        for m in metrics:
            if m not in METRICS:
                raise InvalidOptionError(f"metrics: unknown metric {m!r}; choose from {METRICS}")
        if len(set(metrics)) != len(metrics):
            raise InvalidOptionError(f"metrics: repeated metric in {metrics!r}")
        object.__setattr__(self, "metrics", tuple(metrics))
        for m in self.metrics:
            REGISTRY[m].check(self)
        if self.bleu_tokenize not in BLEU_TOKENIZERS:
            raise InvalidOptionError(
                f"bleu_tokenize: unknown tokenizer {self.bleu_tokenize!r}; "
                f"choose from {BLEU_TOKENIZERS}"
            )
        _flag("bleu_lowercase", self.bleu_lowercase)
        _integer("chrf_word_order", self.chrf_word_order, 0, MAX_CHRF_WORD_ORDER)

    def _check_baseline_and_warnings(self) -> None:
        """A known TM zero policy; a bounded bin size to warn under."""
        if self.tm_zero_policy not in ZERO_POLICIES:
            raise InvalidOptionError(
                f"tm_zero_policy: expected one of {ZERO_POLICIES}, got {self.tm_zero_policy!r}"
            )
        _integer("min_bin_size_warning", self.min_bin_size_warning, 0, MAX_MIN_BIN_SIZE)

    def _check_intervals(self) -> None:
        """A confidence strictly inside (0, 1); bounded resamples and seed."""
        confidence = self.confidence
        if (
            isinstance(confidence, bool)
            or not isinstance(confidence, (int, float))
            or not 0 < confidence < 1
        ):
            raise InvalidOptionError(
                f"confidence: expected a number between 0 and 1 (exclusive), got {confidence!r}"
            )
        object.__setattr__(self, "confidence", float(confidence))
        _integer("n_bootstrap", self.n_bootstrap, 0, MAX_BOOTSTRAP)
        _integer("seed", self.seed, 0, MAX_SEED)

    def _check_curve(self) -> None:
        """Bounded bands, or increasing edges strictly inside (0, 1)."""
        _integer("curve_bands", self.curve_bands, 1, MAX_CURVE_BANDS)
        if self.curve_edges is None:
            return
        edges = _thresholds("curve_edges", self.curve_edges)
        if edges != tuple(threshold("curve_edges", e) for e in self.curve_edges):
            raise InvalidOptionError(
                f"curve_edges: expected increasing edges, got "
                f"{[format_threshold(threshold('curve_edges', e)) for e in self.curve_edges]}"
            )
        if edges[0] <= 0 or edges[-1] >= 1:
            raise InvalidOptionError(
                f"curve_edges: every edge must lie strictly between 0 and 1, got "
                f"{[format_threshold(e) for e in edges]}"
            )
        object.__setattr__(self, "curve_edges", edges)

    @classmethod
    def from_options(cls, **options: Any) -> TameConfig:
        """A config from keyword options; an unknown name is an error that lists the known."""
        for name in options:
            if name not in OPTIONS:
                raise InvalidOptionError(
                    f"{name}: not an option of tame_mt; known options: {sorted(OPTIONS)}"
                )
        return cls(**options)

    @property
    def ngram_orders(self) -> tuple[int, ...]:
        return self.retrieval.ngram_orders

    @property
    def lowercase(self) -> bool:
        return self.retrieval.lowercase

    @property
    def strip_diacritics(self) -> bool:
        return self.retrieval.strip_diacritics

    @property
    def normalize_punctuation(self) -> bool:
        return self.retrieval.normalize_punctuation

    @property
    def strategy(self) -> Strategy:
        return self.retrieval.strategy

    @property
    def threads(self) -> int | None:
        return self.retrieval.threads

    @property
    def block_rows(self) -> int:
        return self.retrieval.block_rows

    def bins_signature(self) -> str:
        leaks = ",".join(format_threshold(t) for t in self.leak_thresholds)
        return (
            f"bins:far{format_threshold(self.far_threshold)}"
            f"_near{format_threshold(self.near_threshold)}_leak{leaks}"
        )

    def curve_signature(self) -> str:
        if self.curve_edges is not None:
            return "curve:edges" + ",".join(format_threshold(e) for e in self.curve_edges)
        return f"curve:bands{self.curve_bands}"

    def intervals_signature(self) -> str:
        if self.n_bootstrap == 0:
            return "ci:none"
        return f"ci:bs{self.n_bootstrap}_c{self.confidence:g}_seed{self.seed}"

    def scores_signature(self, num_refs: int) -> str:
        """The metrics, and sacrebleu's own signature of each one it scores with
        ``num_refs`` references per item, as sacrebleu prints it (nrefs, case,
        eff, tok, smooth, version for BLEU; nc, nw, space... for chrF), in
        brackets after the metric's key: ``bleu[nrefs:1|case:mixed|...]``.
        spBLEU's piece names its SentencePiece model instead."""
        entries = [REGISTRY[m] for m in self.metrics]
        pieces = [
            f"{entry.key}[{sacrebleu}]"
            for entry in entries
            if (sacrebleu := entry.sacrebleu_signature(self, num_refs)) is not None
        ]
        signature = f"metrics:{','.join(self.metrics)}"
        if pieces:
            signature += f"|sacrebleu:{','.join(pieces)}"
        for entry in entries:
            own = entry.own_signature(self)
            if own is not None:
                signature += f"|{own}"
        return signature

    def options(self) -> dict[str, Any]:
        """Every option by its flat name, as ``TameConfig(**options)`` takes it back."""
        return {name: getattr(self, name) for name in OPTIONS}

    def as_dict(self) -> dict[str, Any]:
        """The settings as JSON values (thresholds as floats), by their flat names."""
        out: dict[str, Any] = {}
        for name, value in self.options().items():
            if isinstance(value, Fraction):
                value = float(value)
            elif isinstance(value, tuple):
                value = [float(v) if isinstance(v, Fraction) else v for v in value]
            out[name] = value
        return out
