"""docs/cli-reference.md is every command's ``--help``, as the command prints it.

After a change to an option, rewrite the page from the parser:

    python tests/test_docs_cli_reference.py
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "cli-reference.md"
WIDTH = "88"  # the terminal width the help texts are wrapped for
MARK = "<!-- not run: the text `--help` prints, compared by its own test -->"

INTRO = """\
# CLI reference

Every command of `tame-mt-metric` (also `python -m tame_mt_metric`) with its
`--help`, wrapped for a terminal of {width} columns. The
[command line](cli.md) page shows them at work on the bundled example; a test
holds this page to what the commands print.
"""


def _commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (sub)command's words and parser, in the order of ``--help``."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*words, name))


def render() -> str:
    """The page, from the parser as it is now."""
    from tame_mt_metric.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        sections = [INTRO.format(width=WIDTH)]
        for words, parser in _commands(build_parser()):
            title = " ".join(("tame-mt-metric", *words))
            sections.append(
                f"## `{title}`\n\n{MARK}\n```text\n{parser.format_help().rstrip()}\n```\n"
            )
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(sections)


def test_the_page_is_every_commands_help() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/cli-reference.md differs from the commands' --help: "
        "python tests/test_docs_cli_reference.py rewrites it"
    )


def test_the_page_names_every_command() -> None:
    from tame_mt_metric.cli import COMMANDS

    text = PAGE.read_text(encoding="utf-8")
    for names in COMMANDS.values():
        for name in names:
            assert f"## `tame-mt-metric {name}`" in text


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    PAGE.write_text(render(), encoding="utf-8")
