"""tame-mt-metric: how much of an MT system's score is earned on test items
close to its training data? Exact training-data exposure (character n-gram
Jaccard), translation-memory baselines, exposure bins and the TAME report, as
an ``evaluate`` metric (``evaluate.load("tame_mt")``) and a Python API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tame_mt_metric._version import __version__, check_core

# Before any module that imports the compiled core: a missing or mismatched
# core is one clear CoreImportError, not a failure deep in some import.
check_core()

from tame_mt_core import __version__ as core_version

from tame_mt_metric.errors import (
    CacheWarning,
    CoreImportError,
    EmptyCorpusError,
    EmptyTestSetError,
    IndexFileError,
    InputTextError,
    InputTooLargeError,
    InvalidOptionError,
    LossySourcesWarning,
    MisalignedInputError,
    MissingColumnError,
    OutputExistsError,
    OutputPathError,
    SegmentFileError,
    SpecialFileError,
    TameError,
)
from tame_mt_metric.loading import LOADING_SCRIPT, load
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.decontaminate import decontaminate
from tame_mt_metric.retrieval import reference
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.corpus import TrainingCorpus, TrainingStream
from tame_mt_metric.retrieval.decontaminate import Decontamination, RemovedPair
from tame_mt_metric.retrieval.exposure import (
    Exposures,
    ItemExposure,
    Neighbour,
    StreamingAudit,
    TrainingIndex,
    find_exposures,
    stream_exposures,
)
from tame_mt_metric.retrieval.grams import count_grams, grams, normalize
from tame_mt_metric.retrieval.text_files import TextFiles

if TYPE_CHECKING:
    from tame_mt_metric.report.pipeline import ItemizedReport, score_tame
    from tame_mt_metric.report.significance import Comparison, compare


def __getattr__(name: str) -> Any:
    # Scoring pulls in sacrebleu and pyarrow: imported on first use only, so
    # that exposure audits start fast.
    if name in ("ItemizedReport", "score_tame"):
        from tame_mt_metric.report import pipeline

        return getattr(pipeline, name)
    if name in ("Comparison", "compare"):
        from tame_mt_metric.report import significance

        return getattr(significance, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "LOADING_SCRIPT",
    "CacheWarning",
    "Comparison",
    "CoreImportError",
    "Decontamination",
    "EmptyCorpusError",
    "EmptyTestSetError",
    "Exposures",
    "IndexFileError",
    "InputTextError",
    "InputTooLargeError",
    "InvalidOptionError",
    "ItemExposure",
    "ItemizedReport",
    "LossySourcesWarning",
    "MisalignedInputError",
    "MissingColumnError",
    "Neighbour",
    "OutputExistsError",
    "OutputPathError",
    "RemovedPair",
    "RetrievalConfig",
    "SegmentFileError",
    "SpecialFileError",
    "StreamingAudit",
    "TameConfig",
    "TameError",
    "TextFiles",
    "TrainingCorpus",
    "TrainingIndex",
    "TrainingStream",
    "__version__",
    "compare",
    "core_version",
    "count_grams",
    "decontaminate",
    "find_exposures",
    "grams",
    "load",
    "normalize",
    "reference",
    "score_tame",
    "stream_exposures",
]
