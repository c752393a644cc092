"""Progress bars for long work (an audit, an index build, a FLORES run), as
``datasets`` shows them: tqdm with the rows done, the total when it is known,
the rate and the time left.

Shown when standard error is a terminal, unless ``datasets``' own switch has
turned its bars off (``datasets.disable_progress_bars()``,
``HF_DATASETS_DISABLE_PROGRESS_BARS=1``). ``TAME_MT_PROGRESS=1`` shows them
anywhere (a log file, a notebook), ``TAME_MT_PROGRESS=0`` never.

>>> import os; os.environ[PROGRESS_ENV] = "0"
>>> with progress("auditing", total=10) as advance:
...     advance(4)
>>> del os.environ[PROGRESS_ENV]
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["PROGRESS_ENV", "progress", "shown"]

PROGRESS_ENV = "TAME_MT_PROGRESS"
_ON, _OFF = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def _nothing(rows: int) -> None:
    """The update of a bar that is not shown."""


def shown() -> bool:
    """Whether a bar started now would be shown."""
    forced = os.environ.get(PROGRESS_ENV, "").strip().lower()
    if forced in _OFF:
        return False
    if forced in _ON:
        return True
    if "datasets" in sys.modules:
        from datasets.utils import are_progress_bars_disabled

        if are_progress_bars_disabled():
            return False
    elif os.environ.get("HF_DATASETS_DISABLE_PROGRESS_BARS", "").strip().lower() in _ON:
        return False
    return sys.stderr is not None and sys.stderr.isatty()


@contextmanager
def progress(
    description: str, total: int | None = None, unit: str = "rows", show: bool | None = None
) -> Iterator[Callable[[int], None]]:
    """A bar while the block runs; yields the function that adds done rows. ``show``
    True or False overrides ``shown()``."""
    if not (shown() if show is None else show):
        yield _nothing
        return
    from tqdm.auto import tqdm

    with tqdm(total=total, desc=description, unit=unit, unit_scale=True, dynamic_ncols=True) as bar:
        yield bar.update
