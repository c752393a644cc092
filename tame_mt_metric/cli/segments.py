"""Segment diagnostics files: JSONL, one object per test item, and a
``.meta.json`` sidecar (signature, settings, training corpus, input hashes).
Besides the neighbours they keep each item's exact exposure fractions and the
TM's sacrebleu statistics, so a cached score needs no text of the training
corpus and equals a fresh one. Raw text only where asked for.

The sidecar carries the digest of the segment lines and a proof over its own
fields; a file whose lines or fields differ from those written, or made by
another version, is a ``SegmentFileError``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tame_mt_metric._version import __version__
from tame_mt_metric.cli.common import write_jsonl
from tame_mt_metric.cli.path_options import sidecar_path
from tame_mt_metric.digest import PROOF, digest, proof, proved
from tame_mt_metric.errors import InputTextError, MisalignedInputError, SegmentFileError
from tame_mt_metric.files import read_small, regular_file
from tame_mt_metric.report.audit import Audit
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.pipeline import ItemizedReport
from tame_mt_metric.report.v1_schema import OUTPUT_SCHEMAS, V1, v1_segment_rows
from tame_mt_metric.retrieval.exposure import Exposures, ItemExposure, Neighbour
from tame_mt_metric.retrieval.inputs import iter_lines

__all__ = ["SegmentFile", "read_segments", "write_segments"]

FORMAT = "tame-mt-metric segments"
# Settings that do not change a number of the diagnostics (the intervals and
# the exposure curve are made when scoring): a cached score may use other values.
OPERATIONAL = frozenset(
    {"threads", "strategy", "block_rows", "spm_model", "engine", "ray_address"}
    | {"confidence", "n_bootstrap", "seed", "curve_bands", "curve_edges"}
)


def _fraction(n: Neighbour) -> list[int]:
    return [n.row, n.overlap, n.union, n.reference]


def write_segments(
    path: Path,
    result: ItemizedReport,
    sources: list[str],
    references: list[list[str]],
    predictions: list[str] | None,
    texts: dict[str, bool],
    schema: str = OUTPUT_SCHEMAS[0],
) -> None:
    """``texts`` says which raw texts to include: source, reference, hyp, neighbor.
    ``schema`` ``tame-mt-v1``: the reference implementation's v1 rows, without a
    sidecar (they lack what ``score-cached`` reads back), and a sidecar left from
    an earlier file of the same name is removed."""
    if schema == V1:
        rows_v1 = v1_segment_rows(
            result.segments,
            sources if texts.get("source") else None,
            references if texts.get("reference") else None,
            predictions if texts.get("hyp") else None,
            tm_hypotheses=bool(texts.get("neighbor")),
        )
        write_jsonl(path, rows_v1)
        sidecar_path(path).unlink(missing_ok=True)
        return
    report = result.report
    tm_stats = result.tm_statistics
    rows = []
    for i, segment in enumerate(result.segments):
        item = result.exposures[i]
        assert item.pair is not None
        row = dict(segment)
        if not texts.get("neighbor"):
            row.pop("tm_hyp", None)
        row["exact"] = {
            "source": _fraction(item.source[0]),
            "target": _fraction(item.target[0]),
            "pair": _fraction(item.pair),
        }
        row["tm_statistics"] = {name: stats[i] for name, stats in tm_stats.items()}
        if texts.get("source"):
            row["source"] = sources[i]
        if texts.get("reference"):
            row["references"] = references[i]
        if texts.get("hyp") and predictions is not None:
            row["hypothesis"] = predictions[i]
        rows.append(row)
    meta = {
        "format": FORMAT,
        "version": __version__,
        "signature": report.signature,
        "settings": report.config.as_dict(),
        "num_train": report.data["num_train"],
        "train_fingerprint": report.data["train_fingerprint"],
        "items": len(rows),
        "num_refs": len(references[0]),
        "strategy": result.exposures.strategy,
        "sources_xxh3": digest(sources),
        "references_xxh3": digest(r for refs in references for r in refs),
    }

    def sidecar(lines: str) -> dict[str, Any]:
        fields = {**meta, "segments_xxh3": lines}
        return {**fields, PROOF: proof(fields)}

    write_jsonl(path, rows, (sidecar_path(path), sidecar))


def _neighbour(value: object) -> Neighbour:
    """A saved neighbour: row, overlap, union, reference, counts with overlap <= union."""
    if (
        not isinstance(value, list)
        or len(value) != 4
        or not all(type(v) is int and v >= 0 for v in value)
        or value[1] > value[2]
    ):
        raise ValueError(f"not a neighbour (row, overlap <= union, reference): {value!r}")
    return Neighbour(*value)


class SegmentFile:
    """Cached diagnostics, checked against the settings and references given now."""

    def __init__(self, path: Path) -> None:
        meta = sidecar_path(path)
        try:
            self.meta: dict[str, Any] = json.loads(read_small(meta, "segments sidecar"))
        except (OSError, ValueError) as exc:
            raise SegmentFileError(f"{meta}: not a readable segments sidecar ({exc})") from exc
        if not isinstance(self.meta, dict) or self.meta.get("format") != FORMAT:
            raise SegmentFileError(f"{meta}: not a {FORMAT} sidecar")
        if not proved(self.meta):
            raise SegmentFileError(f"{meta}: its fields differ from those it was written with")
        if self.meta.get("version") != __version__:
            raise SegmentFileError(
                f"{meta}: made by tame-mt-metric {self.meta.get('version')}, this is "
                f"{__version__}; write the segments again ('audit --segment-out')"
            )
        self.path = path

    def check(self, config: TameConfig, references: list[list[str]]) -> None:
        """Refuse settings or references other than those the diagnostics were made with."""
        saved, now = self.meta.get("settings", {}), config.as_dict()
        differ = sorted(k for k in now if k not in OPERATIONAL and saved.get(k) != now[k])
        if differ:
            details = ", ".join(f"{k}: {saved.get(k)!r} there, {now[k]!r} now" for k in differ)
            raise InputTextError(f"{sidecar_path(self.path)}: made with other settings ({details})")
        if len(references) != self.meta.get("items") or len(references[0]) != self.meta.get(
            "num_refs"
        ):
            raise MisalignedInputError(
                f"{sidecar_path(self.path)}: {self.meta.get('items')} items with "
                f"{self.meta.get('num_refs')} references, given {len(references)} with "
                f"{len(references[0])}"
            )
        if digest(r for refs in references for r in refs) != self.meta.get("references_xxh3"):
            raise InputTextError(f"{sidecar_path(self.path)}: made with other references")

    def audit(self) -> Audit:
        items: list[ItemExposure] = []
        stats: dict[str, list[list[int]]] = {}
        lines = []
        for number, line in enumerate(iter_lines(self.path), start=1):
            lines.append(line)
            try:
                row = json.loads(line)
                exact = row["exact"]
                items.append(
                    ItemExposure(
                        source=(_neighbour(exact["source"]),),
                        target=(_neighbour(exact["target"]),),
                        pair=_neighbour(exact["pair"]),
                        source_exact=bool(row["source_exact"]),
                        target_exact=bool(row["target_exact"]),
                        pair_exact=bool(row["pair_exact"]),
                    )
                )
                for name, value in row["tm_statistics"].items():
                    stats.setdefault(name, []).append(value)
            except (ValueError, KeyError, TypeError) as exc:
                raise SegmentFileError(f"{self.path}:{number}: malformed segment ({exc})") from exc
        if digest(lines) != self.meta.get("segments_xxh3"):
            raise SegmentFileError(f"{self.path}: its lines differ from those it was written with")
        if len(items) != self.meta.get("items"):
            raise SegmentFileError(
                f"{self.path}: {len(items)} segments, its sidecar says {self.meta.get('items')}"
            )
        exposures = Exposures(tuple(items), int(self.meta["num_train"]), self.meta["strategy"])
        return Audit(exposures, [], stats, self.meta["train_fingerprint"], from_cache=True)


def read_segments(path: Path) -> SegmentFile:
    regular_file(path, "--segment-in")
    return SegmentFile(path)
