from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("fast", max_examples=60, deadline=None)
settings.register_profile(
    "slow", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Indexes and audits go to a folder of the test session, never the user's cache."""
    root = tmp_path_factory.mktemp("tame_mt_cache")
    old = os.environ.get("TAME_MT_CACHE")
    os.environ["TAME_MT_CACHE"] = str(root)
    yield root
    if old is None:
        del os.environ["TAME_MT_CACHE"]
    else:
        os.environ["TAME_MT_CACHE"] = old
