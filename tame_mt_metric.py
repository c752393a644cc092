"""The Space's loading script, for ``evaluate.load("path/to/tame_mt_metric.py")``
from a checkout or the Hub Space: a metric Space holds its loading script at
its top level. It is the same thin adapter as the package's own
``tame_mt_metric/tame_mt.py``, which ``evaluate.load("tame_mt")`` loads."""

from tame_mt_metric.metric import TameMT

__all__ = ["TameMT"]
