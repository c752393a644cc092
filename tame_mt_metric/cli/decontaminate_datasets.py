"""A training dataset's kept rows, written in the form the dataset was read from
(``decontaminate --train-dataset ... --out-dataset ...``): every column of the
input, the rows in their order, the removed ones left out.

- a Parquet file: a Parquet file of the same schema, read and written batch by
  batch, so that memory holds one batch;
- an Arrow file: an Arrow IPC file in the input's own format (the stream format
  ``datasets`` writes, or the file format), batch by batch;
- a ``save_to_disk`` folder: a ``save_to_disk`` folder of ``Dataset.select``.

Each checks that the input still holds the rows the corpus was read with; a
dataset that changed meanwhile is a ``MisalignedInputError``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from tame_mt_metric.cli.common import is_ipc_file
from tame_mt_metric.errors import InvalidOptionError, MisalignedInputError
from tame_mt_metric.files import regular_file

__all__ = ["FORMS", "KeptDataset", "dataset_form"]

# The forms a dataset is read from and written back in, by the input's name.
FORMS = {".parquet": "parquet", ".arrow": "arrow"}
SAVED = "save_to_disk"

# Rows read from a Parquet file at a time.
_BATCH_ROWS = 1 << 16


def dataset_form(path: Path) -> str | None:
    """How a training dataset at ``path`` is written back: ``"parquet"``,
    ``"arrow"`` or ``"save_to_disk"`` (a folder), or None for a form read but
    not written (JSON lines)."""
    if path.is_dir():
        return SAVED
    return FORMS.get(path.suffix)


@dataclass(frozen=True)
class KeptDataset:
    """A training dataset and where its kept rows go, in its own form."""

    source: Path
    destination: Path

    @property
    def form(self) -> str:
        form = dataset_form(self.source)
        if form is None:
            raise InvalidOptionError(
                f"--out-dataset: {self.source} is read but not written back; give a "
                "save_to_disk folder, an .arrow or a .parquet file as --train-dataset"
            )
        return form

    @property
    def folder(self) -> bool:
        return self.form == SAVED

    def check(self) -> None:
        """The destination fits the input's form (before any work)."""
        form = self.form
        if form == SAVED:
            if self.destination.exists():
                raise InvalidOptionError(
                    f"--out-dataset {self.destination}: already exists (the kept rows of a "
                    "save_to_disk folder go to a new folder)"
                )
        elif self.destination.suffix != self.source.suffix:
            raise InvalidOptionError(
                f"--out-dataset {self.destination}: the input is a {self.source.suffix} file, "
                f"and so is the copy (name it ...{self.source.suffix})"
            )

    def write(self, tmp: Path, removed: Sequence[int], rows: int) -> None:
        """The kept rows to ``tmp`` in the input's form."""
        form = self.form
        if form == SAVED:
            _write_saved(self.source, tmp, removed, rows)
            return
        regular_file(self.source, "--train-dataset")
        if form == "parquet":
            count = _write_parquet(self.source, tmp, removed)
        else:
            count = _write_arrow(self.source, tmp, removed)
        _check_rows(self.source, count, rows)


def _check_rows(source: Path, count: int, rows: int) -> None:
    if count != rows:
        raise MisalignedInputError(
            f"{source}: {count:,} rows now, but {rows:,} when the corpus was read "
            "(the dataset changed while the command ran)"
        )


def _kept_batches(
    batches: Iterator[pa.RecordBatch], removed: Sequence[int], counted: list[int]
) -> Iterator[pa.RecordBatch]:
    """Each batch without its removed rows (global row numbers); ``counted[0]``
    is the rows read so far. A batch that loses every row is left out."""
    for batch in batches:
        row = counted[0]
        counted[0] += batch.num_rows
        lo = bisect_left(removed, row)
        hi = bisect_left(removed, row + batch.num_rows, lo)
        if lo == hi:
            yield batch
            continue
        mask = np.ones(batch.num_rows, dtype=bool)
        mask[np.asarray(removed[lo:hi], dtype=np.int64) - row] = False
        if mask.any():
            yield batch.filter(pa.array(mask))


def _write_parquet(source: Path, tmp: Path, removed: Sequence[int]) -> int:
    """The kept rows of a Parquet file as a Parquet file of the same schema."""
    import pyarrow.parquet as pq

    counted = [0]
    with pq.ParquetFile(source) as reader:
        schema = reader.schema_arrow
        with pq.ParquetWriter(tmp, schema) as writer:
            batches = reader.iter_batches(batch_size=_BATCH_ROWS)
            for batch in _kept_batches(batches, removed, counted):
                writer.write_batch(batch)
    return counted[0]


def _write_arrow(source: Path, tmp: Path, removed: Sequence[int]) -> int:
    """The kept rows of an Arrow IPC file in its own format (stream or file)."""
    counted = [0]
    with pa.OSFile(str(source), "rb") as f:
        batches: Iterator[pa.RecordBatch]
        if is_ipc_file(source):
            reader = pa.ipc.open_file(f)
            schema, new = reader.schema, pa.ipc.new_file
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
        else:
            stream = pa.ipc.open_stream(f)
            schema, new, batches = stream.schema, pa.ipc.new_stream, iter(stream)
        with pa.OSFile(str(tmp), "wb") as sink, new(sink, schema) as writer:
            for batch in _kept_batches(batches, removed, counted):
                writer.write_batch(batch)
    return counted[0]


def _write_saved(source: Path, tmp: Path, removed: Sequence[int], rows: int) -> None:
    """The kept rows of a ``save_to_disk`` folder as a ``save_to_disk`` folder."""
    import datasets

    dataset = datasets.load_from_disk(str(source))
    if not isinstance(dataset, datasets.Dataset):
        raise InvalidOptionError(
            f"--train-dataset {source}: a {type(dataset).__name__}; give one split's folder"
        )
    _check_rows(source, len(dataset), rows)
    kept = np.delete(np.arange(rows, dtype=np.int64), np.asarray(removed, dtype=np.int64))
    dataset.select(kept).save_to_disk(str(tmp))
