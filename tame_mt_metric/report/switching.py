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
# The interval to set back when the last report ends (None: it was not changed).
_SAVED: float | None = None
_LOCK = threading.Lock()


@contextmanager
def switching_often() -> Iterator[None]:
    """Python's switch interval at most ``SWITCH_INTERVAL`` while a report is made.

    sacrebleu's statistics run on a second thread, in pure Python, while this one
    reads the corpus a record batch at a time; each read gives up the GIL, and
    under the default interval (5 ms) each then waits up to 5 ms to get it back:
    the fingerprint of 10^6 pairs takes 0.35 s alone and 6 s beside such a thread.
    A thread that waits on nothing is not interrupted, so the shorter interval
    costs nothing once the scores are done. Reports made on several threads at
    once set the interval back when the last ends; a shorter one the caller set
    stays."""
    global _USERS, _SAVED
    with _LOCK:
        if _USERS == 0:
            before = sys.getswitchinterval()
            _SAVED = before if before > SWITCH_INTERVAL else None
            if _SAVED is not None:
                sys.setswitchinterval(SWITCH_INTERVAL)
        _USERS += 1
    try:
        yield
    finally:
        with _LOCK:
            _USERS -= 1
            if _USERS == 0 and _SAVED is not None:
                # Python keeps the interval in whole microseconds and truncates:
                # half a microsecond more sets back the one it read.
                sys.setswitchinterval(_SAVED + 5e-7)
