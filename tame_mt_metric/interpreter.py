"""The interpreter's own settings, changed while a report's work runs: the
cyclic collector paused (``collector_paused``) and the GIL handed between
threads more often (``switching_often``). Each is shared by every report made
at once and set back when the last ends. A base module: imports nothing of the
package."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["SWITCH_INTERVAL", "collector_paused", "switching_often"]

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
