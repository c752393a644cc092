"""Bootstrap intervals: each resample's score equals sacrebleu's score of the
drawn items' text, the intervals are the percentiles of those scores (paired
for the delta over TM, joint for GenGap), and the settings are checked, named
in the signature and reproducible."""

from __future__ import annotations

import hashlib
import math
from fractions import Fraction

import numpy as np
import pytest
import sacrebleu

from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.report.curve import bands_of, exposure_curve
from tame_mt_metric.report.exposure_summary import rows_in_bins
from tame_mt_metric.report.intervals import resample_chunks, resample_counts, score_intervals
from tame_mt_metric.report.pipeline import ItemizedReport
from tame_mt_metric.report.scores import Scorers, SegmentStatistics

Scored = tuple[ItemizedReport, list[str], list[str]]


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


PINNED_CONFIGS = {
    "default": TameConfig(n_bootstrap=300),
    "varied": TameConfig.from_options(
        metrics=("bleu", "chrf", "chrf++_avg"),
        chrf_word_order=0,
        bleu_tokenize="char",
        bleu_lowercase=True,
        n_bootstrap=300,
        seed=7,
        confidence=0.9,
        curve_edges=(0.25, 0.5),
    ),
}

# Every interval of the pinned cases below, as sacrebleu's scoring of one
# resample at a time (``_compute_score_from_stats`` on each row of re-summed
# statistics) made them: the scores of all resamples at once must give the
# same floats.
PINNED: dict[str, dict[str, tuple[float, float]]] = {
    "default": {
        "bleu": (38.02079241604607, 46.05939540380914),
        "tm_bleu": (1.7877551289029903, 4.256378287300312),
        "delta_tm_bleu": (35.001196627866534, 43.04781409035763),
        "chrf": (67.25827855047844, 72.36110876351148),
        "tm_chrf": (22.411600810938484, 27.480799390952292),
        "delta_tm_chrf": (41.79260813026672, 48.78938064069012),
        "bin/source_exact/bleu": (2.8607263815324884, 15.83517670993924),
        "bin/source_exact/tm_bleu": (0.0, 0.0),
        "bin/source_exact/delta_tm_bleu": (2.8607263815324884, 15.83517670993924),
        "bin/source_exact/chrf": (41.460659421575635, 60.762966013140506),
        "bin/source_exact/tm_chrf": (10.347399930535602, 20.859687490273963),
        "bin/source_exact/delta_tm_chrf": (31.113259491040033, 39.90327852286654),
        "bin/near/bleu": (36.135371944260875, 49.734852761409854),
        "bin/near/tm_bleu": (1.367506154809305, 5.752873133789763),
        "bin/near/delta_tm_bleu": (32.190447800392775, 47.02501850928918),
        "bin/near/chrf": (66.95433792162682, 75.71996515439122),
        "bin/near/tm_chrf": (20.601809477218996, 29.613694790699697),
        "bin/near/delta_tm_chrf": (39.63606785370848, 53.069133069257695),
        "bin/medium/bleu": (35.6254522342728, 48.34782886783054),
        "bin/medium/tm_bleu": (1.8411769722330067, 6.843587240523779),
        "bin/medium/delta_tm_bleu": (31.357472840148755, 44.51754818692433),
        "bin/medium/chrf": (64.59873337890065, 72.99988110231062),
        "bin/medium/tm_chrf": (22.47169181466253, 30.534485726694736),
        "bin/medium/delta_tm_chrf": (36.87866553786153, 47.430185271970025),
        "bin/far/bleu": (35.60458643411801, 48.49884588613681),
        "bin/far/tm_bleu": (0.6439524538003895, 4.163521972569085),
        "bin/far/delta_tm_bleu": (33.450546433823654, 46.85575400554459),
        "bin/far/chrf": (66.51182834184539, 74.78229006437459),
        "bin/far/tm_chrf": (18.755466252459883, 28.069170199069617),
        "bin/far/delta_tm_chrf": (40.72496435335664, 54.327894692514846),
        "far_bleu": (35.60458643411801, 48.49884588613681),
        "gen_gap_bleu": (-8.807384542187007, 10.382701096255259),
        "far_chrf": (66.51182834184539, 74.78229006437459),
        "gen_gap_chrf": (-6.234171863010837, 6.843137899835784),
        "curve/0/system/bleu": (36.60379119216949, 57.05790130164115),
        "curve/0/system/chrf": (69.03451296442834, 80.81888118344384),
        "curve/0/tm/bleu": (0.8164903335175783, 11.071380937185536),
        "curve/0/tm/chrf": (18.135041764215458, 33.97291140282389),
        "curve/1/system/bleu": (14.807017892357084, 50.535209060515626),
        "curve/1/system/chrf": (52.38254880742446, 75.16713508428485),
        "curve/1/tm/bleu": (0.14792674428519398, 7.694972944028018),
        "curve/1/tm/chrf": (16.409182455533063, 32.42307286073576),
        "curve/2/system/bleu": (38.174746720418995, 59.09193412201535),
        "curve/2/system/chrf": (68.99066494053564, 83.03472577283588),
        "curve/2/tm/bleu": (0.5246865140785825, 13.622033504610133),
        "curve/2/tm/chrf": (18.14467203920723, 39.2538242139474),
        "curve/3/system/bleu": (13.95124982701889, 42.29524494947155),
        "curve/3/system/chrf": (58.24154546799617, 72.43316893173596),
        "curve/3/tm/bleu": (0.3818954239932958, 12.774586291236389),
        "curve/3/tm/chrf": (17.178450568812128, 38.316594746385576),
        "curve/4/system/bleu": (33.549224236835734, 60.161564658432454),
        "curve/4/system/chrf": (61.41993931934192, 79.70053406562018),
        "curve/4/tm/bleu": (0.15529667850235765, 3.1798563889609635),
        "curve/4/tm/chrf": (14.51292603176669, 25.560757468986186),
        "curve/5/system/bleu": (34.37296171162686, 53.91754156597151),
        "curve/5/system/chrf": (66.43288520233769, 76.70187425862784),
        "curve/5/tm/bleu": (1.3943377859170016, 9.94893764293511),
        "curve/5/tm/chrf": (21.56023064681672, 37.23808404590331),
        "curve/6/system/bleu": (22.177990388265858, 49.1107700083232),
        "curve/6/system/chrf": (55.15963339977403, 72.87771770907922),
        "curve/6/tm/bleu": (0.9317706119859039, 10.988387442024251),
        "curve/6/tm/chrf": (18.57238995403124, 35.27561021778623),
        "curve/7/system/bleu": (47.140895086087184, 62.486213036733034),
        "curve/7/system/chrf": (73.12922849426687, 82.58147885659653),
        "curve/7/tm/bleu": (0.3831125851919016, 5.33843509976016),
        "curve/7/tm/chrf": (16.43037132343731, 30.622031751722357),
        "curve/8/system/bleu": (16.17892948439974, 35.29530188145743),
        "curve/8/system/chrf": (54.54857652233673, 70.15491989922577),
        "curve/8/tm/bleu": (0.14217346450008594, 5.26566111960744),
        "curve/8/tm/chrf": (13.648291589520378, 27.894504288879986),
        "curve/9/system/bleu": (28.554555113973027, 56.57375594390412),
        "curve/9/system/chrf": (58.26904784895585, 79.35596443571833),
        "curve/9/tm/bleu": (1.5978356529964408, 12.321206114879356),
        "curve/9/tm/chrf": (21.22157997317918, 35.298931544685914),
    },
    "varied": {
        "bleu": (64.77976522009804, 70.33384150357838),
        "tm_bleu": (2.7929840429602457, 5.629567486019422),
        "delta_tm_bleu": (60.308188459651994, 66.4654607945384),
        "chrf": (68.70745789568781, 73.40145453534316),
        "tm_chrf": (23.115768335011342, 27.587602424522203),
        "delta_tm_chrf": (42.381640241892434, 49.05232898666278),
        "chrf++_avg": (67.49472278587618, 71.9734707683336),
        "tm_chrf++_avg": (26.07706268808228, 30.572646847850336),
        "delta_tm_chrf++_avg": (38.2591377237966, 44.974343740772845),
        "bin/source_exact/bleu": (37.843596173396904, 55.49657880193101),
        "bin/source_exact/tm_bleu": (0.027465356997214266, 2.6474349785326994),
        "bin/source_exact/delta_tm_bleu": (37.81613081639969, 52.84914382339831),
        "bin/source_exact/chrf": (46.763954225734224, 61.27653620315318),
        "bin/source_exact/tm_chrf": (10.219882697032919, 22.975895465496027),
        "bin/source_exact/delta_tm_chrf": (36.54407152870131, 38.30064073765715),
        "bin/source_exact/chrf++_avg": (41.460659421575635, 60.762966013140506),
        "bin/source_exact/tm_chrf++_avg": (10.347399930535602, 20.859687490273963),
        "bin/source_exact/delta_tm_chrf++_avg": (31.113259491040033, 39.90327852286654),
        "bin/near/bleu": (64.39609100680852, 74.11944963541507),
        "bin/near/tm_bleu": (2.0820442275943547, 7.245185409239753),
        "bin/near/delta_tm_bleu": (58.89238039997013, 70.40274859439765),
        "bin/near/chrf": (68.43977681089257, 76.51535462520762),
        "bin/near/tm_chrf": (21.647871010136807, 29.58160830039695),
        "bin/near/delta_tm_chrf": (40.950124413876935, 53.31627134632089),
        "bin/near/chrf++_avg": (65.32392035286519, 73.93731652331054),
        "bin/near/tm_chrf++_avg": (23.227155355042967, 31.26742891993754),
        "bin/near/delta_tm_chrf++_avg": (36.21220962901911, 49.65515231014709),
        "bin/medium/bleu": (61.489520796621555, 70.60207944080271),
        "bin/medium/tm_bleu": (2.6024290043836498, 8.324131766030789),
        "bin/medium/delta_tm_bleu": (55.74100118299457, 65.60022586428823),
        "bin/medium/chrf": (65.92981701354701, 73.50938661372244),
        "bin/medium/tm_chrf": (22.756630023918945, 30.812086615937435),
        "bin/medium/delta_tm_chrf": (37.42714766503743, 47.60670375805254),
        "bin/medium/chrf++_avg": (66.77613350237759, 73.63684586883805),
        "bin/medium/tm_chrf++_avg": (26.19951141957009, 34.5546855875384),
        "bin/medium/delta_tm_chrf++_avg": (35.05468438311363, 44.47610450445366),
        "bin/far/bleu": (64.47443811796516, 72.83807556096436),
        "bin/far/tm_bleu": (1.1288863682468298, 5.938376116644402),
        "bin/far/delta_tm_bleu": (60.49428705467444, 70.62443325536631),
        "bin/far/chrf": (68.43803816633181, 75.45807527001786),
        "bin/far/tm_chrf": (19.161409544104018, 28.20498780871781),
        "bin/far/delta_tm_chrf": (42.10096235615462, 54.175871386092275),
        "bin/far/chrf++_avg": (65.4750109704501, 73.76818813272186),
        "bin/far/tm_chrf++_avg": (21.45662768647982, 31.71160973547358),
        "bin/far/delta_tm_chrf++_avg": (36.66600081619118, 49.71016610420986),
        "far_bleu": (64.47443811796516, 72.83807556096436),
        "gen_gap_bleu": (-5.676583302296741, 6.745919405292777),
        "far_chrf": (68.43803816633181, 75.45807527001786),
        "gen_gap_chrf": (-5.008213534560352, 5.758172110543895),
        "far_chrf++_avg": (65.4750109704501, 73.76818813272186),
        "gen_gap_chrf++_avg": (-5.454521788005206, 5.748790342570651),
        "curve/0/system/bleu": (64.17582788775061, 74.59533756430022),
        "curve/0/system/chrf": (68.26453059681532, 76.82836299283461),
        "curve/0/system/chrf++_avg": (67.47015107101673, 75.34027792748037),
        "curve/0/tm/bleu": (1.5623111345414644, 7.118177800968992),
        "curve/0/tm/chrf": (20.171568980716938, 29.60497337848215),
        "curve/0/tm/chrf++_avg": (23.155214998201078, 33.36189304131484),
        "curve/1/system/bleu": (63.37511907163319, 74.01109854362042),
        "curve/1/system/chrf": (67.36939803850306, 76.40702119549479),
        "curve/1/system/chrf++_avg": (65.74558204255416, 75.18567206019634),
        "curve/1/tm/bleu": (1.6315182781046083, 7.6133259002737885),
        "curve/1/tm/chrf": (20.88154581952656, 30.060331755282323),
        "curve/1/tm/chrf++_avg": (24.203585040151747, 34.36222664662466),
        "curve/2/system/bleu": (62.22688310190294, 70.23122596367152),
        "curve/2/system/chrf": (66.82213006241726, 73.34189719975586),
        "curve/2/system/chrf++_avg": (65.90018941344016, 72.13260950376852),
        "curve/2/tm/bleu": (2.361129009485168, 6.6670517271117395),
        "curve/2/tm/chrf": (22.296045908377987, 29.09225089958841),
        "curve/2/tm/chrf++_avg": (24.110309043276743, 31.02868546682695),
    },
}


Pinned = tuple[SegmentStatistics, SegmentStatistics, list[str], list[Fraction]]


def _pinned_case(c: TameConfig) -> Pinned:
    """A fixed case: 160 items of the bundled example in four bins (two items
    in one, so resamples with no 4-gram match), the TM side short hypotheses
    (brevity penalty, smoothing)."""
    refs = example_corpus()["references"][:160]
    scorers = Scorers(c, [[r] for r in refs])
    system = scorers.statistics([_degrade(r, 2 + i % 5) for i, r in enumerate(refs)])
    tm = scorers.statistics([" ".join(r.split()[: 1 + i % 4]) for i, r in enumerate(refs)])
    kinds = ("near", "near", "medium", "medium", "medium", "far", "far")
    bins = ["source_exact"] * 2 + [kinds[i % 7] for i in range(2, len(refs))]
    exposures = [Fraction(i * 37 % 101, 100) for i in range(len(refs))]
    return system, tm, bins, exposures


def _pinned_intervals(name: str) -> dict[str, tuple[float, float]]:
    """The report's intervals and the curve's of the pinned case."""
    c = PINNED_CONFIGS[name]
    system, tm, bins, exposures = _pinned_case(c)
    intervals = score_intervals(system, tm, bins, c.confidence, c.n_bootstrap, c.seed)
    out = {key: (i.low, i.high) for key, i in intervals.items()}
    curve = exposure_curve(
        exposures, system, tm, c.curve_bands, c.curve_edges, c.confidence, c.n_bootstrap, c.seed
    )
    for k, band in enumerate(curve):
        for side, cis in (("system", band.system_ci), ("tm", band.tm_ci)):
            out.update({f"curve/{k}/{side}/{m}": (i.low, i.high) for m, i in cis.items()})
    return out


@pytest.mark.parametrize("name", PINNED_CONFIGS)
def test_intervals_are_the_pinned_floats_of_per_resample_scoring(name: str) -> None:
    got = _pinned_intervals(name)
    assert list(got) == list(PINNED[name])
    for key, (low, high) in PINNED[name].items():
        assert got[key] == (low, high), key


def _resampled_digest(name: str) -> str:
    """sha256 of every resample's score, of both sides and every metric, in
    every group the report and the curve resample."""
    c = PINNED_CONFIGS[name]
    system, tm, bins, exposures = _pinned_case(c)
    groups = {"whole": list(range(len(bins))), **rows_in_bins(bins)}
    bands = bands_of(exposures, c.curve_bands, c.curve_edges)
    groups.update({f"curve/{k}": rows for k, (_, _, rows) in enumerate(bands)})
    digest = hashlib.sha256()
    for group, rows in groups.items():
        counts = resample_counts(len(rows), c.n_bootstrap, c.seed, group)
        for side in (system, tm):
            scores = side.resampler(rows)(counts)
            for metric in side.metric_names:
                digest.update(np.ascontiguousarray(scores[metric], dtype="<f8").tobytes())
    return digest.hexdigest()


# The same resamples' scores, as sacrebleu's scoring of one resample at a time gave them.
PINNED_DIGESTS = {
    "default": "f2e23129d1e14cbfba7acfe815415cfeb11f38079709ce04c50d722eaf3df68e",
    "varied": "a36e4653260bbfab54697e6d63c2ab9aa9ca1d7980505c3f519796f0ba469cfb",
}


@pytest.mark.parametrize("name", PINNED_CONFIGS)
def test_every_resample_scores_the_pinned_floats(name: str) -> None:
    assert _resampled_digest(name) == PINNED_DIGESTS[name]


@pytest.mark.parametrize("work", [1, 7 * 5 * 3, 1 << 18])
def test_the_resample_product_in_pieces_is_the_whole_product(
    work: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tame_mt_metric.report import scores

    rng = np.random.default_rng(5)
    counts = rng.poisson(1.0, size=(23, 7)).astype(np.float64)
    values = rng.integers(0, 10**6, size=(7, 5)).astype(np.float64)
    monkeypatch.setattr(scores, "PRODUCT_WORK", work)  # one row a piece, three, all
    assert (scores._product(counts, values) == counts @ values).all()
