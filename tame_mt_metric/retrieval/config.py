"""Retrieval settings: how texts become gram sets and how neighbours are found."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import tame_mt_core as _core

from tame_mt_metric.errors import InvalidOptionError

__all__ = [
    "MAX_BLOCK_ROWS",
    "MAX_NGRAM_ORDER",
    "MAX_THREADS",
    "MAX_TOP_K",
    "STRATEGIES",
    "ZERO_POLICIES",
    "RetrievalConfig",
    "Strategy",
    "ZeroPolicy",
    "threshold",
]

Strategy = Literal["auto", "indexed", "streaming"]
STRATEGIES: tuple[Strategy, ...] = ("auto", "indexed", "streaming")
# The translation-memory candidate of an item that shares no gram with any
# training source: none (``empty``) or the lowest row's target (``nearest``).
ZeroPolicy = Literal["empty", "nearest"]
ZERO_POLICIES: tuple[ZeroPolicy, ...] = ("empty", "nearest")
MAX_NGRAM_ORDER = 6
THREADS_ENV = "TAME_MT_THREADS"
# More workers than this only cost their start-up: no machine the audit runs on
# gains from them, and thousands of threads can take minutes to spawn.
MAX_THREADS = 256
# Neighbours kept per item and side: each is held for every test item.
MAX_TOP_K = 1000
# Training rows searched together by the streaming pass: a block is held whole.
MAX_BLOCK_ROWS = 1 << 22


def _check_int(name: str, value: object, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidOptionError(f"{name}: expected an integer, got {value!r}")
    if value < minimum:
        raise InvalidOptionError(f"{name}: must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise InvalidOptionError(f"{name}: must be at most {maximum}, got {value}")
    return value


def threshold(name: str, value: object) -> Fraction:
    """A similarity threshold (a number, never a string) as an exact fraction in
    [0, 1]. A float is read as the decimal it prints as (0.7 is 7/10)."""
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction):
        raise InvalidOptionError(f"{name}: expected a number in [0, 1], got {value!r}")
    text = value if isinstance(value, Fraction) else repr(value)
    try:
        exact = Fraction(text)
    except (ValueError, ZeroDivisionError) as exc:
        raise InvalidOptionError(
            f"{name}: expected a finite number in [0, 1], got {value!r}"
        ) from exc
    if not 0 <= exact <= 1:
        raise InvalidOptionError(f"{name}: must lie in [0, 1], got {_decimal_text(value)}")
    return exact


def _decimal_text(value: int | float | Fraction) -> str:
    """A number as its user wrote it: 1.5, not Fraction(3, 2) (a fraction with no
    short decimal stays a fraction: 1/3)."""
    if isinstance(value, Fraction):
        shown = repr(float(value))
        return shown if Fraction(shown) == value else str(value)
    return repr(value)


@dataclass(frozen=True)
class RetrievalConfig:
    """Settings of exposure retrieval.

    ngram_orders: character n-gram orders of the Jaccard similarity (1..6, no repeats).
    lowercase, strip_diacritics, normalize_punctuation: optional normalisation steps
        (NFKC and whitespace collapsing are always applied; see ``normalize``).
    top_k: neighbours kept per test item and side (the first is the nearest; at
        most ``MAX_TOP_K``, 1,000).
    strategy: "indexed" (index the training corpus), "streaming" (one pass over it),
        or "auto" (streaming unless the test set outnumbers the training corpus).
    threads: worker threads, at most ``MAX_THREADS`` (256); None reads
        TAME_MT_THREADS (same bound), else one per core.
    block_rows: training rows searched together by the streaming strategy (at most
        ``MAX_BLOCK_ROWS``, 2**22).
    """

    ngram_orders: tuple[int, ...] = (3, 4, 5)
    lowercase: bool = False
    strip_diacritics: bool = False
    normalize_punctuation: bool = False
    top_k: int = 1
    strategy: Strategy = "auto"
    threads: int | None = None
    block_rows: int = 1 << 16

    def __post_init__(self) -> None:
        orders = self.ngram_orders
        if not isinstance(orders, Sequence) or isinstance(orders, str) or not orders:
            raise InvalidOptionError(f"ngram_orders: expected a non-empty sequence, got {orders!r}")
        checked = tuple(_check_int("ngram_orders", o, 1) for o in orders)
        for o in checked:
            if o > MAX_NGRAM_ORDER:
                raise InvalidOptionError(f"ngram_orders: order {o} exceeds {MAX_NGRAM_ORDER}")
        if len(set(checked)) != len(checked):
            raise InvalidOptionError(f"ngram_orders: repeated order in {checked}")
        object.__setattr__(self, "ngram_orders", tuple(sorted(checked)))
        for flag in ("lowercase", "strip_diacritics", "normalize_punctuation"):
            if not isinstance(getattr(self, flag), bool):
                raise InvalidOptionError(f"{flag}: expected True or False")
        _check_int("top_k", self.top_k, 1, MAX_TOP_K)
        _check_int("block_rows", self.block_rows, 1, MAX_BLOCK_ROWS)
        if self.strategy not in STRATEGIES:
            raise InvalidOptionError(
                f"strategy: expected one of {STRATEGIES}, got {self.strategy!r}"
            )
        if self.threads is not None:
            _check_int("threads", self.threads, 1, MAX_THREADS)

    def resolved_threads(self) -> int:
        """Threads to use; 0 means one per core."""
        if self.threads is not None:
            return self.threads
        env = os.environ.get(THREADS_ENV, "").strip()
        if not env:
            return 0
        try:
            value = int(env)
        except ValueError as exc:
            raise InvalidOptionError(
                f"{THREADS_ENV}: expected a positive integer, got {env!r}"
            ) from exc
        return _check_int(THREADS_ENV, value, 1, MAX_THREADS)

    def worker_threads(self) -> int:
        """The core's worker threads: those set, else one per processor this process
        may run on (as the core's pool counts them)."""
        chosen = self.resolved_threads()
        if chosen:
            return chosen
        usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        return len(usable) if usable else os.cpu_count() or 1

    def normalization_name(self) -> str:
        name = "nfkc_ws"
        if self.lowercase:
            name += "_lc"
        if self.strip_diacritics:
            name += "_nodia"
        if self.normalize_punctuation:
            name += "_punct"
        return name

    def signature(self) -> str:
        """The settings that can change a retrieval answer, as ``key:value`` pieces."""
        orders = ",".join(str(o) for o in self.ngram_orders)
        return f"norm:{self.normalization_name()}|sim:char_jaccard_{orders}_set|retrieval:exact"

    def gram_settings(self) -> _core.GramSettings:
        """The core's settings of gram sets (orders and normalisation), the one
        object every call into the core takes; made once per config."""
        made: _core.GramSettings | None = self.__dict__.get("_gram_settings")
        if made is None:
            made = _core.GramSettings(self.ngram_orders, **self.normalization_flags())
            object.__setattr__(self, "_gram_settings", made)
        return made

    def normalization_flags(self) -> dict[str, bool]:
        return {
            "lowercase": self.lowercase,
            "strip_diacritics": self.strip_diacritics,
            "normalize_punctuation": self.normalize_punctuation,
        }
