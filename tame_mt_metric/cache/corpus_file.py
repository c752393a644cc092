"""The training text saved beside an index folder (``corpus.arrow``, written
by ``index build``): what scoring from a saved index needs for the TM
hypotheses. Read back only when its content matches its fingerprint and the
index's row count; anything else is an ``IndexFileError``."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pyarrow as pa

from tame_mt_metric.cache.index_files import read_manifest
from tame_mt_metric.errors import IndexFileError
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tame_mt_metric.retrieval.text_files import TextFiles

__all__ = ["CORPUS_FILE", "corpus_of_index", "write_corpus"]

CORPUS_FILE = "corpus.arrow"


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
    ).replace_schema_metadata({"train_fingerprint": corpus.fingerprint})
    tmp = folder / f".{CORPUS_FILE}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        os.replace(tmp, folder / CORPUS_FILE)
    finally:
        tmp.unlink(missing_ok=True)


def corpus_of_index(folder: Path) -> TrainingCorpus:
    """The training text stored beside an index by ``index build``."""
    path = folder / CORPUS_FILE
    if not path.is_file():
        raise IndexFileError(
            f"{folder}: no {CORPUS_FILE}; build it with 'tame-mt-metric index build'"
        )
    try:
        # The table's buffers keep the mapping open; the core reads them in place.
        table = pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()
        table.validate(full=True)  # damaged offsets fail here, not crash a read below
        corpus = TrainingCorpus(table.column("source"), table.column("target"))
        expected = (table.schema.metadata or {}).get(b"train_fingerprint", b"").decode()
    except (OSError, KeyError, pa.ArrowException) as exc:
        raise IndexFileError(f"{path}: not a readable corpus file ({exc})") from exc
    if corpus.fingerprint != expected:
        raise IndexFileError(f"{path}: content differs from its fingerprint")
    if read_manifest(folder).get("train_rows") != corpus.num_rows:
        raise IndexFileError(f"{path}: {corpus.num_rows} pairs, the index has another count")
    return corpus
