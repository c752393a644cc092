"""The report's warnings: each says what it sees, with the numbers it saw, named
as every human surface names them."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import datasets
import pyarrow as pa
import pytest

from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.cache.entries import CacheOptions
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.report import audit as audit_module
from tame_mt_metric.report.document import warnings_for
from tame_mt_metric.report.pipeline import ItemizedReport
from tame_mt_metric.report.swapped_sides import (
    SWAP_MIN_ITEMS,
    SWAP_RATIO,
    swapped,
    swapped_warning,
)
from tame_mt_metric.retrieval.corpus import training_corpus
from tame_mt_metric.retrieval.sides import SAMPLE_ROWS, SideExposure
from tame_mt_metric.retrieval.text_files import TextFiles

N = 200
OFF = CacheOptions(enabled=False)


@pytest.fixture(scope="module")
def example() -> dict[str, list[str]]:
    data = example_corpus()
    return {k: v if k.startswith("train") else v[:N] for k, v in data.items()}


@pytest.fixture(scope="module")
def corpus(example: dict[str, list[str]]) -> TrainingCorpus:
    return TrainingCorpus(example["train_sources"], example["train_targets"])


def _run(
    corpus: TrainingCorpus, example: dict[str, list[str]], hyps: list[str], **options: object
) -> ItemizedReport:
    config = TameConfig.from_options(**options)
    return score_tame(
        corpus, hyps, example["references"], example["test_sources"], config, cache=OFF
    )


def _tm_lines(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "TM-" in w]


def test_a_wrong_language_output_is_told_it_scores_below_its_tm(
    corpus: TrainingCorpus, example: dict[str, list[str]]
) -> None:
    # The Swahili sources handed in as the Zulu "translations".
    result = _run(corpus, example, example["test_sources"])
    system, tm = result.report.system["bleu"], result.report.tm["bleu"]
    assert tm > system
    (line,) = _tm_lines(result.report.warnings)
    assert line.startswith(
        f"System BLEU ({system:.2f}) is below its translation-memory baseline, TM-BLEU ({tm:.2f})"
    )
    assert "explains" not in line and "%" not in line


def test_a_system_equal_to_its_tm_is_told_so(
    corpus: TrainingCorpus, example: dict[str, list[str]]
) -> None:
    result = _run(corpus, example, example["test_sources"])
    report = result.report
    same = {m: 12.5 for m in report.system}
    (line,) = _tm_lines(warnings_for(report.config, report.summary, same, same, report.bins))
    assert line.startswith("System BLEU (12.50) is equal to its translation-memory baseline")


@pytest.mark.parametrize(
    ("tm_bleu", "expected"),
    [
        (4.99, None),
        (5.0, "TM-BLEU (5.00) is 50.0% of system BLEU (10.00): a nearest-neighbour"),
        (9.99, "TM-BLEU (9.99) is 99.9% of system BLEU (10.00): a nearest-neighbour"),
        (10.0, "System BLEU (10.00) is equal to its translation-memory baseline"),
        (10.01, "System BLEU (10.00) is below its translation-memory baseline, TM-BLEU (10.01)"),
    ],
)
def test_the_tm_warning_by_the_share_of_the_system_score(
    corpus: TrainingCorpus,
    example: dict[str, list[str]],
    tm_bleu: float,
    expected: str | None,
) -> None:
    report = _run(corpus, example, example["references"]).report
    lines = _tm_lines(
        warnings_for(
            report.config,
            report.summary,
            {"bleu": 10.0, "chrf": 50.0},
            {"bleu": tm_bleu, "chrf": 1.0},
            report.bins,
        )
    )
    assert len(lines) == (expected is not None)
    assert all(line.startswith(expected or "") for line in lines)


@pytest.mark.parametrize(("word_order", "name"), [(2, "chrF++"), (0, "chrF2"), (1, "chrF2+")])
def test_the_tm_warning_names_chrf_by_its_word_order(
    corpus: TrainingCorpus, example: dict[str, list[str]], word_order: int, name: str
) -> None:
    result = _run(
        corpus,
        example,
        example["test_sources"],
        metrics=("chrf", "bleu"),
        chrf_word_order=word_order,
    )
    (line,) = _tm_lines(result.report.warnings)
    assert f"System {name} (" in line and f"TM-{name} (" in line
    assert "CHRF" not in line


# The training sides given the wrong way round.


def _swapped_lines(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "training sides look swapped" in w]


def _kinds(example: dict[str, list[str]], swap: bool) -> dict[str, object]:
    """One corpus held every way a user may hold it (sources first unless ``swap``)."""
    names = ("train_targets", "train_sources") if swap else ("train_sources", "train_targets")
    src, tgt = (example[n] for n in names)
    rows = [{"source": s, "target": t} for s, t in zip(src, tgt, strict=True)]
    root = Path(str(resources.files("tame_mt_metric") / "data" / "bible_sw_zu"))
    files = (
        (root / "train.zu.gz", root / "train.sw.gz")
        if swap
        else (
            root / "train.sw.gz",
            root / "train.zu.gz",
        )
    )
    dataset = datasets.Dataset.from_dict({"source": src, "target": tgt})
    return {
        "lists": TrainingCorpus(src, tgt),
        "dataset": training_corpus(dataset),
        "table": training_corpus(pa.table({"source": src, "target": tgt})),
        "text files": TextFiles(*files),
        "iterator of rows": training_corpus(iter(rows)),
        "iterable dataset": training_corpus(dataset.to_iterable_dataset()),
    }


KINDS = ["lists", "dataset", "table", "text files", "iterator of rows", "iterable dataset"]


@pytest.mark.parametrize("kind", KINDS)
def test_swapped_training_sides_are_warned_about_for_every_corpus(
    example: dict[str, list[str]], kind: str
) -> None:
    swapped = _kinds(example, True)[kind]
    result = score_tame(
        swapped,  # type: ignore[arg-type]
        example["references"],
        example["references"],
        example["test_sources"],
        cache=OFF,
    )
    (line,) = _swapped_lines(result.report.warnings)
    assert "--train-src and --train-tgt" in line and "source and target columns" in line
    # The numbers it names: crossed above straight, on the rows it sampled.
    crossed, straight = (
        float(x) for x in re.findall(r"mean exposure (\S+) against (\S+)", line)[0]
    )
    assert crossed > SWAP_RATIO * straight
    assert f"over {min(SAMPLE_ROWS, len(example['train_sources']))} sampled" in line
    given = _kinds(example, False)[kind]
    result = score_tame(
        given,  # type: ignore[arg-type]
        example["references"],
        example["references"],
        example["test_sources"],
        cache=OFF,
    )
    assert _swapped_lines(result.report.warnings) == []


@pytest.fixture(scope="module")
def swapped_corpus(example: dict[str, list[str]]) -> TrainingCorpus:
    return TrainingCorpus(example["train_targets"], example["train_sources"])


def _score(
    train: TrainingCorpus, example: dict[str, list[str]], cache: CacheOptions
) -> ItemizedReport:
    refs = example["references"]
    return score_tame(train, refs, refs, example["test_sources"], cache=cache)


def test_a_cached_audit_carries_the_side_check(
    swapped_corpus: TrainingCorpus,
    example: dict[str, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = CacheOptions(cache_dir=tmp_path)
    first = _score(swapped_corpus, example, cache)
    assert _swapped_lines(first.report.warnings)
    # Another process: nothing in memory, the audit read back from its file, and no
    # second look at the corpus's sides.
    monkeypatch.setattr(audit_module, "_RECENT", type(audit_module._RECENT)())
    monkeypatch.setattr(audit_module, "side_check", _no_call)
    again = _score(swapped_corpus, example, cache)
    assert again.report.backend["audit_cached"] is True
    assert again.report.warnings == first.report.warnings


def _no_call(*args: object) -> None:
    raise AssertionError("the side check ran again")


def test_the_side_check_changes_no_number(
    swapped_corpus: TrainingCorpus,
    example: dict[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked = _score(swapped_corpus, example, OFF).report.as_json()
    monkeypatch.setattr(audit_module, "side_check", lambda *args: None)
    unchecked = _score(swapped_corpus, example, OFF).report.as_json()
    assert len(_swapped_lines(checked.pop("warnings"))) == 1
    assert _swapped_lines(unchecked.pop("warnings")) == []
    assert json.dumps(checked, sort_keys=True) == json.dumps(unchecked, sort_keys=True)


def _sides(
    s_to_s: float, s_to_t: float, r_to_t: float, r_to_s: float, items: int = 100
) -> SideExposure:
    return SideExposure(500, items, s_to_s, s_to_t, r_to_t, r_to_s)


@pytest.mark.parametrize(
    ("sides", "called"),
    [
        (_sides(0.04, 0.06, 0.04, 0.06), True),  # crossed 0.06 = 1.5 x 0.04
        (_sides(0.04, 0.0599, 0.04, 0.06), False),  # just under 1.5 x
        (_sides(0.02, 0.05, 0.02, 0.05), True),  # at the floor
        (_sides(0.01, 0.0499, 0.01, 0.0499), False),  # under the floor, whatever the ratio
        (_sides(0.05, 0.30, 0.10, 0.09), False),  # the references read as given
        (_sides(0.10, 0.09, 0.05, 0.30), False),  # the sources read as given
        (_sides(0.04, 0.2, 0.04, 0.2, items=SWAP_MIN_ITEMS - 1), False),  # too few items
        (_sides(0.04, 0.2, 0.04, 0.2, items=SWAP_MIN_ITEMS), True),
        (_sides(0.21, 0.05, 0.21, 0.05), False),  # the bundled example as given
    ],
)
def test_the_swap_rule(sides: SideExposure, called: bool) -> None:
    assert swapped(sides) is called
    assert (swapped_warning(sides) is not None) is called


def test_an_audit_without_a_system_judges_no_system_against_its_tm(
    corpus: TrainingCorpus, example: dict[str, list[str]]
) -> None:
    # The audit command's convention: every prediction empty.
    silent = _run(corpus, example, [""] * N)
    assert silent.report.tm["bleu"] > 0 and _tm_lines(silent.report.warnings) == []
    one_word = _run(corpus, example, ["a"] + [""] * (N - 1))
    assert _tm_lines(one_word.report.warnings)[0].startswith("System BLEU (0.00) is below")
