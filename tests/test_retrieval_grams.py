"""Normalisation and gram sets of the core against the Python reference."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tame_mt_metric import RetrievalConfig, grams, normalize, reference
from tests.strategies import texts

# Characters assigned in this Python's Unicode database (the core's tables may
# be newer; characters unassigned here have no defined behaviour to compare).
assigned_text = st.text(st.characters(exclude_categories=("Cn", "Cs")), max_size=40)


@given(st.one_of(assigned_text, texts), st.booleans(), st.booleans(), st.booleans())
def test_normalize_matches_reference(text: str, lower: bool, dia: bool, punct: bool) -> None:
    assert normalize(text, lower, dia, punct) == reference.normalize(text, lower, dia, punct)


@given(st.one_of(assigned_text, texts), st.sets(st.integers(1, 6), min_size=1, max_size=4))
def test_grams_match_reference(text: str, orders: set[int]) -> None:
    config = RetrievalConfig(ngram_orders=tuple(orders))
    want = reference.grams(reference.normalize(text), config.ngram_orders)
    assert grams(text, config) == sorted(want)


def test_spec_normalisation_examples() -> None:
    assert normalize("  a\u00a0\u00a0b\n\tc ") == "a b c"
    assert normalize("\uff21\ufb01") == "Afi"
    assert normalize("Élan", lowercase=True, strip_diacritics=True) == "elan"
    assert normalize("\u03a3\u0391\u03a3", lowercase=True) == "\u03c3\u03b1\u03c3"
    assert normalize("\u201cit\u2019s\u201d \u2014 x", normalize_punctuation=True) == '"it\'s" - x'
    assert normalize("\u201cit\u2019s\u201d") == "\u201cit\u2019s\u201d"


def test_short_and_empty_texts() -> None:
    assert grams("ab") == ["ab"]
    assert grams("") == []
    assert grams("  ") == []
    assert grams("a b") == ["a b"]
    assert grams("abc", RetrievalConfig(ngram_orders=(1, 2))) == ["a", "ab", "b", "bc", "c"]


def test_every_assigned_character() -> None:
    import unicodedata

    for code in range(0x110000):
        ch = chr(code)
        if unicodedata.category(ch) in ("Cn", "Cs"):
            continue
        text = f"A{ch}{ch}b"
        assert normalize(text) == reference.normalize(text), hex(code)
        assert normalize(text, True, True, True) == reference.normalize(text, True, True, True), (
            hex(code)
        )
