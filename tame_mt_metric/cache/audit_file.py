"""The audit file: one test set's audit (exposures, TM hypotheses and the
TM's per-segment statistics) as one Arrow file in the cache's ``audit/``
folder, named by its key. Its metadata carries the key, the corpus size and
fingerprint, the side check's exposures (``retrieval/sides.py``) and a proof
over them and every value of every column; a file is read
back only after a full validation and that proof, and a damaged or foreign
one is removed (with a ``CacheWarning``) so that it is recomputed."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from tame_mt_metric.cache.entries import CacheOptions, discard
from tame_mt_metric.digest import PROOF, proof, proved
from tame_mt_metric.errors import CacheWarning
from tame_mt_metric.files import regular_file, write_arrow
from tame_mt_metric.retrieval.exposure import Exposures, ItemExposure, Neighbour
from tame_mt_metric.retrieval.sides import SideExposure

__all__ = ["AUDIT_FORMAT", "Audit", "audit_path", "load_audit", "save_audit"]

# Bumped whenever the audit file's columns or their meaning change.
AUDIT_FORMAT = 6


@dataclass(frozen=True)
class Audit:
    """The train-aware half of a report, for one corpus, test set and settings."""

    exposures: Exposures
    tm_hypotheses: list[str]
    tm_statistics: dict[str, list[list[int]]]
    train_fingerprint: str
    from_cache: bool = False
    # The test set's exposures to a sample of the corpus on each side (None: not measured).
    sides: SideExposure | None = None


# Neighbour fields in the order of its constructor.
_COLUMNS = {
    "source": ("row", "overlap", "union"),
    "target": ("row", "overlap", "union", "reference"),
    "pair": ("row", "overlap", "union", "reference"),
}


def _array(values: Any, kind: pa.DataType, length: int | None = None) -> pa.Array:
    """``values`` (a NumPy array of ``kind``'s width) as an Arrow array over its
    buffer: ``pa.array`` of Python objects imports pandas to look for a
    DataFrame, a fifth of a second of a fresh process that has no other use for it."""
    count = len(values) if length is None else length
    return pa.Array.from_buffers(kind, count, [None, pa.py_buffer(values)])


def _strings(values: list[str]) -> pa.Array:
    encoded = [v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    data = pa.py_buffer(b"".join(encoded))
    return pa.Array.from_buffers(
        pa.large_string(), len(values), [None, pa.py_buffer(offsets), data]
    )


def _int_lists(rows: list[list[int]]) -> pa.Array:
    offsets = np.zeros(len(rows) + 1, np.int32)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    flat = np.fromiter((v for r in rows for v in r), np.int64, int(offsets[-1]))
    return pa.ListArray.from_arrays(_array(offsets, pa.int32()), _array(flat, pa.int64()))


def _to_table(audit: Audit, key: str) -> pa.Table:
    items = audit.exposures.items
    data: dict[str, object] = {}
    for side, fields in _COLUMNS.items():
        for f in fields:
            values = [getattr(getattr(e, side)[0] if side != "pair" else e.pair, f) for e in items]
            data[f"{side}_{f}"] = _array(np.asarray(values, np.uint64), pa.uint64())
    for side in _COLUMNS:
        flags = np.asarray([getattr(e, f"{side}_exact") for e in items], bool)
        bits = np.packbits(flags, bitorder="little")
        data[f"{side}_exact"] = _array(bits, pa.bool_(), len(flags))
    data["tm_hyp"] = _strings(audit.tm_hypotheses)
    for metric, stats in audit.tm_statistics.items():
        data[f"tm_stats_{metric}"] = _int_lists(stats)
    table = pa.table(data)
    meta = {
        "tame_mt.audit": key,
        "num_train": str(audit.exposures.num_train),
        "train_fingerprint": audit.train_fingerprint,
        "strategy": audit.exposures.strategy,
        "sides": json.dumps(None if audit.sides is None else asdict(audit.sides)),
    }
    meta[PROOF] = proof(meta, _lines(_columns(table)))
    return table.replace_schema_metadata(meta)


def _columns(table: pa.Table) -> dict[str, list[Any]]:
    return {name: table.column(name).to_pylist() for name in table.column_names}


def _lines(cols: dict[str, list[Any]]) -> Iterator[str]:
    """Every value of every column, as the lines its proof covers."""
    return (json.dumps([name, cols[name]]) for name in sorted(cols))


def _from_table(table: pa.Table, key: str, num_items: int, statistics: set[str]) -> Audit:
    meta = table.schema.metadata or {}
    if meta.get(b"tame_mt.audit") != key.encode() or table.num_rows != num_items:
        raise ValueError("the file holds another audit")
    cols = _columns(table)
    fields = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in meta.items()}
    if not proved(fields, _lines(cols)):
        raise ValueError("its content differs from the digest it was written with")
    source, target, pair = (
        [Neighbour(*row) for row in zip(*(cols[f"{side}_{f}"] for f in fields), strict=True)]
        for side, fields in _COLUMNS.items()
    )
    items = tuple(
        ItemExposure((s,), (t,), p, se, te, pe)
        for s, t, p, se, te, pe in zip(
            source,
            target,
            pair,
            cols["source_exact"],
            cols["target_exact"],
            cols["pair_exact"],
            strict=True,
        )
    )
    exposures = Exposures(items, int(meta[b"num_train"]), meta[b"strategy"].decode())
    stats = {n.removeprefix("tm_stats_"): v for n, v in cols.items() if n.startswith("tm_stats_")}
    if set(stats) != statistics:
        raise ValueError(f"statistics of {sorted(stats)}, expected {sorted(statistics)}")
    fingerprint = meta[b"train_fingerprint"].decode()
    sides = json.loads(meta[b"sides"])
    return Audit(
        exposures,
        cols["tm_hyp"],
        stats,
        fingerprint,
        from_cache=True,
        sides=None if sides is None else SideExposure(**sides),
    )


def audit_path(cache: CacheOptions, key: str) -> Path:
    return cache.root() / "audit" / f"{key}.arrow"


def load_audit(path: Path, key: str, num_items: int, statistics: set[str]) -> Audit | None:
    """The cached audit, or None when there is none; a damaged entry is removed
    (with a ``CacheWarning``), so that it is recomputed."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        regular_file(path, "cached audit")
        with pa.memory_map(str(path), "r") as source:
            table = pa.ipc.open_file(source).read_all()
            # Damaged offsets or lengths must fail here, not crash a read below.
            table.validate(full=True)
            return _from_table(table, key, num_items, statistics)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as exc:
        warnings.warn(
            f"recomputing the cached audit {path.name}: {exc}", CacheWarning, stacklevel=4
        )
        discard(path)
        return None


def save_audit(path: Path, audit: Audit, key: str) -> None:
    """Write ``audit`` under ``key`` at ``path``, whole (``files.write_arrow``)."""
    write_arrow(path, _to_table(audit, key))
