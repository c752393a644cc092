"""XSTS human scores per translation direction, calibrated for annotator harshness.

XSTS (crosslingual semantic text similarity) rates each translation from 1 to 5.
The NLLB FLORES-200 protocol aggregates a direction's ratings and then moves the
result by how harsh or generous that direction's annotators were on a shared
calibration set. The recipe, as the evaluation card writes it:

1. per item, the median of its annotators' scores; ``H_raw`` is the mean of these
   medians over the direction's items (an even number of scores has the mean of
   the two middle ones as its median, as ``statistics.median`` computes it);
2. ``C_raw``, the same mean of medians over the direction's calibration items;
3. ``C_shift = C_raw - C_mean``, ``S = tanh(-C_shift)``, ``E = tanh(H_raw - 5)``
   if ``C_shift <= 0`` else ``tanh(H_raw - 1)``, and ``H_cal = H_raw + S * E``.
   ``C_mean`` is 3.01, NLLB's mean of ``C_raw`` over all its directions, unless
   given: with calibration data of your own, pass your directions' mean ``C_raw``.

Two recipes are offered:

- ``"card"`` (default), the recipe exactly as written. Generous annotators
  (``C_shift > 0``: ``S < 0``, ``E >= 0``) have their direction lowered, less so
  as ``H_raw`` nears 1, as intended. Harsh annotators (``C_shift < 0``) have
  ``S > 0`` and ``E = tanh(H_raw - 5) <= 0``, so the direction is lowered *too*,
  against the stated purpose of adjusting for harshness.
- ``"symmetric"``: as the card for generous annotators, but for harsh ones
  ``E = tanh(5 - H_raw)``, so the direction is raised, less so as ``H_raw`` nears 5.

At ``C_shift == 0`` (``C_raw == C_mean``) ``S`` is zero and both recipes leave the
score unchanged: ``H_cal == H_raw`` exactly. The shift is always less than 1 in
size. The symmetric recipe keeps ``H_cal`` within [1, 5] (``u - tanh(u) >= 0``);
the card's can fall below 1 for a low score of very harsh annotators (``H_raw =
1.5``, ``C_raw = 1`` gives about 0.54).

Worked example: a direction with four items rated ``[4, 5, 4]``, ``[3, 3, 5]``,
``[5, 4, 5]`` and ``[2, 4]`` has medians 4, 3, 5 and 3 (the mean of 2 and 4), so
``H_raw = 15 / 4 = 3.75``.

- Harsh calibration, ``C_raw = 2.5``: ``C_shift = -0.51``, ``S = tanh(0.51) =
  0.46995``. Card: ``E = tanh(-1.25) = -0.84828``, ``H_cal = 3.75 - 0.39865 =
  3.35135``. Symmetric: ``E = tanh(1.25) = 0.84828``, ``H_cal = 3.75 + 0.39865 =
  4.14865``.
- Generous calibration, ``C_raw = 3.5``: ``C_shift = 0.49``, ``S = tanh(-0.49) =
  -0.45422``, ``E = tanh(2.75) = 0.99186``, ``H_cal = 3.75 - 0.45052 = 3.29948``
  with either recipe.

>>> round(calibrate_score(3.75, 2.5), 5), round(calibrate_score(3.75, 2.5, recipe="symmetric"), 5)
(3.35135, 4.14865)
>>> round(calibrate_score(3.75, 3.5), 5)
3.29948

Ratings come as TSV files (``direction, item, annotator, score``; ``.gz`` is
read too; an optional header line naming these columns; blank lines are
skipped) or as rows of four values; scores are integers from 1 to 5:

>>> rows = [("eng-fra", "s1", "ann1", 4), ("eng-fra", "s1", "ann2", "5"),
...         ("eng-fra", "s2", "ann1", 2)]
>>> calibration = [("eng-fra", "c1", "ann1", 3)]
>>> calibrate(rows, calibration, c_mean=3.0)
{'eng-fra': {'items': 2, 'raw': 3.25, 'calibrated': 3.25, 'calibration_raw': 3.0}}
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from pathlib import Path
from typing import Literal, TypeAlias

from tame_mt_metric.errors import InputTextError, InvalidOptionError, MisalignedInputError
from tame_mt_metric.retrieval.inputs import iter_lines

__all__ = [
    "COLUMNS",
    "DEFAULT_C_MEAN",
    "RECIPES",
    "DirectionCalibration",
    "Ratings",
    "Recipe",
    "calibrate",
    "calibrate_directions",
    "calibrate_score",
    "mean_of_medians",
    "read_ratings",
]

Recipe = Literal["card", "symmetric"]
RECIPES: tuple[Recipe, ...] = ("card", "symmetric")
DEFAULT_C_MEAN = 3.01
COLUMNS = ("direction", "item", "annotator", "score")
MIN_SCORE, MAX_SCORE = 1, 5

Ratings: TypeAlias = dict[str, dict[str, dict[str, int]]]
"""direction -> item -> annotator -> score, in the order first seen."""

RatingSource: TypeAlias = str | Path | Iterable[Sequence[object]]
_HEADER_NAMES = (
    {"direction"},
    {"item", "item id", "item_id", "itemid", "id"},
    {"annotator", "rater"},
    {"score", "xsts"},
)


@dataclass(frozen=True)
class DirectionCalibration:
    """One direction's pieces of the recipe (names as in the card).

    items: rated items; raw: ``H_raw``; calibration_raw: ``C_raw``;
    shift: ``C_shift``; strength: ``S``; extent: ``E``; calibrated: ``H_cal``.
    """

    direction: str
    items: int
    raw: float
    calibration_raw: float
    shift: float
    strength: float
    extent: float
    calibrated: float

    def as_dict(self) -> dict[str, float | int]:
        return {
            "items": self.items,
            "raw": self.raw,
            "calibrated": self.calibrated,
            "calibration_raw": self.calibration_raw,
        }


def _check_recipe(recipe: object) -> Recipe:
    for known in RECIPES:
        if recipe == known:
            return known
    raise InvalidOptionError(f"recipe: expected one of {', '.join(RECIPES)}, got {recipe!r}")


def _check_c_mean(c_mean: object) -> float:
    if isinstance(c_mean, bool) or not isinstance(c_mean, Real) or not math.isfinite(c_mean):
        raise InvalidOptionError(f"c_mean: expected a finite number, got {c_mean!r}")
    return float(c_mean)


def _pieces(
    raw: float, calibration_raw: float, c_mean: float, recipe: Recipe
) -> tuple[float, float, float, float]:
    shift = calibration_raw - c_mean
    strength = math.tanh(-shift)
    if shift > 0:
        extent = math.tanh(raw - MIN_SCORE)
    elif recipe == "card":
        extent = math.tanh(raw - MAX_SCORE)
    else:
        extent = math.tanh(MAX_SCORE - raw)
    return shift, strength, extent, raw + strength * extent


def calibrate_score(
    raw: float,
    calibration_raw: float,
    c_mean: float = DEFAULT_C_MEAN,
    recipe: Recipe = "card",
) -> float:
    """``H_cal`` from ``H_raw`` and ``C_raw`` (see the module's docstring).

    >>> calibrate_score(4.0, 3.01)
    4.0
    >>> round(calibrate_score(2.0, 2.0), 4), round(calibrate_score(2.0, 2.0, recipe="symmetric"), 4)
    (1.238, 2.762)
    """
    return _pieces(raw, calibration_raw, _check_c_mean(c_mean), _check_recipe(recipe))[3]


def mean_of_medians(
    items: Mapping[str, Mapping[str, int] | Sequence[int]] | Sequence[Sequence[int]],
    context: str = "",
) -> float:
    """Mean over items of the median of each item's scores (a mapping of item to
    scores, or to annotator and score, or a list of score lists). `context`
    prefixes error messages.

    >>> mean_of_medians([[4, 5, 4], [3, 3, 5], [5, 4, 5], [2, 4]])
    3.75
    >>> mean_of_medians({"s1": {"ann1": 2, "ann2": 3}, "s2": []}, "scores: 'eng-fra': ")
    Traceback (most recent call last):
    ...
    tame_mt_metric.errors.InputTextError: scores: 'eng-fra': item 's2' has no scores
    """
    labelled = items.items() if isinstance(items, Mapping) else enumerate(items)
    medians = []
    for item, scores in labelled:
        values = list(scores.values()) if isinstance(scores, Mapping) else list(scores)
        if not values:
            raise InputTextError(f"{context}item {item!r} has no scores")
        medians.append(statistics.median(values))
    if not medians:
        raise InputTextError(f"{context}no items")
    return statistics.fmean(medians)


def _parse_score(where: str, direction: str, item: str, value: object) -> int:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputTextError(f"{where}: item {item!r} of direction {direction!r} has no score")
    score: int | None = None
    if isinstance(value, bool):
        pass
    elif isinstance(value, Integral | float):
        score = int(value) if float(value).is_integer() else None
    elif isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"[+-]?[0-9]+", text):
            score = int(text)
    if score is None or not MIN_SCORE <= score <= MAX_SCORE:
        raise InputTextError(
            f"{where}: score {value!r} is not an integer from {MIN_SCORE} to {MAX_SCORE}"
        )
    return score


def _parse_label(where: str, column: str, value: object) -> str:
    if value is None or isinstance(value, bytes | bytearray):
        raise InputTextError(f"{where}: {column}: expected text, got {type(value).__name__}")
    text = str(value).strip()
    if not text:
        raise InputTextError(f"{where}: empty {column}")
    return text


def _is_header(fields: Sequence[str]) -> bool:
    names = [f.strip().lower() for f in fields]
    return len(names) == len(_HEADER_NAMES) and all(
        name in allowed for name, allowed in zip(names, _HEADER_NAMES, strict=True)
    )


def _rows(source: RatingSource, name: str) -> Iterator[tuple[str, Sequence[object]]]:
    """(where, fields) of each row: ``path:line`` for files, ``name[index]`` otherwise."""
    if isinstance(source, str | Path):
        for number, line in enumerate(iter_lines(source), start=1):
            if not line.strip():
                continue
            fields = line.split("\t")
            if number == 1 and _is_header(fields):
                continue
            yield f"{source}:{number}", fields
        return
    if isinstance(source, bytes | bytearray):
        raise InputTextError(f"{name}: expected a TSV path or rows, got {type(source).__name__}")
    for index, row in enumerate(source):
        where = f"{name}[{index}]"
        if isinstance(row, str | bytes | bytearray) or not isinstance(row, Sequence):
            raise InputTextError(
                f"{where}: expected a row of {len(COLUMNS)} values ({', '.join(COLUMNS)}), "
                f"got {type(row).__name__}"
            )
        yield where, row


def read_ratings(source: RatingSource, name: str = "scores") -> Ratings:
    """Ratings from a TSV path or from rows of ``(direction, item, annotator, score)``.

    A file's first line is skipped as a header when its fields are, in any case,
    ``direction``, ``item`` (or ``item id``, ``item_id``, ``itemid``, ``id``),
    ``annotator`` (or ``rater``) and ``score`` (or ``xsts``). Labels are stripped
    text (row values are turned into text: item 7 is ``"7"``). A score is an int,
    an integral float (``4.0``) or the text of an integer. Errors name
    ``path:line`` (files) or ``name[row index]`` (rows, from 0). An annotator may
    rate an item once.

    >>> read_ratings([("eng-deu", 7, "a", 5), ("eng-deu", 7, "b", "4")])
    {'eng-deu': {'7': {'a': 5, 'b': 4}}}
    >>> read_ratings([("eng-deu", 7, "a", "4.5")])
    Traceback (most recent call last):
    ...
    tame_mt_metric.errors.InputTextError: scores[0]: score '4.5' is not an integer from 1 to 5
    """
    ratings: Ratings = {}
    seen_at: dict[tuple[str, str, str], str] = {}
    for where, fields in _rows(source, name):
        if len(fields) != len(COLUMNS):
            raise InputTextError(
                f"{where}: expected {len(COLUMNS)} columns ({', '.join(COLUMNS)}), "
                f"got {len(fields)}"
            )
        direction, item, annotator = (
            _parse_label(where, column, value)
            for column, value in zip(COLUMNS[:3], fields[:3], strict=True)
        )
        score = _parse_score(where, direction, item, fields[3])
        key = (direction, item, annotator)
        if key in seen_at:
            raise InputTextError(
                f"{where}: annotator {annotator!r} already rated item {item!r} of direction "
                f"{direction!r} (at {seen_at[key]})"
            )
        seen_at[key] = where
        ratings.setdefault(direction, {}).setdefault(item, {})[annotator] = score
    if not ratings:
        raise InputTextError(f"{source if isinstance(source, str | Path) else name}: no ratings")
    return ratings


def calibrate_directions(
    scores: RatingSource | Ratings,
    calibration: RatingSource | Ratings,
    c_mean: float = DEFAULT_C_MEAN,
    recipe: Recipe = "card",
) -> dict[str, DirectionCalibration]:
    """Every piece of the recipe for each direction of `scores` (in the order first
    seen). `scores` and `calibration` are TSV paths, rows, or ``read_ratings``
    results; directions of `calibration` that `scores` lacks are ignored."""
    checked_recipe = _check_recipe(recipe)
    checked_c_mean = _check_c_mean(c_mean)
    rated = scores if isinstance(scores, dict) else read_ratings(scores, "scores")
    reference = (
        calibration if isinstance(calibration, dict) else read_ratings(calibration, "calibration")
    )
    missing = [d for d in rated if d not in reference]
    if missing:
        raise MisalignedInputError(
            f"calibration: no ratings for direction(s) {', '.join(map(repr, missing))} of scores"
        )
    result = {}
    for direction, items in rated.items():
        raw = mean_of_medians(items, f"scores: direction {direction!r}: ")
        calibration_raw = mean_of_medians(
            reference[direction], f"calibration: direction {direction!r}: "
        )
        shift, strength, extent, calibrated = _pieces(
            raw, calibration_raw, checked_c_mean, checked_recipe
        )
        result[direction] = DirectionCalibration(
            direction, len(items), raw, calibration_raw, shift, strength, extent, calibrated
        )
    return result


def calibrate(
    scores: RatingSource,
    calibration: RatingSource,
    c_mean: float = DEFAULT_C_MEAN,
    recipe: Recipe = "card",
) -> dict[str, dict[str, float | int]]:
    """``{direction: {"items", "raw", "calibrated", "calibration_raw"}}`` for each
    direction of `scores`; see the module's docstring for the recipe."""
    return {
        direction: pieces.as_dict()
        for direction, pieces in calibrate_directions(scores, calibration, c_mean, recipe).items()
    }
