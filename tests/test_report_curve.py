"""The exposure curve: bands by source exposure (equal-size runs with ties kept
together, or user-set edges, decided on exact fractions), each band's scores
equal sacrebleu's of its items, with intervals, in the JSON report."""

from __future__ import annotations

import json
from fractions import Fraction
from itertools import pairwise

import pytest
import sacrebleu
from hypothesis import given
from hypothesis import strategies as st

from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.report.curve import bands_of

exposures = st.lists(st.fractions(min_value=0, max_value=1, max_denominator=6), max_size=60)


@given(exposures, st.integers(1, 12))
def test_bands_partition_the_items_in_exposure_order(values: list[Fraction], n: int) -> None:
    bands = bands_of(values, n, None)
    rows = [i for _, _, band in bands for i in band]
    assert sorted(rows) == list(range(len(values)))
    assert len(bands) <= n
    for low, high, band in bands:
        assert band and all(low <= values[i] <= high for i in band)
    for (_, high, _), (_, _, later) in pairwise(bands):
        # Ties are never split: the next band lies strictly above.
        assert all(values[i] > high for i in later)
    if len(set(values)) == len(values) and values:
        sizes = [len(b) for _, _, b in bands]
        assert max(sizes) - min(sizes) <= 1 and len(bands) == min(n, len(values))


@given(exposures)
def test_edges_bound_the_bands_exactly(values: list[Fraction]) -> None:
    edges = (Fraction(1, 3), Fraction(1, 2))
    bands = bands_of(values, 10, edges)
    assert [(low, high) for low, high, _ in bands] == [
        (0, Fraction(1, 3)),
        (Fraction(1, 3), Fraction(1, 2)),
        (Fraction(1, 2), 1),
    ]
    for i, v in enumerate(values):
        (k,) = [k for k, (_, _, band) in enumerate(bands) if i in band]
        assert k == (0 if v < Fraction(1, 3) else 1 if v < Fraction(1, 2) else 2)


@pytest.mark.parametrize(
    "config",
    [TameConfig(n_bootstrap=50), TameConfig.from_options(n_bootstrap=50, curve_edges=(0.15, 0.3))],
)
def test_each_band_scores_its_items_as_sacrebleu_does(config: TameConfig) -> None:
    example = example_corpus()
    refs = example["references"]
    hyps = [" ".join(r.split()[1:]) for r in refs]
    corpus = TrainingCorpus(example["train_sources"], example["train_targets"])
    result = score_tame(corpus, hyps, refs, example["test_sources"], config)
    report = result.report
    curve = report.curve
    assert len(curve) == (3 if config.curve_edges else 10)
    assert sum(b.count for b in curve) == len(refs)
    exposure = [e.source[0].fraction for e in result.exposures]
    for band, (_, _, rows) in zip(curve, bands_of(exposure, 10, config.curve_edges), strict=True):
        chosen = [hyps[i] for i in rows]
        streams = [[refs[i] for i in rows]]
        assert band.system["bleu"] == sacrebleu.corpus_bleu(chosen, streams).score
        tm = [result.tm_hypotheses[i] for i in rows]
        assert band.tm["chrf"] == sacrebleu.corpus_chrf(tm, streams, word_order=2).score
        assert band.system_ci["bleu"].low <= band.system["bleu"] <= band.system_ci["bleu"].high
    section = json.loads(json.dumps(report.as_json(), allow_nan=False))["curve"]
    assert section["by"] == "source_exposure"
    assert [b["count"] for b in section["bands"]] == [b.count for b in curve]
    assert section["bands"][0]["system_ci"]["bleu"]["low"] == curve[0].system_ci["bleu"].low
    assert config.curve_signature() in report.signature


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("curve_bands", 0),
        ("curve_edges", (0.5, 0.5)),
        ("curve_edges", (0.0, 0.5)),
        ("curve_edges", (0.5, 1)),
        ("curve_edges", ()),
    ],
)
def test_bad_curve_settings_are_typed_errors(option: str, value: object) -> None:
    with pytest.raises(InvalidOptionError, match=option):
        TameConfig.from_options(**{option: value})


def test_exposures_a_float_cannot_tell_apart_are_ordered_exactly() -> None:
    third = Fraction(1, 3)
    above = third + Fraction(1, 10**30)  # the same float as a third
    assert float(above) == float(third) and above > third
    values = [above, third, Fraction(0), above, third, Fraction(1)]
    bands = bands_of(values, 3, None)
    # Sorted: 0, third, third, above, above, 1; each cut moved past its ties.
    assert [rows for _, _, rows in bands] == [[1, 2, 4], [0, 3], [5]]
    assert [(low, high) for low, high, _ in bands] == [(0, third), (above, above), (1, 1)]
