"""Helpers for fault tests: damage seeds, and children killed at a chosen step."""

from __future__ import annotations

import os
import subprocess

# Seeds of the seeded fault tests: a few dozen by default, hundreds with the
# slow profile (HYPOTHESIS_PROFILE=slow, as for the property tests).
FAULT_SEEDS = range(400 if os.environ.get("HYPOTHESIS_PROFILE") == "slow" else 24)


def kill_at(run: subprocess.Popen[str], announcement: str) -> None:
    """Wait until the child prints a line starting with ``announcement`` (the
    step the test picked), then kill it with SIGKILL."""
    try:
        assert run.stdout is not None
        line = run.stdout.readline()
        assert line.startswith(announcement), run.communicate()[1]
    finally:
        run.kill()
        run.communicate()
