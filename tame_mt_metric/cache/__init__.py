"""The cache and the artifact files: training indexes and test-set audits kept
in the datasets cache (``entries``), the index folder format (``index_files``),
the training text saved beside an index (``corpus_file``) and the proof every
artifact carries (``digest.proof``). Everything is
written under a temporary name and renamed into place; an index, an audit or
a saved corpus is read back only once its checks prove it intact and of the
corpus and settings at hand (damage means a rebuild through the metric, or an
``IndexFileError``).

May import: ``tame_mt_metric.retrieval`` and the package's base modules
(``errors``, ``files``, ``progress``, ``digest``, ``_version``,
``interpreter``).
"""

# Re-exported: the cache's API, as the module ``tame_mt_metric.cache`` had it.
from tame_mt_metric.cache.entries import *  # noqa: F403
from tame_mt_metric.cache.entries import __all__ as __all__
