"""``audit --shard i/n --partial-out FILE`` and ``merge``: the audit of a corpus
in shards on any engine (a job array, Spark, Dask), merged exactly."""

from __future__ import annotations

import argparse

from tame_mt_metric.cli.common import (
    add_output_options,
    add_report_options,
    add_schema_option,
    config_from,
    json_document,
    read_aligned,
    write_json,
    write_lines,
    write_text,
)
from tame_mt_metric.cli.human import render_report
from tame_mt_metric.cli.path_options import READ
from tame_mt_metric.cli.segments import write_segments
from tame_mt_metric.errors import InvalidOptionError, MisalignedInputError
from tame_mt_metric.report.audit import Audit
from tame_mt_metric.report.html import render_html
from tame_mt_metric.report.pipeline import ItemizedReport, report_from_audit
from tame_mt_metric.report.scores import Scorers
from tame_mt_metric.retrieval.exposure import Exposures
from tame_mt_metric.retrieval.text_files import TextFiles
from tame_mt_metric.scale.shards import (
    PartialAudit,
    audit_shard,
    check_partial,
    merge_partials,
    parse_shard,
    shard_ranges,
)

__all__ = ["audit_one_shard", "register"]


def audit_one_shard(args: argparse.Namespace, sources: list[str], refs: list[list[str]]) -> int:
    """``audit --shard i/n``: only this shard's rows of the training files are read."""
    if not (args.train_src and args.train_tgt) or args.train_dataset or args.index:
        raise InvalidOptionError("--shard: give the corpus as --train-src and --train-tgt")
    if not args.partial_out:
        raise InvalidOptionError("--shard: --partial-out names the partial audit to write")
    index, count = parse_shard(args.shard)
    ranges = shard_ranges(TextFiles(args.train_src, args.train_tgt).num_rows, count)
    if index >= len(ranges):
        raise InvalidOptionError(f"--shard: the corpus has only {len(ranges)} shards")
    start, stop = ranges[index]
    config = config_from(args).retrieval
    files = TextFiles(args.train_src, args.train_tgt)
    blocks = files.blocks(config.block_rows, start, stop)
    part = audit_shard(blocks, start, sources, refs or None, config)
    part.save(args.partial_out)
    if not args.quiet:
        print(f"shard {index}/{count}: rows {start:,}..{stop:,} -> {args.partial_out}")
    return 0


def _merge(args: argparse.Namespace) -> int:
    config = config_from(args)
    texts = read_aligned([args.test_src, *args.ref] + ([args.hyp] if args.hyp else []))
    sources = texts[0]
    refs = [list(r) for r in zip(*texts[1 : 1 + len(args.ref)], strict=True)]
    parts = [PartialAudit.load(p) for p in args.partial]
    for path, part in zip(args.partial, parts, strict=True):
        try:
            check_partial(part, sources, refs, config.retrieval)
        except (InvalidOptionError, MisalignedInputError) as exc:
            raise type(exc)(f"--partial {path}: {exc}") from exc
    merged = merge_partials(parts, config.tm_zero_policy)
    hyps = texts[-1] if args.hyp else [""] * len(sources)
    if len(merged.exposures) != len(sources):
        raise InvalidOptionError(
            f"--test-src: {len(sources)} items, the partial audits have {len(merged.exposures)}"
        )
    scorers = Scorers.for_references(config, refs)
    audit = Audit(
        merged.exposures,
        merged.tm_hypotheses,
        scorers.statistics(merged.tm_hypotheses).rows(),
        merged.fingerprint,
    )
    report = report_from_audit(audit, merged.num_train, merged.fingerprint, hyps, refs, config)
    exposures = Exposures(merged.exposures.items, merged.num_train, "streaming")
    result = ItemizedReport(report, exposures, merged.tm_hypotheses, audit.tm_statistics)
    if args.segment_out:
        given = hyps if args.hyp else None
        write_segments(args.segment_out, result, sources, refs, given, {}, args.output_schema)
    if args.tm_out:
        write_lines(args.tm_out, merged.tm_hypotheses)
    if args.json_out:
        document = report.as_json(system=bool(args.hyp))
        write_json(args.json_out, json_document(args, document, config, exposures))
    if args.html_out:
        write_text(args.html_out, render_html(report))
    if not args.quiet:
        print(render_report(report))
    return 0


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    merge = sub.add_parser("merge", parents=[common], help="merge partial audits of shards")
    merge.add_argument(
        "--partial", type=READ, action="append", required=True, help="repeat per shard"
    )
    merge.add_argument("--test-src", type=READ, required=True)
    merge.add_argument("--ref", type=READ, action="append", required=True)
    merge.add_argument("--hyp", type=READ, help="also score this system")
    add_report_options(merge)
    add_output_options(merge)
    add_schema_option(merge)
    merge.set_defaults(run=_merge)
