"""The ``tame-mt-metric`` command line: the package's API from a shell.

Exit codes: 0 success, 1 a data error (a file, its content, a cache entry),
2 a usage error (an option or its value), 141 when the reader of stdout left
(``... | head``: quietly, as other Unix tools do). Errors are one line on
stderr; ``--verbose`` adds the traceback and stage timings. ``--version``
prints the versions of the package, its compiled core, sacrebleu and Python.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import importlib
import os
import platform
import re
import sys
import traceback
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from tame_mt_metric._version import __version__
from tame_mt_metric.cli.path_options import checked_paths
from tame_mt_metric.errors import InvalidOptionError, TameError
from tame_mt_metric.files import DEFAULT_LINE_LIMIT, LINE_LIMIT_ENV, line_limit

__all__ = ["main", "versions"]

# The exit status of a process that a SIGPIPE ended (128 + 13), what a shell
# reports for any Unix tool whose reader left.
BROKEN_PIPE_EXIT = 141


# The commands each module registers, in the order of ``--help``. Running a
# command imports its own module (and what it shares: ``score-cached-batch``
# the paired options of ``compare_command``), so a lookup need not import scoring;
# ``--help`` and an unknown name import them all.
COMMANDS: dict[str, tuple[str, ...]] = {
    "score_commands": ("score", "audit", "tm-baseline", "score-cached", "score-cached-batch"),
    "compare_command": ("compare",),
    "shard_commands": ("merge",),
    "index_commands": ("index",),
    "lookup_command": ("lookup",),
    "decontaminate_command": ("decontaminate",),
    "doctor": ("doctor", "demo"),
    "flores_commands": ("flores", "xsts", "correlate", "toxicity"),
}


def versions() -> list[tuple[str, str]]:
    """(distribution, version) of what the numbers depend on, and Python's."""
    out = [("tame-mt-metric", __version__)]
    for name in ("tame-mt-core", "sacrebleu"):
        try:
            out.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            out.append((name, "not installed"))
    return [*out, (platform.python_implementation(), platform.python_version())]


class _Version(argparse.Action):
    """``--version``: one line per distribution (argparse's own action rewraps text)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the versions and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        sys.stdout.write("".join(f"{name} {version}\n" for name, version in versions()))
        parser.exit(0)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command``'s module alone."""
    modules = [m for m, names in COMMANDS.items() if command in names] or list(COMMANDS)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no report on stdout")
    common.add_argument("--verbose", action="store_true", help="stage timings, tracebacks")
    common.add_argument(
        "--max-line-bytes",
        type=int,
        metavar="N",
        help=f"the longest input line read (default {DEFAULT_LINE_LIMIT:,}; {LINE_LIMIT_ENV})",
    )
    parser = argparse.ArgumentParser(
        prog="tame-mt-metric",
        description="Training-aware MT evaluation: exposure of a test set to training data, "
        "the translation-memory baseline, exposure bins, and the FLORES-200 protocol.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in modules:
        importlib.import_module(f"tame_mt_metric.cli.{name}").register(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; ``argv`` defaults to the process's own arguments."""
    try:
        try:
            code = _run(argv)
        finally:
            sys.stdout.flush()  # a reader that left is found here, not at exit
        return code
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE_EXIT
    finally:
        if argv is None:
            # The process ends next (the console script, ``python -m``): its last
            # collection would walk every object alive, and frozen ones it skips.
            gc.freeze()


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the flush at exit finds no closed
    pipe (the recipe of Python's ``signal`` documentation)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (open until the process ends)
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


def _subcommand(parser: argparse.ArgumentParser, word: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser | None = action.choices.get(word)
            return found
    return None


def _command_parser(
    parser: argparse.ArgumentParser, words: Sequence[str]
) -> argparse.ArgumentParser:
    """The parser of the (sub)command that ``words`` run."""
    current = parser
    for word in words:
        if word == "--":
            break
        if not word.startswith("-"):
            current = _subcommand(current, word) or current
    return current


def _in_option_words(message: str, parser: argparse.ArgumentParser) -> str:
    """An error of the Python API in the command line's words: a setting's Python
    name (``far_threshold``, ``spm_model``) becomes its option (``--far-threshold``)
    where it opens the message or, holding an underscore, stands as a word."""
    for action in parser._actions:
        option = next((o for o in action.option_strings if o.startswith("--")), None)
        if option is None or option[2:].replace("-", "_") != action.dest:
            continue
        name = re.escape(action.dest)
        if "_" in action.dest:
            message = re.sub(rf"(?<![\w./-]){name}(?![\w./-])", option, message)
        else:
            message = re.sub(rf"\A{name}(?=:)", option, message)
    return message


def _in_user_words(message: str, args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """``message`` in the command line's words: the Python names of settings
    become options, and a message that opens with a path given to one option
    (``.: a folder, not a file``) names that option (``--ref .: ...``)."""
    message = _in_option_words(message, parser)
    given: dict[str, list[str]] = {}
    for action in parser._actions:
        value = getattr(args, action.dest, None)
        option = next((o for o in action.option_strings if o.startswith("--")), None)
        for item in value if isinstance(value, list) else [value]:
            if option is not None and isinstance(item, Path):
                given.setdefault(str(item), []).append(option)
    for path, options in sorted(given.items(), key=lambda item: -len(item[0])):
        if message.startswith(f"{path}:") and len(set(options)) == 1:
            return f"{options[0]} {message}"
    return message


def _check_option_names(parser: argparse.ArgumentParser, words: Sequence[str]) -> None:
    """An unknown ``--option`` is a one-line usage error that names the nearest
    option of its command (``--hpy``: did you mean ``--hyp``?), before argparse
    would print the whole usage of a command whose required option it misses."""
    current = parser
    for word in words:
        if word == "--":
            return
        if not word.startswith("--"):
            current = _subcommand(current, word) or current
            continue
        name = word.partition("=")[0]
        known = [o for o in current._option_string_actions if o.startswith("--")]
        if name in known or sum(o.startswith(name) for o in known) > 0:
            continue  # exact, or a prefix argparse resolves (or calls ambiguous)
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        current.exit(
            2,
            f"{current.prog}: error: unknown option {name}{hint} "
            f"({current.prog} --help lists its options)\n",
        )


def _run(argv: list[str] | None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words else None)
    _check_option_names(parser, words)
    args = parser.parse_args(argv)
    command = _command_parser(parser, words)
    try:
        if getattr(args, "max_line_bytes", None) is not None:
            os.environ[LINE_LIMIT_ENV] = str(args.max_line_bytes)
            try:
                line_limit()  # checked before any work
            except InvalidOptionError as exc:
                raise InvalidOptionError(f"--max-line-bytes: {exc}") from exc
        checked_paths(command, args)  # no output over an input, before any work
        code: int = args.run(args)
        return code
    except BrokenPipeError:
        raise  # the reader of stdout left: no error (``main``)
    except InvalidOptionError as exc:
        if args.verbose:
            traceback.print_exc()
        parser.exit(2, f"tame-mt-metric: error: {_in_user_words(str(exc), args, command)}\n")
    except (TameError, OSError) as exc:
        if args.verbose:
            traceback.print_exc()
        print(f"tame-mt-metric: error: {_in_user_words(str(exc), args, command)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tame-mt-metric: interrupted", file=sys.stderr)
        return 130
