"""The settings of gram sets cross into the core as one object: made by
``RetrievalConfig.gram_settings``, validated once by the core, compared,
hashed and pickled by value."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest
import tame_mt_core as _core

from tame_mt_metric import InvalidOptionError, RetrievalConfig


def test_a_config_gives_the_core_its_orders_and_flags() -> None:
    config = RetrievalConfig(ngram_orders=(5, 2), lowercase=True, normalize_punctuation=True)
    settings = config.gram_settings()
    assert settings.orders == (2, 5)
    assert (settings.lowercase, settings.strip_diacritics, settings.normalize_punctuation) == (
        True,
        False,
        True,
    )
    assert config.gram_settings() is settings  # made once per config


def test_settings_compare_and_hash_by_value() -> None:
    a = _core.GramSettings([4, 3], lowercase=True)
    b = RetrievalConfig(ngram_orders=(3, 4), lowercase=True, threads=2).gram_settings()
    assert a == b and hash(a) == hash(b)
    assert a != _core.GramSettings([3, 4]) and a != _core.GramSettings([3], lowercase=True)
    assert len({a, b, _core.GramSettings([3, 4])}) == 2
    assert repr(a) == (
        "GramSettings(orders=[3, 4], lowercase=True, strip_diacritics=False, "
        "normalize_punctuation=False)"
    )


def test_settings_and_configs_holding_them_survive_pickling() -> None:
    settings = _core.GramSettings([1, 6], strip_diacritics=True)
    assert pickle.loads(pickle.dumps(settings)) == settings
    config = RetrievalConfig(ngram_orders=(2,), lowercase=True)
    config.gram_settings()
    again = pickle.loads(pickle.dumps(config))
    assert again == config and again.gram_settings() == config.gram_settings()
    assert replace(config, lowercase=False).gram_settings().lowercase is False


@pytest.mark.parametrize(
    ("orders", "message"),
    [
        ([], "ngram_orders: at least one order is needed"),
        ([0], "ngram_orders: order 0 is outside 1..=6"),
        ([7], "ngram_orders: order 7 is outside 1..=6"),
        ([3, 3], "ngram_orders: order 3 is repeated"),
    ],
)
def test_the_core_validates_the_orders(orders: list[int], message: str) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        _core.GramSettings(orders)


def test_the_settings_are_frozen() -> None:
    settings = _core.GramSettings([3])
    with pytest.raises(AttributeError):
        settings.lowercase = True  # type: ignore[misc]
