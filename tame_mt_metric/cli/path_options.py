"""The options that name paths, and what each command does with them: every
such option is declared with one of the types below (``type=READ``,
``type=WRITE``, ...), which says whether the command reads or writes the path,
and ``checked_paths`` holds every command to ``files.refuse_overwrites``
before it runs, so that no output replaces an input, lands inside a folder
that is read (a saved index, a dataset, the cache), or shares a path with
another output. A new option declares its role or the architecture test fails
(no bare ``type=Path``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tame_mt_metric.files import NamedPath, refuse_overwrites

__all__ = [
    "JSON_OUT_DIR",
    "NAMED_READ",
    "READ",
    "READ_TEXT",
    "SEGMENTS_READ",
    "SEGMENTS_WRITE",
    "WRITE",
    "PathOption",
    "checked_paths",
    "path_uses",
    "sidecar_path",
]

# The paths one value of an option stands for, given the other options.
Expand = Callable[[Path, argparse.Namespace], list[Path]]


@dataclass(frozen=True)
class PathOption:
    """The ``type`` of an option that names a path: the role of the path
    (``read`` or ``write``); whether the value stays the text given (``text``)
    or, ``NAME=PATH`` (``named``), holds the path after its ``=``; and, for an
    output, every path written because of it (``expand``: a sidecar beside it,
    the files of an output folder)."""

    role: str
    text: bool = False
    named: bool = False
    expand: Expand | None = None

    @property
    def __name__(self) -> str:  # argparse names a type in its errors
        return "path"

    def __call__(self, value: str) -> Path | str:
        return value if self.text or self.named else Path(value)

    def _given(self, value: object) -> Path | None:
        """The path a value names (None: not ``NAME=PATH``, which the command says)."""
        _, eq, path = str(value).partition("=")
        if self.named:
            return Path(path) if eq else None
        return Path(str(value))

    def paths(self, value: object, args: argparse.Namespace) -> list[Path]:
        given = self._given(value)
        if given is None:
            return []
        return self.expand(given, args) if self.expand else [given]

    def uses(self, option: str, value: object, args: argparse.Namespace) -> list[NamedPath]:
        """The paths one value stands for, each named by ``option`` and the value."""
        return [NamedPath(option, p, self._given(value)) for p in self.paths(value, args)]


def sidecar_path(path: Path) -> Path:
    """Each segment file's own sidecar: ``x.jsonl.meta.json``, ``x.jsonl.gz.meta.json``."""
    return path.with_name(path.name + ".meta.json")


def _with_sidecar(path: Path, _: argparse.Namespace) -> list[Path]:
    """A segment file and its sidecar (``cli/segments.py``)."""
    return [path, sidecar_path(path)]


def _system_reports(folder: Path, args: argparse.Namespace) -> list[Path]:
    """The report ``score-cached-batch`` writes in ``--json-out-dir`` per system."""
    names = [str(item).partition("=")[0] for item in getattr(args, "system", None) or []]
    return [folder / f"{name}.tame.json" for name in names]


READ = PathOption("read")
READ_TEXT = PathOption("read", text=True)  # read, the value kept as given
NAMED_READ = PathOption("read", named=True)  # NAME=PATH, read
WRITE = PathOption("write")
SEGMENTS_READ = PathOption("read", expand=_with_sidecar)
SEGMENTS_WRITE = PathOption("write", expand=_with_sidecar)
JSON_OUT_DIR = PathOption("write", expand=_system_reports)


def _values(value: object) -> Iterator[object]:
    if isinstance(value, list | tuple):
        for item in value:
            yield from _values(item)
    elif value is not None:
        yield value


def path_uses(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> tuple[list[NamedPath], list[NamedPath]]:
    """The paths ``args`` read and write, each with its option, from the roles
    the options of ``parser`` (one command's) declare; and the cache, for the
    commands that read it (``reads_cache``: True, or a test of ``args``; the
    cache's folder is found only then, since the datasets cache's needs
    ``datasets`` imported)."""
    reads: list[NamedPath] = []
    writes: list[NamedPath] = []
    for action in parser._actions:
        kind = action.type
        if not isinstance(kind, PathOption):
            continue
        name = next((o for o in action.option_strings if o.startswith("--")), action.dest)
        for value in _values(getattr(args, action.dest, None)):
            (reads if kind.role == "read" else writes).extend(kind.uses(name, value, args))
    reads_cache = getattr(args, "reads_cache", False)
    if writes and (reads_cache(args) if callable(reads_cache) else reads_cache):
        from tame_mt_metric.cache.entries import cache_root

        reads.append(NamedPath("the cache", cache_root(getattr(args, "cache_dir", None))))
    return reads, writes


def checked_paths(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, before any work, the outputs that ``files.refuse_overwrites`` refuses."""
    refuse_overwrites(*path_uses(parser, args))
