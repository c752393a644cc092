"""The Rust core against the brute-force reference, both strategies."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tame_mt_metric import RetrievalConfig, find_exposures, stream_exposures
from tame_mt_metric.retrieval.config import MAX_TOP_K
from tame_mt_metric.retrieval.reference import brute_force_exposures
from tests.strategies import corpus, held_out


@st.composite
def audits(draw: st.DrawFn) -> tuple[list[tuple[str, str]], list[tuple[str, str]], RetrievalConfig]:
    train = draw(corpus())
    test = draw(held_out(train))
    config = RetrievalConfig(
        ngram_orders=tuple(draw(st.sets(st.integers(1, 4), min_size=1, max_size=3))),
        lowercase=draw(st.booleans()),
        strip_diacritics=draw(st.booleans()),
        normalize_punctuation=draw(st.booleans()),
        top_k=draw(st.integers(1, 4)),
        block_rows=draw(st.integers(1, 8)),
        threads=draw(st.integers(1, 2)),
    )
    return train, test, config


@given(
    audits(),
    st.sampled_from(["streaming", "indexed"]),
    st.sampled_from(["one", "and the source", "and a training target"]),
)
def test_core_equals_brute_force(
    audit: tuple[list[tuple[str, str]], list[tuple[str, str]], RetrievalConfig],
    strategy: str,
    references: str,
) -> None:
    """Every neighbour, with the reference of each target and of the pair; a
    training target as a second reference often gives the pair its maximum."""
    train, test, config = audit
    config = RetrievalConfig(**{**config.__dict__, "strategy": strategy})
    sources = [s for s, _ in test]
    refs: list[list[str]] = [
        {
            "one": [r],
            "and the source": [r, s],
            "and a training target": [r, train[i % len(train)][1]],
        }[references]
        for i, (s, r) in enumerate(test)
    ]
    args = ([s for s, _ in train], [t for _, t in train], sources, refs)
    got = find_exposures(*args, config=config)
    want = brute_force_exposures(*args, config=config)
    assert got.strategy == strategy
    assert got.items == want.items


@given(audits())
def test_source_only_audit(
    audit: tuple[list[tuple[str, str]], list[tuple[str, str]], RetrievalConfig],
) -> None:
    train, test, config = audit
    args = ([s for s, _ in train], [t for _, t in train], [s for s, _ in test])
    got = find_exposures(*args, config=config)
    assert got.items == brute_force_exposures(*args, config=config).items
    assert all(e.pair is None and not e.target for e in got)


def test_worked_example_of_the_spec() -> None:
    train_src = ["god created the heaven and the earth", "and the earth was without form"]
    train_tgt = ["dios creó el cielo y la tierra", "y la tierra estaba desordenada"]
    ex = find_exposures(
        train_src,
        train_tgt,
        ["god created the heaven and the earth", "and the earth was without form and void"],
        ["dios creó el cielo y la tierra", "y la tierra estaba desordenada y vacía"],
    )
    first, second = ex
    assert first.source[0].score == 1.0 and first.source_exact and first.pair_exact
    assert first.pair is not None and first.pair.score == 1.0
    assert second.source[0].row == 1 and not second.source_exact
    assert 0.7 <= second.source[0].score < 1.0


def test_the_pair_names_the_reference_that_gave_its_maximum() -> None:
    """The best target is the first reference's (row 1), the pair's maximum the
    second reference's (row 0): each names its own."""
    train_src, train_tgt = ["the red house", "a green tree"], ["la maison rouge", "un arbre vert"]
    args = (train_src, train_tgt, ["the red house"], [["un arbre vert", "la maison rouge!"]])
    answers = [
        *(find_exposures(*args, RetrievalConfig(strategy=s)) for s in ("streaming", "indexed")),
        brute_force_exposures(*args),
    ]
    for ex in answers:
        pair = ex[0].pair
        assert pair is not None and (pair.row, pair.reference) == (0, 1), ex.strategy
        assert (ex[0].target[0].row, ex[0].target[0].reference) == (1, 0), ex.strategy


def test_ties_go_to_the_lowest_row_and_empty_lines_match_only_empty_lines() -> None:
    ex = find_exposures(["xyz", "abc", "abc", ""], ["1", "2", "3", ""], ["abc", "", "qqq"])
    assert ex.source_neighbor == [1, 3, 0]
    assert ex.source_exposure == [1.0, 1.0, 0.0]


def test_top_k_fills_with_zero_score_rows_in_row_order() -> None:
    config = RetrievalConfig(top_k=3)
    ex = find_exposures(["zzz", "abc", "yyy"], ["1", "2", "3"], ["abcd"], config=config)
    assert [n.row for n in ex[0].source] == [1, 0, 2]
    assert [(n.overlap, n.union) for n in ex[0].source] == [(1, 3), (0, 4), (0, 4)]


def test_streaming_from_an_iterator_matches_lists() -> None:
    train = [(f"sentence {i % 13} of {i % 7}", f"Satz {i % 13} von {i % 7}") for i in range(200)]
    test = ["sentence 4 of 4", "nothing alike"]
    refs = ["Satz 4 von 4", "ganz anders"]
    config = RetrievalConfig(block_rows=17, top_k=2)
    streamed = stream_exposures(iter(train), test, refs, config)
    indexed = find_exposures(
        [s for s, _ in train], [t for _, t in train], test, refs,
        RetrievalConfig(strategy="indexed", top_k=2),
    )  # fmt: skip
    assert streamed.items == indexed.items
    assert streamed.num_train == 200


def test_a_top_k_larger_than_the_corpus_lists_every_row() -> None:
    for strategy in ("indexed", "streaming"):
        config = RetrievalConfig(top_k=MAX_TOP_K, strategy=strategy)
        ex = find_exposures(["b", "ab", "a"], ["1", "2", "3"], ["a"], config=config)
        assert [n.row for n in ex[0].source] == [2, 0, 1]
