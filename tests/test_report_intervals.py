"""Bootstrap intervals: each resample's score equals sacrebleu's score of the
drawn items' text, the intervals are the percentiles of those scores (paired
for the delta over TM, joint for GenGap), and the settings are checked, named
in the signature and reproducible."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sacrebleu

from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.report.intervals import resample_chunks, resample_counts, score_intervals
from tame_mt_metric.report.pipeline import TameResult

Scored = tuple[TameResult, list[str], list[str]]


def _degrade(text: str, step: int) -> str:
    return " ".join(w for i, w in enumerate(text.split()) if i % step != step - 1)


@pytest.fixture(scope="module")
def scored() -> Scored:
    example = example_corpus()
    refs = example["references"]
    hyps = [_degrade(r, 2 + i % 5) for i, r in enumerate(refs)]
    corpus = TrainingCorpus(example["train_sources"], example["train_targets"])
    config = TameConfig(n_bootstrap=200)
    result = score_tame(corpus, hyps, refs, example["test_sources"], config)
    return result, hyps, refs


def _drawn(counts: np.ndarray, rows: list[int]) -> list[int]:
    return [rows[j] for j, c in enumerate(counts) for _ in range(int(c))]


def test_each_resample_scores_as_sacrebleu_scores_the_drawn_text(scored: Scored) -> None:
    result, hyps, refs = scored
    report = result.report
    bins = report.summary.item_bins
    groups = {"whole": list(range(len(bins))), "far": [i for i, b in enumerate(bins) if b == "far"]}
    assert 0 < len(groups["far"]) < len(bins)
    for group, rows in groups.items():
        counts = resample_counts(len(rows), 5, 7, group)
        system = report.system_statistics.resampler(rows)(counts)
        tm = report.tm_statistics.resampler(rows)(counts)
        for b in range(5):
            drawn = _drawn(counts[b], rows)
            assert len(drawn) == len(rows)
            streams = [[refs[i] for i in drawn]]
            for scores, texts in ((system, hyps), (tm, result.tm_hypotheses)):
                chosen = [texts[i] for i in drawn]
                assert scores["bleu"][b] == sacrebleu.corpus_bleu(chosen, streams).score
                assert (
                    scores["chrf"][b] == sacrebleu.corpus_chrf(chosen, streams, word_order=2).score
                )


def test_resample_counts_draw_every_resample_whole() -> None:
    counts = resample_counts(37, 50, 3, "near")
    for cells in (37, 100, 37 * 50 + 1):  # one resample a chunk, a few, all at once
        chunks = list(resample_chunks(37, 50, 3, "near", cells))
        assert len(chunks) == -(-50 // max(1, cells // 37))
        assert (np.vstack(chunks) == counts).all()
    assert counts.shape == (50, 37)
    assert (counts.sum(axis=1) == 37).all()
    assert (counts == resample_counts(37, 50, 3, "near")).all()
    assert not (counts == resample_counts(37, 50, 4, "near")).all()
    assert not (counts == resample_counts(37, 50, 3, "far")).all()


def test_intervals_are_percentiles_paired_and_joint(scored: Scored) -> None:
    result, _, _ = scored
    report = result.report
    c = report.config
    bins = report.summary.item_bins
    intervals = report.intervals
    tail = (1 - c.confidence) / 2

    def percentiles(samples: np.ndarray) -> tuple[float, float]:
        low, high = np.quantile(samples, [tail, 1 - tail])
        return float(low), float(high)

    rows = list(range(len(bins)))
    counts = resample_counts(len(rows), c.n_bootstrap, c.seed, "whole")
    system = report.system_statistics.resampler(rows)(counts)
    tm = report.tm_statistics.resampler(rows)(counts)
    got = intervals["bleu"]
    assert (got.low, got.high) == percentiles(system["bleu"])
    got = intervals["delta_tm_bleu"]
    assert (got.low, got.high) == percentiles(system["bleu"] - tm["bleu"])
    near = [i for i, b in enumerate(bins) if b == "near"]
    far = [i for i, b in enumerate(bins) if b == "far"]
    near_counts = resample_counts(len(near), c.n_bootstrap, c.seed, "near")
    far_counts = resample_counts(len(far), c.n_bootstrap, c.seed, "far")
    near_scores = report.system_statistics.resampler(near)(near_counts)
    far_scores = report.system_statistics.resampler(far)(far_counts)
    got = intervals["gen_gap_chrf"]
    assert (got.low, got.high) == percentiles(near_scores["chrf"] - far_scores["chrf"])
    assert intervals["far_bleu"] == intervals["bin/far/bleu"]
    assert (intervals["bin/far/bleu"].low, intervals["bin/far/bleu"].high) == percentiles(
        far_scores["bleu"]
    )
    # Each point score lies in its interval here (no bin is tiny).
    fields = report.fields()
    for key in ("bleu", "chrf", "tm_bleu", "far_chrf", "bin/medium/bleu"):
        value = fields[key]
        assert isinstance(value, float)
        assert intervals[key].low <= value <= intervals[key].high, key


def test_flat_keys_only_when_asked_and_always_in_the_json(scored: Scored) -> None:
    report = scored[0].report
    plain = report.fields()
    assert not any(k.endswith(("_ci_low", "_ci_high")) for k in plain)
    asked = report.fields(confidence_intervals=True)
    scores = [
        k
        for k, v in plain.items()
        if isinstance(v, float)
        and not k.endswith(("_exposure_mean", "_exact_rate"))
        and not k.startswith("pair_leak@")
    ]
    for key in scores:
        assert f"{key}_ci_low" in asked and f"{key}_ci_high" in asked, key
    assert set(asked) - set(plain) == {f"{k}_ci_{e}" for k in scores for e in ("low", "high")}
    section = report.as_json()["intervals"]
    assert section["n_bootstrap"] == 200 and section["confidence"] == 0.95
    assert section["scores"]["bleu"] == {"low": asked["bleu_ci_low"], "high": asked["bleu_ci_high"]}


def test_an_empty_bin_has_nan_intervals(scored: Scored) -> None:
    report = scored[0].report
    empty = [b for b in ("source_exact", "near", "medium", "far") if report.bins[b].count == 0]
    for name in empty:
        interval = report.intervals[f"bin/{name}/bleu"]
        assert math.isnan(interval.low) and math.isnan(interval.high)
        assert report.as_json()["intervals"]["scores"][f"bin/{name}/bleu"] == {
            "low": None,
            "high": None,
        }


def test_settings_are_named_in_the_signature_and_zero_turns_them_off(scored: Scored) -> None:
    report = scored[0].report
    assert "|ci:bs200_c0.95_seed12345|" in report.signature
    stats, tm = report.system_statistics, report.tm_statistics
    bins = report.summary.item_bins
    assert score_intervals(stats, tm, bins, 0.95, 0, 12345) == {}
    assert score_intervals(stats, tm, bins, 0.9, 50, 1) == score_intervals(
        stats, tm, bins, 0.9, 50, 1
    )
    narrow = score_intervals(stats, tm, bins, 0.5, 200, 12345)["bleu"]
    wide = report.intervals["bleu"]
    assert wide.low <= narrow.low <= narrow.high <= wide.high
    assert TameConfig(n_bootstrap=0).intervals_signature() == "ci:none"


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("confidence", 1.0),
        ("confidence", 0),
        ("confidence", "0.9"),
        ("n_bootstrap", -1),
        ("n_bootstrap", 1.5),
        ("seed", -3),
        ("seed", True),
    ],
)
def test_bad_settings_are_typed_errors(option: str, value: object) -> None:
    with pytest.raises(InvalidOptionError, match=option):
        TameConfig.from_options(**{option: value})


def test_compute_returns_the_intervals_when_asked() -> None:
    import tame_mt_metric

    example = example_corpus()
    train = {"source": example["train_sources"][:500], "target": example["train_targets"][:500]}
    tame = tame_mt_metric.load(train=train, keep_in_memory=True, n_bootstrap=50)
    refs = example["references"][:80]
    args = {"predictions": [_degrade(r, 3) for r in refs], "references": refs}
    args["sources"] = example["test_sources"][:80]
    plain = tame.compute(**args)
    asked = tame.compute(**args, confidence_intervals=True, return_report=True)
    assert "bleu_ci_low" not in plain and plain["bleu"] == asked["bleu"]
    assert asked["bleu_ci_low"] <= asked["bleu"] <= asked["bleu_ci_high"]
    assert asked["report"]["intervals"]["scores"]["bleu"]["low"] == asked["bleu_ci_low"]
    with pytest.raises(InvalidOptionError, match="confidence_intervals"):
        tame.compute(**args, confidence_intervals="yes")


def test_a_sentence_mean_resamples_the_mean_of_the_drawn_sentences() -> None:
    example = example_corpus()
    refs = example["references"][:120]
    hyps = [_degrade(r, 3) for r in refs]
    corpus = TrainingCorpus(example["train_sources"][:800], example["train_targets"][:800])
    config = TameConfig(metrics=("bleu", "chrf++_avg"), n_bootstrap=20)
    report = score_tame(corpus, hyps, refs, example["test_sources"][:120], config).report
    rows = list(range(len(refs)))
    counts = resample_counts(len(rows), 20, 1, "whole")
    got = report.system_statistics.resampler(rows)(counts)["chrf++_avg"]
    pairs = zip(hyps, refs, strict=True)
    sentence = [sacrebleu.sentence_chrf(h, [r], word_order=2).score for h, r in pairs]
    for b in range(20):
        drawn = _drawn(counts[b], rows)
        assert got[b] == pytest.approx(sum(sentence[i] for i in drawn) / len(drawn), rel=1e-12)
    assert set(report.intervals) >= {"chrf++_avg", "bin/far/chrf++_avg", "gen_gap_chrf++_avg"}
