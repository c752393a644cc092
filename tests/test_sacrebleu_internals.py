"""Every private name of sacrebleu the package uses is where it was: a
sacrebleu release that moves or renames one fails here, naming it, instead of
somewhere deep in a report."""

from __future__ import annotations

import inspect

import pytest
import sacrebleu
from sacrebleu.metrics.bleu import BLEU

from tame_mt_metric.report.sacrebleu_internals import (
    PRIVATE_NAMES,
    REFERENCE_CACHE,
    hold_references,
    segment_statistics,
)


def _owner_name(owner: object) -> str:
    return getattr(owner, "__qualname__", getattr(owner, "__name__", repr(owner)))


@pytest.mark.parametrize(
    ("owner", "name"), PRIVATE_NAMES, ids=[f"{_owner_name(o)}.{n}" for o, n in PRIVATE_NAMES]
)
def test_each_private_name_sacrebleu_keeps_is_callable(owner: object, name: str) -> None:
    found = getattr(owner, name, None)
    assert callable(found), (
        f"sacrebleu {sacrebleu.__version__} has no callable {_owner_name(owner)}.{name}: "
        "tame_mt_metric/report/sacrebleu_internals.py must follow where it went"
    )


def test_the_private_functions_take_what_the_package_passes() -> None:
    by_name = {name: getattr(owner, name) for owner, name in PRIVATE_NAMES}
    expected = {
        "_extract_corpus_statistics": ["self", "hypotheses", "references"],
        "_compute_score_from_stats": ["self", "stats"],
        "_aggregate_and_compute": ["self", "stats"],
        "_cache_references": ["self", "references"],
        "_compute_p_value": ["stats", "real_difference"],
    }
    for name, parameters in expected.items():
        found = list(inspect.signature(by_name[name]).parameters)
        assert found == parameters, f"sacrebleu {sacrebleu.__version__}: {name}{found}"
    for test in ("_paired_bs_test", "_paired_ar_test"):
        found = list(inspect.signature(by_name[test]).parameters)
        assert found[:5] == ["baseline_info", "sys_name", "hypotheses", "references", "metrics"]
        assert {"n_samples", "n_ar_confidence", "seed"} <= set(found), test


def test_references_held_as_sacrebleu_s_constructor_holds_them() -> None:
    made = BLEU(references=[["the cat sat"]])
    assert hasattr(made, REFERENCE_CACHE), (
        f"sacrebleu {sacrebleu.__version__}: a metric keeps its references elsewhere "
        f"than {REFERENCE_CACHE}"
    )
    held = BLEU()
    hold_references(held, [["the cat sat"]])
    hypotheses = ["the cat sat", "a dog"]
    assert segment_statistics(held, hypotheses[:1]) == segment_statistics(made, hypotheses[:1])
