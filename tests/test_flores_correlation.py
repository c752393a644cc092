"""Metric-human correlation: coefficients against hand-computed values, a brute
force Kendall and (when installed) scipy; the seeded bootstrap replayed by hand;
bad input."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pytest

from tame_mt_metric.errors import InvalidOptionError, MisalignedInputError, TameError
from tame_mt_metric.flores.correlation import (
    COEFFICIENTS,
    Interval,
    UndefinedCorrelationError,
    average_ranks,
    correlate,
    kendall_tau_b,
    pearson,
    segment_correlation,
    spearman,
)


@pytest.mark.parametrize(
    ("x", "y", "expected"),
    [
        # d = (1, 1, 1, 1, 0): 1 - 6 * 4 / (5 * 24)
        ([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], {"spearman": 0.8, "pearson": 0.8, "kendall": 0.6}),
        # ranks (1, 2.5, 2.5, 4) and (1, 3, 2, 4): 4.5 / sqrt(4.5 * 5); tau-b 5 / sqrt(5 * 6)
        ([1, 2, 2, 3], [1, 3, 2, 4], {"spearman": 3 / math.sqrt(10), "kendall": 5 / math.sqrt(30)}),
        # sxy = 5, sxx = 2, syy = 114 / 9
        ([1, 2, 3], [2, 4, 7], {"pearson": 15 / math.sqrt(228), "spearman": 1.0, "kendall": 1.0}),
        # one concordant, one discordant pair; two ties on each side
        ([1, 1, 2, 2], [1, 2, 1, 2], {"kendall": 0.0, "spearman": 0.0, "pearson": 0.0}),
        # tied in x: 1 pair, in y: 2, in both: 1; 4 concordant: 4 / sqrt(5 * 4)
        ([1, 1, 2, 3], [1, 1, 2, 2], {"kendall": 4 / math.sqrt(20)}),
        ([3, 1, 2], [-3, -1, -2], {"spearman": -1.0, "pearson": -1.0, "kendall": -1.0}),
    ],
)
def test_hand_computed(x: list[float], y: list[float], expected: dict[str, float]) -> None:
    functions = {"spearman": spearman, "pearson": pearson, "kendall": kendall_tau_b}
    for name, value in expected.items():
        assert functions[name](x, y) == pytest.approx(value, abs=1e-12)


def test_average_ranks() -> None:
    assert average_ranks([]) == []
    assert average_ranks([5.0]) == [1.0]
    assert average_ranks([2, 2, 2]) == [2.0, 2.0, 2.0]
    assert average_ranks([0.5, -1, 0.5, 9, -1]) == [3.5, 1.5, 3.5, 5.0, 1.5]


def brute_kendall(x: Sequence[float], y: Sequence[float]) -> float:
    concordant = discordant = tied_x = tied_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        tied_x += dx == 0
        tied_y += dy == 0
        concordant += dx * dy > 0
        discordant += dx * dy < 0
    total = len(x) * (len(x) - 1) // 2
    return (concordant - discordant) / math.sqrt((total - tied_x) * (total - tied_y))


def samples(seed: int) -> tuple[list[float], list[float]]:
    """Seeded pairs, with many ties in some and none in others."""
    rng = random.Random(seed)
    n = rng.randint(3, 60)
    levels = rng.choice([3, 5, 100, 0])
    if levels:
        x = [float(rng.randint(1, levels)) for _ in range(n)]
        y = [v + rng.randint(-levels // 2, levels // 2) for v in x]
    else:
        x = [rng.gauss(0, 1) for _ in range(n)]
        y = [v * 0.5 + rng.gauss(0, 1) for v in x]
    if min(x) == max(x) or min(y) == max(y):
        x[0], y[0] = x[0] + 1, y[0] - 1
    return x, y


@pytest.mark.parametrize("seed", range(40))
def test_against_definitions(seed: int) -> None:
    x, y = samples(seed)
    assert kendall_tau_b(x, y) == pytest.approx(brute_kendall(x, y), abs=1e-12)
    assert pearson(x, y) == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)
    ranks = np.corrcoef(average_ranks(x), average_ranks(y))[0, 1]
    assert spearman(x, y) == pytest.approx(ranks, abs=1e-12)
    assert spearman(x, y) == pytest.approx(spearman(average_ranks(x), y), abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_against_scipy(seed: int) -> None:
    stats = pytest.importorskip("scipy.stats")
    x, y = samples(seed)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


def replay(
    x: Sequence[float], y: Sequence[float], n_bootstrap: int, seed: int
) -> list[tuple[list[float], list[float]]]:
    """The resamples the bootstrap should use, drawn here by the documented rule."""
    rng = random.Random(seed)
    used = []
    for _ in range(n_bootstrap):
        chosen = rng.choices(range(len(x)), k=len(x))
        xs, ys = [x[i] for i in chosen], [y[i] for i in chosen]
        if len(set(xs)) > 1 and len(set(ys)) > 1:
            used.append((xs, ys))
    return used


def test_bootstrap_replayed_with_numpy_percentiles() -> None:
    human = [1.0, 1.0, 2.0, 2.5, 3.0, 3.0]
    metric = [10.0, 12.0, 11.0, 20.0, 15.0, 30.0]
    result = segment_correlation(human, metric, n_bootstrap=300, seed=7, confidence=0.9)
    used = replay(human, metric, 300, 7)
    assert 0 < len(used) < 300  # some resamples are constant and skipped
    assert result["resamples"] == len(used)
    assert (result["n"], result["seed"], result["n_bootstrap"]) == (6, 7, 300)
    assert result["confidence"] == 0.9
    functions = {"spearman": spearman, "pearson": pearson, "kendall": kendall_tau_b}
    for name in COEFFICIENTS:
        draws = [functions[name](xs, ys) for xs, ys in used]
        interval = result[name]  # type: ignore[literal-required]
        assert interval["value"] == functions[name](human, metric)
        assert interval["low"] == pytest.approx(np.percentile(draws, 5), abs=1e-12)
        assert interval["high"] == pytest.approx(np.percentile(draws, 95), abs=1e-12)


def test_three_pairs_where_a_third_of_resamples_is_constant() -> None:
    result = segment_correlation([1, 1, 2], [1, 2, 3], n_bootstrap=3000, seed=1)
    assert result["resamples"] == len(replay([1, 1, 2], [1, 2, 3], 3000, 1))
    assert result["resamples"] == pytest.approx(3000 * (1 - 1 / 3), rel=0.05)


def test_bootstrap_is_seeded() -> None:
    x, y = samples(3)
    first = segment_correlation(x, y, n_bootstrap=200)
    assert first == segment_correlation(x, y, n_bootstrap=200, seed=12345)
    other = segment_correlation(x, y, n_bootstrap=200, seed=1)
    assert other["spearman"]["value"] == first["spearman"]["value"]
    assert other["spearman"]["low"] != first["spearman"]["low"]


@pytest.mark.parametrize("seed", range(10))
def test_intervals_hold_the_estimate_and_widen_with_confidence(seed: int) -> None:
    x, y = samples(seed + 100)
    narrow = segment_correlation(x, y, n_bootstrap=400, seed=seed, confidence=0.5)
    wide = segment_correlation(x, y, n_bootstrap=400, seed=seed, confidence=0.99)
    for name in COEFFICIENTS:
        n_low, n_high = bounds(narrow[name])  # type: ignore[literal-required]
        w_low, w_high = bounds(wide[name])  # type: ignore[literal-required]
        assert -1 <= w_low <= n_low <= n_high <= w_high <= 1
        assert w_low <= wide[name]["value"] <= w_high  # type: ignore[literal-required]


def bounds(interval: Interval) -> tuple[float, float]:
    assert interval["low"] is not None and interval["high"] is not None
    return interval["low"], interval["high"]


def test_no_bootstrap() -> None:
    result = segment_correlation([1, 2, 3], [1, 3, 2], n_bootstrap=0)
    assert result["resamples"] == 0
    assert result["kendall"]["value"] == pytest.approx(1 / 3)
    assert result["kendall"]["low"] is None and result["kendall"]["high"] is None


HUMAN = {"en-de": 84.2, "en-zh": 67.0, "et-en": 70.1, "ne-en": 41.5, "si-en": 49.8}
CHRF = {"en-de": 61.0, "en-zh": 37.5, "et-en": 55.1, "ne-en": 40.2, "si-en": 38.9}


def test_correlate_directions() -> None:
    shuffled = dict(reversed(CHRF.items()))
    result = correlate(HUMAN, {"chrF++": CHRF, "same": shuffled}, n_bootstrap=250)
    assert list(result) == ["chrF++", "same"]
    assert result["chrF++"] == result["same"]  # same draws for every metric, keyed by direction
    chrf = result["chrF++"]
    assert (chrf["n"], chrf["seed"], chrf["n_bootstrap"]) == (5, 12345, 250)
    # ranks of human (5, 3, 4, 1, 2) and chrF++ (5, 1, 4, 3, 2): d^2 = 0+4+0+4+0
    assert chrf["spearman"]["value"] == pytest.approx(1 - 6 * 8 / (5 * 24))
    assert chrf["kendall"]["value"] == pytest.approx(0.4)  # 7 concordant, 3 discordant
    assert chrf == segment_correlation(list(HUMAN.values()), list(CHRF.values()), 250)


def test_correlate_names_missing_directions() -> None:
    metric = {k: v for k, v in CHRF.items() if k not in ("ne-en", "si-en")} | {"ru-en": 50.0}
    message = (
        "metrics['chrF++'] lacks direction(s) 'ne-en', 'si-en' of human; "
        "human lacks direction(s) 'ru-en' of metrics['chrF++']"
    )
    with pytest.raises(MisalignedInputError, match=f"^{re.escape(message)}$"):
        correlate(HUMAN, {"chrF++": metric})


@pytest.mark.parametrize(
    ("human", "metrics", "error", "message"),
    [
        ({"a": 1.0, "b": 2.0}, {"m": {"a": 1.0, "b": 2.0}}, UndefinedCorrelationError,
         "a correlation needs at least 3 directions, got 2"),
        ({"a": 1, "b": 1, "c": 1}, {"m": {"a": 1, "b": 2, "c": 3}}, UndefinedCorrelationError,
         "human: all 3 values are equal; the correlation is not defined"),
        ({"a": 1, "b": 2, "c": 3}, {"m": {"a": 0, "b": 0, "c": 0}}, UndefinedCorrelationError,
         "metrics['m']: all 3 values are equal; the correlation is not defined"),
        ({"a": 1, "b": math.nan, "c": 3}, {"m": {}}, InvalidOptionError,
         "human['b']: expected a finite number, got nan"),
        ({"a": 1, "b": 2, "c": 3}, {"m": {"a": 1, "b": "2", "c": 3}}, InvalidOptionError,
         "metrics['m']['b']: expected a finite number, got '2'"),
        ({"a": 1, "b": 2, "c": 3}, {}, InvalidOptionError,
         "metrics: expected a non-empty mapping, got {}"),
        ([1, 2, 3], {"m": {}}, InvalidOptionError,
         "human: expected a mapping of direction to score, got list"),
    ],
)  # fmt: skip
def test_correlate_bad_input(
    human: object, metrics: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        correlate(human, metrics)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("human", "metric", "error", "message"),
    [
        ([1, 2, 3], [1, 2], MisalignedInputError, "human has 3 items but metric has 2"),
        ([1, 2], [1, 2], UndefinedCorrelationError,
         "a correlation needs at least 3 segments, got 2"),
        ([1, 2, 3], [4, 4, 4], UndefinedCorrelationError,
         "metric: all 3 values are equal; the correlation is not defined"),
        ([1, 2, math.inf], [1, 2, 3], InvalidOptionError,
         "human[2]: expected a finite number, got inf"),
        ([1, 2, 3], [1, True, 3], InvalidOptionError,
         "metric[1]: expected a finite number, got True"),
        ("123", [1, 2, 3], InvalidOptionError, "human: expected a list of numbers, got str"),
    ],
)  # fmt: skip
def test_segment_bad_input(
    human: object, metric: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        segment_correlation(human, metric)  # type: ignore[arg-type]


CONFIDENCE = "confidence: expected a number strictly between 0 and 1"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_bootstrap": -1}, "n_bootstrap: expected an integer in [0, 100,000], got -1"),
        ({"n_bootstrap": 10.0}, "n_bootstrap: expected an integer in [0, 100,000], got 10.0"),
        ({"n_bootstrap": 100_001}, "n_bootstrap: expected an integer in [0, 100,000], got 100001"),
        ({"seed": "1"}, "seed: expected an integer in [0, 2**32), got '1'"),
        ({"seed": None}, "seed: expected an integer in [0, 2**32), got None"),
        ({"seed": 2**70}, "seed: expected an integer in [0, 2**32), got 1180591620717411303424"),
        ({"confidence": 1.0}, f"{CONFIDENCE}, got 1.0"),
        ({"confidence": 95}, f"{CONFIDENCE}, got 95"),
        ({"confidence": math.nan}, f"{CONFIDENCE}, got nan"),
    ],
)  # fmt: skip
def test_bad_bootstrap_options(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidOptionError, match=f"^{re.escape(message)}$"):
        segment_correlation([1, 2, 3], [1, 3, 2], **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=f"^{re.escape(message)}$"):
        correlate({"a": 1, "b": 2, "c": 3}, {"m": {"a": 1, "b": 3, "c": 2}}, **kwargs)  # type: ignore[arg-type]


def test_bare_coefficients_need_two_varying_pairs() -> None:
    with pytest.raises(UndefinedCorrelationError, match=r"^x: all 2 values are equal"):
        spearman([1, 1], [1, 2])
    with pytest.raises(UndefinedCorrelationError, match="at least 2 pairs, got 1"):
        pearson([1], [1])
    with pytest.raises(MisalignedInputError, match=r"^x has 2 items but y has 3$"):
        kendall_tau_b([1, 2], [1, 2, 3])
    assert pearson([1, 2], [3, 1]) == -1.0


def test_undefined_is_a_value_error_of_the_package() -> None:
    assert issubclass(UndefinedCorrelationError, TameError)
    assert issubclass(UndefinedCorrelationError, ValueError)
