"""``decontaminate``: the training pairs within a similarity threshold of any
test item taken out of a training corpus, exactly (a thin wrapper of the
library's ``decontaminate``, on the engine ``--engine`` names). The corpus is
two text files or a dataset (``--train-dataset``, read as the audit reads it).
The kept pairs are copied byte for byte as read (a dataset's kept rows in its
own form, every column), the removed rows written as JSON lines with their
matches, and the summary printed (and written with ``--json-out``); every
output appears whole at the end, or none does."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from tame_mt_metric.cache.corpus_file import open_with_text
from tame_mt_metric.cli.common import (
    Stages,
    add_train_options,
    config_from,
    corpus_from_options,
    read_aligned,
    train_form,
)
from tame_mt_metric.cli.decontaminate_datasets import KeptDataset
from tame_mt_metric.cli.decontaminate_files import (
    KeptCopy,
    KeptRows,
    write_outputs,
)
from tame_mt_metric.cli.path_options import READ, WRITE
from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.files import regular_file
from tame_mt_metric.report import decontaminate as library
from tame_mt_metric.retrieval.decontaminate import RULES, SIDES

__all__ = ["TestSetFiles", "register", "render_summary", "test_sets_of"]


class TestSetFiles(argparse.Action):
    """``--test-src`` and ``--ref`` in the order given, so that each ``--ref``
    goes with the ``--test-src`` before it (``args.test_set_files``), besides
    each option's own list."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        path = Path(str(values))
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), path])
        order = [*(getattr(namespace, "test_set_files", None) or []), (self.dest, path)]
        namespace.test_set_files = order


def test_sets_of(
    args: argparse.Namespace,
) -> tuple[dict[str, list[str]], dict[str, list[list[str]]] | None]:
    """The test sets' sources and references (one list per item), by name, in
    the order given; references are None when no ``--ref`` is given."""
    groups: list[tuple[Path, list[Path]]] = []
    for kind, path in getattr(args, "test_set_files", None) or []:
        if kind == "test_src":
            groups.append((path, []))
        elif not groups:
            raise InvalidOptionError(f"--ref {path}: give the --test-src it goes with before it")
        else:
            groups[-1][1].append(path)
    if not groups:
        raise InvalidOptionError("--test-src: give at least one test set")
    names = list(args.test_set_name or [])
    if names and len(names) != len(groups):
        raise InvalidOptionError(
            f"--test-set-name: {len(names)} names for {len(groups)} test sets (one per --test-src)"
        )
    names = names or [src.name for src, _ in groups]
    for name in names:
        if not name.strip():
            raise InvalidOptionError("--test-set-name: an empty name")
        if names.count(name) > 1:
            raise InvalidOptionError(
                f"--test-set-name: two test sets named {name!r} (--test-set-name names each)"
            )
    with_refs = [bool(refs) for _, refs in groups]
    if any(with_refs) and not all(with_refs):
        missing = names[with_refs.index(False)]
        raise InvalidOptionError(
            f"--ref: test set {missing!r} has none; give references for every test set or none"
        )
    sources: dict[str, list[str]] = {}
    references: dict[str, list[list[str]]] = {}
    for name, (src, refs) in zip(names, groups, strict=True):
        texts = read_aligned([src, *refs])
        sources[name] = texts[0]
        references[name] = [list(item) for item in zip(*texts[1:], strict=True)]
    return sources, references if all(with_refs) else None


def _threshold(text: str) -> Fraction:
    """``--threshold``, a decimal read exactly ("0.7" is 7/10), in (0, 1]."""
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError) as exc:
        raise InvalidOptionError(f"--threshold: expected a number in (0, 1], got {text!r}") from exc
    if not 0 < value <= 1:
        raise InvalidOptionError(
            f"--threshold: must lie in (0, 1], got {text} (0 would remove every pair)"
        )
    return value


def render_summary(summary: dict[str, Any], outputs: Sequence[Path]) -> str:
    """The summary as the command prints it."""
    rules = summary["removed_by_rule"]
    by_rule = ", ".join(f"{rule} {rules.get(rule, 0):,}" for rule in SIDES)
    sets = summary["removed_by_test_set"]
    by_set = ", ".join(f"{name} {sets.get(name, 0):,}" for name in summary["test_sets"])
    threshold = f"{summary['threshold']:g} ({summary['threshold_exact']})"
    lines = [
        f"rows read     {summary['rows_read']:,}",
        f"rows removed  {summary['rows_removed']:,} (by {summary['by']}, threshold {threshold})",
        f"rows kept     {summary['rows_kept']:,}",
        f"by rule       {by_rule} (a row may reach the threshold on more than one side)",
        f"by test set   {by_set}",
        "test sets     "
        + ", ".join(f"{name} ({items:,} items)" for name, items in summary["test_sets"].items()),
        f"fingerprint   {summary['fingerprint']}",
        f"signature     {summary['signature']}",
        "written       " + ", ".join(str(p) for p in outputs),
    ]
    return "\n".join(lines)


def _kept_outputs(
    args: argparse.Namespace,
) -> tuple[list[tuple[str, Path]], list[tuple[str, Path]], list[KeptRows]]:
    """The training inputs, the kept rows' outputs and their copies, by the
    corpus's form: --out-src/--out-tgt go with --train-src/--train-tgt,
    --out-dataset with --train-dataset; any other mix is refused."""
    lines = [(o, p) for o, p in (("--out-src", args.out_src), ("--out-tgt", args.out_tgt)) if p]
    if args.train_dataset is not None:
        if lines:
            raise InvalidOptionError(
                f"{', '.join(o for o, _ in lines)}: go with --train-src/--train-tgt; the kept "
                "rows of --train-dataset go to --out-dataset"
            )
        if args.out_dataset is None:
            raise InvalidOptionError("--out-dataset: needed with --train-dataset (its kept rows)")
        kept = KeptDataset(args.train_dataset, args.out_dataset)
        kept.check()
        train = [("--train-dataset", args.train_dataset)]
        return train, [("--out-dataset", args.out_dataset)], [kept]
    if args.out_dataset is not None:
        raise InvalidOptionError(
            "--out-dataset: goes with --train-dataset; the kept lines of "
            "--train-src/--train-tgt go to --out-src and --out-tgt"
        )
    if len(lines) != 2:
        raise InvalidOptionError(
            "--out-src and --out-tgt: both needed with --train-src/--train-tgt (the kept lines)"
        )
    copies: list[KeptRows] = [
        KeptCopy(args.train_src, args.out_src),
        KeptCopy(args.train_tgt, args.out_tgt),
    ]
    return [("--train-src", args.train_src), ("--train-tgt", args.train_tgt)], lines, copies


def _decontaminate(args: argparse.Namespace) -> int:
    stages = Stages(args.verbose, args.quiet)
    threshold = _threshold(args.threshold)
    config = config_from(args)
    train_form(args)  # exactly one training corpus, before any work
    train_inputs, kept_outputs, copies = _kept_outputs(args)
    outputs = [*kept_outputs, ("--removed-out", args.removed_out)]
    outputs += [("--json-out", args.json_out)] if args.json_out else []
    for option, path in train_inputs:
        if not path.is_dir():  # a save_to_disk folder is opened by datasets
            regular_file(path, option)  # before the test sets are read
    with stages.stage("read test sets"):
        sources, references = test_sets_of(args)
    if args.by in ("target", "pair") and references is None:
        raise InvalidOptionError(f"--by {args.by}: needs references (--ref after each --test-src)")
    with stages.stage("read corpus"):
        train = corpus_from_options(args)
        index = open_with_text(args.saved_index, config.retrieval) if args.saved_index else None
    with stages.stage("decontaminate"):
        result = library.decontaminate(
            train,
            sources,
            references,
            threshold=threshold,
            by=args.by,
            config=config,
            index=index,
        )
    summary = result.summary()
    with stages.stage("write outputs"):
        documents = [(args.json_out, summary)] if args.json_out else []
        write_outputs(copies, result.removed, result.num_rows, args.removed_out, documents)
    if not args.quiet:
        print(render_summary(summary, [path for _, path in outputs]))
    return 0


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    command = sub.add_parser(
        "decontaminate",
        parents=[common],
        help="remove every training pair within a similarity threshold of a test item",
        description="Remove from a training corpus every pair whose similarity to some test "
        "item reaches the threshold (character n-gram Jaccard, as the audit measures it, "
        "compared exactly). The kept pairs are copied byte for byte, in their order; a "
        "dataset's kept rows are written in its own form, every column.",
    )
    add_train_options(command, index=False)
    command.add_argument_group("a saved index of the corpus (optional)").add_argument(
        "--index",
        dest="saved_index",
        type=READ,
        metavar="DIR",
        help="a saved index of this corpus ('index build --out'), searched instead of judging "
        "every row; its settings are the default, and it must index this very corpus",
    )
    tests = command.add_argument_group("test sets")
    tests.add_argument(
        "--test-src",
        type=READ,
        action=TestSetFiles,
        required=True,
        metavar="F",
        help="a test set's sources (repeat for more test sets)",
    )
    tests.add_argument(
        "--ref",
        type=READ,
        action=TestSetFiles,
        metavar="F",
        help="references of the --test-src before it (repeat for several per item)",
    )
    tests.add_argument(
        "--test-set-name",
        action="append",
        metavar="NAME",
        help="each test set's name, in order (default: its --test-src file name)",
    )
    rule = command.add_argument_group("the rule")
    rule.add_argument(
        "--threshold",
        required=True,
        metavar="T",
        help="the similarity, in (0, 1], at or above which a pair is removed (read exactly)",
    )
    rule.add_argument(
        "--by",
        choices=RULES,
        default="any",
        help="the side compared: the sources, the references' targets, both sides of one "
        "item at once (pair), or source or target (any, the default)",
    )
    settings = command.add_argument_group("similarity settings (as the audit's)")
    settings.add_argument(
        "--ngram-orders", metavar="N,N", help="comma list of n-gram orders (default 3,4,5)"
    )
    settings.add_argument("--lowercase", action="store_true", default=None)
    settings.add_argument("--strip-diacritics", action="store_true", default=None)
    settings.add_argument("--normalize-punctuation", action="store_true", default=None)
    settings.add_argument("--threads", type=int, help="worker threads (TAME_MT_THREADS)")
    settings.add_argument(
        "--engine", choices=("local", "ray"), default="local", help="ray: shards on Ray"
    )
    settings.add_argument("--ray-address", help="an existing Ray cluster")
    outputs = command.add_argument_group("outputs (written whole at the end; .gz compresses)")
    outputs.add_argument(
        "--out-src", type=WRITE, metavar="F", help="the kept sources (with --train-src)"
    )
    outputs.add_argument(
        "--out-tgt", type=WRITE, metavar="F", help="the kept targets (with --train-tgt)"
    )
    outputs.add_argument(
        "--out-dataset",
        type=WRITE,
        metavar="PATH",
        help="the kept rows of --train-dataset, every column, in its form (a save_to_disk "
        "folder, an .arrow or a .parquet file)",
    )
    outputs.add_argument(
        "--removed-out",
        type=WRITE,
        required=True,
        metavar="F",
        help="one JSON line per removed pair",
    )
    outputs.add_argument("--json-out", type=WRITE, metavar="F", help="the summary as JSON")
    command.set_defaults(run=_decontaminate)
