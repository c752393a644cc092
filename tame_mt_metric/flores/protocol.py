"""The FLORES-200 protocol of the NLLB paper: the dataset's layout and
languages, scoring system outputs for every direction (spBLEU, chrF++ corpus
and sentence-average, and the TAME fields when a training corpus is given),
tables by direction group, and a contamination audit of a training corpus.

The dataset: ``<root>/{dev,devtest}/<code>.<split>``, one sentence per line,
line-aligned across languages (997 dev and 1,012 devtest sentences in the
full release). System outputs: one file per direction,
``<source>-<target>.<split>.hyp`` (e.g. ``eng_Latn-swh_Latn.devtest.hyp``).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from statistics import fmean
from typing import Any

from tame_mt_metric.errors import InputTextError, InvalidOptionError, MisalignedInputError
from tame_mt_metric.flores.language_codes import ISO_639_1, ISO_639_2B
from tame_mt_metric.flores.languages import LANGUAGES
from tame_mt_metric.progress import progress
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.exposure_summary import summarize
from tame_mt_metric.report.pipeline import score_tame
from tame_mt_metric.report.scores import Scorers
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tame_mt_metric.retrieval.exposure import StreamingAudit
from tame_mt_metric.retrieval.inputs import iter_lines, read_lines

__all__ = [
    "ENGLISH",
    "FLORES_METRICS",
    "LANGUAGES",
    "SPLITS",
    "FloresData",
    "FloresScores",
    "check_language",
    "contamination",
    "score_directions",
]

ENGLISH = "eng_Latn"
SPLITS = ("dev", "devtest")
FLORES_METRICS = ("spbleu", "chrf++", "chrf++_avg")
GROUPS = ("out_of_english", "into_english", "non_english_centric")
_FROM_ISO_639_1 = {two: three for three, two in ISO_639_1.items()}


def check_language(code: str, where: str = "language") -> str:
    """A FLORES-200 code, or an error that suggests the closest valid ones."""
    if code in LANGUAGES:
        return code
    # The code's own language first, also from ISO 639-1 (de) or 639-2/B (ger):
    # An English name's first letters are often the bibliographic code (German).
    head = re.split(r"[-_\s]", code.strip().lower())[0]
    language = _FROM_ISO_639_1.get(head) or ISO_639_2B.get(head[:3], head[:3])
    close = [c for c in LANGUAGES if c.startswith(f"{language}_")]
    close += [
        c for c in difflib.get_close_matches(code, LANGUAGES, n=3, cutoff=0.5) if c not in close
    ]
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise InvalidOptionError(f"{where}: {code!r} is not a FLORES-200 code (like eng_Latn){hint}")


@dataclass(frozen=True)
class FloresData:
    """A FLORES-200 folder (the release's ``flores200_dataset`` or a slice of it)."""

    root: Path

    @classmethod
    def locate(cls, path: str | Path) -> FloresData:
        root = Path(path)
        if (root / "flores200_dataset").is_dir():
            root = root / "flores200_dataset"
        if not all((root / split).is_dir() for split in SPLITS):
            raise InputTextError(f"{path}: not a FLORES-200 folder (no dev/ and devtest/)")
        return cls(root)

    def path(self, lang: str, split: str) -> Path:
        check_language(lang)
        if split not in SPLITS:
            raise InvalidOptionError(f"split: expected one of {SPLITS}, got {split!r}")
        return self.root / split / f"{lang}.{split}"

    def languages(self, split: str = "devtest") -> list[str]:
        return sorted(
            p.name.removesuffix(f".{split}") for p in (self.root / split).glob(f"*.{split}")
        )

    def metadata(self, split: str = "devtest") -> list[dict[str, str]]:
        """One row per sentence of the split: URL, domain, topic, has_image,
        has_hyperlink (``metadata_<split>.tsv``)."""
        if split not in SPLITS:
            raise InvalidOptionError(f"split: expected one of {SPLITS}, got {split!r}")
        path = self.root / f"metadata_{split}.tsv"
        if not path.is_file():
            raise InputTextError(f"{path}: missing from the FLORES folder")
        header, *rows = read_lines(path)
        names = header.split("\t")
        out = []
        for number, row in enumerate(rows, start=2):
            values = row.split("\t")
            if len(values) != len(names):
                raise InputTextError(
                    f"{path}:{number}: {len(values)} fields, expected {len(names)}"
                )
            out.append(dict(zip(names, values, strict=True)))
        return out

    def sentences(self, lang: str, split: str = "devtest") -> list[str]:
        path = self.path(lang, split)
        if not path.is_file():
            raise InputTextError(f"{path}: missing from the FLORES folder")
        return read_lines(path)


def parse_direction(name: str) -> tuple[str, str, str]:
    """``eng_Latn-swh_Latn.devtest.hyp`` -> ("eng_Latn", "swh_Latn", "devtest")."""
    stem, _, rest = name.partition(".")
    split = rest.removesuffix(".hyp")
    source, dash, target = stem.partition("-")
    if not dash or not rest.endswith("hyp") or split not in SPLITS:
        raise InputTextError(f"{name}: expected <source>-<target>.<dev|devtest>.hyp")
    return check_language(source, name), check_language(target, name), split


def group_of(source: str, target: str) -> str:
    if source == ENGLISH:
        return "out_of_english"
    if target == ENGLISH:
        return "into_english"
    return "non_english_centric"


@dataclass(frozen=True)
class FloresScores:
    """Scores by direction (``src-tgt``) and their averages by direction group."""

    split: str
    metrics: tuple[str, ...]
    directions: dict[str, dict[str, Any]] = field(default_factory=dict)

    def averages(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for group in (*GROUPS, "all"):
            rows = [r for r in self.directions.values() if group == "all" or r["group"] == group]
            if rows:
                out[group] = {m: fmean(r[m] for r in rows) for m in self.metrics}
                out[group]["directions"] = len(rows)
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "metrics": list(self.metrics),
            "directions": {d: _defined(row) for d, row in self.directions.items()},
            "averages": {g: _defined(avg) for g, avg in self.averages().items()},
        }

    def to_json(self) -> str:
        return json.dumps(self.as_json(), indent=1, allow_nan=False)

    def markdown(self) -> str:
        names = [
            *self.metrics,
            *(k for k in ("tm_spbleu", "source_exposure_mean") if k in _keys(self)),
        ]
        head = "| direction | group | " + " | ".join(names) + " |"
        lines = [head, "| --- | --- | " + " | ".join("---:" for _ in names) + " |"]
        for name, row in sorted(self.directions.items()):
            cells = " | ".join(_cell(row.get(n)) for n in names)
            lines.append(f"| {name} | {row['group']} | {cells} |")
        lines += ["", "| group | directions | " + " | ".join(self.metrics) + " |"]
        lines.append("| --- | ---: | " + " | ".join("---:" for _ in self.metrics) + " |")
        for group, avg in self.averages().items():
            cells = " | ".join(_cell(avg[m]) for m in self.metrics)
            lines.append(f"| {group} | {avg['directions']:.0f} | {cells} |")
        return "\n".join(lines)


def _keys(scores: FloresScores) -> set[str]:
    return {k for row in scores.directions.values() for k in row}


def _cell(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else "" if value is None else str(value)


def _defined(row: Mapping[str, Any]) -> dict[str, Any]:
    """JSON values: an undefined score (nan, an empty bin) is null."""
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}


def score_directions(
    flores: FloresData | str | Path,
    outputs: str | Path,
    split: str = "devtest",
    config: TameConfig | None = None,
    train: Mapping[str, TrainingCorpus] | None = None,
) -> FloresScores:
    """Score every ``<src>-<tgt>.<split>.hyp`` file in ``outputs`` against FLORES.

    ``config.metrics`` default to spBLEU, chrF++ and chrF++ sentence-average.
    ``train`` maps a direction (``src-tgt``) to its training corpus; those
    directions also get the TAME fields (the FLORES sources are the test sources).
    """
    data = flores if isinstance(flores, FloresData) else FloresData.locate(flores)
    files = sorted(Path(outputs).glob(f"*.{split}.hyp"))
    if not files:
        raise InputTextError(f"{outputs}: no system outputs named <src>-<tgt>.{split}.hyp")
    config = config or TameConfig(metrics=FLORES_METRICS)
    scores = FloresScores(split, config.metrics)
    with progress("FLORES directions", len(files), unit="directions") as advance:
        for path in files:
            _score_direction(data, path, split, config, train, scores)
            advance(1)
    return scores


def _score_direction(
    data: FloresData,
    path: Path,
    split: str,
    config: TameConfig,
    train: Mapping[str, TrainingCorpus] | None,
    scores: FloresScores,
) -> None:
    """One system output's scores (and TAME fields when its direction has a corpus)."""
    source, target, _ = parse_direction(path.name)
    direction = f"{source}-{target}"
    hyps = read_lines(path)
    refs = data.sentences(target, split)
    if len(hyps) != len(refs):
        raise MisalignedInputError(
            f"{path}: {len(hyps)} lines, the FLORES {split} of {target} has {len(refs)}"
        )
    row: dict[str, Any] = {
        "source": source,
        "target": target,
        "group": group_of(source, target),
    }
    if train is not None and direction in train:
        sources = data.sentences(source, split)
        fields = score_tame(train[direction], hyps, refs, sources, config).report.fields()
        row.update(fields)
    else:
        row.update(Scorers(config, [[r] for r in refs]).statistics(hyps).score())
    scores.directions[direction] = row


def contamination(
    corpus: Mapping[str, str | Path | Iterable[str]],
    flores: FloresData | str | Path,
    splits: Sequence[str] = SPLITS,
    thresholds: Sequence[float | Fraction] = (0.5, 0.7, 0.85, 0.95),
    retrieval: RetrievalConfig | None = None,
) -> dict[str, dict[str, Any]]:
    """How much of FLORES each language's training text contains, exactly or nearly.

    ``corpus`` maps a language code to its training text (a file, ``.gz`` too, or
    an iterable of lines), read once, block by block. For every FLORES sentence of
    that language (the given splits together): its source exposure to the text.
    Returns, per language: items, exposure mean, exact rate (sentences that occur
    verbatim after normalisation) and the share at or above each threshold.
    """
    data = flores if isinstance(flores, FloresData) else FloresData.locate(flores)
    retrieval = retrieval or RetrievalConfig(strategy="streaming")
    config = TameConfig.from_options(leak_thresholds=tuple(thresholds))
    out = {}
    for lang, text in corpus.items():
        check_language(lang, "corpus")
        sentences = [s for split in splits for s in data.sentences(lang, split)]
        audit = StreamingAudit(sentences, None, retrieval)
        lines = iter_lines(text) if isinstance(text, str | Path) else iter(text)
        block: list[str] = []
        for line in lines:
            block.append(line)
            if len(block) == retrieval.block_rows:
                audit.feed(block, [""] * len(block), audit.next_row)
                block = []
        if block or audit.next_row == 0:
            audit.feed(block, [""] * len(block), audit.next_row)
        summary = summarize(audit.result(), config).source
        out[lang] = {
            "items": len(sentences),
            "training_lines": audit.next_row,
            "source_exposure_mean": summary.mean,
            "exact_rate": summary.exact_overlap,
            "at_threshold": dict(summary.at_threshold),
        }
    return out
