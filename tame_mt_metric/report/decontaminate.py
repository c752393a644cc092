"""``decontaminate`` on the engine a ``TameConfig`` names: the one-process pass
of ``retrieval/decontaminate.py`` (``engine="local"``), or the corpus cut into
row ranges judged as Ray tasks and merged exactly (``engine="ray"``,
``ray_address``: an existing cluster), as the audit chooses its engine. Either
gives the same ``Decontamination``.
"""

from __future__ import annotations

from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.retrieval import decontaminate as local
from tame_mt_metric.retrieval.config import RetrievalConfig
from tame_mt_metric.retrieval.corpus import TrainingStream, training_corpus
from tame_mt_metric.retrieval.decontaminate import Decontamination, DecontaminationRequest
from tame_mt_metric.retrieval.exposure import TrainingIndex

__all__ = ["decontaminate"]


def decontaminate(
    train: object,
    test_sources: object,
    references: object = None,
    *,
    threshold: object,
    by: str = "any",
    config: RetrievalConfig | TameConfig | None = None,
    progress: bool | None = None,
    index: TrainingIndex | None = None,
) -> Decontamination:
    """Every training pair within ``threshold`` of a test item, by the rule ``by``
    (``"source"``, ``"target"``, ``"pair"`` or ``"any"``: source or target).

    ``train``, ``test_sources``, ``references``, ``progress``: as the one-process
    ``tame_mt_metric.retrieval.decontaminate.decontaminate``. ``config``: the
    similarity settings (a ``RetrievalConfig``), or a ``TameConfig`` whose
    ``engine`` (``"local"`` or ``"ray"``) and ``ray_address`` choose where the
    work runs; the Ray engine takes a corpus it can cut into row ranges (a
    Dataset, a table, lists, ``TextFiles``), not a stream, and shows no bar.
    ``index``: a saved index of the corpus, searched in this process (not with
    the Ray engine)."""
    if not isinstance(config, TameConfig) or config.engine != "ray":
        retrieval = config.retrieval if isinstance(config, TameConfig) else config
        return local.decontaminate(
            train,
            test_sources,
            references,
            threshold=threshold,
            by=by,
            config=retrieval,
            progress=progress,
            index=index,
        )
    if index is not None:
        raise InvalidOptionError(
            "index: a saved index is searched in this process; use engine='local' with it"
        )
    request = DecontaminationRequest.of(test_sources, references, threshold, by)
    corpus = training_corpus(train)
    if isinstance(corpus, TrainingStream):
        raise InvalidOptionError(
            "engine: the Ray engine cuts the corpus into row ranges; give a Dataset or "
            "TextFiles, not a stream"
        )
    from tame_mt_metric.scale.ray_engine import ray_decontaminate

    return ray_decontaminate(corpus, request, config.retrieval, address=config.ray_address)
