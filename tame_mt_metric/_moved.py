"""The modules' old homes: before the package was grouped into subpackages by
domain, every module sat at its top level. Importing an old path
(``tame_mt_metric.xsts``, ``tame_mt_metric.scoring``, ...) gives the module
at its new home, the same object, so code written against the old layout
keeps working. New code imports the new paths."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

__all__ = ["MOVED", "install"]

# Old module (under tame_mt_metric.) -> its home now. ``cache`` and ``flores``
# became packages that re-export what their module did.
MOVED = {
    "config": "retrieval.config",
    "corpus": "retrieval.corpus",
    "exposure": "retrieval.exposure",
    "grams": "retrieval.grams",
    "inputs": "retrieval.inputs",
    "reference": "retrieval.reference",
    "index_store": "cache.index_files",
    "audit": "report.audit",
    "quality": "report.scores",
    "scoring": "report.pipeline",
    "spbleu": "report.spbleu",
    "summary": "report.exposure_summary",
    "tame_config": "report.config",
    "tm_baseline": "report.tm_baseline",
    "correlation": "flores.correlation",
    "flores_languages": "flores.languages",
    "language_codes": "flores.language_codes",
    "toxicity": "flores.toxicity",
    "xsts": "flores.xsts",
    "ray_engine": "scale.ray_engine",
    "shards": "scale.shards",
}


class _Alias:
    """Loads an old path as the module at its new home (a loader by its two
    methods: ``importlib.abc`` imports ``importlib.resources``, some 10 ms at
    every import of the package)."""

    def __init__(self, home: str) -> None:
        self.home = home

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return importlib.import_module(self.home)

    def exec_module(self, module: ModuleType) -> None:
        pass  # already executed at its home


class _MovedFinder:
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != "tame_mt_metric" or name not in MOVED:
            return None
        return ModuleSpec(fullname, cast("Loader", _Alias(f"tame_mt_metric.{MOVED[name]}")))


def install() -> None:
    """Route the old paths (once per interpreter)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
