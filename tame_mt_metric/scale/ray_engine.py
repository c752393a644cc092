"""The audit on Ray (``pip install tame-mt-metric[ray]``): the training corpus
is cut into contiguous row ranges (``shards.shard_ranges``), the test set is put
in Ray's object store once and shared by every task, each task streams its
rows through the Rust core, and the partial audits merge exactly, so the result
equals the one-machine audit.

Training corpora: a ``TrainingCorpus`` (lists in the driver), a
``datasets.Dataset`` (Arrow-backed: each task reads its rows from the same
memory-mapped files), or ``TextFiles`` (two aligned text files, ``.gz`` too,
which every task reads from its first row).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tame_mt_metric.retrieval.config import RetrievalConfig, ZeroPolicy
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tame_mt_metric.retrieval.inputs import iter_lines
from tame_mt_metric.scale.shards import (
    MergedAudit,
    PartialAudit,
    audit_shard,
    iter_text_pairs,
    merge_partials,
    shard_ranges,
)

__all__ = ["TextFiles", "ray_audit"]


@dataclass(frozen=True)
class TextFiles:
    """A training corpus as two line-aligned text files."""

    source: Path
    target: Path

    def rows(self) -> int:
        return sum(1 for _ in iter_lines(self.source))


@dataclass(frozen=True)
class _Dataset:
    dataset: Any
    source_column: str
    target_column: str


def _pairs(train: Any, start: int, stop: int) -> Iterator[tuple[str, str]]:
    if isinstance(train, TextFiles):
        return iter_text_pairs(train.source, train.target, start, stop)
    if isinstance(train, _Dataset):
        rows = train.dataset.data.slice(start, stop - start)
        sources = rows.column(train.source_column).to_pylist()
        targets = rows.column(train.target_column).to_pylist()
        return zip(sources, targets, strict=True)
    return zip(train.sources[start:stop], train.targets[start:stop], strict=True)


def _audit_range(train: Any, start: int, stop: int, test: tuple[Any, ...]) -> PartialAudit:
    sources, references, config = test
    again = _pairs(train, start, stop) if isinstance(train, TextFiles) else None
    return audit_shard(_pairs(train, start, stop), start, sources, references, config, again)


def ray_audit(
    train: TrainingCorpus | TextFiles | Any,
    sources: Sequence[str],
    references: Sequence[Sequence[str]] | None,
    config: RetrievalConfig,
    zero_policy: ZeroPolicy = "empty",
    shards: int | None = None,
    address: str | None = None,
    source_column: str = "source",
    target_column: str = "target",
) -> MergedAudit:
    """The audit of ``sources`` (and ``references``) against ``train`` on Ray.

    ``address``: an existing cluster (``ray.init(address=...)``); without it a
    local Ray is started unless one is running. ``shards``: row ranges (default:
    one per CPU of the cluster); each task gets ``config.threads`` cores (1 by default).
    """
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    if hasattr(train, "column_names") and hasattr(train, "data"):
        train = _Dataset(train, source_column, target_column)
        num_rows = train.dataset.num_rows
    elif isinstance(train, TextFiles):
        num_rows = train.rows()
    else:
        num_rows = train.num_rows
    threads = config.threads or 1
    config = replace(config, threads=threads)
    cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
    count = shards or max(1, int(cpus) // threads)
    test = ray.put(
        (list(sources), None if references is None else [list(r) for r in references], config)
    )
    task = ray.remote(num_cpus=threads)(_audit_range)
    futures = [
        task.remote(train, start, stop, test) for start, stop in shard_ranges(num_rows, count)
    ]
    return merge_partials(ray.get(futures), zero_policy)
