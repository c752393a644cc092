"""A pytest plugin (loaded with ``-p tests.isolation``, so it also covers the
package's doctests): the cache of indexes and audits goes to a folder of the
test session, never the user's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


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
