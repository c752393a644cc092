"""spBLEU: BLEU over the pieces of the FLORES SentencePiece models, offline.

The model is the file given by the ``spm_model`` option, else by
``TAME_MT_SPM_MODEL``, else the one sacrebleu keeps in its cache
(``$SACREBLEU/models/``; sacrebleu would download it, which cannot happen
offline). Its sha256 goes into the signature, with ``official`` when it is the
published FLORES-200 model and ``custom`` otherwise (a different model is
allowed, and named as such).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from sacrebleu.metrics.bleu import BLEU
from sacrebleu.tokenizers.tokenizer_base import BaseTokenizer

from tame_mt_metric.errors import InvalidOptionError, MissingModelError
from tame_mt_metric.report.sacrebleu_internals import hold_references

__all__ = ["MODEL_ENV", "OFFICIAL_MODELS", "SpmModel", "find_model", "spbleu_metric"]

MODEL_ENV = "TAME_MT_SPM_MODEL"
MEMO_LINES = 1 << 16  # tokenised lines remembered (sacrebleu's own cache size)


@dataclass(frozen=True)
class OfficialModel:
    file: str  # the name sacrebleu gives it in its cache
    nbytes: int | None
    sha256: str | None  # None: no published checksum known here


OFFICIAL_MODELS = {
    "flores200": OfficialModel(
        "flores200sacrebleuspm",
        4_852_054,
        "14bb8dfb35c0ffdea7bc01e56cea38b9e3d5efcdcb9c251d6b40538e1aab555a",
    ),
    "flores101": OfficialModel("sacrebleu_tokenizer_spm.model", None, None),
}


@dataclass(frozen=True)
class SpmModel:
    """A SentencePiece model file for spBLEU and what is known of it."""

    kind: str
    path: Path
    sha256: str

    @property
    def official(self) -> bool | None:
        """True for the published model, False for another, None when unknown."""
        expected = OFFICIAL_MODELS[self.kind].sha256
        return None if expected is None else self.sha256 == expected

    def signature(self) -> str:
        state = {True: "official", False: "custom", None: "unverified"}[self.official]
        return f"{self.kind}_sha256-{self.sha256[:12]}_{state}"


def default_path(kind: str) -> Path:
    from sacrebleu.utils import SACREBLEU_DIR

    return Path(SACREBLEU_DIR) / "models" / OFFICIAL_MODELS[kind].file


@cache
def _sha256(path: Path, size: int, mtime: float) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def find_model(kind: str = "flores200", path: str | Path | None = None) -> SpmModel:
    """The model for ``kind`` (``flores200`` or ``flores101``); a missing file is a
    ``MissingModelError`` that says which file to place where."""
    if kind not in OFFICIAL_MODELS:
        raise InvalidOptionError(
            f"spbleu_tokenize: expected one of {sorted(OFFICIAL_MODELS)}, got {kind!r}"
        )
    given = path if path is not None else os.environ.get(MODEL_ENV) or None
    where = Path(given) if given is not None else default_path(kind)
    if not where.is_file():
        official = OFFICIAL_MODELS[kind]
        facts = f" ({official.nbytes:,} bytes, sha256 {official.sha256})" if official.sha256 else ""
        source = f"given by {'spm_model' if path is not None else MODEL_ENV}" if given else ""
        raise MissingModelError(
            f"spBLEU ({kind}) needs its SentencePiece model and {where} does not exist"
            f"{' (' + source + ')' if source else ''}: place the official {official.file}"
            f"{facts} at {default_path(kind)}, or give its path with the spm_model option "
            f"or the {MODEL_ENV} environment variable"
        )
    stat = where.stat()
    return SpmModel(kind, where, _sha256(where.resolve(), stat.st_size, stat.st_mtime))


class SpmTokenizer(BaseTokenizer):
    """sacrebleu's SentencePiece tokenizer, loaded from a given file."""

    def __init__(self, model: SpmModel) -> None:
        import sentencepiece

        self.model = model
        self._sp = sentencepiece.SentencePieceProcessor(model_file=str(model.path))
        self._memo: dict[str, str] = {}

    def signature(self) -> str:
        return self.model.kind

    def __call__(self, line: str) -> str:
        pieces = self._memo.get(line)
        if pieces is None:
            if len(self._memo) >= MEMO_LINES:
                self._memo.clear()
            pieces = self._memo[line] = " ".join(self._sp.encode(line, out_type=str))
        return pieces


def spbleu_metric(model: SpmModel, references: Any = None) -> BLEU:
    """sacrebleu's BLEU with the model's pieces as tokens (what ``tokenize="flores200"``
    computes when the model sits in sacrebleu's cache)."""
    metric = BLEU(tokenize="none")
    metric.tokenizer = SpmTokenizer(model)
    metric.tokenizer_signature = model.kind
    if references is not None:
        hold_references(metric, references)
    return metric
