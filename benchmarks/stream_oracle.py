"""Exact exposures of a few test items by streaming the training files through plain Python.

An independent oracle for large training sets, written for clarity: every training
row is normalised, its character n-gram set is built with Python sets, and only the
grams shared with the sampled test items are counted. Memory is bounded by the test
sample. The rows can be split into contiguous shards scanned by separate processes;
merging keeps the highest score and, among equal scores, the lowest row, so the
answer does not depend on the number of shards.

Definitions (the TAME-MT README): NFKC, strip, collapse whitespace runs to one
space; G(s) is the union of the 3-, 4- and 5-grams; a non-empty string shorter than
the smallest order is one gram (itself); J(a, b) = |G(a) & G(b)| / |G(a) | G(b)|, 1.0
when both are empty. Exposures are maxima over training rows, neighbours the lowest
row reaching the maximum, pair exposure max_j min(J(src, u_j), J(ref, v_j)).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

_SPACE = re.compile(r"\s+")
Best = tuple[float, int]  # (score, row); "no row yet" is (-1.0, -1)


def normalise(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).strip())


def grams(text: str, orders: Sequence[int] = (3, 4, 5)) -> frozenset[str]:
    if text and len(text) < min(orders):
        return frozenset((text,))
    return frozenset(text[i : i + n] for n in orders for i in range(len(text) - n + 1))


def jaccard(overlap: int, size_a: int, size_b: int) -> float:
    union = size_a + size_b - overlap
    return 1.0 if union == 0 else overlap / union


def better(a: Best, b: Best) -> Best:
    """The higher score; on equal scores the lower row (a row of -1 means none)."""
    if a[1] < 0 or b[0] > a[0] or (b[0] == a[0] and 0 <= b[1] < a[1]):
        return b
    return a


@dataclass
class OracleResult:
    source: list[Best]
    target: list[Best]
    pair: list[Best]
    source_exact: list[bool]
    target_exact: list[bool]
    pair_exact: list[bool]

    def merge(self, other: OracleResult) -> OracleResult:
        def pick(a: list[Best], b: list[Best]) -> list[Best]:
            return [better(x, y) for x, y in zip(a, b, strict=True)]

        def either(a: list[bool], b: list[bool]) -> list[bool]:
            return [x or y for x, y in zip(a, b, strict=True)]

        return OracleResult(
            pick(self.source, other.source),
            pick(self.target, other.target),
            pick(self.pair, other.pair),
            either(self.source_exact, other.source_exact),
            either(self.target_exact, other.target_exact),
            either(self.pair_exact, other.pair_exact),
        )

    def fields(self) -> dict[str, list[float] | list[int] | list[bool]]:
        """The result as the per-item fields of the package's exposure result."""
        out: dict[str, list[float] | list[int] | list[bool]] = {}
        for side in ("source", "target", "pair"):
            best: list[Best] = getattr(self, side)
            out[f"{side}_exposure"] = [score for score, _ in best]
            out[f"{side}_neighbor"] = [row for _, row in best]
            out[f"{side}_exact"] = getattr(self, f"{side}_exact")
        return out


class _Side:
    """The sampled queries of one side, with a gram -> queries map."""

    def __init__(self, texts: Sequence[str], orders: Sequence[int]) -> None:
        self.orders = orders
        self.texts = [normalise(t) for t in texts]
        self.grams = [grams(t, orders) for t in self.texts]
        self.holders: dict[str, list[int]] = defaultdict(list)
        self.by_text: dict[str, list[int]] = defaultdict(list)
        for q, (text, gs) in enumerate(zip(self.texts, self.grams, strict=True)):
            self.by_text[text].append(q)
            for g in gs:
                self.holders[g].append(q)
        self.vocabulary = frozenset(self.holders)
        self.best: list[Best] = [(-1.0, -1)] * len(texts)
        self.exact = [False] * len(texts)

    def score_row(self, text: str, row: int, first: bool) -> dict[int, float]:
        """Offer one training row to the queries; returns the similarities offered.

        The first row of a scan is offered to every query, so a query sharing no gram
        with any row gets exposure 0.0 at that row; later rows offer only the queries
        they share a gram with, since a score of 0 cannot improve on an earlier row.
        """
        row_grams = grams(text, self.orders)
        overlap = Counter(
            itertools.chain.from_iterable(
                map(self.holders.__getitem__, row_grams & self.vocabulary)
            )
        )
        if not row_grams:  # J(empty, empty) = 1
            for q in self.by_text.get("", []):
                overlap[q] = 0
        scores: dict[int, float] = {}
        for q in range(len(self.grams)) if first else overlap:
            scores[q] = jaccard(overlap.get(q, 0), len(self.grams[q]), len(row_grams))
            if scores[q] > self.best[q][0]:
                self.best[q] = (scores[q], row)
        for q in self.by_text.get(text, []):
            self.exact[q] = True
        return scores


def _lines(path: Path, start: int, stop: int) -> Iterator[str]:
    with open(path, encoding="utf-8", newline="\n") as handle:
        for line in itertools.islice(handle, start, stop):
            yield line.removesuffix("\n")


def _scan(
    train_src: Path,
    train_tgt: Path,
    sources: Sequence[str],
    references: Sequence[str],
    orders: Sequence[int],
    start: int,
    stop: int,
) -> OracleResult:
    """Exposures against training rows [start, stop)."""
    src_side = _Side(sources, orders)
    tgt_side = _Side(references, orders)
    pair: list[Best] = [(-1.0, -1)] * len(sources)
    pair_exact = [False] * len(sources)
    rows = zip(_lines(train_src, start, stop), _lines(train_tgt, start, stop), strict=True)
    for row, (u, v) in enumerate(rows, start):
        u, v = normalise(u), normalise(v)
        src_scores = src_side.score_row(u, row, row == start)
        tgt_scores = tgt_side.score_row(v, row, row == start)
        for q, score in src_scores.items():
            if q in tgt_scores and min(score, tgt_scores[q]) > pair[q][0]:
                pair[q] = (min(score, tgt_scores[q]), row)
        for q in src_side.by_text.get(u, []):
            pair_exact[q] = pair_exact[q] or v == tgt_side.texts[q]
    return OracleResult(
        src_side.best, tgt_side.best, pair, src_side.exact, tgt_side.exact, pair_exact
    )


def stream_exposures(
    train_src: Path,
    train_tgt: Path,
    sources: Sequence[str],
    references: Sequence[str],
    orders: Sequence[int] = (3, 4, 5),
    workers: int = 1,
) -> OracleResult:
    """Exposures of the given test pairs (one reference each) against the training files."""
    with open(train_src, "rb") as handle:
        n_rows = sum(1 for _ in handle)
    bounds = [n_rows * k // workers for k in range(workers + 1)]
    shards = [(a, b) for a, b in itertools.pairwise(bounds) if b > a] or [(0, 0)]
    if len(shards) == 1:
        return _scan(train_src, train_tgt, sources, references, orders, *shards[0])
    with ProcessPoolExecutor(len(shards)) as pool:
        futures = [
            pool.submit(_scan, train_src, train_tgt, sources, references, orders, a, b)
            for a, b in shards
        ]
        parts = [f.result() for f in futures]
    result = parts[0]
    for part in parts[1:]:
        result = result.merge(part)
    return result
