"""The FLORES-200 protocol of the NLLB paper: the data and the scores of every
direction (``protocol``: spBLEU, chrF++, contamination), the language lists
(``languages``, ``language_codes``), XSTS calibration (``xsts``),
metric-human correlation (``correlation``) and added toxicity (``toxicity``).

May import: ``tame_mt_metric.report``, ``tame_mt_metric.retrieval`` and the
package's base modules.
"""

from tame_mt_metric.flores.protocol import (
    ENGLISH,
    FLORES_METRICS,
    LANGUAGES,
    SPLITS,
    FloresData,
    FloresScores,
    check_language,
    contamination,
    score_directions,
)

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
