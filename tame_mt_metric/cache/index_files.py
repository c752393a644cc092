"""A training index as files: one Arrow IPC file per flat array of the core's
index plus a manifest, written to a temporary folder and renamed into place,
read back through a memory map and handed to the core without copying. The
core writes checksums only for an index whose posting lists pass its full
check, and trusts arrays read back once every checksum holds (the bytes are
those written) and the structure its searches read by holds; ``full=True``
decodes every list again. Anything else is an ``IndexFileError``."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import tame_mt_core as _core

from tame_mt_metric.digest import PROOF, proof, proved
from tame_mt_metric.errors import IndexFileError
from tame_mt_metric.files import (
    atomic_folder,
    read_small,
    regular_file,
)
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.exposure import TrainingIndex

__all__ = [
    "MANIFEST",
    "index_settings",
    "open_saved",
    "read_index",
    "read_manifest",
    "retrieval_of",
    "write_index",
]

MANIFEST = "manifest.json"
_TYPES = {1: pa.uint8(), 4: pa.uint32(), 8: pa.uint64(), 16: pa.binary(16)}
_IPC = pa.ipc.IpcWriteOptions(allow_64bit=True)
# An array's name in a manifest: a plain file name, so every member is in the folder.
_ARRAY_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}(\.[a-z][a-z0-9_]{0,31})?")


def index_settings(config: RetrievalConfig) -> dict[str, Any]:
    """The settings that shape an index (and name its cache entry)."""
    return {"ngram_orders": list(config.ngram_orders), **config.normalization_flags()}


def _write_array(path: Path, name: str, width: int, nbytes: int, index: TrainingIndex) -> None:
    address, size = index._core.array_address(name)
    data = pa.foreign_buffer(address, size, base=index._core)  # no copy
    array = pa.Array.from_buffers(_TYPES[width], nbytes // width, [None, data])
    schema = pa.schema([pa.field("values", _TYPES[width])], metadata={"tame_mt.array": name})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema, options=_IPC) as w:
        w.write_batch(pa.record_batch([array], schema=schema))


def _remove_abandoned(folder: Path) -> None:
    """Remove the temporary folders of builds of ``folder`` whose process has died
    (a SIGKILL leaves them); those of live processes are theirs."""
    for tmp in folder.parent.glob(f".{folder.name}.tmp-*"):
        pid = tmp.name.rsplit(".tmp-", 1)[1].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, another user's
        pass
    return True


def write_index(
    index: TrainingIndex,
    folder: Path,
    extra: dict[str, Any] | None = None,
    members: Callable[[Path], dict[str, Any]] | None = None,
) -> None:
    """Write ``index`` as ``folder`` (which must not exist): arrays, ``members``
    (more files written into the folder, such as the training text; what it
    returns joins the manifest) and the manifest go to a temporary sibling first,
    flushed to disk, which is renamed into place whole, so a reader (or a crash)
    sees either no index or a complete one."""
    _remove_abandoned(folder)
    with atomic_folder(folder) as tmp:
        tmp.mkdir(parents=True)
        arrays = []
        for name, width, nbytes, checksum in index._core.array_info():
            _write_array(tmp / f"{name}.arrow", name, width, nbytes, index)
            arrays.append({"name": name, "width": width, "bytes": nbytes, "xxh3_64": checksum})
        manifest = {
            "format": "tame-mt-metric index",
            "format_version": _core.INDEX_FORMAT_VERSION,
            "core_version": _core.__version__,
            "byte_order": "little",
            "rows": index.rows,
            "settings": index_settings(index.config),
            "arrays": arrays,
            **(extra or {}),
            **(members(tmp) if members else {}),
        }
        manifest[PROOF] = proof(manifest)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def read_manifest(folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        raise IndexFileError(f"{folder}: not an index folder (no such folder)")
    if not (folder / MANIFEST).exists():
        raise IndexFileError(
            f"{folder}: not an index folder (it holds no {MANIFEST}; "
            "`tame-mt-metric index build --out` makes one)"
        )
    try:
        manifest = json.loads(read_small(folder / MANIFEST, "index manifest").decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise IndexFileError(f"{folder / MANIFEST}: not a readable index manifest ({exc})") from exc
    if not isinstance(manifest, dict):
        raise IndexFileError(f"{folder / MANIFEST}: not an index manifest (a JSON object)")
    if manifest.get("format") != "tame-mt-metric index":
        raise IndexFileError(f"{folder}: not a tame-mt-metric index")
    if manifest.get("format_version") != _core.INDEX_FORMAT_VERSION:
        raise IndexFileError(
            f"{folder}: index format {manifest.get('format_version')}, this version reads "
            f"{_core.INDEX_FORMAT_VERSION}"
        )
    if not proved(manifest):
        raise IndexFileError(
            f"{folder / MANIFEST}: its fields differ from those it was written with"
        )
    return manifest


def _count(value: object, bound: int = 1 << 63) -> int:
    """A manifest's count or checksum: an integer in [0, bound)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < bound:
        raise ValueError(f"expected an integer in [0, {bound}), got {value!r}")
    return value


def _read_array(folder: Path, entry: dict[str, Any]) -> tuple[Any, int]:
    name = entry["name"]
    if not isinstance(name, str) or not _ARRAY_NAME.fullmatch(name) or entry["width"] not in _TYPES:
        raise ValueError(f"an array entry of another shape: {entry!r}")
    path = regular_file(folder / f"{name}.arrow", "index array", IndexFileError)
    checksum = _count(entry["xxh3_64"], 1 << 64)
    _count(entry["bytes"])
    try:
        reader = pa.ipc.open_file(pa.memory_map(str(path), "r"))
        if reader.schema.metadata != {b"tame_mt.array": name.encode()}:
            raise IndexFileError(f"{path}: holds another array")
        if reader.num_record_batches != 1:
            raise IndexFileError(f"{path}: expected one record batch")
        column = reader.get_batch(0).column(0)
        column.validate(full=True)
    except (OSError, pa.ArrowException) as exc:
        raise IndexFileError(f"{path}: not a readable Arrow file ({exc})") from exc
    if column.null_count or column.offset:
        raise IndexFileError(f"{path}: unexpected nulls or offset")
    data = column.buffers()[1]
    if data is None or len(column) * entry["width"] != entry["bytes"]:
        raise IndexFileError(f"{path}: {entry['bytes']} bytes expected")
    return memoryview(data[: entry["bytes"]]).cast("B"), checksum


def retrieval_of(folder: Path) -> RetrievalConfig:
    """The retrieval settings a saved index was built with (strategy ``indexed``)."""
    settings = read_manifest(folder)["settings"]
    try:
        return RetrievalConfig(
            ngram_orders=tuple(settings["ngram_orders"]),
            lowercase=settings["lowercase"],
            strip_diacritics=settings["strip_diacritics"],
            normalize_punctuation=settings["normalize_punctuation"],
            strategy="indexed",
        )
    except (KeyError, TypeError) as exc:
        raise IndexFileError(f"{folder / MANIFEST}: malformed settings ({exc!r})") from exc


def read_index(folder: Path, config: RetrievalConfig, full: bool = False) -> TrainingIndex:
    """Open a saved index (memory-mapped, zero-copy) for retrieval with ``config``,
    whose normalisation and n-gram orders must be those the index was built with;
    ``full`` checks every posting list too (O(postings), as ``index verify``)."""
    manifest = read_manifest(folder)
    if manifest.get("settings") != index_settings(config):
        raise IndexFileError(
            f"{folder}: built with the settings {manifest.get('settings')}, but "
            f"{index_settings(config)} were asked for; leave them out to use the index's, "
            "or build an index with them"
        )
    try:
        arrays = {entry["name"]: _read_array(folder, entry) for entry in manifest["arrays"]}
        rows = _count(manifest["rows"])
    except IndexFileError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise IndexFileError(f"{folder / MANIFEST}: malformed ({exc!r})") from exc
    core = _core.TrainingIndex.from_arrays(
        arrays, rows, config.gram_settings(), threads=config.resolved_threads(), full=full
    )
    fingerprint = manifest.get("train_fingerprint")
    return TrainingIndex(core, config, fingerprint if isinstance(fingerprint, str) else None)


def open_saved(folder: Path, threads: int | None = None, full: bool = False) -> TrainingIndex:
    """A saved index opened with the settings it was built with."""
    return read_index(folder, replace(retrieval_of(folder), threads=threads), full)
