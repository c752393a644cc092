"""The package's exceptions: one root, leaves that also subclass the built-in
they resemble, so ``except ValueError`` keeps working.

The root, ``TameError``, and the errors the core raises (``InvalidOptionError``,
``MisalignedInputError``, ``InputTextError``, ``EmptyCorpusError``,
``IndexFileError``) are created by the compiled core, ``tame_mt_core``, and
re-exported here; the others are the package's own, defined on that root."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = [
    "CacheWarning",
    "CoreImportError",
    "DiskFullError",
    "EmptyCorpusError",
    "EmptyTestSetError",
    "IndexFileError",
    "InputTextError",
    "InputTooLargeError",
    "InvalidOptionError",
    "LossySourcesWarning",
    "MisalignedInputError",
    "MissingColumnError",
    "MissingModelError",
    "OutputExistsError",
    "OutputPathError",
    "SegmentFileError",
    "SpecialFileError",
    "TameError",
    "UndefinedCorrelationError",
]


def _stand_in(name: str, *bases: type) -> type:
    """A class named as one of the core's, for a process without a usable core."""
    return type(name, bases, {"__doc__": f"Stands in for tame_mt_core.{name}: no usable core."})


if TYPE_CHECKING:
    from tame_mt_core import (
        EmptyCorpusError,
        IndexFileError,
        InputTextError,
        InvalidOptionError,
        MisalignedInputError,
        TameError,
    )
else:
    try:
        from tame_mt_core import (
            EmptyCorpusError,
            IndexFileError,
            InputTextError,
            InvalidOptionError,
            MisalignedInputError,
            TameError,
        )
    except ImportError:
        # No core, or one without its errors: importing the package raises
        # CoreImportError (``_version.check_core``) before anything else runs,
        # and these stand-ins let it be made.
        TameError = _stand_in("TameError", Exception)
        EmptyCorpusError = _stand_in("EmptyCorpusError", TameError, ValueError)
        IndexFileError = _stand_in("IndexFileError", TameError, ValueError)
        InputTextError = _stand_in("InputTextError", TameError, ValueError)
        InvalidOptionError = _stand_in("InvalidOptionError", TameError, ValueError)
        MisalignedInputError = _stand_in("MisalignedInputError", TameError, ValueError)

# Users meet the core's classes here: tracebacks, doctests and pickles name this
# module, where they are imported from (as numpy's ``set_module`` does).
for _made_by_core in (
    TameError,
    EmptyCorpusError,
    IndexFileError,
    InputTextError,
    InvalidOptionError,
    MisalignedInputError,
):
    _made_by_core.__module__ = __name__
del _made_by_core


class CoreImportError(TameError, ImportError):
    """The compiled core (the ``tame-mt-core`` distribution) is not installed, or
    is of another version than this package needs."""


class OutputPathError(InvalidOptionError):
    """An output path names what the same command reads (a file, after symlinks,
    ``..`` and hard links; or a file inside a folder it reads: a saved index, a
    dataset, the cache), a folder holding an input, or another output of the
    command. Refused before any work, so nothing is written; the message names
    both options and the path."""


class DiskFullError(TameError, OSError):
    """An output or cache entry could not be written whole: its folder's device
    is full (or the write passed a quota or file size limit). The message names
    the folder; the temporary copy is removed, so nothing half-written stays."""


class OutputExistsError(TameError, FileExistsError):
    """A folder was to be renamed into place whole, but another process wrote
    that folder first (two ``index build --out DIR`` at once): that folder is
    left as its writer made it, and this process's copy is removed."""


class InputTooLargeError(TameError, ValueError):
    """An input passes a bound set against absurd work: a line longer than the line
    limit (a gzip bomb, a binary file), a file larger than its kind allows, or a
    test set larger than its limit. The message names the input and the limit."""


class SpecialFileError(TameError, ValueError):
    """A path names a FIFO, a device, a socket or a folder where a regular file is
    read (such a read could block or never end), or cannot be examined."""


class EmptyTestSetError(TameError, ValueError):
    """The test set has no items."""


class MissingColumnError(TameError, ValueError):
    """A training dataset lacks a column the options name."""


class SegmentFileError(TameError, ValueError):
    """A segment diagnostics file or its sidecar is unreadable, damaged, made by
    another version, or differs from what it was written with."""


class CacheWarning(UserWarning):
    """A cached entry (index or audit) could not be trusted and was rebuilt."""


class LossySourcesWarning(UserWarning):
    """Sources decoded from token ids (a Trainer's inputs) are not the texts that
    were encoded: unknown tokens, or text changed on the way."""


class MissingModelError(TameError, FileNotFoundError):
    """A model file a metric needs (spBLEU's SentencePiece model) is not where it is looked for."""


class UndefinedCorrelationError(TameError, ValueError):
    """Too few pairs, or one side constant: a correlation coefficient is not defined."""
