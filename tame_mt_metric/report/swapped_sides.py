"""Training sides that look swapped: the test sources nearer a sample of the
training targets than of the training sources, and the references the other
way round. Measured by ``retrieval/sides.py`` when the audit is made and
carried by the cached audit, so that a cached report warns the same.

The rule: both measures read crossed (sources to targets above sources to
sources, references to sources above references to targets), their mean at
least ``SWAP_RATIO`` times the mean read as given and at least ``SWAP_FLOOR``,
over at least ``SWAP_MIN_ITEMS`` test items. Chosen on real pairs, 500 rows
and 500 items sampled. Read as given, crossed over straight is 0.29 on the
bundled Swahili-Zulu Bible, at most 0.30 on five more Bible pairs and on
Multi30k (en-de, en-fr, en-cs), and at most 0.68 on FLORES-200 (dev as training,
devtest as test) for distinct languages (Spanish-Portuguese; Croatian-Bosnian,
nearly one language, reads 0.97 either way and is never called). Swapped, it is
3.43 on the bundled Bible (0.148 against 0.043), 3.4 to 6.7 on the others
(Latvian-Ukrainian, two scripts, far more), and 1.9 to 23 on FLORES but for
Spanish-Portuguese (1.46) and Croatian-Bosnian, not called. Unrelated sentences
of one language (Latin or Cyrillic) share 0.07 to 0.11 there; the floor keeps texts that
share almost no grams (0.001 to 0.01: other scripts) from calling on noise, and
leaves Chinese-Japanese swapped (0.031) uncalled.
"""

from __future__ import annotations

import logging
import time

from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.labels import exposure_text
from tame_mt_metric.retrieval.corpus import TrainingCorpus, TrainingStream
from tame_mt_metric.retrieval.sides import KeptRows, SideExposure, measure_sides, sample_of

log = logging.getLogger("tame_mt_metric")

__all__ = [
    "SWAP_FLOOR",
    "SWAP_MIN_ITEMS",
    "SWAP_RATIO",
    "side_check",
    "swapped",
    "swapped_warning",
]

# Crossed must reach this multiple of straight, and this exposure, over this
# many items, to warn.
SWAP_RATIO = 1.5
SWAP_FLOOR = 0.05
SWAP_MIN_ITEMS = 20


def side_check(
    train: TrainingCorpus | TrainingStream,
    sources: list[str],
    references: list[list[str]],
    config: TameConfig,
    kept: KeptRows | None = None,
) -> SideExposure | None:
    """The side exposures of the test set to a sample of ``train`` (None where a
    stream left no sample)."""
    started = time.perf_counter()
    sample = sample_of(train, kept)
    if sample is None:
        return None
    sides = measure_sides(*sample, sources, references, config.retrieval)
    log.info(
        "side check: %d rows, %d items, straight %.3f, crossed %.3f (%.2f s)",
        sides.rows,
        sides.items,
        sides.straight,
        sides.crossed,
        time.perf_counter() - started,
    )
    return sides


def swapped(sides: SideExposure) -> bool:
    """The rule of the module's docstring."""
    return (
        sides.items >= SWAP_MIN_ITEMS
        and sides.sources_to_targets > sides.sources_to_sources
        and sides.references_to_sources > sides.references_to_targets
        and sides.crossed >= SWAP_FLOOR
        and sides.crossed >= SWAP_RATIO * sides.straight
    )


def swapped_warning(sides: SideExposure | None) -> str | None:
    """The warning for a corpus whose sides look swapped, else None."""
    if sides is None or not swapped(sides):
        return None
    return (
        "The training sides look swapped: the test sources are nearer the training targets "
        f"than the training sources (mean exposure {exposure_text(sides.sources_to_targets)} "
        f"against {exposure_text(sides.sources_to_sources)} over {sides.rows:,} sampled "
        f"training rows), and the references nearer the training sources "
        f"({exposure_text(sides.references_to_sources)} against "
        f"{exposure_text(sides.references_to_targets)}). Check that --train-src and "
        "--train-tgt (or the Dataset's source and target columns, or source_lang and "
        "target_lang) are not exchanged."
    )
