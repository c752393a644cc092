"""The ``tame-mt-metric`` command line: the package's API from a shell.

Exit codes: 0 success, 1 a data error (a file, its content, a cache entry),
2 a usage error (an option or its value). Errors are one line on stderr;
``--verbose`` adds the traceback and stage timings.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import traceback

from tame_mt_metric.errors import InvalidOptionError, TameError
from tame_mt_metric.files import DEFAULT_LINE_LIMIT, LINE_LIMIT_ENV, line_limit

__all__ = ["main"]


# The commands each module registers, in the order of ``--help``. Running a
# command imports its own module only (a lookup need not import scoring);
# ``--help`` and an unknown name import them all.
COMMANDS: dict[str, tuple[str, ...]] = {
    "score_commands": ("score", "audit", "tm-baseline", "score-cached", "score-cached-batch"),
    "compare_command": ("compare",),
    "shard_commands": ("merge",),
    "index_files": ("index",),
    "lookup_command": ("lookup",),
    "doctor": ("doctor", "demo"),
    "flores_commands": ("flores", "xsts", "correlate", "toxicity"),
}


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
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in modules:
        importlib.import_module(f"tame_mt_metric.cli.{name}").register(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; ``argv`` defaults to the process's own arguments."""
    try:
        return _run(argv)
    finally:
        if argv is None:
            # The process ends next (the console script, ``python -m``): its last
            # collection would walk every object alive, and frozen ones it skips.
            gc.freeze()


def _run(argv: list[str] | None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(argv)
    try:
        if getattr(args, "max_line_bytes", None) is not None:
            os.environ[LINE_LIMIT_ENV] = str(args.max_line_bytes)
            try:
                line_limit()  # checked before any work
            except InvalidOptionError as exc:
                raise InvalidOptionError(f"--max-line-bytes: {exc}") from exc
        code: int = args.run(args)
        return code
    except InvalidOptionError as exc:
        if args.verbose:
            traceback.print_exc()
        parser.exit(2, f"tame-mt-metric: error: {exc}\n")
    except (TameError, OSError) as exc:
        if args.verbose:
            traceback.print_exc()
        print(f"tame-mt-metric: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tame-mt-metric: interrupted", file=sys.stderr)
        return 130
