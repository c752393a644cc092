"""Python's cyclic collector paused while a report is made or read from."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]

_PAUSES = 0
_PAUSES_LOCK = threading.Lock()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic collector off while a report is made: sacrebleu's statistics
    allocate millions of small containers, and each collection would walk every
    object alive (all of torch's, where ``evaluate`` imported it). Reports made on
    several threads at once turn it back on when the last ends; a collector the
    caller had turned off stays off."""
    global _PAUSES
    with _PAUSES_LOCK:
        pause = _PAUSES > 0 or gc.isenabled()
        if pause:
            _PAUSES += 1
            gc.disable()
    try:
        yield
    finally:
        if pause:
            with _PAUSES_LOCK:
                _PAUSES -= 1
                if _PAUSES == 0:
                    gc.enable()
