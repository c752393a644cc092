"""The GIL handed between threads more often while a report's threads share it."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["SWITCH_INTERVAL", "switching_often"]

# A thread waiting for the GIL gets it back within this many seconds.
SWITCH_INTERVAL = 0.0002

_USERS = 0
_SAVED = 0.005
_LOCK = threading.Lock()


@contextmanager
def switching_often(interval: float = SWITCH_INTERVAL) -> Iterator[None]:
    """Python's switch interval at most ``interval`` while a report is made.

    sacrebleu's statistics run on a second thread, in pure Python, while this one
    reads the corpus a record batch at a time; each read gives up the GIL, and
    under the default interval (5 ms) each then waits up to 5 ms to get it back:
    the fingerprint of 10^6 pairs takes 0.35 s alone and 6 s beside such a thread.
    A thread that waits on nothing is not interrupted, so the shorter interval
    costs nothing once the scores are done. Reports made on several threads at
    once restore the interval when the last ends; a shorter one the caller set
    stays."""
    global _USERS, _SAVED
    with _LOCK:
        if _USERS == 0:
            _SAVED = sys.getswitchinterval()
            if interval < _SAVED:
                sys.setswitchinterval(interval)
        _USERS += 1
    try:
        yield
    finally:
        with _LOCK:
            _USERS -= 1
            if _USERS == 0 and interval < _SAVED:
                _restore(_SAVED)


def _restore(interval: float) -> None:
    """Set an interval read from ``sys.getswitchinterval``: Python keeps it in whole
    microseconds and truncates, so half a microsecond more gives back the same one."""
    sys.setswitchinterval(interval + 5e-7)
