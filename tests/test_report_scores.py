"""Scores from sufficient statistics equal sacrebleu's own corpus scores of
the same subsets, for every bin, setting and reference count."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import sacrebleu

from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.report.scores import Scorers


def _degrade(text: str, step: int) -> str:
    return " ".join(w for i, w in enumerate(text.split()) if i % step != step - 1)


@pytest.fixture(scope="module")
def example() -> dict[str, list[str]]:
    return example_corpus()


def _sacrebleu(config: TameConfig, hyps: list[str], refs: list[list[str]]) -> dict[str, float]:
    if not hyps:
        return {m: math.nan for m in config.metrics}
    streams = [list(s) for s in zip(*refs, strict=True)]
    return {
        "bleu": sacrebleu.corpus_bleu(
            hyps, streams, tokenize=config.bleu_tokenize, lowercase=config.bleu_lowercase
        ).score,
        "chrf": sacrebleu.corpus_chrf(hyps, streams, word_order=config.chrf_word_order).score,
    }


def _same(ours: float, theirs: float) -> bool:
    return (math.isnan(ours) and math.isnan(theirs)) or ours == theirs


@pytest.mark.parametrize(
    "config",
    [
        TameConfig(),
        TameConfig(bleu_tokenize="char", bleu_lowercase=True, chrf_word_order=0),
        TameConfig.from_options(bleu_tokenize="intl", far_threshold=0.25, near_threshold=0.4),
    ],
)
@pytest.mark.parametrize("num_refs", [1, 2])
def test_every_score_equals_sacrebleu_on_its_subset(
    example: dict[str, list[str]], config: TameConfig, num_refs: int
) -> None:
    sources, first = example["test_sources"], example["references"]
    refs = [[r, _degrade(r, 7)][:num_refs] for r in first]
    hyps = [_degrade(r, 4) for r in first]
    corpus = TrainingCorpus(example["train_sources"], example["train_targets"])
    result = score_tame(corpus, hyps, refs if num_refs > 1 else first, sources, config)
    fields = result.report.fields()
    bins = result.report.summary.item_bins
    assert len(set(bins)) >= 3  # the subsets are real
    for name in ("", "source_exact", "near", "medium", "far"):
        rows = [i for i, b in enumerate(bins) if b == name or not name]
        for system, texts in (("", hyps), ("tm_", result.tm_hypotheses)):
            expected = _sacrebleu(config, [texts[i] for i in rows], [refs[i] for i in rows])
            for metric, value in expected.items():
                key = f"bin/{name}/{system}{metric}" if name else f"{system}{metric}"
                assert _same(float(fields[key]), value), (key, fields[key], value)
    report = result.report
    near, far = report.bins["near"].system, report.bins["far"].system
    assert fields["far_bleu"] == far["bleu"]
    assert fields["gen_gap_chrf"] == near["chrf"] - far["chrf"]
    assert fields["delta_tm_bleu"] == report.system["bleu"] - report.tm["bleu"]
    # The signature holds sacrebleu's own signatures of the metrics it scored with.
    streams = [list(s) for s in zip(*refs, strict=True)]
    bleu = sacrebleu.BLEU(tokenize=config.bleu_tokenize, lowercase=config.bleu_lowercase)
    chrf = sacrebleu.CHRF(word_order=config.chrf_word_order)
    bleu.corpus_score(hyps, streams)
    chrf.corpus_score(hyps, streams)
    theirs = f"bleu[{bleu.get_signature()}],chrf[{chrf.get_signature()}]"
    assert f"|sacrebleu:{theirs}|" in report.signature
    assert f"nrefs:{num_refs}|" in theirs


def test_an_empty_subset_scores_nan() -> None:
    stats = Scorers(TameConfig(), [["a b c d"]]).statistics(["a b c d"])
    assert all(math.isnan(v) for v in stats.score([]).values())
    assert stats.score([0]) == stats.score()


def test_only_the_configured_metrics_are_reported(example: dict[str, list[str]]) -> None:
    corpus = TrainingCorpus(example["train_sources"][:200], example["train_targets"][:200])
    refs = example["references"][:20]
    fields = score_tame(
        corpus, refs, refs, example["test_sources"][:20], TameConfig(metrics=("chrf",))
    ).report.fields()
    assert "chrf" in fields and "tm_chrf" in fields and "bin/far/chrf" in fields
    assert not [k for k in fields if "bleu" in k]


def test_the_reference_tables_are_let_go_at_exit() -> None:
    """The scorers kept for a training loop's next evaluation are emptied at exit,
    before the interpreter's last collections walk them."""
    child = """
import atexit
import sys
# Registered before the module's own exit handler, so it runs after it.
atexit.register(lambda: print("kept at exit:", len(sys.modules[__name__].scores._RECENT)))
from tame_mt_metric.report import scores
scores.Scorers.for_references(scores.TameConfig(), [["a cat"], ["a dog"]])
print("kept:", len(scores._RECENT))
"""
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split("\n")[:2] == ["kept: 1", "kept at exit: 0"], done.stderr
