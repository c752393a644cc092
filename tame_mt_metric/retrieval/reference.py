"""The plain-Python reference: every retrieval answer by brute force, written
for clarity, not speed. Property tests hold the Rust core to it."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from fractions import Fraction

from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.decontaminate import EvaluationSet, RemovedPair
from tame_mt_metric.retrieval.exposure import Exposures, ItemExposure, Neighbour
from tame_mt_metric.retrieval.inputs import check_texts, check_training, references_per_item

__all__ = [
    "brute_force_decontaminate",
    "brute_force_exposures",
    "grams",
    "jaccard",
    "normalize",
]

_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u2039\u203a", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    }
)


def normalize(
    text: str,
    lowercase: bool = False,
    strip_diacritics: bool = False,
    normalize_punctuation: bool = False,
) -> str:
    """NFKC; optional per-character lowercase, diacritic stripping (drop combining
    marks after NFD, then NFC) and punctuation mapping; then whitespace
    (``str.isspace``) stripped and collapsed to single spaces."""
    s = unicodedata.normalize("NFKC", text)
    if lowercase:
        s = "".join(c.lower() for c in s)
    if strip_diacritics:
        decomposed = unicodedata.normalize("NFD", s)
        s = unicodedata.normalize(
            "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
        )
    if normalize_punctuation:
        s = s.translate(_PUNCTUATION)
    return " ".join(s.split())


def grams(normalized: str, orders: Sequence[int]) -> frozenset[str]:
    """Character n-grams of the given orders; a non-empty text shorter than the
    smallest order is one gram, itself."""
    if normalized and len(normalized) < min(orders):
        return frozenset([normalized])
    return frozenset(normalized[i : i + n] for n in orders for i in range(len(normalized) - n + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> tuple[int, int]:
    """(overlap, union); two empty sets are identical (1/1)."""
    if not a and not b:
        return 1, 1
    overlap = len(a & b)
    return overlap, len(a) + len(b) - overlap


def _ranked(scores: list[tuple[int, int]], k: int) -> list[int]:
    """Rows by score (highest first), ties to the lower row; the first k."""
    return sorted(range(len(scores)), key=lambda j: (-Fraction(*scores[j]), j))[:k]


def brute_force_exposures(
    train_sources: Sequence[str],
    train_targets: Sequence[str],
    test_sources: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]] | None = None,
    config: RetrievalConfig | None = None,
) -> Exposures:
    """The same answers as ``find_exposures``, by scanning every training pair."""
    config = config or RetrievalConfig()
    flags = config.normalization_flags()
    sources, targets = check_training(train_sources, train_targets)
    test = check_texts("test_sources", test_sources)
    refs = references_per_item(references, len(test))
    orders = config.ngram_orders
    norm_u = [normalize(t, **flags) for t in sources]
    norm_v = [normalize(t, **flags) for t in targets]
    gram_u = [grams(t, orders) for t in norm_u]
    gram_v = [grams(t, orders) for t in norm_v]
    items = []
    for i, source in enumerate(test):
        x = normalize(source, **flags)
        gx = grams(x, orders)
        src = [jaccard(gx, u) for u in gram_u]
        top_src = tuple(Neighbour(j, *src[j]) for j in _ranked(src, config.top_k))
        rs = [normalize(r, **flags) for r in refs[i]] if refs else []
        if not rs:
            items.append(ItemExposure(top_src, (), None, x in norm_u, False, False))
            continue
        grs = [grams(r, orders) for r in rs]
        tgt: list[tuple[int, int]] = []
        best_ref: list[int] = []
        for v in gram_v:
            per_ref = [jaccard(g, v) for g in grs]
            k = max(range(len(per_ref)), key=lambda m: (Fraction(*per_ref[m]), -m))
            tgt.append(per_ref[k])
            best_ref.append(k)
        top_tgt = tuple(Neighbour(j, *tgt[j], best_ref[j]) for j in _ranked(tgt, config.top_k))
        pair = [min(src[j], tgt[j], key=lambda s: Fraction(*s)) for j in range(len(src))]
        p = _ranked(pair, 1)[0]
        items.append(
            ItemExposure(
                source=top_src,
                target=top_tgt,
                pair=Neighbour(p, *pair[p], best_ref[p]),
                source_exact=x in norm_u,
                target_exact=any(r in norm_v for r in rs),
                pair_exact=any(u == x and v in rs for u, v in zip(norm_u, norm_v, strict=True)),
            )
        )
    return Exposures(tuple(items), len(sources), "brute_force")


def brute_force_decontaminate(
    train_sources: Sequence[str],
    train_targets: Sequence[str],
    test_sets: Sequence[EvaluationSet],
    threshold: Fraction,
    by: str,
    config: RetrievalConfig | None = None,
) -> tuple[list[RemovedPair], dict[str, int]]:
    """The same removed rows as ``decontaminate`` (and its ``removed_by_rule``), by
    comparing every training pair with every test item and reference."""
    config = config or RetrievalConfig()
    flags = config.normalization_flags()

    def gram_set(text: str) -> frozenset[str]:
        return grams(normalize(text, **flags), config.ngram_orders)

    items = [
        (s.name, i, gram_set(x), [gram_set(r) for r in (s.references[i] if s.references else [])])
        for s in test_sets
        for i, x in enumerate(s.sources)
    ]
    removed: list[RemovedPair] = []
    rules = {"source": 0, "target": 0, "pair": 0}
    for j, (u, v) in enumerate(zip(train_sources, train_targets, strict=True)):
        gu, gv = gram_set(u), gram_set(v)
        # Each side's best (similarity, test set, item); a later item replaces an
        # earlier one only with a strictly higher similarity.
        best: dict[str, tuple[Fraction, str, int] | None] = dict.fromkeys(rules)
        for name, i, gx, grs in items:
            source = Fraction(*jaccard(gx, gu))
            sides = {"source": source}
            if grs:
                target = max(Fraction(*jaccard(gr, gv)) for gr in grs)
                sides["target"] = target
                sides["pair"] = min(source, target)
            for side, s in sides.items():
                held = best[side]
                if held is None or s > held[0]:
                    best[side] = (s, name, i)
        reached = {side: b for side, b in best.items() if b is not None and b[0] >= threshold}
        deciding: str | None
        if by == "any":
            candidates = [s for s in ("source", "target") if s in reached]
            # The higher side decides; a tie goes to the source.
            deciding = max(candidates, key=lambda s: (reached[s][0], s == "source"), default=None)
        else:
            deciding = by if by in reached else None
        if deciding is None:
            continue
        for side in reached:
            rules[side] += 1
        s, name, i = reached[deciding]
        removed.append(RemovedPair(j, name, i, s, deciding))
    return removed, rules
