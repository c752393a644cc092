"""The FLORES-200 protocol of the NLLB paper: the data and the scores of every
direction (``protocol``: spBLEU, chrF++, contamination), the language lists
(``languages``, ``language_codes``), XSTS calibration (``xsts``),
metric-human correlation (``correlation``) and added toxicity (``toxicity``).

May import: ``tame_mt_metric.report``, ``tame_mt_metric.retrieval`` and the
package's base modules.
"""

# Re-exported: the protocol's API, as the module ``tame_mt_metric.flores`` had it.
from tame_mt_metric.flores.protocol import *  # noqa: F403
from tame_mt_metric.flores.protocol import __all__ as __all__
