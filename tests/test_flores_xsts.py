"""XSTS calibration: the card's recipe on a hand-computed example, the direction
of each recipe's adjustment, TSV and row input, bad input, and invariants on
generated annotator tables."""

from __future__ import annotations

import gzip
import math
import random
import re
from pathlib import Path

import pytest

from tame_mt_metric.errors import (
    InputTextError,
    InvalidOptionError,
    MisalignedInputError,
    TameError,
)
from tame_mt_metric.flores.xsts import (
    RECIPES,
    Recipe,
    calibrate,
    calibrate_directions,
    calibrate_score,
    mean_of_medians,
    read_ratings,
)

# The module docstring's worked example: medians 4, 3, 5 and 3 (the mean of 2 and 4).
ITEMS = {"s1": [4, 5, 4], "s2": [3, 3, 5], "s3": [5, 4, 5], "s4": [2, 4]}
HARSH = {"c1": [2, 2, 3], "c2": [3, 3, 1]}  # medians 2 and 3: C_raw = 2.5
GENEROUS = {"c1": [4, 3, 4], "c2": [3, 3, 4]}  # medians 4 and 3: C_raw = 3.5


def rows(direction: str, items: dict[str, list[int]]) -> list[tuple[str, str, str, int]]:
    return [
        (direction, item, f"ann{k}", score)
        for item, scores in items.items()
        for k, score in enumerate(scores)
    ]


def test_the_worked_example_by_hand() -> None:
    scores = rows("eng-fra", ITEMS) + rows("eng-deu", ITEMS)
    calibration = rows("eng-fra", HARSH) + rows("eng-deu", GENEROUS)
    card = calibrate(scores, calibration)
    symmetric = calibrate(scores, calibration, recipe="symmetric")
    # Harsh: C_shift = 2.5 - 3.01 = -0.51, S = tanh(0.51) = 0.469945;
    # card E = tanh(3.75 - 5) = -0.848284, symmetric E = tanh(5 - 3.75) = +0.848284.
    assert card["eng-fra"]["items"] == 4
    assert card["eng-fra"]["raw"] == 3.75
    assert card["eng-fra"]["calibration_raw"] == 2.5
    assert card["eng-fra"]["calibrated"] == pytest.approx(3.75 - 0.469945 * 0.848284, abs=1e-6)
    assert card["eng-fra"]["calibrated"] == pytest.approx(3.351353, abs=1e-6)
    assert symmetric["eng-fra"]["calibrated"] == pytest.approx(4.148647, abs=1e-6)
    # Generous: C_shift = 0.49, S = tanh(-0.49) = -0.454216, E = tanh(2.75) = 0.991860.
    assert card["eng-deu"]["calibration_raw"] == 3.5
    assert card["eng-deu"]["calibrated"] == pytest.approx(3.75 - 0.454216 * 0.991860, abs=1e-6)
    assert card["eng-deu"]["calibrated"] == pytest.approx(3.299481, abs=1e-6)
    assert symmetric["eng-deu"] == card["eng-deu"]
    assert list(card) == ["eng-fra", "eng-deu"]


def test_the_pieces_are_the_cards_names() -> None:
    pieces = calibrate_directions(rows("eng-fra", ITEMS), rows("eng-fra", HARSH))["eng-fra"]
    assert pieces.shift == pytest.approx(-0.51)
    assert pieces.strength == pytest.approx(math.tanh(0.51))
    assert pieces.extent == pytest.approx(math.tanh(-1.25))
    assert pieces.calibrated == pieces.raw + pieces.strength * pieces.extent
    assert pieces.as_dict() == calibrate(rows("eng-fra", ITEMS), rows("eng-fra", HARSH))["eng-fra"]


def test_median_of_an_even_count_is_the_mean_of_the_middle_two() -> None:
    assert mean_of_medians([[1, 2, 4, 5]]) == 3.0
    assert mean_of_medians([[2, 3]]) == 2.5
    assert mean_of_medians({"a": {"x": 5}, "b": {"x": 1, "y": 2}}) == 3.25


COLUMNS = "expected 4 columns (direction, item, annotator, score)"
ROW = "expected a row of 4 values (direction, item, annotator, score)"
RAW_VALUES = [1.01, 1.5, 2.0, 2.75, 3.4, 4.0, 4.6, 4.99]


@pytest.mark.parametrize("raw", RAW_VALUES)
@pytest.mark.parametrize("calibration_raw", [1.0, 2.0, 2.9, 3.0])
def test_harsh_annotators_card_lowers_symmetric_raises(raw: float, calibration_raw: float) -> None:
    card = calibrate_score(raw, calibration_raw, recipe="card")
    symmetric = calibrate_score(raw, calibration_raw, recipe="symmetric")
    assert card < raw < symmetric
    assert symmetric - raw == pytest.approx(raw - card)  # same size, opposite sign
    assert 1.0 <= symmetric <= 5.0


@pytest.mark.parametrize("raw", RAW_VALUES)
@pytest.mark.parametrize("calibration_raw", [3.02, 3.5, 4.0, 5.0])
@pytest.mark.parametrize("recipe", RECIPES)
def test_generous_annotators_are_lowered_by_both(
    raw: float, calibration_raw: float, recipe: Recipe
) -> None:
    calibrated = calibrate_score(raw, calibration_raw, recipe=recipe)
    assert 1.0 <= calibrated < raw


@pytest.mark.parametrize("recipe", RECIPES)
def test_generous_lowering_fades_near_one(recipe: Recipe) -> None:
    drops = [raw - calibrate_score(raw, 4.0, recipe=recipe) for raw in RAW_VALUES]
    assert drops == sorted(drops)


@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("raw", [1.0, *RAW_VALUES, 5.0])
def test_no_shift_no_change(recipe: Recipe, raw: float) -> None:
    assert calibrate_score(raw, 3.01, recipe=recipe) == raw
    assert calibrate_score(raw, 2.0, c_mean=2.0, recipe=recipe) == raw


def test_cards_recipe_can_leave_the_scale() -> None:
    assert calibrate_score(1.5, 1.0) == pytest.approx(0.537031, abs=1e-6)
    assert calibrate_score(1.5, 1.0, recipe="symmetric") == pytest.approx(2.462969, abs=1e-6)


def write(path: Path, text: str) -> Path:
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["scores.tsv", "scores.tsv.gz"])
def test_tsv_files_with_a_header(tmp_path: Path, name: str) -> None:
    scores = write(
        tmp_path / name,
        "direction\titem id\tannotator\tscore\n"
        "eng-fra\t1\ta\t4\n\neng-fra\t1\tb\t5\r\neng-fra\t2\ta\t 2\n",
    )
    calibration = write(tmp_path / "calibration.tsv", "eng-fra\tc\ta\t3\n")
    assert read_ratings(scores) == {"eng-fra": {"1": {"a": 4, "b": 5}, "2": {"a": 2}}}
    result = calibrate(scores, str(calibration), c_mean=3)
    assert result == {
        "eng-fra": {"items": 2, "raw": 3.25, "calibrated": 3.25, "calibration_raw": 3.0}
    }


def test_rows_accept_ints_integral_floats_and_integer_strings() -> None:
    ratings = read_ratings([("d", 1, "a", 3), ("d", 1, "b", "4"), ("d", 1, "c", 5.0)])
    assert ratings == {"d": {"1": {"a": 3, "b": 4, "c": 5}}}


@pytest.mark.parametrize("score", ["3.5", "0", "6", "x", "-1", "1e0", "٣", "--3", "3 4"])
def test_bad_scores_name_file_and_line(tmp_path: Path, score: str) -> None:
    path = write(tmp_path / "s.tsv", f"eng-fra\t1\ta\t4\neng-fra\t1\tb\t{score}\n")
    message = f"{path}:2: score {score!r} is not an integer from 1 to 5"
    with pytest.raises(InputTextError, match=f"^{re.escape(message)}$"):
        calibrate(path, [("eng-fra", "c", "a", 3)])


@pytest.mark.parametrize("score", [3.5, 0, 6, "x", True, None, b"3"])
def test_bad_scores_name_the_row(score: object) -> None:
    if score is None:
        message = "scores[1]: item '1' of direction 'd' has no score"
    else:
        message = f"scores[1]: score {score!r} is not an integer from 1 to 5"
    with pytest.raises(InputTextError, match=f"^{re.escape(message)}$"):
        read_ratings([("d", 1, "a", 4), ("d", 1, "b", score)])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("d\t1\ta\n", "{path}:1: " + COLUMNS + ", got 3"),
        ("d\t1\ta\t4\t5\n", "{path}:1: " + COLUMNS + ", got 5"),
        ("d\t1\ta\t4\nd\t2\tb\t\n", "{path}:2: item '2' of direction 'd' has no score"),
        ("d\t1\t\t4\n", "{path}:1: empty annotator"),
        (" \t1\ta\t4\n", "{path}:1: empty direction"),
        ("d\t1\ta\t4\nd\t1\ta\t5\n",
         "{path}:2: annotator 'a' already rated item '1' of direction 'd' (at {path}:1)"),
        ("lang\tid\trater\tscore\n", "{path}:1: score 'score' is not an integer from 1 to 5"),
        ("direction\titem\tannotator\tscore\n\n", "{path}: no ratings"),
    ],
)  # fmt: skip
def test_malformed_files(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "scores.tsv", text)
    with pytest.raises(InputTextError, match=f"^{re.escape(message.format(path=path))}$"):
        read_ratings(path)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "scores.tsv"
    path.write_bytes(b"d\t1\ta\t4\nd\t\xff\ta\t4\n")
    with pytest.raises(InputTextError, match=f"^{re.escape(str(path))}:2: not valid UTF-8"):
        read_ratings(path)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ([("d", 1, "a")], "calibration[0]: " + COLUMNS + ", got 3"),
        (["d\t1\ta\t4"], "calibration[0]: " + ROW + ", got str"),
        ([("d", 1, "a", 4), 7], "calibration[1]: " + ROW + ", got int"),
        ([("d", None, "a", 4)], "calibration[0]: item: expected text, got NoneType"),
        ([], "calibration: no ratings"),
        (b"d\t1\ta\t4", "calibration: expected a TSV path or rows, got bytes"),
    ],
)  # fmt: skip
def test_malformed_rows(source: object, message: str) -> None:
    with pytest.raises(InputTextError, match=f"^{re.escape(message)}$"):
        calibrate([("d", 1, "a", 4)], source)  # type: ignore[arg-type]


def test_a_direction_without_calibration_is_named() -> None:
    scores = rows("eng-fra", ITEMS) + rows("eng-zul", ITEMS) + rows("eng-xho", ITEMS)
    message = "calibration: no ratings for direction(s) 'eng-zul', 'eng-xho' of scores"
    with pytest.raises(MisalignedInputError, match=f"^{re.escape(message)}$"):
        calibrate(scores, rows("eng-fra", HARSH) + rows("eng-deu", HARSH))


def test_an_item_without_scores_in_ready_ratings() -> None:
    message = "scores: direction 'd': item 'x' has no scores"
    with pytest.raises(InputTextError, match=f"^{re.escape(message)}$"):
        calibrate_directions({"d": {"x": {}}}, {"d": {"c": {"a": 3}}})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"recipe": "moderated"}, "recipe: expected one of card, symmetric, got 'moderated'"),
        ({"recipe": None}, "recipe: expected one of card, symmetric, got None"),
        ({"c_mean": math.nan}, "c_mean: expected a finite number, got nan"),
        ({"c_mean": math.inf}, "c_mean: expected a finite number, got inf"),
        ({"c_mean": "3.01"}, "c_mean: expected a finite number, got '3.01'"),
        ({"c_mean": True}, "c_mean: expected a finite number, got True"),
    ],
)
def test_bad_options(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidOptionError, match=f"^{re.escape(message)}$"):
        calibrate(rows("d", ITEMS), rows("d", HARSH), **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=f"^{re.escape(message)}$"):
        calibrate_score(3.0, 3.0, **kwargs)  # type: ignore[arg-type]


def test_errors_are_the_packages_value_errors() -> None:
    with pytest.raises(TameError):
        read_ratings([])
    with pytest.raises(ValueError):
        calibrate_score(3.0, 3.0, recipe="x")  # type: ignore[arg-type]


def annotator_table(seed: int) -> tuple[list[tuple[str, str, str, int]], dict[str, list[float]]]:
    """Seeded ratings of a few directions, each with its own harshness, and the
    medians per direction computed here by sorting."""
    rng = random.Random(seed)
    table = []
    medians: dict[str, list[float]] = {}
    for d in range(rng.randint(1, 5)):
        direction = f"dir{d}"
        centre = rng.uniform(1.5, 4.5)
        for i in range(rng.randint(1, 30)):
            count = rng.randint(1, 4)
            scores = [min(5, max(1, round(rng.gauss(centre, 1.0)))) for _ in range(count)]
            table += [(direction, f"item{i}", f"ann{k}", s) for k, s in enumerate(scores)]
            ordered = sorted(scores)
            middle = (ordered[(count - 1) // 2] + ordered[count // 2]) / 2
            medians.setdefault(direction, []).append(middle)
    return table, medians


@pytest.mark.parametrize("seed", range(25))
def test_generated_tables(seed: int, tmp_path: Path) -> None:
    scores, medians = annotator_table(seed)
    calibration, calibration_medians = annotator_table(seed + 1000)
    calibration = [(d, i, a, s) for d, i, a, s in calibration if d in medians]
    calibration += [(d, "extra", "ann0", 3) for d in medians if d not in calibration_medians]
    result = {recipe: calibrate(scores, calibration, recipe=recipe) for recipe in RECIPES}
    assert list(result["card"]) == list(medians)
    for direction, expected in medians.items():
        card, symmetric = result["card"][direction], result["symmetric"][direction]
        assert card["items"] == len(expected)
        assert card["raw"] == pytest.approx(sum(expected) / len(expected))
        assert 1 <= card["raw"] <= 5
        assert abs(card["calibrated"] - card["raw"]) < 1
        assert 1 <= symmetric["calibrated"] <= 5
        if card["calibration_raw"] >= 3.01:
            assert card == symmetric
        else:
            assert card["calibrated"] <= card["raw"] <= symmetric["calibrated"]
    # No shift: calibrated == raw whatever the recipe, when C_raw is C_mean.
    for direction, values in calibrate(scores, calibration).items():
        for recipe in RECIPES:
            same = calibrate(
                [r for r in scores if r[0] == direction],
                calibration,
                c_mean=values["calibration_raw"],
                recipe=recipe,
            )
            assert same[direction]["calibrated"] == same[direction]["raw"] == values["raw"]
    # Order of rows does not matter; a gzipped TSV gives the same result.
    shuffled = list(scores)
    random.Random(seed).shuffle(shuffled)
    assert calibrate(shuffled, calibration) == {
        d: result["card"][d] for d in shuffled_order(shuffled)
    }
    path = write(
        tmp_path / "scores.tsv.gz",
        "direction\titem\tannotator\tscore\n"
        + "".join("\t".join(map(str, r)) + "\n" for r in scores),
    )
    assert calibrate(path, calibration) == result["card"]


def shuffled_order(table: list[tuple[str, str, str, int]]) -> list[str]:
    return list(dict.fromkeys(row[0] for row in table))
