"""Exact retrieval over the compiled core: for every test item, its nearest
training source, target and pair by character n-gram Jaccard similarity.

Owns the retrieval settings (``config``), normalisation and gram sets
(``grams``), checked inputs (``inputs``), the training corpus and its
fingerprint (``corpus``), the two strategies' API (``exposure``), the
streaming strategy's one pass with each item's TM candidate
(``streaming_pass``) and the TM candidate rule (``tm_candidates``), the test
set's exposure to a sample of each training side (``sides``) and the
plain-Python brute force every answer is held to (``reference``).

May import: ``tame_mt_core`` and the package's base modules
(``errors``, ``files``, ``progress``, ``digest``, ``_version``,
``interpreter``); nothing else of the package (everything else builds on it).
"""
