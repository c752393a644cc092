"""The ``tame-mt-metric`` command line: the package's API from a shell.

Exit codes: 0 success, 1 a data error (a file, its content, a cache entry),
2 a usage error (an option or its value). Errors are one line on stderr;
``--verbose`` adds the traceback and stage timings.
"""

from __future__ import annotations

import argparse
import gc
import sys
import traceback

from tame_mt_metric.errors import InvalidOptionError, TameError

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    from tame_mt_metric.cli import (
        compare_command,
        doctor,
        flores_commands,
        index_files,
        lookup_command,
        score_commands,
        shard_commands,
    )

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no report on stdout")
    common.add_argument("--verbose", action="store_true", help="stage timings, tracebacks")
    parser = argparse.ArgumentParser(
        prog="tame-mt-metric",
        description="Training-aware MT evaluation: exposure of a test set to training data, "
        "the translation-memory baseline, exposure bins, and the FLORES-200 protocol.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands = (
        score_commands,
        compare_command,
        shard_commands,
        index_files,
        lookup_command,
        doctor,
        flores_commands,
    )
    for module in commands:
        module.register(sub, common)
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
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
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
