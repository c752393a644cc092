"""Every fenced block of README.md and docs/*.md runs as a reader would run it,
or its page says why not.

A page marks a block with an HTML comment on the line right before its fence:

- ``<!-- setup -->``: the block that writes the example files (the bundled
  Swahili -> Zulu example, docs/getting-started.md); it runs first in the
  working folder of every page.
- ``<!-- output -->``: what the block before it prints; every line shown must
  appear, in order, in what that block printed (``...`` stands for lines left
  out).
- ``<!-- not run: REASON -->``: a block that cannot run here (an install, a
  cluster's address, a model to train), with its reason.

Unmarked ``python`` blocks run with ``exec`` in a fresh namespace and
``bash`` blocks as ``bash -euo pipefail`` scripts, each page's in order in a
folder of its own; a block of any other kind must be marked.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]

PYTHON = ("python", "py")
SHELL = ("bash", "sh")
MARK = re.compile(r"^<!-- (setup|output|not run: (?P<reason>.*\S.*)) -->$")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language, text and mark."""

    page: Path
    line: int  # of the first line of its text, counted from 1
    language: str
    text: str
    mark: str | None  # "setup", "output", "not run: ..." or None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        assert end < len(lines), f"{page.relative_to(REPO)}:{i + 1}: a fence never closed"
        mark = MARK.match(lines[i - 1].strip()) if i > 0 else None
        text = "".join(line[indent:] + "\n" for line in lines[i + 1 : end])
        language = opening["info"].strip().split(" ")[0]
        found.append(Block(page, i + 2, language, text, mark[1] if mark else None))
        i = end + 1
    return found


def setup_block() -> Block:
    (setup,) = [b for page in PAGES for b in blocks(page) if b.mark == "setup"]
    return setup


def test_every_block_is_run_compared_or_marked() -> None:
    unmarked = [
        b.where
        for page in PAGES
        for b in blocks(page)
        if b.mark is None and b.language not in PYTHON + SHELL
    ]
    assert not unmarked, f"blocks neither run nor marked (<!-- not run: why -->): {unmarked}"
    for page in PAGES:
        previous: Block | None = None
        for block in blocks(page):
            if block.mark == "output":
                assert previous is not None and previous.mark in (None, "setup"), (
                    f"{block.where}: an output must follow a block that runs"
                )
            previous = block


def test_the_pages_show_examples_that_run() -> None:
    run = [b for page in PAGES for b in blocks(page) if b.mark in (None, "setup")]
    assert len(run) >= 40, len(run)
    for page in PAGES:
        assert (
            page == README
            or any(b.mark is None for b in blocks(page))
            or (page.name in ("architecture.md", "cli-reference.md"))
        ), f"{page.relative_to(REPO)} shows no example that runs"


def _run_python(block: Block) -> str:
    code = compile("\n" * (block.line - 1) + block.text, str(block.page), "exec")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(code, {"__name__": "__main__"})
    return printed.getvalue()


def _run_shell(block: Block, folder: Path) -> str:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["COLUMNS"] = "100"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.text],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{done.stderr}"
    return done.stdout


def _run(block: Block, folder: Path) -> str:
    if block.language in PYTHON:
        return _run_python(block)
    return _run_shell(block, folder)


def _assert_shown(shown: Block, printed: str) -> None:
    """Every line of ``shown`` appears in ``printed``, in order (``...`` skips)."""
    lines = [line.rstrip() for line in printed.splitlines()]
    at = 0
    for want in shown.text.splitlines():
        if not want.strip() or want.strip() == "...":
            continue
        while at < len(lines) and lines[at] != want.rstrip():
            at += 1
        assert at < len(lines), f"{shown.where}: not printed (in order): {want!r}\n{printed}"
        at += 1


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_page_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TAME_MT_PROGRESS", "0")
    _run(setup_block(), tmp_path)
    printed = ""
    for block in blocks(page):
        if block.mark == "output":
            _assert_shown(block, printed)
        elif block.mark is None or block.mark == "setup":
            printed = _run(block, tmp_path)


DOTTED = re.compile(r"`(tame_mt_metric(?:\.\w+)+)")
PATH = re.compile(
    r"`((?:tame_mt_metric|benchmarks|tests|examples|core|install|\.ci|\.github)/[\w./-]*)`"
)


def _resolves(dotted: str) -> bool:
    """``dotted`` names a module of the package, or an attribute of one."""
    import importlib

    if dotted.endswith(".py"):  # a file: tame_mt_metric.py
        return (REPO / dotted).is_file()
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def test_the_names_and_paths_the_pages_give_exist() -> None:
    """A module, function or file named in the prose (not only in examples)
    still exists under that name."""
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        missing += [f"{page.name}: {n}" for n in DOTTED.findall(text) if not _resolves(n)]
        missing += [f"{page.name}: {p}" for p in PATH.findall(text) if not (REPO / p).exists()]
    assert not missing, missing
