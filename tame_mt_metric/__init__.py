"""tame-mt-metric: how much of an MT system's score is earned on test items
close to its training data? Exact training-data exposure (character n-gram
Jaccard), translation-memory baselines and exposure bins."""

from __future__ import annotations

from tame_mt_metric import reference
from tame_mt_metric._core import __version__ as core_version
from tame_mt_metric.config import RetrievalConfig
from tame_mt_metric.errors import (
    EmptyCorpusError,
    InputTextError,
    InvalidOptionError,
    MisalignedInputError,
    TameError,
)
from tame_mt_metric.exposure import (
    Exposures,
    ItemExposure,
    Neighbour,
    StreamingAudit,
    TrainingIndex,
    find_exposures,
    stream_exposures,
)
from tame_mt_metric.grams import count_grams, grams, normalize

__version__ = "0.1.0"

__all__ = [
    "EmptyCorpusError",
    "Exposures",
    "InputTextError",
    "InvalidOptionError",
    "ItemExposure",
    "MisalignedInputError",
    "Neighbour",
    "RetrievalConfig",
    "StreamingAudit",
    "TameError",
    "TrainingIndex",
    "__version__",
    "core_version",
    "count_grams",
    "find_exposures",
    "grams",
    "normalize",
    "reference",
    "stream_exposures",
]
