"""The audit of a training corpus in contiguous shards of rows, on any engine.

Each shard streams its rows through the core (global row numbers) and yields a
``PartialAudit``: per test item the best neighbours among its rows, the
exact-overlap flags, the training target of its best source row (the TM
candidate) and the digests of its fingerprint blocks. Merging keeps, per item,
the higher score and then the lower global row (targets: then the lower
reference; pair exposure likewise), ORs the flags and combines the
fingerprint blocks, so the merged audit equals the one-machine audit exactly.
Shards start on multiples of ``SHARD_ALIGN`` rows (the fingerprint's block).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pyarrow as pa
import tame_mt_core as _core

from tame_mt_metric._version import __version__
from tame_mt_metric.digest import PROOF, digest, proof, proved
from tame_mt_metric.errors import InputTextError, InvalidOptionError, MisalignedInputError
from tame_mt_metric.files import regular_file, write_arrow
from tame_mt_metric.retrieval.config import RetrievalConfig, ZeroPolicy
from tame_mt_metric.retrieval.corpus import Block
from tame_mt_metric.retrieval.exposure import Exposures, ItemExposure, Neighbour
from tame_mt_metric.retrieval.inputs import references_per_item
from tame_mt_metric.retrieval.streaming_pass import streaming_pass
from tame_mt_metric.retrieval.tm_candidates import tm_from_candidates

__all__ = [
    "SHARD_ALIGN",
    "MergedAudit",
    "PartialAudit",
    "audit_shard",
    "check_partial",
    "merge_exposures",
    "merge_partials",
    "parse_shard",
    "shard_ranges",
]

SHARD_ALIGN: int = _core.FINGERPRINT_BLOCK_ROWS


def shard_ranges(num_rows: int, shards: int) -> list[tuple[int, int]]:
    """``shards`` contiguous row ranges covering ``[0, num_rows)``, each starting on
    a multiple of ``SHARD_ALIGN`` (fewer ranges when there are fewer blocks)."""
    if shards < 1:
        raise InvalidOptionError(f"shards: must be at least 1, got {shards}")
    blocks = -(-num_rows // SHARD_ALIGN)
    shards = max(1, min(shards, blocks))
    cuts = [round(i * blocks / shards) * SHARD_ALIGN for i in range(shards)] + [num_rows]
    return [(cuts[i], min(cuts[i + 1], num_rows)) for i in range(shards)]


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` (0 <= i < n) as a pair of integers."""
    index, slash, count = text.partition("/")
    if not slash or not index.isdigit() or not count.isdigit() or not 0 <= int(index) < int(count):
        raise InvalidOptionError(f"--shard: expected i/n with 0 <= i < n, got {text!r}")
    return int(index), int(count)


def _settings(config: RetrievalConfig) -> str:
    return f"{config.signature()}|top_k:{config.top_k}"


def _test_set_digest(sources: Sequence[str], references: Sequence[Sequence[str]] | None) -> str:
    return digest(sources, (r for refs in references or [] for r in refs))


@dataclass(frozen=True)
class PartialAudit:
    """The audit of training rows ``[start, stop)`` of a corpus."""

    start: int
    stop: int
    exposures: Exposures
    tm_candidates: list[str]
    block_digests: list[str]
    test: str
    settings: str

    def save(self, path: Path) -> None:
        rows = []
        for item, candidate in zip(self.exposures, self.tm_candidates, strict=True):
            rows.append(
                json.dumps(
                    {
                        "source": [[n.row, n.overlap, n.union] for n in item.source],
                        "target": [[n.row, n.overlap, n.union, n.reference] for n in item.target],
                        "pair": None
                        if item.pair is None
                        else [
                            item.pair.row,
                            item.pair.overlap,
                            item.pair.union,
                            item.pair.reference,
                        ],
                        "exact": [item.source_exact, item.target_exact, item.pair_exact],
                        "tm": candidate,
                    },
                    ensure_ascii=False,
                )
            )
        meta = {
            "format": "tame-mt-metric partial audit",
            "version": __version__,
            "start": str(self.start),
            "stop": str(self.stop),
            "blocks": ",".join(self.block_digests),
            "test": self.test,
            "settings": self.settings,
        }
        meta[PROOF] = proof(meta, rows)
        table = pa.table({"item": pa.array(rows, pa.large_string())}).replace_schema_metadata(meta)
        write_arrow(path, table)

    @classmethod
    def load(cls, path: Path) -> PartialAudit:
        regular_file(path, "partial audit")
        try:
            with pa.memory_map(str(path), "r") as source:
                table = pa.ipc.open_file(source).read_all()
            table.validate(full=True)
            meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
            if meta.get("format") != "tame-mt-metric partial audit":
                raise InputTextError(f"{path}: not a partial audit")
            lines = table.column("item").to_pylist()
            if not proved(meta, lines):
                raise InputTextError(f"{path}: its content differs from what it was written with")
            items, candidates = [], []
            for text in lines:
                row = json.loads(text)
                pair = row["pair"]
                if pair is not None and len(pair) != 4:
                    raise InputTextError(
                        f"{path}: its pair exposures name no reference (a partial audit of an "
                        "earlier version): audit the shard again"
                    )
                items.append(
                    ItemExposure(
                        tuple(Neighbour(*n) for n in row["source"]),
                        tuple(Neighbour(*n) for n in row["target"]),
                        None if pair is None else Neighbour(*pair),
                        *row["exact"],
                    )
                )
                candidates.append(row["tm"])
            start, stop = int(meta["start"]), int(meta["stop"])
        except InputTextError:
            raise
        except (OSError, KeyError, ValueError, TypeError, pa.ArrowException) as exc:
            raise InputTextError(f"{path}: not a readable partial audit ({exc})") from exc
        return cls(
            start,
            stop,
            Exposures(tuple(items), stop - start, "streaming"),
            candidates,
            meta["blocks"].split(",") if meta["blocks"] else [],
            meta["test"],
            meta["settings"],
        )


def audit_shard(
    blocks: Iterable[Block],
    start: int,
    sources: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]] | None,
    config: RetrievalConfig,
    advance: Callable[[int], None] | None = None,
) -> PartialAudit:
    """The partial audit of the rows of ``blocks`` (``streaming_pass``), with the
    digests of their fingerprint blocks, for merging with other shards."""
    if start % SHARD_ALIGN:
        raise InvalidOptionError(f"start: {start} is not a multiple of {SHARD_ALIGN}")
    fingerprint = _core.CorpusFingerprint()
    exposures, candidates, stop = streaming_pass(
        blocks, start, sources, references, config, advance, fingerprint
    )
    return PartialAudit(
        start,
        stop,
        exposures,
        candidates,
        fingerprint.block_digests(),
        _test_set_digest(sources, references_per_item(references, len(sources))),
        _settings(config),
    )


def _rank(n: Neighbour) -> tuple[Fraction, int, int]:
    return (-n.fraction, n.row, n.reference)


def merge_exposures(parts: Sequence[Exposures]) -> Exposures:
    """Exposures of disjoint row ranges of one corpus, merged exactly."""
    if not parts or len({len(p) for p in parts}) != 1:
        raise InvalidOptionError("parts: audits of the same test set are needed")
    items = []
    for per_item in zip(*parts, strict=True):
        k = max(len(e.source) for e in per_item)
        pairs = [e.pair for e in per_item if e.pair is not None]
        items.append(
            ItemExposure(
                tuple(sorted((n for e in per_item for n in e.source), key=_rank)[:k]),
                tuple(sorted((n for e in per_item for n in e.target), key=_rank)[:k]),
                min(pairs, key=_rank) if pairs else None,
                any(e.source_exact for e in per_item),
                any(e.target_exact for e in per_item),
                any(e.pair_exact for e in per_item),
            )
        )
    return Exposures(tuple(items), sum(p.num_train for p in parts), "streaming")


@dataclass(frozen=True)
class MergedAudit:
    exposures: Exposures
    tm_hypotheses: list[str]
    num_train: int
    fingerprint: str


def check_partial(
    part: PartialAudit,
    sources: Sequence[str],
    references: Sequence[Sequence[str]] | None,
    config: RetrievalConfig,
) -> None:
    """``part`` was made of this test set (sources and references) with these
    retrieval settings; a proved partial audit of another is refused."""
    if part.settings != _settings(config):
        raise InvalidOptionError(
            f"made with the settings {part.settings}, but {_settings(config)} were given"
        )
    if part.test != _test_set_digest(sources, references):
        raise MisalignedInputError("made of another test set (sources and references)")


def merge_partials(parts: Sequence[PartialAudit], zero_policy: ZeroPolicy = "empty") -> MergedAudit:
    """Merge the shards of one corpus; they must cover its rows from 0 without gaps."""
    parts = sorted(parts, key=lambda p: p.start)
    if not parts:
        raise InvalidOptionError("parts: nothing to merge")
    if len({(p.test, p.settings) for p in parts}) != 1:
        raise InvalidOptionError("parts: audits of different test sets or settings")
    expected = 0
    for p in parts:
        if p.start != expected:
            raise InvalidOptionError(f"parts: rows {expected}..{p.start} are in no shard")
        expected = p.stop
    exposures = merge_exposures([p.exposures for p in parts])
    owners = [next(p for p in parts if p.start <= e.source[0].row < p.stop) for e in exposures]
    candidates = [owner.tm_candidates[i] for i, owner in enumerate(owners)]
    tm = tm_from_candidates(exposures, candidates, zero_policy)
    blocks = [d for p in parts for d in p.block_digests]
    return MergedAudit(exposures, tm, expected, _core.CorpusFingerprint.combine(blocks))
