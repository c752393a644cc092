"""The package's folders are its architecture, and imports run one way: entry
points -> flores -> report -> (cache, scale) -> retrieval -> base, with cache
and scale beside each other, and no import cycle between modules. Read from
the source (the AST of every module, function-level imports included), so a
wrong-way import fails here before anyone runs it."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tame_mt_metric"

# Each group, and the groups it may import (besides itself).
BASE = ("_version", "errors", "digest", "files", "progress", "interpreter")
ALLOWED: Mapping[str, frozenset[str]] = {
    "base": frozenset(),
    "retrieval": frozenset({"base"}),
    "cache": frozenset({"base", "retrieval"}),
    "scale": frozenset({"base", "retrieval"}),
    "report": frozenset({"base", "retrieval", "cache", "scale"}),
    "flores": frozenset({"base", "retrieval", "cache", "scale", "report"}),
    "entry": frozenset({"base", "retrieval", "cache", "scale", "report", "flores"}),
}


def group(module: str) -> str:
    """The group of a module of the package: a subpackage, the base modules, or
    the entry points (the package root, the metric, the CLI, ...)."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ALLOWED and parts[1] not in ("base", "entry"):
        return parts[1]
    if len(parts) > 1 and parts[1] in BASE:
        return "base"
    return "entry"


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by its dotted name."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imports(source: str, modules: Mapping[str, Path]) -> set[str]:
    """The package's modules that ``source`` imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "tame_mt_metric")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "tame_mt_metric":
                continue
            for alias in node.names:  # ``from package import module`` names the module
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in modules else node.module)
    return found


def graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    return {
        name: imports(path.read_text(encoding="utf-8"), modules) - {name}
        for name, path in modules.items()
    }


def wrong_way(edges: Mapping[str, set[str]]) -> list[str]:
    """Imports that run against the layers, or of a module the package does not have."""
    found = []
    for module, targets in edges.items():
        for target in sorted(targets):
            if target not in edges:
                found.append(f"{module} imports {target}, which is no module of the package")
            elif group(target) != group(module) and group(target) not in ALLOWED[group(module)]:
                found.append(f"{module} ({group(module)}) imports {target} ({group(target)})")
    return found


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


EDGES = graph(module_files())


def test_every_module_has_a_group_and_each_subpackage_says_what_it_owns() -> None:
    assert {group(m) for m in EDGES} == set(ALLOWED)
    for name in ("retrieval", "cache", "scale", "report", "flores"):
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text("utf-8")))
        assert doc is not None and "May import" in doc, name


def test_imports_run_one_way() -> None:
    assert wrong_way(EDGES) == []


def test_no_import_cycles() -> None:
    assert cycles(EDGES) == []


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("tame_mt_metric.retrieval.grams", "from tame_mt_metric.report.config import TameConfig"),
        ("tame_mt_metric.retrieval.grams", "from tame_mt_metric import TameConfig"),
        ("tame_mt_metric.cache.entries", "import tame_mt_metric.scale.shards"),
        ("tame_mt_metric.report.scores", "from tame_mt_metric.flores import xsts"),
        ("tame_mt_metric.report.audit", "from tame_mt_metric.cli.common import Stages"),
        ("tame_mt_metric.demo", "from tame_mt_metric.scoring import score_tame"),
        ("tame_mt_metric.errors", "def f():\n    from tame_mt_metric.retrieval import inputs"),
    ],
)
def test_a_wrong_way_import_is_caught(module: str, source: str) -> None:
    modules = module_files()
    edges = {**EDGES, module: EDGES[module] | imports(source, modules)}
    assert wrong_way(edges), source


def test_a_cycle_is_caught() -> None:
    modules = module_files()
    back = imports("from tame_mt_metric.report.pipeline import score_tame", modules)
    edges = {**EDGES, "tame_mt_metric.report.scores": EDGES["tame_mt_metric.report.scores"] | back}
    pair = {"tame_mt_metric.report.pipeline", "tame_mt_metric.report.scores"}
    assert any(pair <= set(cycle) for cycle in cycles(edges))


# The core (core/src): the shared base at the top level, one folder per
# strategy; a strategy uses the base only, the base uses nothing above it, and
# only lib.rs and python/ (the bindings) see everything.
CORE = PACKAGE.parent / "core" / "src"
CORE_ALLOWED: Mapping[str, frozenset[str]] = {
    "base": frozenset({"base"}),
    "indexed": frozenset({"base", "indexed"}),
    "streaming": frozenset({"base", "streaming"}),
    "crate": frozenset({"base", "indexed", "streaming", "crate"}),
}


def core_group(top: str) -> str:
    """The group of a top-level module (or item) of the crate."""
    if top in ("indexed", "streaming"):
        return top
    return "crate" if top in ("lib", "python") else "base"


def crate_uses(source: str, reexports: Mapping[str, str]) -> set[str]:
    """The top-level modules of the crate that ``source`` names by ``crate::``
    (an item re-exported at the crate root counts as its module)."""
    code = re.sub(r"//[^\n]*", "", source)
    found = set()
    for match in re.finditer(r"crate::(\{[^}]*\}|\w+)", code):
        for path in match.group(1).strip("{}").split(","):
            name = path.strip().split("::")[0]
            if name:
                found.add(reexports.get(name, name))
    return found


def core_edges() -> dict[str, set[str]]:
    reexports = {
        item: module
        for module, items in re.findall(
            r"pub use (\w+)::(?:\w+::)*\{?([\w, ]+)\}?;", (CORE / "lib.rs").read_text("utf-8")
        )
        for item in re.findall(r"\w+", items)
    }
    return {
        str(path.relative_to(CORE)): crate_uses(path.read_text("utf-8"), reexports)
        for path in sorted(CORE.rglob("*.rs"))
    }


def core_wrong_way(edges: Mapping[str, set[str]]) -> list[str]:
    found = []
    for path, used in edges.items():
        group = core_group(Path(path).parts[0].removesuffix(".rs"))
        for module in sorted(used):
            if core_group(module) not in CORE_ALLOWED[group]:
                found.append(f"core/src/{path} ({group}) uses crate::{module}")
    return found


def test_the_core_has_a_folder_per_strategy_over_the_base() -> None:
    assert {p.name for p in CORE.iterdir() if p.is_dir()} == {"indexed", "python", "streaming"}
    edges = core_edges()
    assert core_wrong_way(edges) == []
    bindings = set().union(*(used for path, used in edges.items() if path.startswith("python/")))
    assert "indexed" in bindings and "streaming" in bindings


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("exposure.rs", "use crate::indexed::block::Block;"),
        ("indexed/search.rs", "use crate::streaming::StreamingAudit;"),
        ("streaming/probe.rs", "use crate::{jaccard::Hit, TrainingIndex};"),
        ("jaccard.rs", "fn f() { crate::python::x(); }"),
    ],
)
def test_a_wrong_way_use_in_the_core_is_caught(path: str, source: str) -> None:
    edges = core_edges()
    edges[path] = edges[path] | crate_uses(source, {"TrainingIndex": "indexed"})
    assert core_wrong_way(edges), source
