"""The training text saved beside an index folder (``corpus.arrow``, written
by ``index build``): what scoring from a saved index needs for the TM
hypotheses. Read back only when its content matches its fingerprint and the
index's row count; anything else is an ``IndexFileError``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import tame_mt_core as _core

from tame_mt_metric.cache.index_files import open_saved, read_index, read_manifest
from tame_mt_metric.errors import IndexFileError
from tame_mt_metric.files import regular_file, write_arrow
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tame_mt_metric.retrieval.exposure import TrainingIndex
from tame_mt_metric.retrieval.grams import grams
from tame_mt_metric.retrieval.text_files import TextFiles

__all__ = [
    "CORPUS_FILE",
    "corpus_of_index",
    "open_with_text",
    "texts_of_index",
    "write_corpus",
]

CORPUS_FILE = "corpus.arrow"
# The fingerprint's blocks (core/src/fingerprint.rs): each one's digest is kept,
# so that a few rows can be proved without reading the rest.
BLOCK_ROWS: int = _core.FINGERPRINT_BLOCK_ROWS


def write_corpus(folder: Path, corpus: TrainingCorpus) -> dict[str, str]:
    """Save the training text beside an index, whole (temporary name, then rename);
    returns the manifest's field that names it."""
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
    write_arrow(folder / CORPUS_FILE, table)
    return {"corpus_file": CORPUS_FILE}


def _block_digests(table: pa.Table) -> list[str]:
    hasher = _core.CorpusFingerprint()
    for batch in table.to_batches(BLOCK_ROWS):
        hasher.update(*TrainingCorpus(batch.column(0), batch.column(1)).whole())
    return hasher.block_digests()


def _open(folder: Path) -> tuple[pa.Table, dict[bytes, bytes]]:
    """The saved table, memory-mapped (its buffers keep the mapping open; the core
    reads them in place), and its metadata; nothing is checked yet."""
    path = folder / CORPUS_FILE
    if not path.exists():
        raise IndexFileError(
            f"{folder}: no {CORPUS_FILE}; build it with 'tame-mt-metric index build'"
        )
    regular_file(path, "training text", IndexFileError)
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


# Rows of the saved text read back to prove an index's settings when it is opened.
SETTINGS_SAMPLE = 64


def open_with_text(
    folder: Path,
    config: RetrievalConfig | None = None,
    threads: int | None = None,
    full: bool = False,
) -> TrainingIndex:
    """A saved index with its training text, opened with ``config`` (whose settings
    must be the index's) or with the settings its manifest names, and those
    settings proved on the index's own rows: a sample of the saved text, read with
    them, must be found in the index at similarity 1 on both sides. A manifest
    whose settings were edited, or that was put beside another index, fails here
    instead of answering with other neighbours."""
    if config is None:
        index = open_saved(folder, threads, full)
    else:
        index = read_index(folder, replace(config, threads=threads or config.threads), full)
    manifest = read_manifest(folder)
    if manifest.get("corpus_file") == CORPUS_FILE or (folder / CORPUS_FILE).exists():
        _prove_settings(folder, index)
    return index


def _sample(rows: int) -> list[int]:
    """Rows spread over at most four of the text's blocks (the first, the last and
    two between), so that proving them reads four blocks whatever the corpus."""
    blocks = -(-rows // BLOCK_ROWS)
    chosen = sorted({0, blocks // 3, 2 * blocks // 3, blocks - 1})
    each = SETTINGS_SAMPLE // len(chosen)
    sample = []
    for block in chosen:
        start, stop = block * BLOCK_ROWS, min((block + 1) * BLOCK_ROWS, rows)
        sample += list(range(start, stop, max(1, (stop - start) // each)))[:each]
    return sample


def _prove_settings(folder: Path, index: TrainingIndex) -> None:
    rows = _sample(index.rows)
    sources, targets = texts_of_index(folder, rows)
    config = replace(index.config, top_k=1)
    # A text without grams has no neighbour to prove: every row scores 0 against it.
    kept = [r for r in rows if grams(sources[r], config) and grams(targets[r], config)]
    found = TrainingIndex(index._core, config).find_exposures(
        [sources[r] for r in kept], [targets[r] for r in kept]
    )
    for row, item in zip(kept, found.items, strict=True):
        for side, best in (("source", item.source[0]), ("target", item.target[0])):
            if best.overlap != best.union:
                raise IndexFileError(
                    f"{folder}: the {side} of training row {row}, read with the settings "
                    f"its manifest names ({index.config.signature()}), is not in the index: "
                    "the manifest does not describe this index"
                )
