"""The loading script of the ``tame_mt`` metric: the file ``evaluate`` loads
(it names a metric after its script) for ``evaluate.load("tame_mt")`` and
``tame_mt_metric.load()``; a thin adapter over ``metric.TameMT``."""

from tame_mt_metric.metric import TameMT

__all__ = ["TameMT"]
