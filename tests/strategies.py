"""Hypothesis strategies: small corpora over alphabets chosen to collide a lot,
with Unicode that exercises normalisation (combining marks, compatibility
forms, CJK, emoji, right-to-left script, odd whitespace)."""

from __future__ import annotations

from hypothesis import strategies as st

ALPHABET = [
    "a", "b", "c", " ", "A", "é", "e\u0301", "\u00a0", "\t", "\ufb01", "\uff21",  # NFKC forms
    "中", "文", "😀", "\u05e9", "\u05dc", "\u0645",  # CJK, emoji, Hebrew, Arabic
    "\u2019", "\u201c", "\u2014", "Σ", "İ", "\x1c", "\u3000",  # punctuation, casing, spaces
]  # fmt: skip

texts = st.lists(st.sampled_from(ALPHABET), max_size=10).map("".join)


def corpus(min_size: int = 1, max_size: int = 30) -> st.SearchStrategy[list[tuple[str, str]]]:
    """Training pairs, often with duplicated rows to create ties, and with one
    side of a row paired again with other texts (as in multi-way corpora)."""
    pairs = st.tuples(texts, texts)

    def repeats(rows: list[tuple[str, str]]) -> st.SearchStrategy[tuple[str, str]]:
        if not rows:
            return pairs
        sources = st.sampled_from([s for s, _ in rows])
        targets = st.sampled_from([t for _, t in rows])
        return st.one_of(
            st.sampled_from(rows), st.tuples(sources, texts | targets), st.tuples(texts, targets)
        )

    return st.lists(pairs, min_size=min_size, max_size=max_size).flatmap(
        lambda rows: st.lists(repeats(rows), max_size=10).map(lambda extra: rows + extra)
    )


def held_out(pool: list[tuple[str, str]]) -> st.SearchStrategy[list[tuple[str, str]]]:
    """Test pairs: fresh texts, or copies of training pairs (exact overlap)."""
    fresh = st.tuples(texts, texts)
    return st.lists(st.one_of(fresh, st.sampled_from(pool)), min_size=1, max_size=6)
