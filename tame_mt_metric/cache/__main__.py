"""``python -m tame_mt_metric.cache list | remove NAME | clear``: the cache's
entries from a shell."""

from tame_mt_metric.cache.entries import main

main()
