"""The TAME report: the spec's worked example, bins and thresholds decided
exactly, the TM baseline's zero policy, warnings, segments and the signature."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from sacrebleu.metrics.bleu import BLEU

from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.cache.entries import CacheOptions
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.interpreter import SWITCH_INTERVAL, switching_often
from tame_mt_metric.report.document import segment_rows
from tame_mt_metric.report.scores import SACREBLEU_VERSION
from tame_mt_metric.retrieval.exposure import Exposures, ItemExposure, Neighbour

GENESIS = TrainingCorpus(
    ["god created the heaven and the earth", "and the earth was without form"],
    ["dios creó el cielo y la tierra", "y la tierra estaba desordenada"],
)

SEGMENT_KEYS = {
    "index",
    "source_exposure",
    "source_nn_index",
    "source_exact",
    "target_exposure",
    "target_nn_index",
    "target_ref_index",
    "target_exact",
    "pair_exposure",
    "pair_nn_index",
    "pair_ref_index",
    "pair_exact",
    "bin",
    "tm_hyp",
}


def test_the_specs_worked_example() -> None:
    result = score_tame(
        GENESIS,
        predictions=["dios creó el cielo y la tierra", "y la tierra estaba desordenada y vacía"],
        references=["dios creó el cielo y la tierra", "y la tierra estaba desordenada y vacía"],
        sources=["god created the heaven and the earth", "and the earth was without form and void"],
    )
    exact, similar = result.segments
    assert exact["source_exposure"] == 1.0 and exact["source_exact"] is True
    assert exact["pair_exposure"] == 1.0 and exact["pair_exact"] is True
    assert exact["tm_hyp"] == "dios creó el cielo y la tierra"
    assert exact["bin"] == "source_exact"  # not near
    assert similar["source_nn_index"] == 1 and similar["bin"] == "near"
    assert similar["tm_hyp"] == "y la tierra estaba desordenada"
    assert set(exact) == SEGMENT_KEYS
    fields = result.report.fields()
    assert fields["bin/source_exact/count"] == 1 and fields["bin/near/count"] == 1
    assert fields["source_exact_rate"] == 0.5 and fields["pair_exact_rate"] == 0.5
    assert math.isnan(fields["far_bleu"]) and math.isnan(fields["gen_gap_bleu"])  # type: ignore[arg-type]


def test_thresholds_are_decided_on_exact_fractions() -> None:
    # Unigram sets: J("abcdefg", "abcdefghij") = 7/10, J("abc", "abcdefghij") = 3/10.
    train = TrainingCorpus(["abcdefghij"], ["abcdefghij"])
    config = TameConfig.from_options(
        ngram_orders=(1,), leak_thresholds=(0.3, 0.7), min_bin_size_warning=0
    )
    result = score_tame(
        train, ["x"] * 3, ["abcdefg", "abc", "ab"], ["abcdefg", "abc", "ab"], config
    )
    assert [s["bin"] for s in result.segments] == ["near", "medium", "far"]
    fields = result.report.fields()
    assert fields["pair_leak@0.70"] == pytest.approx(1 / 3)
    assert fields["pair_leak@0.30"] == pytest.approx(2 / 3)


@pytest.mark.parametrize(("policy", "expected"), [("empty", ""), ("nearest", "der Baum")])
def test_tm_zero_policy(policy: str, expected: str) -> None:
    train = TrainingCorpus(["a tree", "a house"], ["der Baum", "das Haus"])
    result = score_tame(
        train,
        ["x"],
        ["y"],
        ["zzzz"],
        TameConfig(tm_zero_policy=policy),  # type: ignore[arg-type]
    )
    assert result.tm_hypotheses == [expected]
    assert result.segments[0]["source_exposure"] == 0.0


def test_the_reference_never_chooses_the_tm_hypothesis() -> None:
    train = TrainingCorpus(["the red house", "a blue car"], ["das rote Haus", "ein blaues Auto"])
    result = score_tame(train, ["x"], ["ein blaues Auto"], ["the red house"])
    assert result.tm_hypotheses == ["das rote Haus"]
    assert result.segments[0]["target_nn_index"] == 1


def test_warnings_name_what_they_see() -> None:
    result = score_tame(
        GENESIS,
        ["dios creó el cielo y la tierra"],
        ["dios creó el cielo y la tierra"],
        ["god created the heaven and the earth"],
    )
    text = " ".join(result.report.warnings)
    assert "100.00% of test source/reference pairs occur exactly" in text
    assert "pair exposure >= 0.95" in text
    assert "System BLEU (100.00) is equal to its translation-memory baseline" in text
    assert "The far bin holds only 0 items" in text
    assert "GenGap is undefined" in text


def test_segment_rows_name_the_reference_of_each_maximum() -> None:
    """Multi-reference: target_ref_index and pair_ref_index say which reference
    gave the target's and the pair's maximum."""
    item = ItemExposure(
        source=(Neighbour(4, 3, 5),),
        target=(Neighbour(2, 5, 7, reference=2),),
        pair=Neighbour(4, 3, 6, reference=1),
        source_exact=False,
        target_exact=False,
        pair_exact=False,
    )
    (row,) = segment_rows(Exposures((item,), 9, "indexed"), ["medium"], ["tm"])
    assert (row["target_ref_index"], row["pair_ref_index"]) == (2, 1)
    assert (row["target_nn_index"], row["pair_nn_index"]) == (2, 4)


def test_a_clean_report_has_no_warnings() -> None:
    data = example_corpus()
    refs = data["references"]
    hyps = [" ".join(w for i, w in enumerate(r.split()) if i % 5 != 4) for r in refs]
    result = score_tame(
        TrainingCorpus(data["train_sources"], data["train_targets"]),
        hyps,
        refs,
        data["test_sources"],
        TameConfig(min_bin_size_warning=5),
    )
    assert result.report.bins["near"].count == 5
    assert result.report.warnings == []


def test_report_is_strict_json_and_has_the_spec_sections() -> None:
    result = score_tame(
        GENESIS, ["dios"], ["dios creó"], ["god created"], include_neighbor_text=True
    )
    report = result.report.as_json()
    text = json.dumps(report, allow_nan=False)  # undefined values are null, not NaN
    assert list(report) == [
        "schema_version",
        "tame_version",
        "signature",
        "data",
        "backend",
        "quality",
        "exposure",
        "bins",
        "generalization_gap",
        "intervals",
        "curve",
        "warnings",
        "config",
    ]
    assert [b["name"] for b in report["bins"]] == ["source_exact", "near", "medium", "far"]
    assert json.loads(text)["data"]["num_train"] == 2
    segment = result.segments[0]
    assert segment["source_nn_text"] == "god created the heaven and the earth"
    assert set(segment) - SEGMENT_KEYS == {
        "source_nn_text",
        "target_nn_text",
        "pair_nn_source",
        "pair_nn_target",
    }


def _breakdown(hyps: list[str], refs: list[str]) -> dict[str, object]:
    found = BLEU().corpus_score(hyps, [refs])
    return {
        "precisions": found.precisions,
        "bp": found.bp,
        "ratio": found.ratio,
        "sys_len": found.sys_len,
        "ref_len": found.ref_len,
    }


def test_the_json_report_carries_bleus_breakdown() -> None:
    """The four precisions, BP, ratio and lengths of the system, the TM and each
    bin, as sacrebleu gives them scoring those segments; BLEU-like metrics only."""
    data = example_corpus()
    refs, sources = data["references"][:40], data["test_sources"][:40]
    hyps = [" ".join(r.split()[1:]) for r in refs]
    result = score_tame(
        TrainingCorpus(data["train_sources"], data["train_targets"]),
        hyps,
        refs,
        sources,
        TameConfig(n_bootstrap=0),
    )
    report = json.loads(json.dumps(result.report.as_json(), allow_nan=False))
    details = report["quality"]["details"]
    assert details["system"] == {"bleu": _breakdown(hyps, refs)}
    assert details["tm"] == {"bleu": _breakdown(result.tm_hypotheses, refs)}
    for b in report["bins"]:
        rows = [i for i, name in enumerate(result.report.summary.item_bins) if name == b["name"]]
        want = _breakdown([hyps[i] for i in rows], [refs[i] for i in rows]) if rows else None
        assert b["details"]["system"] == {"bleu": want}, b["name"]
    chrf_only = score_tame(GENESIS, ["dios"], ["dios"], ["god"], TameConfig(metrics=("chrf",)))
    assert chrf_only.report.as_json()["quality"]["details"] == {"system": {}, "tm": {}}


SPEC_BACKEND = ["name", "native", "exact", "requested_mode", "resolved_mode", "index_reused"]


def test_the_backend_has_the_specs_keys_first(tmp_path: Path) -> None:
    """name and resolved_mode the strategy used, requested_mode the one configured;
    index_reused once an index built by an earlier call answers; ours after."""
    cache = CacheOptions(cache_dir=tmp_path)
    indexed = TameConfig(strategy="indexed")
    first = score_tame(GENESIS, ["dios"], ["dios"], ["god"], indexed, cache=cache).report
    assert list(first.as_json()["backend"])[:6] == SPEC_BACKEND
    assert first.backend == {
        "name": "indexed",
        "native": True,
        "exact": True,
        "requested_mode": "indexed",
        "resolved_mode": "indexed",
        "index_reused": False,  # built by this call
        "core_version": first.backend["core_version"],
        "requested_strategy": "indexed",
        "strategy": "indexed",
        "audit_cached": False,
    }
    again = score_tame(GENESIS, ["y"], ["y la"], ["and the"], indexed, cache=cache).report
    assert again.backend["index_reused"] and not again.backend["audit_cached"]
    streamed = score_tame(
        GENESIS, ["el"], ["el"], ["the earth"], TameConfig(strategy="streaming"), cache=cache
    ).report
    assert (streamed.backend["name"], streamed.backend["index_reused"]) == ("streaming", False)
    auto = score_tame(GENESIS, ["la"], ["la"], ["the"], cache=CacheOptions(enabled=False))
    assert auto.report.backend["requested_mode"] == "auto"
    assert auto.report.backend["resolved_mode"] == auto.exposures.strategy


def test_signature_snapshot() -> None:
    result = score_tame(GENESIS, ["dios"], ["dios"], ["god"])
    assert result.report.signature == (
        "tame-mt-metric|v:0.1.0|core:0.1.0|train:2_e0dd0ccea2446c62|norm:nfkc_ws"
        "|sim:char_jaccard_3,4,5_set|retrieval:exact|idx:auto|backend:streaming"
        "|tm:src_nn_top1_zero_empty|bins:far0.30_near0.70_leak0.70,0.85,0.95|curve:bands10"
        f"|metrics:bleu,chrf|sacrebleu:bleu[nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp"
        f"|version:{SACREBLEU_VERSION}],chrf[nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no"
        f"|version:{SACREBLEU_VERSION}]|ci:bs1000_c0.95_seed12345"
        f"|deps:sacrebleu_{SACREBLEU_VERSION}"
    )
    other = score_tame(
        GENESIS,
        ["dios"],
        ["dios"],
        ["god"],
        TameConfig.from_options(
            ngram_orders=(2, 4),
            lowercase=True,
            strip_diacritics=True,
            leak_thresholds=(0.9,),
            near_threshold=0.825,
            metrics=("chrf",),
            bleu_tokenize="char",
            bleu_lowercase=True,
            chrf_word_order=0,
            tm_zero_policy="nearest",
            strategy="streaming",
            curve_edges=(0.25, 0.5),
            n_bootstrap=0,
        ),
    )
    assert other.report.signature == (
        "tame-mt-metric|v:0.1.0|core:0.1.0|train:2_e0dd0ccea2446c62|norm:nfkc_ws_lc_nodia"
        "|sim:char_jaccard_2,4_set|retrieval:exact|idx:streaming|backend:streaming"
        "|tm:src_nn_top1_zero_nearest|bins:far0.30_near0.825_leak0.90|curve:edges0.25,0.50"
        "|metrics:chrf|sacrebleu:chrf[nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no"
        f"|version:{SACREBLEU_VERSION}]|ci:none"
        f"|deps:sacrebleu_{SACREBLEU_VERSION}"
    )


# Python keeps the interval in whole microseconds.
SHORT = pytest.approx(SWITCH_INTERVAL, abs=1e-6)


def test_the_switch_interval_is_short_while_any_report_runs() -> None:
    """Nested or concurrent reports keep the interval short until the last ends,
    then it is what it was; a shorter one the caller set is kept."""
    before = sys.getswitchinterval()
    with switching_often():
        assert sys.getswitchinterval() == SHORT
        with switching_often():
            assert sys.getswitchinterval() == SHORT
        assert sys.getswitchinterval() == SHORT
    assert sys.getswitchinterval() == before
    sys.setswitchinterval(SWITCH_INTERVAL / 4)
    try:
        with switching_often():
            assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL / 4, abs=1e-6)
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL / 4, abs=1e-6)
    finally:
        sys.setswitchinterval(before)


def test_the_scores_read_beside_the_corpus_with_the_interval_short() -> None:
    """The corpus is read while the scoring thread runs, with the short interval."""
    seen: list[float] = []

    class Watched(TrainingCorpus):
        @property
        def fingerprint(self) -> str:
            seen.append(sys.getswitchinterval())
            return super().fingerprint

    train = Watched(GENESIS.sources, GENESIS.targets)
    score_tame(
        train, ["dios creó"], ["dios creó"], ["god created"], cache=CacheOptions(enabled=False)
    )
    assert seen and all(s == SHORT for s in seen)
