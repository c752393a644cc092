"""``index build / inspect / verify``: the same index folders the metric keeps in
its cache, plus the training text (``corpus.arrow``) that scoring from an
index needs for the TM hypotheses. Treat an index folder like the corpus."""

from __future__ import annotations

import argparse
import json
import warnings

from tame_mt_metric.cache.corpus_file import (
    CORPUS_FILE,
    corpus_of_index,
    open_with_text,
    write_corpus,
)
from tame_mt_metric.cache.entries import CacheOptions, cached_index, find_cached_index
from tame_mt_metric.cache.index_files import read_manifest, write_index
from tame_mt_metric.cli.common import (
    Stages,
    add_report_options,
    add_train_options,
    config_from,
    corpus_from_options,
)
from tame_mt_metric.cli.path_options import READ, WRITE
from tame_mt_metric.errors import CacheWarning, IndexFileError
from tame_mt_metric.retrieval.exposure import TrainingIndex

__all__ = ["register"]


def _build(args: argparse.Namespace) -> int:
    stages = Stages(args.verbose, args.quiet)
    config = config_from(args).retrieval
    with stages.stage("read the training corpus"):
        corpus = corpus_from_options(args)
    with stages.stage("build the index"):
        if args.out is None:
            cache = CacheOptions(cache_dir=args.cache_dir, train_key=args.train_key)
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always", CacheWarning)
                cached_index(corpus, config, cache)
            found = find_cached_index(corpus, config, cache)
            if found is None:  # the cache could not store it (full, read-only)
                why = str(said[-1].message) if said else "the cache refused it"
                raise IndexFileError(f"{cache.root()}: the index could not be stored ({why})")
            folder = found
        else:
            folder = args.out
            if folder.exists():
                raise IndexFileError(f"--out: {folder} exists; remove it or choose another")
            index = TrainingIndex.build(*corpus.whole(), config)
            extra = {
                "train_key": corpus.fingerprint,
                "train_fingerprint": corpus.fingerprint,
                "train_rows": corpus.num_rows,
            }
            # The text goes in before the folder's one rename: whole or absent.
            write_index(index, folder, extra, lambda tmp: write_corpus(tmp, corpus))
    if args.out is None:
        with stages.stage("save the training text"):
            write_corpus(folder, corpus)
    if not args.quiet:
        print(f"index of {corpus.num_rows:,} training pairs in {folder}")
    return 0


def _inspect(args: argparse.Namespace) -> int:
    manifest = read_manifest(args.folder)
    total = sum(a["bytes"] for a in manifest["arrays"])
    if args.json:
        print(json.dumps(manifest, indent=1))
        return 0
    print(f"{args.folder}")
    print(f"  format {manifest['format_version']}, core {manifest['core_version']}")
    print(f"  training pairs {manifest['rows']:,}   settings {manifest['settings']}")
    print(f"  arrays {len(manifest['arrays'])}, {total / 2**20:,.1f} MiB")
    for a in manifest["arrays"]:
        print(f"    {a['name']:<22} {a['bytes'] / 2**20:>10,.1f} MiB  xxh3-64 {a['xxh3_64']:016x}")
    print(f"  training text: {'yes' if (args.folder / CORPUS_FILE).is_file() else 'no'}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    # Every checksum and invariant, the settings proved on the index's own rows,
    # and every member the manifest names; or an IndexFileError.
    open_with_text(args.folder, full=True)
    if (args.folder / CORPUS_FILE).exists():
        corpus_of_index(args.folder)
    if not args.quiet:
        print(f"{args.folder}: ok ({read_manifest(args.folder)['rows']:,} training pairs)")
    return 0


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    index = sub.add_parser("index", help="build, inspect or verify a training index")
    actions = index.add_subparsers(dest="action", required=True)
    build = actions.add_parser("build", parents=[common], help="index a training corpus")
    add_train_options(build, index=False)
    add_report_options(build)
    build.add_argument("--out", type=WRITE, help="the index folder (default: the metric's cache)")
    build.add_argument("--cache-dir", type=WRITE)
    build.add_argument("--train-key")
    build.set_defaults(run=_build)
    inspect = actions.add_parser("inspect", parents=[common], help="show an index's manifest")
    inspect.add_argument("folder", type=READ)
    inspect.add_argument("--json", action="store_true")
    inspect.set_defaults(run=_inspect)
    verify = actions.add_parser("verify", parents=[common], help="check every array of an index")
    verify.add_argument("folder", type=READ)
    verify.set_defaults(run=_verify)
