"""Normalisation and character n-gram sets, as the Rust core computes them."""

from __future__ import annotations

from collections.abc import Sequence

import tame_mt_core as _core

from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.inputs import check_text, check_texts

__all__ = ["count_grams", "grams", "normalize"]


def normalize(
    text: str,
    lowercase: bool = False,
    strip_diacritics: bool = False,
    normalize_punctuation: bool = False,
) -> str:
    """NFKC, optional steps, whitespace stripped and collapsed.

    >>> normalize("  \\uff34he\\u00a0 \\u201chouse\\u201d ", normalize_punctuation=True)
    'The "house"'
    """
    flags = RetrievalConfig(
        lowercase=lowercase,
        strip_diacritics=strip_diacritics,
        normalize_punctuation=normalize_punctuation,
    )
    return _core.normalize(check_text("text", text), flags.gram_settings())


def grams(text: str, config: RetrievalConfig | None = None) -> list[str]:
    """The sorted gram set of a text.

    >>> grams("abcd")
    ['abc', 'abcd', 'bcd']
    """
    config = config or RetrievalConfig()
    return _core.grams(check_text("text", text), config.gram_settings())


def count_grams(texts: Sequence[str], config: RetrievalConfig | None = None) -> int:
    """Normalise every text and count its distinct grams (the floor of any audit)."""
    config = config or RetrievalConfig()
    return _core.count_grams(
        check_texts("texts", texts), config.gram_settings(), threads=config.resolved_threads()
    )
