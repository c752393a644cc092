"""The report's warnings: each says what it sees, with the numbers it saw, named
as every human surface names them."""

from __future__ import annotations

import pytest

from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.cache.entries import CacheOptions
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.report.document import warnings_for
from tame_mt_metric.report.pipeline import TameResult

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
) -> TameResult:
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
