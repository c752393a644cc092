"""Scale-out: the audit of a corpus cut into shards of contiguous rows
(``shards``: the cut, each shard's rows run through
``retrieval.streaming_pass``, partial audits and their exact merge), its
decontamination likewise (``decontamination``: each shard through
``retrieval.decontaminate.judge_rows``, merged exactly), both run as Ray tasks
(``ray_engine``). Any split gives the answers of one pass.

May import: ``tame_mt_metric.retrieval`` and the package's base modules
(``errors``, ``files``, ``progress``, ``digest``, ``_version``,
``interpreter``).
"""
