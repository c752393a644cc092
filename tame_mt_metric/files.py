"""Files the package reads and writes, checked and written one way.

Reading: every path is checked to be a regular file (or a folder where one is
expected) before it is opened, so that no read blocks on a FIFO or reads a
device without end; small files (manifests, sidecars) are read up to a bound.
Writing: ``atomic_path`` gives a temporary name unique to the process and the
thread, beside the destination; the content is flushed to disk and renamed
into place, then the folder itself is flushed, so a reader (or a crash) sees
the old file or the whole new one, never a part; ``atomic_folder`` does the
same for a new folder, renamed into place whole; a folder another process
renamed into place first is an ``OutputExistsError``.
Outputs against inputs: ``refuse_overwrites`` is the one rule that keeps a
command from writing over what it reads (``cli/path_options.py`` applies it
to every command, from the roles its options declare).
"""

from __future__ import annotations

import errno
import gzip
import os
import shutil
import stat
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

if TYPE_CHECKING:
    import pyarrow as pa

from tame_mt_metric.errors import (
    DiskFullError,
    InputTooLargeError,
    InvalidOptionError,
    OutputExistsError,
    OutputPathError,
    SpecialFileError,
)

__all__ = [
    "LINE_LIMIT_ENV",
    "MAX_SMALL_FILE",
    "NamedPath",
    "atomic_folder",
    "atomic_path",
    "fsync_file",
    "fsync_folder",
    "limit_of",
    "line_limit",
    "line_too_long",
    "output_stream",
    "read_small",
    "refuse_overwrites",
    "regular_file",
    "rename_folder",
    "temporary_name",
    "write_arrow",
]

# Manifests, sidecars and other JSON the package writes stay far below this.
MAX_SMALL_FILE = 64 << 20

# The longest input line read, in bytes (1 MiB unless this variable, or the
# command line's --max-line-bytes, says otherwise): a longer line (a binary
# file, a gzip bomb of one endless line) is an error as soon as it is seen, so
# no read holds more than this of one line.
LINE_LIMIT_ENV = "TAME_MT_MAX_LINE_BYTES"
DEFAULT_LINE_LIMIT = 1 << 20
_MAX_LINE_LIMIT = 1 << 31


def limit_of(variable: str, default: int, maximum: int) -> int:
    """A limit set by an environment variable (``default`` when unset), checked."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    if not text.isdigit() or not 1 <= int(text) <= maximum:
        raise InvalidOptionError(f"{variable}: expected a number in [1, {maximum:,}], got {text!r}")
    return int(text)


def line_limit() -> int:
    """The longest input line allowed, in bytes (``TAME_MT_MAX_LINE_BYTES``)."""
    return limit_of(LINE_LIMIT_ENV, DEFAULT_LINE_LIMIT, _MAX_LINE_LIMIT)


def line_too_long(where: str) -> InputTooLargeError:
    limit = line_limit()
    return InputTooLargeError(
        f"{where}: a line longer than {limit:,} bytes (the line limit; --max-line-bytes "
        f"or {LINE_LIMIT_ENV} raises it)"
    )


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def regular_file(path: str | Path, what: str = "", error: type[Exception] | None = None) -> Path:
    """``path``, once it is known to name a regular file (a symlink is followed);
    a FIFO, device, socket or folder is a ``SpecialFileError`` and a missing path a
    ``FileNotFoundError`` (either one ``error`` instead, when given: an artifact's
    own error), each naming ``what`` (an option or argument) and the path."""
    p = Path(path)
    where = f"{what}: {p}" if what else str(p)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise (error or FileNotFoundError)(f"{where}: no such file") from None
    except OSError as exc:
        raise (error or SpecialFileError)(f"{where}: cannot be read ({exc.strerror})") from exc
    if stat.S_ISDIR(mode):
        raise (error or SpecialFileError)(f"{where}: a folder, not a file")
    for test, kind in _KINDS:
        if test(mode):
            raise (error or SpecialFileError)(f"{where}: {kind}, not a regular file")
    return p


def read_small(path: str | Path, what: str = "", limit: int = MAX_SMALL_FILE) -> bytes:
    """The bytes of a small regular file, at most ``limit`` of them."""
    p = regular_file(path, what)
    with open(p, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise InputTooLargeError(f"{what + ': ' if what else ''}{p}: over {limit:,} bytes")
    return data


def fsync_file(path: Path) -> None:
    """Flush a file's content to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temporary_name(path: Path) -> Path:
    """A name beside ``path`` (a file or a folder) that no other process or thread
    writes: ``.NAME.tmp-PID-THREAD-RANDOM``."""
    tag = f"{os.getpid()}-{threading.get_ident()}-{uuid.uuid4().hex[:8]}"
    return path.with_name(f".{path.name}.tmp-{tag}")


def fsync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename into it) to disk, where the system can."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# The errors of a write that found no room: a full device, a quota, a file
# size limit.
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


@contextmanager
def _disk_full_named(path: Path) -> Iterator[None]:
    """A write of ``path`` that finds its device full is a ``DiskFullError``
    naming the folder (an ``OSError`` names, at best, a temporary file)."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in _NO_ROOM or isinstance(exc, DiskFullError):
            raise
        full = DiskFullError(
            f"{path.parent}: no space left to write {path.name} ({os.strerror(exc.errno)}); "
            "nothing half-written was left there"
        )
        full.errno = exc.errno
        raise full from exc


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path to write ``path``'s content to (its folder made where
    missing); when the block ends, the content is flushed and renamed into
    place. On an error nothing is left (a full device: a ``DiskFullError``
    naming the folder)."""
    tmp = temporary_name(path)
    try:
        with _disk_full_named(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            yield tmp
            fsync_file(tmp)
            os.replace(tmp, path)
            fsync_folder(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def output_stream(destination: Path, tmp: Path) -> Iterator[BinaryIO]:
    """``tmp`` open for writing bytes, compressed when ``destination``'s name ends
    in ``.gz``, with no name or time in the gzip header: the same content gives
    the same file (and the temporary name is not written into it)."""
    with open(tmp, "wb") as raw:
        if destination.suffix != ".gz":
            yield raw
            return
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
            yield cast(BinaryIO, packed)


@contextmanager
def atomic_folder(path: Path) -> Iterator[Path]:
    """A temporary path for a folder that becomes ``path`` (which must not exist)
    when the block ends: its files flushed, the folder renamed into place whole.
    On an error nothing is left."""
    tmp = temporary_name(path)
    try:
        with _disk_full_named(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            yield tmp
            for member in tmp.rglob("*"):
                if member.is_file():
                    fsync_file(member)
            fsync_folder(tmp)
            rename_folder(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def rename_folder(tmp: Path, path: Path) -> None:
    """``tmp`` renamed to ``path`` whole, the rename flushed; where another process
    renamed its folder to ``path`` first, an ``OutputExistsError`` (``tmp`` stays
    for the caller to remove)."""
    try:
        os.rename(tmp, path)
    except OSError as exc:
        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            raise
        raise OutputExistsError(
            f"{path}: another process wrote this folder first; it is left as that "
            "process wrote it (remove it, or choose another, to write it anew)"
        ) from exc
    fsync_folder(path.parent)


def write_arrow(path: Path, table: pa.Table) -> None:
    """``table`` as one Arrow IPC file at ``path``, whole (``atomic_path``)."""
    import pyarrow as pa

    with (
        atomic_path(path) as tmp,
        pa.OSFile(str(tmp), "wb") as sink,
        pa.ipc.new_file(sink, table.schema) as writer,
    ):
        writer.write_table(table)


@dataclass(frozen=True)
class NamedPath:
    """A path a command reads or writes, and the option (or argument) naming it;
    ``given``: the value given, where the path is a file the option stands for
    (a sidecar beside it, a report in the folder it names)."""

    option: str
    path: Path
    given: Path | None = None

    def __str__(self) -> str:
        if self.given is None or self.given == self.path:
            return f"{self.option} {self.path}"
        return f"{self.option} {self.given} (its {self.path})"

    @property
    def real(self) -> Path:
        """The path with every symlink and ``..`` resolved (for a path that does not
        exist yet, as far as it does)."""
        return Path(os.path.realpath(self.path))

    def identity(self) -> tuple[int, int] | None:
        """(device, inode) of the file or folder at the path, None where there is none."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def same(self, other: NamedPath) -> bool:
        """The two name one file: one real path, or one inode (a hard link)."""
        if self.real == other.real:
            return True
        mine = self.identity()
        return mine is not None and mine == other.identity()

    def inside(self, folder: NamedPath) -> bool:
        """This path lies in ``folder`` (an existing folder), by real path, or, for a
        file with several names, as a hard link to one of the folder's files."""
        if not folder.real.is_dir():
            return False
        if folder.real in self.real.parents:
            return True
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        if st.st_nlink < 2 or stat.S_ISDIR(st.st_mode):
            return False
        mine = (st.st_dev, st.st_ino)
        for root, _, files in os.walk(folder.real):
            for name in files:
                found = NamedPath(folder.option, Path(root, name)).identity()
                if found == mine:
                    return True
        return False


def refuse_overwrites(reads: Sequence[NamedPath], writes: Sequence[NamedPath]) -> None:
    """The rule that keeps a command from destroying its own inputs, checked before
    any work: no written path may name a file that is read (after symlinks, ``..``
    and hard links), lie inside a folder that is read (a saved index, a dataset,
    the cache), or be a folder holding what is read; nor may two outputs name one
    file. The first breach is an ``OutputPathError`` naming both options and the
    path; nothing has been written."""
    for i, out in enumerate(writes):
        for earlier in writes[:i]:
            if out.same(earlier):
                raise OutputPathError(
                    f"{out}: the same file as {earlier}; "
                    "each output needs a path of its own (nothing was written)"
                )
        for read in reads:
            if out.same(read):
                raise OutputPathError(
                    f"{out}: the same file as {read}, which "
                    "this command reads; an output may not replace an input (nothing was written)"
                )
            if out.inside(read):
                raise OutputPathError(
                    f"{out}: inside {read}, which this "
                    "command reads; write outputs elsewhere (nothing was written)"
                )
            if read.inside(out):
                raise OutputPathError(
                    f"{out}: holds {read}, which this "
                    "command reads; write outputs elsewhere (nothing was written)"
                )
