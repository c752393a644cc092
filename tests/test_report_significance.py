"""Paired significance: on the whole test set and on each bin, every figure
equals sacrebleu's own PairedTest of the same texts, seed and sample count, for
paired bootstrap resampling and approximate randomisation, with the TM baseline
as one of the systems."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pytest
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF
from sacrebleu.significance import PairedTest

from tame_mt_metric import TrainingCorpus, compare, score_tame
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.report.significance import Comparison, SystemResult


def _degrade(text: str, step: int) -> str:
    return " ".join(w for i, w in enumerate(text.split()) if i % step != step - 1)


@pytest.fixture(scope="module")
def setup() -> dict[str, Any]:
    example = example_corpus()
    refs = example["references"]
    corpus = TrainingCorpus(example["train_sources"], example["train_targets"])
    systems = {
        "a": [_degrade(r, 3) for r in refs],
        "b": [_degrade(r, 2 + i % 4) for i, r in enumerate(refs)],
    }
    tm = score_tame(corpus, systems["a"], refs, example["test_sources"]).tm_hypotheses
    return {"example": example, "corpus": corpus, "systems": systems, "tm": tm}


def _sacrebleu(
    named: list[tuple[str, Sequence[str]]], refs: list[str], test: str, n: int, n_conf: int
) -> dict[str, dict[str, Any]]:
    metrics = {"bleu": BLEU(references=[refs]), "chrf": CHRF(word_order=2, references=[refs])}
    _, scores = PairedTest(
        named, metrics, None, test_type=test, n_samples=n, n_ar_confidence=n_conf
    )()
    names = [name for name, _ in named]
    by_metric = [column for key, column in scores.items() if key != "System"]
    return {
        metric: dict(zip(names, column, strict=True))
        for metric, column in zip(metrics, by_metric, strict=True)
    }


def _same(ours: SystemResult, theirs: Any, baseline_score: float) -> None:
    assert ours.score == theirs.score
    assert ours.p_value == theirs.p_value
    if theirs.mean is None:
        assert math.isnan(ours.mean)
    else:
        assert ours.mean == theirs.mean
        assert ours.ci_low == theirs.mean - theirs.ci
        assert ours.ci_high == theirs.mean + theirs.ci
    assert ours.delta == ours.score - baseline_score


@pytest.mark.parametrize(("test", "seed"), [("bs", 12345), ("bs", 7), ("ar", 12345), ("ar", 99)])
@pytest.mark.parametrize("baseline", ["a", "tm"])
def test_whole_set_and_bins_equal_sacrebleus_paired_test(
    setup: dict[str, Any], test: str, seed: int, baseline: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sacrebleu reads its seed from the environment.
    monkeypatch.setenv("SACREBLEU_SEED", str(seed))
    example, systems = setup["example"], setup["systems"]
    refs = example["references"]
    result = compare(
        systems,
        refs,
        example["test_sources"],
        setup["corpus"],
        baseline=baseline,
        test=test,
        n_samples=60,
        seed=seed,
        n_bootstrap=40,
    )
    texts = {**systems, "tm": setup["tm"]}
    order = [baseline] + [n for n in ("a", "b", "tm") if n != baseline]
    n_conf = 40 if test == "ar" else -1
    groups = {"whole": list(range(len(refs)))}
    bins = result.settings["bin_counts"]
    item_bins = score_tame(
        setup["corpus"], systems["a"], refs, example["test_sources"]
    ).report.summary.item_bins
    for name, count in bins.items():
        if count:
            groups[name] = [i for i, b in enumerate(item_bins) if b == name]
    assert len(groups) >= 3
    assert set(result.bins) == set(groups) - {"whole"}
    for group, rows in groups.items():
        named: list[tuple[str, Sequence[str]]] = [(n, [texts[n][i] for i in rows]) for n in order]
        theirs = _sacrebleu(named, [refs[i] for i in rows], test, 60, n_conf)
        ours = result.whole if group == "whole" else result.bins[group]
        for metric in ("bleu", "chrf"):
            base = ours[baseline][metric]
            assert base.p_value is None and base.delta == 0.0
            assert base.score == theirs[metric][baseline].score
            for name in order[1:]:
                _same(ours[name][metric], theirs[metric][name], base.score)


def test_as_dict_is_plain_json(setup: dict[str, Any]) -> None:
    example = setup["example"]
    result = compare(
        setup["systems"],
        example["references"],
        example["test_sources"],
        setup["corpus"],
        baseline="tm",
        n_samples=30,
    )
    assert isinstance(result, Comparison)
    plain = json.loads(json.dumps(result.as_dict(), allow_nan=False))
    assert set(plain) == {"whole", "bins", "settings"}
    assert set(plain["whole"]) == {"a", "b", "tm"}
    assert set(plain["whole"]["a"]["bleu"]) == {
        "score",
        "mean",
        "ci_low",
        "ci_high",
        "p_value",
        "delta",
    }
    assert plain["whole"]["tm"]["bleu"]["p_value"] is None
    settings = plain["settings"]
    assert settings["baseline"] == "tm" and settings["test"] == "bs"
    assert settings["signature"].endswith("|paired:bs30_seed12345")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"baseline": "c"}, "baseline"),
        ({"baseline": "a", "test": "t"}, "test"),
        ({"baseline": "a", "n_samples": 0}, "n_samples"),
        ({"baseline": "a", "metrics": ("bleu", "nope")}, "metrics"),
    ],
)
def test_bad_arguments_are_typed_errors(
    setup: dict[str, Any], kwargs: dict[str, Any], message: str
) -> None:
    example = setup["example"]
    with pytest.raises(InvalidOptionError, match=message):
        compare(
            setup["systems"],
            example["references"],
            example["test_sources"],
            setup["corpus"],
            **kwargs,
        )


def test_a_system_may_not_take_the_tm_baselines_name(setup: dict[str, Any]) -> None:
    example = setup["example"]
    with pytest.raises(InvalidOptionError, match="TM baseline"):
        compare(
            {"tm": setup["systems"]["a"]},
            example["references"],
            example["test_sources"],
            setup["corpus"],
            baseline="tm",
        )


def test_bs_shift_is_the_bootstrap_with_its_null_shifted(setup: dict[str, Any]) -> None:
    import numpy as np

    example, systems = setup["example"], setup["systems"]
    refs = example["references"]
    args = (systems, refs, example["test_sources"], setup["corpus"], "a")
    shift = compare(*args, test="bs-shift", n_samples=80, seed=5)
    plain = compare(*args, test="bs", n_samples=80, seed=5)
    metric = BLEU(references=[refs])
    stats = {n: metric._extract_corpus_statistics(h, None) for n, h in systems.items()}
    idxs = np.random.default_rng(5).choice(len(refs), size=(80, len(refs)), replace=True)

    def resampled(name: str) -> Any:
        arr = np.array(stats[name], dtype="float32")
        return np.array([metric._compute_score_from_stats(s.sum(0)).score for s in arr[idxs]])

    delta = resampled("b") - resampled("a")
    d = abs(
        metric._aggregate_and_compute(stats["b"]).score
        - metric._aggregate_and_compute(stats["a"]).score
    )
    p = (np.sum(np.abs(delta - delta.mean()) > d) + 1) / 81
    got, same = shift.whole["b"]["bleu"], plain.whole["b"]["bleu"]
    assert got.p_value == p
    assert (got.score, got.mean, got.ci_low, got.ci_high, got.delta) == (
        same.score,
        same.mean,
        same.ci_low,
        same.ci_high,
        same.delta,
    )
    assert shift.settings["test"] == "bs-shift" and set(shift.bins) == set(plain.bins)
