"""Makes ``evaluate.load("tame_mt")`` find the installed tame-mt-metric.

``evaluate`` resolves a bare metric name on the Hugging Face Hub, then in its
module cache; it never looks at installed packages. The ``.pth`` file installed
with tame-mt-metric imports this module when Python starts; it only registers
an import hook, so nothing else happens unless ``evaluate`` is imported. When
``evaluate.loading`` is imported, the hook wraps its module factory so that the
bare name ``tame_mt`` loads the script shipped inside the package (no network,
no cache copy). Every other name is passed through unchanged. Setting
TAME_MT_NO_EVALUATE_HOOK=1 turns the routing off.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType

# Only cheap modules are imported here: this runs at every interpreter start
# (importlib.abc alone pulls in importlib.resources, typing costs milliseconds).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.abc import Loader
    from typing import Any

METRIC_NAME = "tame_mt"
TARGET = "evaluate.loading"


def loading_script() -> str | None:
    """The loading script inside the installed package, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("tame_mt_metric")
    if spec is None or not spec.submodule_search_locations:
        return None
    script = os.path.join(next(iter(spec.submodule_search_locations)), "tame_mt.py")
    return script if os.path.isfile(script) else None


def route(loading: ModuleType) -> None:
    """Wrap ``evaluation_module_factory`` so that ``tame_mt`` means the package's script."""
    factory = loading.evaluation_module_factory
    if getattr(factory, "_tame_mt_routed", False):
        return

    def evaluation_module_factory(path: str, *args: Any, **kwargs: Any) -> Any:
        if path == METRIC_NAME:
            path = loading_script() or path
        return factory(path, *args, **kwargs)

    evaluation_module_factory._tame_mt_routed = True  # type: ignore[attr-defined]
    loading.__dict__["evaluation_module_factory"] = evaluation_module_factory


class _RoutingLoader:
    def __init__(self, loader: Loader) -> None:
        self._loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        route(module)


class _Finder:
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != TARGET:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _RoutingLoader(spec.loader)  # type: ignore[assignment]
        return spec


def install() -> None:
    if os.environ.get("TAME_MT_NO_EVALUATE_HOOK"):
        return
    if TARGET in sys.modules:
        route(sys.modules[TARGET])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
