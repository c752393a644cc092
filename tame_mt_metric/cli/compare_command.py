"""``compare``: paired significance of several systems on one test set, for
the whole set and each exposure bin (``tame_mt_metric.compare``); and the
paired options that ``score-cached-batch`` shares with it."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from tame_mt_metric.cache.index_files import open_saved
from tame_mt_metric.cli.common import (
    Stages,
    add_report_options,
    add_train_options,
    config_from,
    corpus_from_options,
    read_aligned,
    write_json,
    write_text,
)
from tame_mt_metric.cli.human import metric_rows
from tame_mt_metric.cli.path_options import NAMED_READ, READ, WRITE
from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.report.html import render_html
from tame_mt_metric.report.labels import score_text
from tame_mt_metric.report.significance import TM, Comparison, SystemResult, compare

__all__ = [
    "add_paired_options",
    "baseline_of",
    "finish_comparison",
    "register",
    "render_comparison",
    "systems_of",
]

TEST_NAMES = {
    "bs": "paired bootstrap resampling",
    "ar": "approximate randomisation",
    "bs-shift": "paired bootstrap resampling, shifted null",
}


def systems_of(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """The ``--system NAME=PATH`` options, in order."""
    systems = []
    for item in args.system:
        name, eq, path = item.partition("=")
        if not eq or not name or not path:
            raise InvalidOptionError(f"--system: expected NAME=PATH, got {item!r}")
        systems.append((name, Path(path)))
    names = [name for name, _ in systems]
    if len(set(names)) != len(names):
        raise InvalidOptionError(f"--system: a name is repeated in {names}")
    return systems


def baseline_of(args: argparse.Namespace, systems: list[tuple[str, Path]]) -> str:
    """``--baseline`` (a system's name or ``tm``), the first system by default."""
    baseline = args.baseline or systems[0][0]
    if baseline != TM and baseline not in {name for name, _ in systems}:
        raise InvalidOptionError(f"--baseline: {baseline!r} is neither a --system name nor {TM!r}")
    return baseline


def add_paired_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("paired significance")
    group.add_argument("--baseline", help=f"a --system name, or {TM!r} (default: the first)")
    group.add_argument("--paired-n", type=int, default=1000, help="resamples or trials (1000)")
    group.add_argument("--paired-json-out", type=WRITE, help="the comparison as JSON")


def _cell(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.4f}"


def _row(group: str, name: str, label: str, width: int, r: SystemResult) -> str:
    interval = f"[{score_text(r.ci_low)}, {score_text(r.ci_high)}]"
    delta = "-" if r.p_value is None else f"{r.delta:+.2f}"
    return (
        f"  {group:<13} {name:<12} {label:<{width}} {score_text(r.score):>7} {interval:>17} "
        f"{delta:>7} {_cell(r.p_value):>7}"
    )


def _labels(comparison: Comparison) -> dict[str, str]:
    """The human label of each metric key that heads a row (chrF by its word order;
    of two keys of one number, the first, labelled with both)."""
    tested = comparison.settings["metrics"]  # the corpus metrics (a sentence mean has no test)
    report = next(iter(comparison.reports.values()), None)
    if report is None:
        return {m: m for m in tested}
    return {key: label for key, label, _ in metric_rows(report.config) if key in tested}


def render_comparison(comparison: Comparison) -> str:
    s = comparison.settings
    labels = _labels(comparison)
    width = max(8, *(len(label) for label in labels.values()))
    lines = [
        f"Paired significance: {TEST_NAMES[s['test']]} ({s['n_samples']} samples, "
        f"seed {s['seed']}), baseline {s['baseline']}",
        f"  {'group':<13} {'system':<12} {'metric':<{width}} {'score':>7} {'95% CI':>17} "
        f"{'delta':>7} {'p':>7}",
    ]
    groups = {"whole": comparison.whole, **comparison.bins}
    for group, table in groups.items():
        label = group if group == "whole" else f"{group} ({s['bin_counts'][group]})"
        for name, row in table.items():
            lines += [
                _row(label, name, labels[metric], width, r)
                for metric, r in row.items()
                if metric in labels
            ]
    lines += ["", "Signature", "---------", s["signature"]]
    return "\n".join(lines)


def finish_comparison(
    args: argparse.Namespace, comparison: Comparison, sources: list[str] | None = None
) -> None:
    if args.paired_json_out:
        write_json(args.paired_json_out, comparison.as_dict())
    if getattr(args, "html_out", None) and comparison.reports:
        report = next(iter(comparison.reports.values()))
        title = f"TAME report: {', '.join(comparison.reports)}"
        page = render_html(report, comparison, title=title, sources=sources)
        write_text(args.html_out, page)
    if not args.quiet:
        print(render_comparison(comparison))


def _compare(args: argparse.Namespace) -> int:
    stages = Stages(args.verbose, args.quiet)
    config = config_from(args)
    systems = systems_of(args)
    baseline = baseline_of(args, systems)
    with stages.stage("read inputs"):
        train = corpus_from_options(args)
        paths = [args.test_src, *args.ref, *(path for _, path in systems)]
        sources, *rest = read_aligned(paths)
        refs = [list(r) for r in zip(*rest[: len(args.ref)], strict=True)]
        hyps = {name: rest[len(args.ref) + k] for k, (name, _) in enumerate(systems)}
    with stages.stage("audit and test"):
        index = open_saved(args.index, config.retrieval.threads) if args.index else None
        options = {k: v for k, v in config.options().items() if k != "seed"}
        comparison = compare(
            hyps,
            refs,
            sources,
            train,
            baseline,
            test=args.test,
            n_samples=args.paired_n,
            seed=config.seed,
            index=index,
            **options,
        )
    finish_comparison(args, comparison, sources)
    return 0


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "compare",
        parents=[common],
        help="paired significance of systems, whole test set and per bin",
    )
    add_report_options(parser)
    add_train_options(parser)
    parser.add_argument("--test-src", type=READ, required=True)
    parser.add_argument("--ref", type=READ, action="append", required=True)
    parser.add_argument(
        "--system", type=NAMED_READ, action="append", required=True, help="NAME=PATH, repeated"
    )
    parser.add_argument("--test", choices=tuple(TEST_NAMES), default="bs", help="default bs")
    add_paired_options(parser)
    parser.add_argument(
        "--html-out", type=WRITE, help="every system's page, side by side, with the paired tests"
    )
    parser.set_defaults(run=_compare, reads_cache=True)
