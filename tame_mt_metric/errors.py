"""The package's exceptions: one root, leaves that also subclass the built-in
they resemble, so ``except ValueError`` keeps working."""

from __future__ import annotations

__all__ = [
    "CacheWarning",
    "CoreImportError",
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
    "SegmentFileError",
    "SpecialFileError",
    "TameError",
    "UndefinedCorrelationError",
]


class TameError(Exception):
    """Root of every error raised by tame_mt_metric."""


class CoreImportError(TameError, ImportError):
    """The compiled core (the ``tame-mt-core`` distribution) is not installed, or
    is of another version than this package needs."""


class InvalidOptionError(TameError, ValueError):
    """An option or argument has a value outside its domain."""


class MisalignedInputError(TameError, ValueError):
    """Inputs that must be aligned differ: line-aligned inputs have different lengths,
    or keyed inputs (directions) cover different keys."""


class EmptyCorpusError(TameError, ValueError):
    """The training corpus has no rows."""


class InputTextError(TameError, ValueError):
    """An input item is not text (None, bytes, a number), a file is not valid UTF-8,
    or a row of a score table is malformed (wrong column count, a score out of
    range, an empty field, a repeated rating)."""


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


class IndexFileError(TameError, ValueError):
    """A saved index is missing, truncated, corrupted, foreign or of another format."""


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
