"""A report's settings hold the retrieval's: flat options in, one RetrievalConfig held."""

from __future__ import annotations

import pickle
from dataclasses import fields, replace
from fractions import Fraction

import pytest

from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.report.config import OPTIONS, RETRIEVAL_OPTIONS, TameConfig
from tame_mt_metric.retrieval.config import RetrievalConfig


def test_every_retrieval_setting_but_top_k_is_an_option_of_the_report() -> None:
    retrieval = {f.name for f in fields(RetrievalConfig)}
    assert set(RETRIEVAL_OPTIONS) == retrieval - {"top_k"}
    assert set(RETRIEVAL_OPTIONS) <= set(OPTIONS)


def test_flat_retrieval_options_are_held_in_one_retrieval_config() -> None:
    config = TameConfig.from_options(
        ngram_orders="4,3", lowercase=True, strategy="indexed", threads=2, block_rows=128
    )
    assert config.retrieval == RetrievalConfig(
        ngram_orders=(3, 4), lowercase=True, strategy="indexed", threads=2, block_rows=128
    )
    assert config.ngram_orders == (3, 4) and config.strategy == "indexed"
    assert config.as_dict()["ngram_orders"] == [3, 4]
    assert list(config.as_dict()) == list(OPTIONS)


def test_a_retrieval_config_given_whole_and_options_by_name_over_it() -> None:
    base = RetrievalConfig(ngram_orders=(2,), strip_diacritics=True)
    config = TameConfig(base, strip_diacritics=False, far_threshold=Fraction(1, 5))
    assert config.retrieval == RetrievalConfig(ngram_orders=(2,))
    assert config.far_threshold == Fraction(1, 5)
    with pytest.raises(InvalidOptionError, match="top_k"):
        TameConfig(RetrievalConfig(top_k=2))


def test_the_settings_survive_a_copy_and_a_pickle() -> None:
    config = TameConfig(lowercase=True, n_bootstrap=20)
    assert pickle.loads(pickle.dumps(config)) == config
    assert replace(config, seed=7).retrieval == config.retrieval
    assert TameConfig(**config.options()) == config
