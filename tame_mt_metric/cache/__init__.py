"""The cache and the artifact files: training indexes and test-set audits kept
in the datasets cache (``entries``), the index folder format (``index_files``)
and the training text saved beside an index (``corpus_file``). Nothing is read
back without proof that it is intact and belongs to the corpus and settings at
hand: damage means a rebuild (through the metric) or an ``IndexFileError``.

May import: ``tame_mt_metric.retrieval`` and the package's base modules
(``errors``, ``digest``, ``_version``).
"""

from tame_mt_metric.cache.entries import (
    CACHE_ENV,
    CacheEntry,
    CacheOptions,
    cache_root,
    cached_index,
    clear,
    list_entries,
    remove,
)

__all__ = [
    "CACHE_ENV",
    "CacheEntry",
    "CacheOptions",
    "cache_root",
    "cached_index",
    "clear",
    "list_entries",
    "remove",
]
