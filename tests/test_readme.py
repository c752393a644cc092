"""The README opens with the two set-up commands (its examples run in
test_docs_examples.py)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_opens_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first is not None
    assert "python -m tame_mt_metric.demo" in first.group(1)
    assert ".ci/check" in first.group(1)
