"""Loading script of the ``tame_mt`` metric for ``evaluate.load``: a thin
adapter over the installed package (``evaluate.load("tame_mt")`` and
``tame_mt_metric.load()`` both load this file)."""

from tame_mt_metric.metric import TameMT

__all__ = ["TameMT"]
