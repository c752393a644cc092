"""``lookup``: the nearest training pairs of a few sentences in a saved index
(``index build --out``), each with its exact source exposure; sentences from
the command line, or one per line from standard input."""

from __future__ import annotations

import argparse
import json
import sys

from tame_mt_metric.cli.common import Stages
from tame_mt_metric.cli.path_options import READ
from tame_mt_metric.errors import InputTextError
from tame_mt_metric.lookup import SavedIndex
from tame_mt_metric.report.labels import exposure_text
from tame_mt_metric.retrieval.inputs import lines_of

__all__ = ["register"]

# Sentences looked up in one call: a lookup is interactive; a test set is audited.
MAX_SENTENCES = 100_000


def _sentences(args: argparse.Namespace) -> list[str]:
    if args.sentences and args.sentences != ["-"]:
        return list(args.sentences)
    lines = list(lines_of(sys.stdin.buffer, "standard input", MAX_SENTENCES))
    if not lines:
        raise InputTextError("sentences: none given (as arguments or on standard input)")
    return lines


def _lookup(args: argparse.Namespace) -> int:
    stages = Stages(args.verbose, args.quiet)
    sentences = _sentences(args)
    with stages.stage("open the index"):
        saved = SavedIndex.open(args.index, args.threads)
    with stages.stage("look up"):
        found = saved.lookup(sentences, args.top_k)
    if args.quiet:
        return 0
    for sentence, matches in zip(sentences, found, strict=True):
        if args.json:
            rows = [
                {
                    "row": m.row,
                    "exposure": m.exposure,
                    "overlap": m.overlap,
                    "union": m.union,
                    "source": m.source,
                    "target": m.target,
                }
                for m in matches
            ]
            print(json.dumps({"sentence": sentence, "matches": rows}, ensure_ascii=False))
            continue
        print(sentence)
        for rank, m in enumerate(matches, start=1):
            exposure = exposure_text(m.exposure)
            print(f"  {rank}. row {m.row}  exposure {exposure} ({m.overlap}/{m.union})")
            print(f"     source: {m.source}")
            print(f"     target: {m.target}")
    return 0


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    lookup = sub.add_parser(
        "lookup", parents=[common], help="the nearest training pairs of sentences in a saved index"
    )
    lookup.add_argument("sentences", nargs="*", metavar="SENTENCE", help="'-' or none: stdin")
    lookup.add_argument("--index", type=READ, required=True, help="an index build --out")
    lookup.add_argument("--top-k", type=int, default=5, help="pairs per sentence (default 5)")
    lookup.add_argument("--threads", type=int)
    lookup.add_argument("--json", action="store_true", help="one JSON line per sentence")
    lookup.set_defaults(run=_lookup)
