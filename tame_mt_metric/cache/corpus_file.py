"""The training text saved beside an index folder (``corpus.arrow``, written
by ``index build``): what scoring from a saved index needs for the TM
hypotheses. Read back only when its content matches its fingerprint and the
index's row count; anything else is an ``IndexFileError``."""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import tame_mt_core as _core

from tame_mt_metric.cache.index_files import read_manifest
from tame_mt_metric.errors import IndexFileError
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tame_mt_metric.retrieval.text_files import TextFiles

__all__ = ["CORPUS_FILE", "corpus_of_index", "texts_of_index", "write_corpus"]

CORPUS_FILE = "corpus.arrow"
# The fingerprint's blocks (core/src/fingerprint.rs): each one's digest is kept,
# so that a few rows can be proved without reading the rest.
BLOCK_ROWS: int = _core.FINGERPRINT_BLOCK_ROWS


def write_corpus(folder: Path, corpus: TrainingCorpus) -> None:
    """Save the training text beside an index, whole (temporary name, then rename)."""
    if isinstance(corpus, TextFiles) or not corpus.is_arrow:
        columns = [pa.array(corpus.sources), pa.array(corpus.targets)]
    else:
        columns = [corpus.source_column, corpus.target_column]
    table = pa.table(
        {
            name: c.cast(pa.large_string())
            for name, c in zip(("source", "target"), columns, strict=True)
        }
    )
    digests = _block_digests(table)
    if _core.CorpusFingerprint.combine(digests) != corpus.fingerprint:
        raise IndexFileError(f"{folder}: the corpus changed while it was saved")
    meta = {"train_fingerprint": corpus.fingerprint, "block_digests": ",".join(digests)}
    table = table.replace_schema_metadata(meta)
    tmp = folder / f".{CORPUS_FILE}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        os.replace(tmp, folder / CORPUS_FILE)
    finally:
        tmp.unlink(missing_ok=True)


def _block_digests(table: pa.Table) -> list[str]:
    hasher = _core.CorpusFingerprint()
    for batch in table.to_batches(BLOCK_ROWS):
        hasher.update(*TrainingCorpus(batch.column(0), batch.column(1)).whole())
    return hasher.block_digests()


def _open(folder: Path) -> tuple[pa.Table, dict[bytes, bytes]]:
    """The saved table, memory-mapped (its buffers keep the mapping open; the core
    reads them in place), and its metadata; nothing is checked yet."""
    path = folder / CORPUS_FILE
    if not path.is_file():
        raise IndexFileError(
            f"{folder}: no {CORPUS_FILE}; build it with 'tame-mt-metric index build'"
        )
    try:
        table = pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()
        table.validate()
    except (OSError, pa.ArrowException) as exc:
        raise IndexFileError(f"{path}: not a readable corpus file ({exc})") from exc
    manifest, meta = read_manifest(folder), table.schema.metadata or {}
    if manifest.get("train_rows") != table.num_rows:
        raise IndexFileError(f"{path}: {table.num_rows} pairs, the index has another count")
    if manifest.get("train_fingerprint") != meta.get(b"train_fingerprint", b"").decode():
        raise IndexFileError(f"{path}: the text of another corpus than the index's")
    return table, meta


def _corpus(table: pa.Table, path: Path) -> TrainingCorpus:
    try:
        table.validate(full=True)  # damaged offsets fail here, not crash a read below
        return TrainingCorpus(table.column("source"), table.column("target"))
    except (KeyError, pa.ArrowException) as exc:
        raise IndexFileError(f"{path}: not a readable corpus file ({exc})") from exc


def corpus_of_index(folder: Path) -> TrainingCorpus:
    """The training text stored beside an index by ``index build``, all of it
    checked against its fingerprint."""
    table, meta = _open(folder)
    corpus = _corpus(table, folder / CORPUS_FILE)
    if corpus.fingerprint != meta.get(b"train_fingerprint", b"").decode():
        raise IndexFileError(f"{folder / CORPUS_FILE}: content differs from its fingerprint")
    return corpus


def texts_of_index(folder: Path, rows: Sequence[int]) -> tuple[dict[int, str], dict[int, str]]:
    """The sources and targets of ``rows`` of the training text beside an index,
    reading only the fingerprint's blocks that hold them: each is checked against
    its digest, and the digests against the fingerprint. A file saved without its
    block digests is checked whole."""
    table, meta = _open(folder)
    path = folder / CORPUS_FILE
    digests = [d for d in meta.get(b"block_digests", b"").decode().split(",") if d]
    if not digests:
        corpus = corpus_of_index(folder)
        return corpus.sources_at(rows), corpus.targets_at(rows)
    try:
        proved = _core.CorpusFingerprint.combine(digests) == meta[b"train_fingerprint"].decode()
    except (KeyError, ValueError):
        proved = False
    if not proved or len(digests) != -(-table.num_rows // BLOCK_ROWS):
        raise IndexFileError(f"{path}: its block digests differ from its fingerprint")
    sources: dict[int, str] = {}
    targets: dict[int, str] = {}
    for block in sorted({r // BLOCK_ROWS for r in rows}):
        if not 0 <= block < len(digests):
            raise IndexFileError(f"{path}: no row {block * BLOCK_ROWS} in {table.num_rows}")
        start = block * BLOCK_ROWS
        part = _corpus(table.slice(start, BLOCK_ROWS), path)
        if part.fingerprint != _core.CorpusFingerprint.combine([digests[block]]):
            raise IndexFileError(f"{path}: rows {start}.. differ from their digest")
        mine = [r - start for r in rows if r // BLOCK_ROWS == block]
        sources.update((start + r, t) for r, t in part.sources_at(mine).items())
        targets.update((start + r, t) for r, t in part.targets_at(mine).items())
    return sources, targets
