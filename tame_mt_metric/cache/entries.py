"""The project's cache: a folder of its own under the datasets cache
(``HF_DATASETS_CACHE/tame_mt``; ``TAME_MT_CACHE`` or the ``cache_dir`` option
moves it) holding training indexes (``index/``) and test-set audits
(``audit/``), each entry named by its key. Entries are written under a
temporary name and renamed into place; building one takes a file lock, so
processes that need the same entry build it once.

    python -m tame_mt_metric.cache list | remove NAME | clear
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import tame_mt_core as _core

from tame_mt_metric.cache.index_files import index_settings, read_index, read_manifest, write_index
from tame_mt_metric.digest import digest
from tame_mt_metric.errors import CacheWarning, IndexFileError, InvalidOptionError
from tame_mt_metric.progress import progress
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.corpus import TrainingCorpus, TrainingStream
from tame_mt_metric.retrieval.exposure import TrainingIndex

if TYPE_CHECKING:
    from filelock import FileLock

__all__ = [
    "CACHE_ENV",
    "CacheEntry",
    "CacheOptions",
    "cache_root",
    "cached_index",
    "clear",
    "discard",
    "list_entries",
    "remove",
    "uncached",
]

CACHE_ENV = "TAME_MT_CACHE"
KINDS = ("index", "audit")
BUILDS = {"index": 0}  # indexes built by this process (tests check "built once")


@dataclass(frozen=True)
class CacheOptions:
    """Where cached entries live, and what names the training corpus.

    cache_dir: the cache folder (default: ``TAME_MT_CACHE``, else
        ``HF_DATASETS_CACHE/tame_mt``).
    train_key: names the training corpus instead of its content hash (the
        caller promises that one key always means the same corpus).
    enabled: False keeps everything in memory.
    """

    cache_dir: str | Path | None = None
    train_key: str | None = None
    enabled: bool = True

    def __post_init__(self) -> None:
        if self.train_key is not None and (
            not isinstance(self.train_key, str) or not self.train_key.strip()
        ):
            raise InvalidOptionError(
                f"train_key: expected a non-empty string, got {self.train_key!r}"
            )

    def root(self) -> Path:
        return cache_root(self.cache_dir)

    def prepare(self) -> None:
        """A cache folder named by the user (``tame_cache_dir``, ``--cache-dir``) is
        created now when missing, so that one that cannot be (under a file, on a
        virtual file system) is an error naming it before any work. A folder that
        exists but cannot be written (read-only, full) still serves what it holds;
        what cannot be stored is said with a ``CacheWarning``."""
        if not self.enabled or self.cache_dir is None:
            return
        root = self.root()
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidOptionError(
                f"the cache folder (tame_cache_dir, --cache-dir) {root}: cannot be created "
                f"({exc.strerror or exc})"
            ) from exc

    def key_of(self, corpus: TrainingCorpus | TrainingStream) -> str:
        return self.train_key or corpus.fingerprint


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """The cache folder: ``cache_dir`` (the metric's ``tame_cache_dir``, the CLI's
    ``--cache-dir``), else ``TAME_MT_CACHE``, else under the datasets cache."""
    if cache_dir is not None:
        root, given = Path(cache_dir), "the cache folder (tame_cache_dir, --cache-dir)"
    elif os.environ.get(CACHE_ENV):
        root, given = Path(os.environ[CACHE_ENV]), CACHE_ENV
    else:
        from datasets import config

        root, given = Path(config.HF_DATASETS_CACHE) / "tame_mt", "the datasets cache"
    if root.exists() and not root.is_dir():
        raise InvalidOptionError(f"{given}: {root} exists and is not a folder")
    return root


def _settings_digest(config: RetrievalConfig) -> str:
    settings = json.dumps(index_settings(config), sort_keys=True)
    return digest(settings, str(_core.INDEX_FORMAT_VERSION))[:8]


def _index_folder(root: Path, train_key: str, config: RetrievalConfig) -> Path:
    name = f"{digest(train_key)}-{_settings_digest(config)}-v{_core.INDEX_FORMAT_VERSION}"
    return root / "index" / name


def find_cached_index(
    corpus: TrainingCorpus, config: RetrievalConfig, cache: CacheOptions
) -> Path | None:
    folder = _index_folder(cache.root(), cache.key_of(corpus), config)
    return folder if folder.is_dir() else None


def _check_corpus(folder: Path, corpus: TrainingCorpus) -> None:
    """The entry indexes this corpus: its manifest names the same fingerprint and
    row count (a ``train_key`` is a promise, and promises break)."""
    manifest = read_manifest(folder)
    found = (manifest.get("train_fingerprint"), manifest.get("train_rows"))
    if found != (corpus.fingerprint, corpus.num_rows):
        raise IndexFileError(
            f"{folder}: indexes another corpus (fingerprint {found[0]!r}, {found[1]!r} rows; "
            f"the corpus at hand: {corpus.fingerprint}, {corpus.num_rows} rows)"
        )


def discard(path: Path) -> None:
    """Remove an entry (damaged or not), whatever stands at its place."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _lock(path: Path) -> FileLock:
    """The lock beside an entry. filelock is imported with the first lock: a
    process that only reads a saved index (a lookup) takes none."""
    from filelock import FileLock

    return FileLock(f"{path}.lock")


def cached_index(
    corpus: TrainingCorpus, config: RetrievalConfig, cache: CacheOptions | None = None
) -> TrainingIndex:
    """The corpus's index from the cache, built and stored once if missing. An
    entry that fails its checks, or indexes another corpus, is rebuilt with a
    ``CacheWarning``."""
    cache = cache or CacheOptions()
    key = cache.key_of(corpus)
    folder = _index_folder(cache.root(), key, config)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        lock = _lock(folder)
        lock.acquire()
    except OSError as exc:  # a read-only or full cache: the index is built all the same
        uncached(folder.parent, exc)
        return _build(corpus, config)
    try:
        if folder.exists() or folder.is_symlink():
            try:
                _check_corpus(folder, corpus)
                index = read_index(folder, config)
            except IndexFileError as exc:
                warnings.warn(f"rebuilding the cached index: {exc}", CacheWarning, stacklevel=2)
                discard(folder)
            else:
                return index
        built = _build(corpus, config)
        extra = {"train_key": key, "train_rows": corpus.num_rows}
        try:
            write_index(built, folder, {**extra, "train_fingerprint": corpus.fingerprint})
        except OSError as exc:
            uncached(folder.parent, exc)
            return built
        BUILDS["index"] += 1
        del built  # the memory-mapped copy replaces it
        return read_index(folder, config)
    finally:
        lock.release()


def _build(corpus: TrainingCorpus, config: RetrievalConfig) -> TrainingIndex:
    with progress("indexing", 2 * corpus.num_rows) as advance:
        return TrainingIndex.build(*corpus.whole(), config, advance)


def uncached(folder: Path, exc: OSError) -> None:
    """Say why nothing was cached: the answer is computed all the same."""
    reason = exc.strerror or str(exc)
    warnings.warn(
        f"nothing was cached: {folder} cannot be written ({reason}); the numbers are "
        "computed all the same",
        CacheWarning,
        stacklevel=3,
    )


@dataclass(frozen=True)
class CacheEntry:
    kind: str
    name: str
    path: Path
    nbytes: int
    complete: bool

    def describe(self) -> str:
        state = "" if self.complete else "  (incomplete: a build was interrupted)"
        return f"{self.kind:<6} {self.name:<44} {self.nbytes / 2**20:10.1f} MiB{state}"


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def list_entries(cache_dir: str | Path | None = None) -> list[CacheEntry]:
    """Every entry of the cache, with its size; temporary leftovers of interrupted
    builds are listed as incomplete."""
    root = cache_root(cache_dir)
    entries = []
    for kind in KINDS:
        folder = root / kind
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix == ".lock":
                continue
            complete = ".tmp-" not in path.name
            entries.append(CacheEntry(kind, path.name, path, _size(path), complete))
    return entries


def remove(name: str, cache_dir: str | Path | None = None) -> CacheEntry:
    """Remove one entry (by name, as ``list_entries`` gives it)."""
    for entry in list_entries(cache_dir):
        if entry.name == name:
            with _lock(entry.path):
                discard(entry.path)
            return entry
    raise InvalidOptionError(f"{name}: no such cache entry in {cache_root(cache_dir)}")


def clear(cache_dir: str | Path | None = None) -> list[CacheEntry]:
    """Remove every entry; returns what was removed."""
    removed = list_entries(cache_dir)
    for entry in removed:
        remove(entry.name, cache_dir)
    return removed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tame_mt_metric.cache",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--cache-dir", default=None)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="entries with their kind, name and size")
    one = sub.add_parser("remove", help="remove one entry")
    one.add_argument("name")
    sub.add_parser("clear", help="remove every entry")
    args = parser.parse_args(argv)
    root = cache_root(args.cache_dir)
    if args.command == "list":
        entries = list_entries(args.cache_dir)
        print(f"{root}: {len(entries)} entries, {sum(e.nbytes for e in entries) / 2**20:.1f} MiB")
        for entry in entries:
            print(entry.describe())
    elif args.command == "remove":
        print(f"removed {remove(args.name, args.cache_dir).describe()}")
    else:
        print(f"removed {len(clear(args.cache_dir))} entries from {root}")
