"""The audit and decontamination on Ray (``pip install tame-mt-metric[ray]``):
the training corpus is cut into contiguous row ranges (``shards.shard_ranges``),
the test set is put in Ray's object store once and shared by every task, each
task streams its rows through the Rust core, and the partial audits
(``shards``) or decontaminations (``decontamination``) merge exactly, so the
result equals the one-machine answer.

Training corpora: ``TextFiles`` (two aligned text files, ``.gz`` too, which
every task reads from its first row), a ``datasets.Dataset`` or a
``TrainingCorpus`` read from one (each task reopens the Dataset's files,
memory-mapped, so the driver sends only their names), or a ``TrainingCorpus``
of lists (sent whole).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tame_mt_metric.retrieval.config import RetrievalConfig, ZeroPolicy
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tame_mt_metric.retrieval.decontaminate import Decontamination, DecontaminationRequest
from tame_mt_metric.retrieval.text_files import TextFiles
from tame_mt_metric.scale.decontamination import (
    PartialDecontamination,
    decontaminate_shard,
    merge_decontaminations,
)
from tame_mt_metric.scale.shards import (
    MergedAudit,
    PartialAudit,
    audit_shard,
    merge_partials,
    shard_ranges,
)

__all__ = ["TextFiles", "ray_audit", "ray_decontaminate"]


@dataclass(frozen=True)
class _Dataset:
    """A corpus read from a ``datasets.Dataset``, sent to tasks as the Dataset
    (which pickles memory-mapped tables by their files) and its columns."""

    dataset: Any
    columns: dict[str, Any]

    def corpus(self) -> TrainingCorpus:
        return TrainingCorpus.from_any(self.dataset, **self.columns)


def _audit_range(train: Any, start: int, stop: int, test: tuple[Any, ...]) -> PartialAudit:
    sources, references, config = test
    corpus = train.corpus() if isinstance(train, _Dataset) else train
    blocks = corpus.blocks(config.block_rows, start, stop)
    return audit_shard(blocks, start, sources, references, config)


def _judge_range(
    train: Any, start: int, stop: int, asked: tuple[Any, ...]
) -> PartialDecontamination:
    request, config = asked
    corpus = train.corpus() if isinstance(train, _Dataset) else train
    blocks = corpus.blocks(config.block_rows, start, stop)
    return decontaminate_shard(blocks, start, request, config)


@dataclass(frozen=True)
class _Plan:
    """A corpus cut for Ray tasks: what each task is sent of it, its row ranges,
    the cores each task takes and the settings with as many threads."""

    train: TrainingCorpus | _Dataset
    ranges: list[tuple[int, int]]
    threads: int
    config: RetrievalConfig


def _plan(
    train: TrainingCorpus | TextFiles | Any,
    config: RetrievalConfig,
    shards: int | None,
    address: str | None,
    columns: dict[str, Any],
) -> _Plan:
    """Ray started (or joined), ``train`` read as a corpus and cut into ``shards``
    row ranges (default: one per CPU of the cluster, ``config.threads`` each)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    if not isinstance(train, TrainingCorpus):
        train = TrainingCorpus.from_any(train, **columns)
    num_rows = train.num_rows
    sent: TrainingCorpus | _Dataset = train
    if train.dataset is not None:
        sent = _Dataset(train.dataset, train.columns)
    threads = config.threads or 1
    cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
    count = shards or max(1, int(cpus) // threads)
    return _Plan(sent, shard_ranges(num_rows, count), threads, replace(config, threads=threads))


def ray_audit(
    train: TrainingCorpus | TextFiles | Any,
    sources: Sequence[str],
    references: Sequence[Sequence[str]] | None,
    config: RetrievalConfig,
    zero_policy: ZeroPolicy = "empty",
    shards: int | None = None,
    address: str | None = None,
    **columns: Any,
) -> MergedAudit:
    """The audit of ``sources`` (and ``references``) against ``train`` on Ray.

    ``address``: an existing cluster (``ray.init(address=...)``); without it a
    local Ray is started unless one is running. ``shards``: row ranges (default:
    one per CPU of the cluster); each task gets ``config.threads`` cores (1 by default).
    ``columns``: how to read a Dataset (``source_column``, ``target_column``,
    ``source_lang``, ``target_lang``).
    """
    import ray

    plan = _plan(train, config, shards, address, columns)
    test = ray.put(
        (list(sources), None if references is None else [list(r) for r in references], plan.config)
    )
    task = ray.remote(num_cpus=plan.threads)(_audit_range)
    futures = [task.remote(plan.train, start, stop, test) for start, stop in plan.ranges]
    return merge_partials(ray.get(futures), zero_policy)


def ray_decontaminate(
    train: TrainingCorpus | TextFiles | Any,
    request: DecontaminationRequest,
    config: RetrievalConfig,
    shards: int | None = None,
    address: str | None = None,
    **columns: Any,
) -> Decontamination:
    """The decontamination ``request`` asks of ``train`` on Ray: the test sets put
    in the object store once, each row range judged by a task, the partials merged
    exactly (the one-process ``decontaminate``'s answer). ``shards``, ``address``,
    ``columns`` and the cores of a task: as ``ray_audit``'s."""
    import ray

    plan = _plan(train, config, shards, address, columns)
    asked = ray.put((request, plan.config))
    task = ray.remote(num_cpus=plan.threads)(_judge_range)
    futures = [task.remote(plan.train, start, stop, asked) for start, stop in plan.ranges]
    return merge_decontaminations(ray.get(futures), request, config)
