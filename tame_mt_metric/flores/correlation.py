"""How well a metric agrees with human judgements: Spearman, Pearson and Kendall
tau-b coefficients, each with a seeded bootstrap percentile confidence interval.

Plain Python (no scipy): Spearman is the Pearson coefficient of average ranks
(tied values share the mean of their ranks); Kendall tau-b counts discordant
pairs by merge sort (Knight's O(n log n) algorithm) and corrects for ties on
either side, as ``scipy.stats.kendalltau`` does by default.

>>> human = [1.0, 2.0, 3.0, 4.0]
>>> metric = [10.0, 30.0, 20.0, 40.0]
>>> spearman(human, metric), kendall_tau_b(human, metric), round(pearson(human, metric), 4)
(0.8, 0.6666666666666666, 0.8)

The bootstrap resamples the pairs (directions or segments) with replacement,
``n_bootstrap`` times, from ``random.Random(seed)`` (indices drawn by
``Random.choices``, which only uses ``random()``, whose sequence Python keeps
stable across versions). A resample where either side is constant has no
coefficient and is skipped; ``resamples`` reports how many were used. The interval
is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles of the
resampled coefficients, linearly interpolated (numpy's default method); with
``n_bootstrap=0`` or no usable resample its bounds are None.

>>> result = segment_correlation([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], n_bootstrap=200)
>>> result["n"], result["seed"], result["spearman"]["value"], result["kendall"]["value"]
(5, 12345, 0.8, 0.6)
>>> low, high = result["spearman"]["low"], result["spearman"]["high"]
>>> low is not None and high is not None and -1.0 <= low <= 0.8 <= high <= 1.0
True
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from numbers import Real
from typing import TypedDict

from tame_mt_metric.errors import (
    InvalidOptionError,
    MisalignedInputError,
    UndefinedCorrelationError,
)
from tame_mt_metric.report.config import MAX_BOOTSTRAP, MAX_SEED

__all__ = [
    "COEFFICIENTS",
    "Correlation",
    "Interval",
    "UndefinedCorrelationError",
    "average_ranks",
    "correlate",
    "kendall_tau_b",
    "pearson",
    "segment_correlation",
    "spearman",
]

COEFFICIENTS = ("spearman", "pearson", "kendall")
MIN_PAIRS = 3


class Interval(TypedDict):
    """A coefficient and its bootstrap percentile interval (None without resamples)."""

    value: float
    low: float | None
    high: float | None


class Correlation(TypedDict):
    """The three coefficients over `n` pairs, with the bootstrap's settings and
    `resamples`, the number of non-degenerate resamples behind the intervals."""

    n: int
    seed: int
    n_bootstrap: int
    resamples: int
    confidence: float
    spearman: Interval
    pearson: Interval
    kendall: Interval


def average_ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, tied values sharing the mean of their ranks.

    >>> average_ranks([30, 10, 20, 10])
    [4.0, 1.5, 3.0, 1.5]
    """
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        rank = (start + end) / 2 + 1
        for position in range(start, end + 1):
            ranks[order[position]] = rank
        start = end + 1
    return ranks


def _pearson(x: Sequence[float], y: Sequence[float]) -> float:
    mean_x = math.fsum(x) / len(x)
    mean_y = math.fsum(y) / len(y)
    dx = [v - mean_x for v in x]
    dy = [v - mean_y for v in y]
    sxy = math.fsum(a * b for a, b in zip(dx, dy, strict=True))
    sxx = math.fsum(a * a for a in dx)
    syy = math.fsum(b * b for b in dy)
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def _spearman(x: Sequence[float], y: Sequence[float]) -> float:
    return _pearson(average_ranks(x), average_ranks(y))


def _tied_pairs(sorted_values: Iterable[object]) -> int:
    """Pairs of equal neighbours' runs: the sum of t(t-1)/2 over runs of length t."""
    total = 0
    run = 0
    previous: object = None
    for position, value in enumerate(sorted_values):
        if position and value == previous:
            run += 1
        else:
            total += run * (run - 1) // 2
            run = 1
        previous = value
    return total + run * (run - 1) // 2


def _sorted_with_inversions(values: list[float]) -> tuple[list[float], int]:
    """`values` sorted by a bottom-up merge sort, and the number of pairs out of
    order (strictly greater value first)."""
    current = values
    inversions = 0
    width = 1
    while width < len(current):
        merged: list[float] = []
        for start in range(0, len(current), 2 * width):
            middle = min(start + width, len(current))
            end = min(start + 2 * width, len(current))
            i, j = start, middle
            while i < middle and j < end:
                if current[j] < current[i]:
                    inversions += middle - i
                    merged.append(current[j])
                    j += 1
                else:
                    merged.append(current[i])
                    i += 1
            merged.extend(current[i:middle])
            merged.extend(current[j:end])
        current = merged
        width *= 2
    return current, inversions


def _kendall(x: Sequence[float], y: Sequence[float]) -> float:
    pairs = sorted(zip(x, y, strict=True))
    n = len(pairs)
    total = n * (n - 1) // 2
    tied_x = _tied_pairs(p[0] for p in pairs)
    tied_both = _tied_pairs(pairs)
    sorted_y, discordant = _sorted_with_inversions([p[1] for p in pairs])
    tied_y = _tied_pairs(sorted_y)
    difference = total - tied_x - tied_y + tied_both - 2 * discordant
    return max(-1.0, min(1.0, difference / math.sqrt((total - tied_x) * (total - tied_y))))


_FUNCTIONS: dict[str, Callable[[Sequence[float], Sequence[float]], float]] = {
    "spearman": _spearman,
    "pearson": _pearson,
    "kendall": _kendall,
}


def _numbers(name: str, values: object) -> list[float]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise InvalidOptionError(f"{name}: expected a list of numbers, got {type(values).__name__}")
    result = []
    for index, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
            raise InvalidOptionError(f"{name}[{index}]: expected a finite number, got {value!r}")
        result.append(float(value))
    return result


def _constant(values: Sequence[float]) -> bool:
    return min(values) == max(values)


def _check_pairs(
    x_name: str, x: Sequence[float], y_name: str, y: Sequence[float], unit: str, minimum: int
) -> None:
    if len(x) != len(y):
        raise MisalignedInputError(f"{x_name} has {len(x)} items but {y_name} has {len(y)}")
    if len(x) < minimum:
        raise UndefinedCorrelationError(
            f"a correlation needs at least {minimum} {unit}, got {len(x)}"
        )
    for name, values in ((x_name, x), (y_name, y)):
        if _constant(values):
            raise UndefinedCorrelationError(
                f"{name}: all {len(values)} values are equal; the correlation is not defined"
            )


def _coefficient(name: str, x: Sequence[float], y: Sequence[float]) -> float:
    xs, ys = _numbers("x", x), _numbers("y", y)
    _check_pairs("x", xs, "y", ys, "pairs", 2)
    return _FUNCTIONS[name](xs, ys)


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's linear correlation coefficient.

    >>> pearson([1, 2, 3], [2, 4, 7])
    0.9933992677987828
    """
    return _coefficient("pearson", x, y)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation (Pearson of average ranks).

    >>> spearman([1, 2, 2, 3], [1, 3, 2, 4])
    0.9486832980505138
    """
    return _coefficient("spearman", x, y)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b: (concordant - discordant) / sqrt((n0 - n1) (n0 - n2)), with
    n0 all pairs, n1 and n2 the pairs tied in x and in y.

    >>> kendall_tau_b([1, 2, 2, 3], [1, 3, 2, 4])
    0.9128709291752769
    """
    return _coefficient("kendall", x, y)


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    position = fraction * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _check_bootstrap(n_bootstrap: object, seed: object, confidence: object) -> float:
    if (
        isinstance(n_bootstrap, bool)
        or not isinstance(n_bootstrap, int)
        or not 0 <= n_bootstrap <= MAX_BOOTSTRAP
    ):
        raise InvalidOptionError(
            f"n_bootstrap: expected an integer in [0, {MAX_BOOTSTRAP:,}], got {n_bootstrap!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise InvalidOptionError(f"seed: expected an integer in [0, 2**32), got {seed!r}")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, Real)
        or not 0 < float(confidence) < 1
    ):
        raise InvalidOptionError(
            f"confidence: expected a number strictly between 0 and 1, got {confidence!r}"
        )
    return float(confidence)


def _bootstrap(
    x: Sequence[float], y: Sequence[float], n_bootstrap: int, seed: int, confidence: float
) -> Correlation:
    rng = random.Random(seed)
    population = range(len(x))
    draws: dict[str, list[float]] = {name: [] for name in COEFFICIENTS}
    for _ in range(n_bootstrap):
        chosen = rng.choices(population, k=len(x))
        xs = [x[i] for i in chosen]
        ys = [y[i] for i in chosen]
        if _constant(xs) or _constant(ys):
            continue
        for name in COEFFICIENTS:
            draws[name].append(_FUNCTIONS[name](xs, ys))
    used = len(draws[COEFFICIENTS[0]])
    tail = (1 - confidence) / 2
    intervals: dict[str, Interval] = {}
    for name in COEFFICIENTS:
        ordered = sorted(draws[name])
        intervals[name] = {
            "value": _FUNCTIONS[name](x, y),
            "low": _percentile(ordered, tail) if ordered else None,
            "high": _percentile(ordered, 1 - tail) if ordered else None,
        }
    return {
        "n": len(x),
        "seed": seed,
        "n_bootstrap": n_bootstrap,
        "resamples": used,
        "confidence": confidence,
        "spearman": intervals["spearman"],
        "pearson": intervals["pearson"],
        "kendall": intervals["kendall"],
    }


def segment_correlation(
    human: Sequence[float],
    metric: Sequence[float],
    n_bootstrap: int = 1000,
    seed: int = 12345,
    confidence: float = 0.95,
) -> Correlation:
    """Segment-level agreement: the coefficients over aligned lists of human and
    metric scores (at least 3 segments), with intervals from resampling segments."""
    level = _check_bootstrap(n_bootstrap, seed, confidence)
    xs, ys = _numbers("human", human), _numbers("metric", metric)
    _check_pairs("human", xs, "metric", ys, "segments", MIN_PAIRS)
    return _bootstrap(xs, ys, n_bootstrap, seed, level)


def _direction_scores(name: str, scores: object) -> dict[str, float]:
    if not isinstance(scores, Mapping):
        raise InvalidOptionError(
            f"{name}: expected a mapping of direction to score, got {type(scores).__name__}"
        )
    result = {}
    for direction, value in scores.items():
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
            raise InvalidOptionError(
                f"{name}[{direction!r}]: expected a finite number, got {value!r}"
            )
        result[str(direction)] = float(value)
    return result


def _names(directions: Iterable[str]) -> str:
    return ", ".join(map(repr, directions))


def correlate(
    human: Mapping[str, float],
    metrics: Mapping[str, Mapping[str, float]],
    n_bootstrap: int = 1000,
    seed: int = 12345,
    confidence: float = 0.95,
) -> dict[str, Correlation]:
    """Direction-level agreement of each metric with the human scores: the metric
    and `human` must cover the same directions (at least 3); intervals come from
    resampling directions, with the same draws for every metric.

    >>> human = {"eng-fra": 4.1, "eng-deu": 3.9, "eng-swh": 2.7, "eng-zul": 2.2}
    >>> metrics = {"chrF++": {"eng-fra": 61.0, "eng-deu": 55.2, "eng-swh": 48.9, "eng-zul": 40.3}}
    >>> result = correlate(human, metrics, n_bootstrap=100)
    >>> result["chrF++"]["n"], result["chrF++"]["spearman"]["value"]
    (4, 1.0)
    """
    level = _check_bootstrap(n_bootstrap, seed, confidence)
    reference = _direction_scores("human", human)
    if not isinstance(metrics, Mapping) or not metrics:
        raise InvalidOptionError(f"metrics: expected a non-empty mapping, got {metrics!r:.60}")
    result: dict[str, Correlation] = {}
    for metric_name, table in metrics.items():
        label = f"metrics[{metric_name!r}]"
        scores = _direction_scores(label, table)
        problems = []
        lacking = [d for d in reference if d not in scores]
        if lacking:
            problems.append(f"{label} lacks direction(s) {_names(lacking)} of human")
        extra = [d for d in scores if d not in reference]
        if extra:
            problems.append(f"human lacks direction(s) {_names(extra)} of {label}")
        if problems:
            raise MisalignedInputError("; ".join(problems))
        xs = list(reference.values())
        ys = [scores[d] for d in reference]
        _check_pairs("human", xs, label, ys, "directions", MIN_PAIRS)
        result[str(metric_name)] = _bootstrap(xs, ys, n_bootstrap, seed, level)
    return result
