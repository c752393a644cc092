"""``load()``: ``evaluate.load`` of the packaged loading script (``tame_mt.py``),
so that the metric loads by a function call as well as by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["LOADING_SCRIPT", "load"]

LOADING_SCRIPT = str(Path(__file__).with_name("tame_mt.py"))


def load(**options: Any) -> Any:
    """``evaluate.load`` of the packaged loading script: a ``TameMT`` metric with
    the given load-time options (``train=``, report settings, evaluate's own)."""
    import evaluate  # imported on use: it is slow to import

    return evaluate.load(LOADING_SCRIPT, **options)
