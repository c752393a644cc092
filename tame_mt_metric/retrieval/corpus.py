"""The training corpus of a report, from what users hold.

``TrainingCorpus``: a corpus whose rows are all at hand: a ``datasets.Dataset``
(memory-mapped or in memory) with a source and a target column, or in the
translation convention (a ``translation`` column of ``{lang: text}`` structs),
a ``pyarrow.Table``, or a dict of two lists. Arrow columns stay Arrow: the
core reads their buffers in place, block by block, and no Python string is
made per row.

``TrainingStream``: a corpus read once, block by block (a
``datasets.IterableDataset``, ``load_dataset(..., streaming=True)``, or any
iterable of ``{source, target}`` rows or of Arrow record batches). Its size and
fingerprint are known once it has been read.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from itertools import islice
from typing import Any

import pyarrow as pa
import tame_mt_core as _core

from tame_mt_metric.errors import (
    EmptyCorpusError,
    InputTextError,
    InvalidOptionError,
    MissingColumnError,
)
from tame_mt_metric.progress import progress
from tame_mt_metric.retrieval.arrow_files import dataset_files
from tame_mt_metric.retrieval.columns import (
    Column,
    arrow_texts,
    is_arrow,
    string_column,
    texts_at,
)
from tame_mt_metric.retrieval.inputs import check_aligned, check_texts

__all__ = ["Block", "TrainingCorpus", "TrainingStream", "texts_in_blocks", "training_corpus"]

# Rows of a block: for the core, a list of strings or an ``ArrowTexts``.
Texts = Sequence[str] | _core.ArrowTexts
Block = tuple[Texts, Texts]

# Rows hashed per call while fingerprinting a corpus.
_FINGERPRINT_ROWS = 1 << 16


def _is_dataset(train: object) -> bool:
    return isinstance(getattr(train, "column_names", None), list) and hasattr(train, "data")


def _refuse_dict_of_splits(train: object) -> None:
    if type(train).__name__ in ("DatasetDict", "IterableDatasetDict"):
        raise InvalidOptionError(
            f"train: expected one split, got a {type(train).__name__} (pass e.g. train['train'])"
        )


def _table(train: object) -> pa.Table | None:
    """The Arrow table of a ``datasets.Dataset`` (its row selection applied) or a
    ``pyarrow.Table``; None for anything else."""
    if isinstance(train, pa.Table):
        return train
    if not _is_dataset(train):
        return None
    dataset: Any = train
    data = dataset.data
    table: pa.Table = getattr(data, "table", data)
    indices = getattr(train, "_indices", None)
    if indices is not None:  # after select/shuffle/filter: the rows it names, in order
        table = table.take(indices.column(0))
    return table


def _column(train: object, name: str, hint: str) -> Column:
    """One column of a Dataset or table (Arrow, checked) or of a dict (a list)."""
    table = _table(train)
    if table is not None:
        if name not in table.column_names:
            raise MissingColumnError(
                f"train: no column {name!r}; the dataset has {table.column_names} ({hint})"
            )
        return string_column(f"train[{name!r}]", table.column(name))
    if isinstance(train, Mapping):
        if name not in train:
            raise MissingColumnError(f"train: no key {name!r}; the dict has {list(train)} ({hint})")
        return check_texts(f"train[{name!r}]", train[name])
    raise InvalidOptionError(
        "train: expected a datasets.Dataset, an IterableDataset, a pyarrow.Table, a dict of "
        f"two lists, or an iterable of rows or record batches; got {type(train).__name__}"
    )


def _translation_side(train: object, lang: str) -> Column:
    """One language of a ``translation`` column: its struct's child, or the dicts' values."""
    table = _table(train)
    name = f"train['translation.{lang}']"
    if table is not None:
        if "translation" not in table.column_names:
            raise MissingColumnError(
                f"train: no column 'translation'; the dataset has {table.column_names} "
                "(source_lang/target_lang name its languages)"
            )
        pairs = table.column("translation")
        if not pa.types.is_struct(pairs.type) or pairs.type.get_field_index(lang) < 0:
            raise MissingColumnError(f"train['translation']: no {lang!r} text ({pairs.type})")
        import pyarrow.compute as pc

        return string_column(name, pc.struct_field(pairs, lang))
    if not isinstance(train, Mapping):
        _column(train, "translation", "")  # the error for what is not a corpus
    assert isinstance(train, Mapping)
    if "translation" not in train:
        raise MissingColumnError(
            f"train: no key 'translation'; the dict has {list(train)} "
            "(source_lang/target_lang name its languages)"
        )
    pairs = train["translation"]
    if isinstance(pairs, str | bytes) or not isinstance(pairs, Sequence):
        raise InputTextError(f"train['translation']: expected a list of dicts, got {pairs!r:.60}")
    side = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, Mapping) or lang not in pair:
            raise MissingColumnError(f"train['translation'][{i}]: no {lang!r} text in {pair!r:.80}")
        side.append(pair[lang])
    return check_texts(name, side)


class TrainingCorpus:
    """Training pairs as two aligned columns (lists, or Arrow string columns read in
    place), with a content fingerprint.

    >>> TrainingCorpus.from_any({"source": ["a house"], "target": ["ein Haus"]}).num_rows
    1
    """

    def __init__(
        self,
        sources: Column,
        targets: Column,
        dataset: object = None,
        columns: dict[str, Any] | None = None,
    ) -> None:
        """``dataset``: the Dataset the columns were read from, ``columns`` how (its
        column names or languages): tasks on other machines reopen it by its files,
        and its Arrow file is read as a stream of batches where it can be."""
        if is_arrow(sources) or is_arrow(targets):
            sources = string_column("train sources", sources)
            targets = string_column("train targets", targets)
        else:
            sources = check_texts("train sources", sources)
            targets = check_texts("train targets", targets)
        check_aligned("train sources", sources, "train targets", targets)
        if not len(sources):
            raise EmptyCorpusError("train: the training corpus is empty")
        self.source_column: Column = sources
        self.target_column: Column = targets
        self.dataset: Any = dataset
        self.columns = columns or {}
        self.files = None if dataset is None else dataset_files(dataset)

    def __eq__(self, other: object) -> bool:
        """The same pairs in the same order, however they are held."""
        if not isinstance(other, TrainingCorpus):
            return NotImplemented
        if self.num_rows != other.num_rows:
            return False
        return all(
            all(x[i] == y[i] for i in range(self.num_rows))
            for x, y in zip(self.whole(), other.whole(), strict=True)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        kind = "arrow" if self.is_arrow else "lists"
        return f"TrainingCorpus({self.num_rows} rows, {kind})"

    @property
    def num_rows(self) -> int:
        return len(self.source_column)

    @property
    def is_arrow(self) -> bool:
        return is_arrow(self.source_column)

    def block(self, start: int, stop: int) -> Block:
        """Rows ``[start, stop)`` as the core reads them (Arrow: in place)."""
        if self.is_arrow:
            return (
                arrow_texts(self.source_column, start, stop, "train_sources"),
                arrow_texts(self.target_column, start, stop, "train_targets"),
            )
        return self.source_column[start:stop], self.target_column[start:stop]

    def whole(self) -> Block:
        """Every row, as the core reads them (for an index build)."""
        return self.block(0, self.num_rows)

    def known_rows(self) -> int | None:
        """The row count if it is known without reading the corpus."""
        return self.num_rows

    def blocks(self, rows: int, start: int = 0, stop: int | None = None) -> Iterator[Block]:
        """Rows ``[start, stop)`` in blocks of ``rows``. A pass from the first row over a
        memory-mapped Dataset reads its file as a stream; a range further in (a
        shard) slices the map, which touches only the range's pages."""
        if self.files is not None and start == 0:
            for src, tgt, first in self.files.blocks(rows, self._sides, start, stop):
                yield (
                    arrow_texts(src, 0, len(src), "train_sources", first),
                    arrow_texts(tgt, 0, len(tgt), "train_targets", first),
                )
            return
        stop = self.num_rows if stop is None else min(stop, self.num_rows)
        for first in range(start, stop, rows):
            yield self.block(first, min(first + rows, stop))

    def _sides(self, table: pa.Table) -> tuple[pa.ChunkedArray, pa.ChunkedArray]:
        """The two sides of a table of the Dataset's batches, read as from the Dataset."""
        sides = TrainingCorpus.from_any(table, **self.columns)
        return sides.source_column, sides.target_column

    @cached_property
    def fingerprint(self) -> str:
        """XXH3-128 of the pairs in row order (32 hexadecimal characters)."""
        hasher = _core.CorpusFingerprint()
        with progress("fingerprinting", self.known_rows()) as advance:
            for sources, targets in self.blocks(_FINGERPRINT_ROWS):
                hasher.update(sources, targets)
                advance(len(sources))
        return hasher.hexdigest()

    def sources_at(self, rows: Sequence[int]) -> dict[int, str]:
        return texts_at(self.source_column, rows)

    def targets_at(self, rows: Sequence[int]) -> dict[int, str]:
        return texts_at(self.target_column, rows)

    @cached_property
    def sources(self) -> list[str]:
        """Every source as a Python list (made on first use, for small corpora)."""
        return _as_list(self.source_column)

    @cached_property
    def targets(self) -> list[str]:
        return _as_list(self.target_column)

    @classmethod
    def from_any(
        cls,
        train: object,
        source_column: str = "source",
        target_column: str = "target",
        source_lang: str | None = None,
        target_lang: str | None = None,
    ) -> TrainingCorpus:
        """Read a training corpus; every error names ``train``, the column and the row."""
        if isinstance(train, TrainingCorpus):
            return train
        _refuse_dict_of_splits(train)
        if (source_lang is None) != (target_lang is None):
            raise InvalidOptionError("source_lang and target_lang: give both or neither")
        if source_lang is not None and target_lang is not None:
            src, tgt = _translation_side(train, source_lang), _translation_side(train, target_lang)
        else:
            src = _column(train, source_column, "set source_column, or source_lang/target_lang")
            tgt = _column(train, target_column, "set target_column, or source_lang/target_lang")
        columns = {
            "source_column": source_column,
            "target_column": target_column,
            "source_lang": source_lang,
            "target_lang": target_lang,
        }
        return cls(src, tgt, train if _is_dataset(train) else None, columns)


def _as_list(column: Column) -> list[str]:
    if is_arrow(column):
        values: list[str] = column.to_pylist()  # type: ignore[union-attr]
        return values
    return list(column)


class TrainingStream:
    """A training corpus read once, block by block, fingerprinted on the way.

    ``rows``: an ``IterableDataset`` (read as Arrow batches), an iterable of Arrow
    record batches or tables, or an iterable of ``{source, target}`` rows.
    ``num_rows`` and ``fingerprint`` are known once ``blocks`` has been read to
    its end (a streamed corpus is never held whole). An iterator is read once; an
    ``IterableDataset`` or a list is read again each time it is needed.

    >>> stream = TrainingStream(iter([{"source": "a house", "target": "ein Haus"}]))
    >>> [len(s) for s, _ in stream.blocks(10)], stream.num_rows
    ([1], 1)
    """

    def __init__(
        self,
        rows: Iterable[Any],
        source_column: str = "source",
        target_column: str = "target",
        source_lang: str | None = None,
        target_lang: str | None = None,
    ) -> None:
        self.rows = rows
        self.names = (source_column, target_column)
        self.langs = (source_lang, target_lang)
        self._rows_read: int | None = None
        self._fingerprint: str | None = None

    @property
    def num_rows(self) -> int:
        if self._rows_read is None:
            raise InvalidOptionError("train: a streamed corpus is counted only once it is read")
        return self._rows_read

    def known_rows(self) -> int | None:
        return self._rows_read

    def sources_at(self, rows: Sequence[int]) -> dict[int, str]:
        """The sources of some rows, read again (an iterator cannot be)."""
        return texts_in_blocks(self.blocks(1 << 16), 0, rows)

    def targets_at(self, rows: Sequence[int]) -> dict[int, str]:
        return texts_in_blocks(self.blocks(1 << 16), 1, rows)

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            raise InvalidOptionError("train: a streamed corpus is fingerprinted as it is read")
        return self._fingerprint

    def _batches(self, rows: int) -> Iterator[object]:
        """The stream as Arrow tables or lists of rows, about ``rows`` at a time."""
        source = self.rows
        if hasattr(source, "with_format") and hasattr(source, "iter"):  # an IterableDataset
            yield from source.with_format("arrow").iter(batch_size=rows)
            return
        items = iter(source)
        while first := list(islice(items, 1)):
            if isinstance(first[0], pa.RecordBatch | pa.Table):
                yield first[0]  # Arrow: one batch at a time, whatever its size
            else:
                yield first + list(islice(items, rows - 1))

    def _columns(self, batch: object, first_row: int) -> tuple[Column, Column]:
        if isinstance(batch, pa.RecordBatch):
            batch = pa.Table.from_batches([batch])
        if not isinstance(batch, pa.Table):
            assert isinstance(batch, list)
            for i, row in enumerate(batch, start=first_row):
                if not isinstance(row, Mapping):
                    raise InputTextError(
                        f"train[{i}]: expected a row (a dict) or an Arrow record batch, "
                        f"got {type(row).__name__}"
                    )
            keys = ["translation"] if self.langs[0] is not None else self.names
            batch = {name: [row.get(name) for row in batch] for name in keys}
        corpus = TrainingCorpus.from_any(batch, *self.names, *self.langs)
        return corpus.source_column, corpus.target_column

    def blocks(self, rows: int) -> Iterator[Block]:
        """The rows in blocks of about ``rows``, each read in place where it is Arrow;
        errors name the global row. Readable once."""
        if self._rows_read is not None and iter(self.rows) is self.rows:
            raise InvalidOptionError("train: this stream (an iterator) has been read already")
        hasher = _core.CorpusFingerprint()
        count = 0
        for batch in self._batches(rows):
            try:
                src, tgt = self._columns(batch, count)
            except EmptyCorpusError:
                continue
            except (InputTextError, MissingColumnError) as exc:
                raise type(exc)(_at_row(str(exc), count)) from exc
            n = len(src)
            block: Block = (src, tgt)
            if is_arrow(src):
                block = (
                    arrow_texts(src, 0, n, "train_sources", count),
                    arrow_texts(tgt, 0, n, "train_targets", count),
                )
            hasher.update(*block)
            count += n
            yield block
        if not count:
            raise EmptyCorpusError("train: the streamed training corpus is empty")
        self._rows_read, self._fingerprint = count, hasher.hexdigest()


def texts_in_blocks(blocks: Iterable[Block], side: int, rows: Sequence[int]) -> dict[int, str]:
    """The texts of some rows (by row) of one side (0: sources, 1: targets), read
    from blocks of a corpus in row order, stopping after the last one wanted."""
    wanted, found, row, at = sorted(set(rows)), {}, 0, 0
    for block in blocks:
        texts = block[side]
        while at < len(wanted) and wanted[at] < row + len(texts):
            found[wanted[at]] = texts[wanted[at] - row]
            at += 1
        row += len(texts)
        if at == len(wanted):
            break
    return found


def read_ahead(blocks: Iterable[Block]) -> Generator[Block, None, None]:
    """``blocks``, each read on a second thread while the caller works on the one
    before: the core audits a block without the GIL, so reading files, splitting
    their lines and streaming a dataset overlap the audit instead of leaving its
    threads idle. A reading error is raised where the block it stops would have
    been; the blocks are read in order, one at a time, at most one ahead.

    >>> list(read_ahead([(["a"], ["b"]), (["c"], ["d"])]))
    [(['a'], ['b']), (['c'], ['d'])]
    """
    from concurrent.futures import ThreadPoolExecutor, wait

    source = iter(blocks)
    with ThreadPoolExecutor(1, "tame-mt-read") as reader:
        pending = reader.submit(next, source, None)
        try:
            while (block := pending.result()) is not None:
                pending = reader.submit(next, source, None)
                yield block
        finally:
            # A generator cannot be closed while the reader runs it.
            wait([pending])
            close = getattr(source, "close", None)
            if close is not None:
                close()


def _at_row(message: str, first_row: int) -> str:
    """A batch's error with its row made global: ``name[i]`` -> ``name[first_row + i]``."""
    import re

    if not first_row:
        return message
    return re.sub(r"\[(\d+)\]", lambda m: f"[{first_row + int(m.group(1))}]", message, count=1)


def training_corpus(train: object, **columns: Any) -> TrainingCorpus | TrainingStream:
    """A corpus from whatever a user holds: streamed when it is an IterableDataset or
    an iterable of rows or record batches, else read whole (``TrainingCorpus``)."""
    if isinstance(train, TrainingCorpus | TrainingStream):
        return train
    _refuse_dict_of_splits(train)
    # An IterableDataset, a list of rows or batches, a generator: read as a stream.
    if (
        isinstance(train, Iterable)
        and not isinstance(train, Mapping | str | bytes | pa.Table)
        and not _is_dataset(train)
    ):
        return TrainingStream(train, **columns)
    return TrainingCorpus.from_any(train, **columns)
