"""Helpers for tests that run the package in child processes."""

from __future__ import annotations

import subprocess


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
