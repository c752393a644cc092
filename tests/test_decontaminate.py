"""Decontamination: the core against the brute force, on every rule, threshold,
block size and input users hold; bad input; and the loop closed on real data (an
audit of the kept corpus finds nothing at or above the threshold)."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import datasets
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tame_mt_metric
from tame_mt_metric import (
    Decontamination,
    EmptyTestSetError,
    InputTextError,
    InvalidOptionError,
    MisalignedInputError,
    RetrievalConfig,
    TextFiles,
    TrainingCorpus,
    decontaminate,
    find_exposures,
)
from tame_mt_metric.retrieval.decontaminate import RULES, evaluation_sets
from tame_mt_metric.retrieval.reference import brute_force_decontaminate, grams, jaccard, normalize
from tests.strategies import corpus, held_out

Pairs = list[tuple[str, str]]


def _similarities(train: Pairs, sets: dict[str, Pairs], config: RetrievalConfig) -> list[Fraction]:
    """Every similarity some (training pair, test item) reaches on either side."""
    flags = config.normalization_flags()

    def g(text: str) -> frozenset[str]:
        return grams(normalize(text, **flags), config.ngram_orders)

    return [
        Fraction(*jaccard(g(a), g(b)))
        for u, v in train
        for items in sets.values()
        for x, r in items
        for a, b in ((x, u), (r, v))
    ]


@st.composite
def cases(draw: st.DrawFn) -> tuple[Pairs, dict[str, Pairs], int, Fraction, str, RetrievalConfig]:
    train = draw(corpus())
    sets = {f"set{k}": draw(held_out(train)) for k in range(draw(st.integers(1, 3)))}
    config = RetrievalConfig(
        ngram_orders=tuple(draw(st.sets(st.integers(1, 4), min_size=1, max_size=3))),
        lowercase=draw(st.booleans()),
        strip_diacritics=draw(st.booleans()),
        normalize_punctuation=draw(st.booleans()),
        block_rows=draw(st.integers(1, 8)),
        threads=draw(st.integers(1, 2)),
    )
    hit = [s for s in _similarities(train, sets, config) if s > 0]
    threshold = draw(
        st.one_of(
            st.just(Fraction(1)),
            st.fractions(min_value=Fraction(1, 12), max_value=1, max_denominator=12),
            *([st.sampled_from(hit)] if hit else []),
        )
    )
    return train, sets, draw(st.integers(0, 2)), threshold, draw(st.sampled_from(RULES)), config


def _references(items: Pairs, train: Pairs, count: int) -> list[list[str]]:
    """One reference, or a second that is a training target (often the best)."""
    refs = [[r] for _, r in items]
    if count == 2:
        refs = [[r, train[i % len(train)][1]] for i, (_, r) in enumerate(items)]
    return refs


Case = tuple[Pairs, dict[str, Pairs], int, Fraction, str, RetrievalConfig]


def case_test_sets(case: Case) -> tuple[dict[str, list[str]], dict[str, list[list[str]]] | None]:
    """A case's test sets: sources by name, and references (at least one per item
    where the rule reads them) or None."""
    train, sets, ref_count, _, by, _ = case
    if by in ("target", "pair"):
        ref_count = max(ref_count, 1)
    sources = {name: [x for x, _ in items] for name, items in sets.items()}
    refs = {name: _references(items, train, ref_count) for name, items in sets.items()}
    return sources, refs if ref_count else None


@given(cases())
def test_core_equals_brute_force(case: Case) -> None:
    """Every rule, thresholds that some pair reaches exactly, several test sets and
    references, any block size: the same rows removed, for the same reasons."""
    train, _, _, threshold, by, config = case
    sources, references = case_test_sets(case)
    result = decontaminate(
        {"source": [u for u, _ in train], "target": [v for _, v in train]},
        sources,
        references,
        threshold=threshold,
        by=by,
        config=config,
        progress=False,
    )
    removed, rules = brute_force_decontaminate(
        [u for u, _ in train],
        [v for _, v in train],
        evaluation_sets(sources, references),
        threshold,
        by,
        config,
    )
    assert result.removed == removed
    assert result.removed_by_rule == rules
    gone = {r.train_index for r in removed}
    assert result.kept_indices == [j for j in range(len(train)) if j not in gone]
    assert result.num_rows == len(train)
    summary = result.summary()
    assert summary["rows_removed"] + summary["rows_kept"] == len(train)
    assert sum(summary["removed_by_test_set"].values()) == len(removed)


TRAIN = {
    "source": ["the red house", "a green tree", "the red houses", "nothing alike", ""],
    "target": ["la maison rouge", "un arbre vert", "les maisons", "rien", ""],
}
TEST = {"dev": ["the red house", "a blue sea"], "devtest": ["", "a green tree"]}
REFS = {"dev": ["la maison rouge", "une mer bleue"], "devtest": [[""], ["un arbre vert"]]}


def _expected(by: str = "any", threshold: Fraction = Fraction(7, 10)) -> Decontamination:
    return decontaminate(TRAIN, TEST, REFS, threshold=threshold, by=by, progress=False)


def test_the_matches_name_the_test_set_item_and_side() -> None:
    result = _expected()
    assert [r.as_dict() for r in result.removed] == [
        {
            "train_index": 0,
            "test_set": "dev",
            "test_index": 0,
            "similarity": 1.0,
            "similarity_exact": "1",
            "by": "source",
        },
        {
            "train_index": 1,
            "test_set": "devtest",
            "test_index": 1,
            "similarity": 1.0,
            "similarity_exact": "1",
            "by": "source",
        },
        {
            "train_index": 2,
            "test_set": "dev",
            "test_index": 0,
            "similarity": 10 / 11,
            "similarity_exact": "10/11",
            "by": "source",
        },
        # Two empty texts are identical (1/1).
        {
            "train_index": 4,
            "test_set": "devtest",
            "test_index": 0,
            "similarity": 1.0,
            "similarity_exact": "1",
            "by": "source",
        },
    ]
    summary = result.summary()
    assert summary["removed_by_rule"] == {"source": 4, "target": 3, "pair": 3}
    assert summary["removed_by_test_set"] == {"dev": 2, "devtest": 2}
    assert summary["threshold_exact"] == "7/10" and summary["threshold"] == 0.7
    assert summary["test_sets"] == {"dev": 2, "devtest": 2}
    assert result.fingerprint == TrainingCorpus.from_any(TRAIN).fingerprint
    assert result.fingerprint in result.signature and "threshold:7/10|by:any" in result.signature


def test_threshold_one_removes_exact_normalised_matches_only() -> None:
    result = decontaminate(
        TRAIN, {"t": ["the  red\u00a0house"]}, threshold=1, by="source", progress=False
    )
    assert [r.train_index for r in result.removed] == [0]


def test_a_plain_list_is_one_test_set_named_test() -> None:
    result = decontaminate(TRAIN, ["a green tree"], ["un arbre vert"], threshold=0.9, by="pair")
    assert result.test_sets == {"test": 1}
    assert [(r.train_index, r.test_set, r.by) for r in result.removed] == [(1, "test", "pair")]


def test_any_reports_the_higher_side() -> None:
    result = decontaminate(
        {"source": ["the red house"], "target": ["la maison rouge!!"]},
        ["the red house!"],
        ["la maison rouge!!"],
        threshold=0.5,
    )
    assert [(r.by, r.similarity) for r in result.removed] == [("target", Fraction(1))]


def _dataset() -> datasets.Dataset:
    return datasets.Dataset.from_dict(TRAIN)


def _stream() -> object:
    return iter([{"source": s, "target": t} for s, t in zip(*TRAIN.values(), strict=True)])


def _files(folder: Path) -> TextFiles:
    (folder / "train.src").write_text("\n".join(TRAIN["source"]) + "\n", encoding="utf-8")
    with gzip.open(folder / "train.tgt.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(TRAIN["target"]) + "\n")
    return TextFiles(folder / "train.src", folder / "train.tgt.gz")


@pytest.mark.parametrize("kind", ["dataset", "table", "stream", "text files", "record batches"])
@pytest.mark.parametrize("block_rows", [1, 2, 1 << 16])
def test_every_input_users_hold_gives_the_same_answer(
    kind: str, block_rows: int, tmp_path: Path
) -> None:
    makers: dict[str, Callable[[], object]] = {
        "dataset": _dataset,
        "table": lambda: pa.table(TRAIN),
        "stream": _stream,
        "text files": lambda: _files(tmp_path),
        "record batches": lambda: iter(pa.table(TRAIN).to_batches(max_chunksize=2)),
    }
    train = makers[kind]()
    config = RetrievalConfig(block_rows=block_rows)
    result = decontaminate(train, TEST, REFS, threshold=0.7, config=config, progress=False)
    expected = _expected()
    assert result.removed == expected.removed
    assert result.kept_indices == expected.kept_indices == [3]
    assert result.fingerprint == expected.fingerprint
    assert result.num_rows == 5


def test_a_dataset_is_decontaminated_by_select() -> None:
    dataset = _dataset()
    result = decontaminate(dataset, TEST, REFS, threshold=0.7, progress=False)
    kept = result.select(dataset)
    assert kept["source"] == ["nothing alike"]
    assert dataset.select(result.kept_indices)["target"] == kept["target"]
    with pytest.raises(MisalignedInputError, match="5"):
        result.select(dataset.select([0, 1]))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"threshold": 0}, InvalidOptionError, "above 0"),
        ({"threshold": 0.0}, InvalidOptionError, "above 0"),
        ({"threshold": 1.5}, InvalidOptionError, r"\[0, 1\]"),
        ({"threshold": -0.1}, InvalidOptionError, r"\[0, 1\]"),
        ({"threshold": "0.7"}, InvalidOptionError, "a number"),
        ({"threshold": Fraction(1, 1 << 70)}, InvalidOptionError, "denominator"),
        ({"threshold": 0.7, "by": "both"}, InvalidOptionError, "by: expected one of"),
        ({"threshold": 0.7, "by": "target", "references": None}, InvalidOptionError, "references"),
        ({"threshold": 0.7, "by": "pair", "references": None}, InvalidOptionError, "references"),
        (
            {"threshold": 0.7, "references": {"dev": ["a", "b"]}},
            MisalignedInputError,
            "test sets",
        ),
        ({"threshold": 0.7, "references": ["a", "b"]}, InputTextError, "mapping"),
        ({"threshold": 0.7, "test_sources": {}}, EmptyTestSetError, "no test set"),
        (
            {"threshold": 0.7, "test_sources": {"dev": []}, "references": None},
            EmptyTestSetError,
            r"test_sources\[dev\]",
        ),
        (
            {"threshold": 0.7, "test_sources": {"dev": ["a", 3]}, "references": None},
            InputTextError,
            r"test_sources\[dev\]\[1\]",
        ),
        (
            {"threshold": 0.7, "references": {"dev": ["a"], "devtest": ["a", "b"]}},
            MisalignedInputError,
            "references has 1 items",
        ),
    ],
)
def test_bad_input_is_a_typed_error_naming_it(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    arguments: dict[str, object] = {"test_sources": TEST, "references": REFS, **kwargs}
    with pytest.raises(error, match=message):
        decontaminate(TRAIN, **arguments)  # type: ignore[arg-type]


def test_an_empty_corpus_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("")
    (tmp_path / "b").write_text("")
    with pytest.raises(tame_mt_metric.EmptyCorpusError):
        decontaminate(TextFiles(tmp_path / "a", tmp_path / "b"), TEST, threshold=0.5)


# Real data: FLORES-200 dev and devtest, sources in three languages with Zulu
# references, against Swahili-Zulu Bible pairs with test pairs planted in them.
DATA = Path(tame_mt_metric.__file__).parent / "data"
FLORES = DATA / "flores200_slice"
SOURCE_LANGUAGES = ("swh_Latn", "eng_Latn", "fra_Latn")


def _lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def _flores() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    sources, references = {}, {}
    for split in ("dev", "devtest"):
        zulu = _lines(FLORES / split / f"zul_Latn.{split}")
        for lang in SOURCE_LANGUAGES:
            name = f"{split}.{lang}-zul_Latn"
            sources[name] = _lines(FLORES / split / f"{lang}.{split}")
            references[name] = zulu
    return sources, references


def _near_copy(text: str) -> str:
    """A test sentence lightly edited: its last word dropped, a letter changed."""
    words = text.split()
    return " ".join(words[:-1]).replace("a", "e", 1)


def _planted_corpus() -> tuple[list[str], list[str], list[int]]:
    """Bible pairs, with FLORES pairs (exact and near copies, on one side or both)
    planted every few rows; and the rows planted as exact copies of a whole pair."""
    bible_sw = _lines(DATA / "bible_sw_zu" / "train.sw.gz")[:200]
    bible_zu = _lines(DATA / "bible_sw_zu" / "train.zu.gz")[:200]
    sources, references = _flores()
    swahili, zulu = sources["dev.swh_Latn-zul_Latn"], references["dev.swh_Latn-zul_Latn"]
    english = sources["devtest.eng_Latn-zul_Latn"]
    devtest_zulu = references["devtest.eng_Latn-zul_Latn"]
    exact_pairs = [(swahili[i], zulu[i]) for i in range(10)]
    plants = [
        *exact_pairs,
        *[(_near_copy(swahili[i]), _near_copy(zulu[i])) for i in range(10, 20)],
        *[(swahili[i], bible_zu[i]) for i in range(20, 25)],  # the source side only
        *[(bible_sw[i], devtest_zulu[i]) for i in range(5)],  # the target side only
        *[(english[i], _near_copy(devtest_zulu[i])) for i in range(5, 10)],
    ]
    train_sw: list[str] = []
    train_zu: list[str] = []
    exact: list[int] = []
    for j, (sw, zu) in enumerate(zip(bible_sw, bible_zu, strict=True)):
        if j % 5 == 0 and j // 5 < len(plants):
            plant = plants[j // 5]
            if plant in exact_pairs:
                exact.append(len(train_sw))
            train_sw.append(plant[0])
            train_zu.append(plant[1])
        train_sw.append(sw)
        train_zu.append(zu)
    assert len(train_sw) == 200 + len(plants)
    return train_sw, train_zu, exact


@pytest.mark.parametrize(
    ("by", "threshold"),
    [("any", Fraction(7, 10)), ("source", Fraction(1, 2)), ("target", 1), ("pair", 0.6)],
)
def test_real_data_loop_closes_and_brute_force_agrees(by: str, threshold: object) -> None:
    """After decontamination at t, an audit of the kept corpus against the same test
    sets finds no item at or above t on the rule's side, and the brute force
    removes the same rows."""
    train_sw, train_zu, exact = _planted_corpus()
    sources, references = _flores()
    config = RetrievalConfig(block_rows=97)
    result = decontaminate(
        {"source": train_sw, "target": train_zu},
        sources,
        references,
        threshold=threshold,
        by=by,
        config=config,
        progress=False,
    )
    t = result.threshold
    removed, _ = brute_force_decontaminate(
        train_sw, train_zu, evaluation_sets(sources, references), t, by, config
    )
    assert result.removed == removed
    assert set(exact) <= {r.train_index for r in removed}
    assert 10 <= len(removed) < 100
    kept_sw = [train_sw[j] for j in result.kept_indices]
    kept_zu = [train_zu[j] for j in result.kept_indices]
    sides = {"any": ("source", "target"), "source": ("source",), "target": ("target",)}
    for name, items in sources.items():
        exposures = find_exposures(kept_sw, kept_zu, items, references[name], config)
        before = find_exposures(train_sw, train_zu, items, references[name], config)
        for item, was in zip(exposures, before, strict=True):
            best = {
                "source": Fraction(item.source[0].overlap, item.source[0].union),
                "target": Fraction(item.target[0].overlap, item.target[0].union),
            }
            assert item.pair is not None and was.pair is not None
            best["pair"] = Fraction(item.pair.overlap, item.pair.union)
            for side in sides.get(by, (by,)):
                assert best[side] < t, (name, side)
    # The loop is not empty: before decontamination some items reached t.
    assert any(r.test_set.startswith("dev.swh") for r in removed)


@pytest.mark.parametrize("cut", [1, 2, 4])
def test_shards_split_anywhere_concatenate_to_one_pass(cut: int) -> None:
    """Each row is judged on its own: the rows of two shards, numbered from their
    first row, concatenate to the answer of one pass."""
    whole = _expected()
    parts = [
        decontaminate(
            {side: texts[rows] for side, texts in TRAIN.items()}, TEST, REFS, threshold=0.7
        )
        for rows in (slice(0, cut), slice(cut, None))
    ]
    shifted = [
        (r.train_index + first, r.test_set, r.test_index, r.similarity, r.by)
        for part, first in zip(parts, (0, cut), strict=True)
        for r in part.removed
    ]
    assert shifted == [
        (r.train_index, r.test_set, r.test_index, r.similarity, r.by) for r in whole.removed
    ]


def _peak_bytes(rows: int) -> int:
    """The peak of Python's allocations while a stream of ``rows`` pairs is
    decontaminated in blocks of 1,000 rows."""
    import tracemalloc

    def stream() -> object:
        for j in range(rows):
            yield {"source": f"training sentence {j}", "target": f"phrase {j}"}

    tracemalloc.start()
    try:
        result = decontaminate(
            stream(),
            ["a test sentence of its own"],
            threshold=0.9,
            config=RetrievalConfig(block_rows=1000),
            progress=False,
        )
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        assert result.num_rows == rows and not result.removed


def test_a_stream_keeps_no_state_per_row() -> None:
    """Memory holds a block: ten times the rows, about the same peak."""
    small, large = _peak_bytes(5_000), _peak_bytes(50_000)
    assert large < 1.5 * small + (256 << 10), (small, large)
