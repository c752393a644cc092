"""``score``, ``audit``, ``tm-baseline``, ``score-cached`` and
``score-cached-batch``: thin wrappers of ``score_tame``, ``find_exposures`` and
``report_from_audit``."""

from __future__ import annotations

import argparse
from pathlib import Path

from tame_mt_metric.cache.corpus_file import open_with_text
from tame_mt_metric.cli.common import (
    Stages,
    add_output_options,
    add_report_options,
    add_schema_option,
    add_train_options,
    config_from,
    corpus_from_options,
    json_document,
    read_aligned,
    write_json,
    write_jsonl,
    write_lines,
    write_text,
)
from tame_mt_metric.cli.compare_command import (
    add_paired_options,
    baseline_of,
    finish_comparison,
    systems_of,
)
from tame_mt_metric.cli.human import render_exposure, render_report
from tame_mt_metric.cli.path_options import JSON_OUT_DIR, NAMED_READ, READ, SEGMENTS_READ, WRITE
from tame_mt_metric.cli.segments import read_segments, write_segments
from tame_mt_metric.errors import InvalidOptionError
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.document import ReportDocument, source_side_report_json
from tame_mt_metric.report.exposure_summary import ExposureSummary, summarize
from tame_mt_metric.report.html import neighbour_texts, render_html
from tame_mt_metric.report.pipeline import backend_of, report_from_audit, score_tame, signature
from tame_mt_metric.report.scores import SACREBLEU_VERSION
from tame_mt_metric.report.significance import TM, comparison
from tame_mt_metric.report.tm_baseline import tm_hypotheses
from tame_mt_metric.report.v1_schema import V1, v1_segment_rows
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tame_mt_metric.retrieval.exposure import Exposures, find_exposures

__all__ = ["register"]


def _test_files(
    args: argparse.Namespace, hyp: bool
) -> tuple[list[str], list[list[str]], list[str]]:
    """Test sources, references (one list per item) and hypotheses, line-aligned."""
    paths = [args.test_src, *(args.ref or [])] + ([args.hyp] if hyp else [])
    texts = read_aligned(paths)
    sources, refs = texts[0], texts[1 : 1 + len(args.ref or [])]
    per_item = [list(r) for r in zip(*refs, strict=True)] if refs else []
    return sources, per_item, texts[-1] if hyp else []


def _texts(args: argparse.Namespace) -> dict[str, bool]:
    return {
        side: getattr(args, f"include_{side}_text", False)
        for side in ("source", "reference", "hyp", "neighbor")
    }


def _finish(
    args: argparse.Namespace,
    report: ReportDocument,
    exposures: Exposures,
    stages: Stages,
    texts: dict[str, list[str]] | None = None,
    sources: list[str] | None = None,
    neighbours: dict[int, str] | None = None,
) -> None:
    if args.json_out:
        document = json_document(args, report.as_json(), report.config, exposures, stages.timings)
        write_json(args.json_out, document)
    if args.html_out:
        page = render_html(report, texts=texts, sources=sources, neighbours=neighbours)
        write_text(args.html_out, page)
    if not args.quiet:
        print(render_report(report))


def _page_texts(
    args: argparse.Namespace, sources: list[str], refs: list[list[str]], hyps: list[str]
) -> dict[str, list[str]] | None:
    """The raw text the page may show beside the most exposed items and their
    test sources: only the sides the ``--include-*-text`` flags name."""
    sides = _texts(args)
    texts = {
        "reference": [r[0] for r in refs] if sides["reference"] else None,
        "hypothesis": hyps if sides["hyp"] else None,
    }
    chosen = {name: column for name, column in texts.items() if column is not None}
    return chosen or None


def _score(args: argparse.Namespace) -> int:
    stages = Stages(args.verbose, args.quiet)
    config = config_from(args)
    with stages.stage("read inputs"):
        train = corpus_from_options(args)
        sources, refs, hyps = _test_files(args, hyp=True)
    with stages.stage("audit and score"):
        index = open_with_text(args.index, config.retrieval) if args.index else None
        result = score_tame(
            train, hyps, refs, sources, config, args.include_neighbor_text, index=index
        )
    with stages.stage("write outputs"):
        if args.segment_out:
            write_segments(
                args.segment_out, result, sources, refs, hyps, _texts(args), args.output_schema
            )
        if args.tm_out:
            write_lines(args.tm_out, result.tm_hypotheses)
        neighbours = (
            neighbour_texts(result) if args.include_neighbor_text and args.html_out else None
        )
        page = _page_texts(args, sources, refs, hyps)
        _finish(args, result.report, result.exposures, stages, page, sources, neighbours)
    return 0


def _audit_command(args: argparse.Namespace) -> int:
    stages = Stages(args.verbose, args.quiet)
    config = config_from(args)
    if args.shard:
        from tame_mt_metric.cli.shard_commands import audit_one_shard

        sources, refs, _ = _test_files(args, hyp=False)
        return audit_one_shard(args, sources, refs)
    with stages.stage("read inputs"):
        train = corpus_from_options(args, sources_only=not args.ref)
        sources, refs, _ = _test_files(args, hyp=False)
    if refs:  # the full audit: what score-cached needs
        summary = _full_audit(args, stages, config, train, sources, refs)
    else:
        summary = _source_side_audit(args, stages, config, train, sources)
    if not args.quiet:
        print("\n".join(render_exposure(summary)))
    return 0


def _full_audit(
    args: argparse.Namespace,
    stages: Stages,
    config: TameConfig,
    train: TrainingCorpus,
    sources: list[str],
    refs: list[list[str]],
) -> ExposureSummary:
    """The audit of sources and references, written as ``score-cached`` reads it."""
    with stages.stage("audit"):
        index = open_with_text(args.index, config.retrieval) if args.index else None
        result = score_tame(
            train,
            [""] * len(sources),
            refs,
            sources,
            config,
            args.include_neighbor_text,
            index=index,
        )
    with stages.stage("write outputs"):
        if args.segment_out:
            write_segments(
                args.segment_out, result, sources, refs, None, _texts(args), args.output_schema
            )
        if args.json_out:
            document = result.report.as_json(system=False)
            write_json(
                args.json_out,
                json_document(args, document, config, result.exposures, stages.timings),
            )
        if args.tm_out:
            write_lines(args.tm_out, result.tm_hypotheses)
    return result.report.summary


def _source_side_audit(
    args: argparse.Namespace,
    stages: Stages,
    config: TameConfig,
    train: TrainingCorpus,
    sources: list[str],
) -> ExposureSummary:
    """The sources' exposure alone (no references given)."""
    with stages.stage("audit (sources only)"):
        exposures = find_exposures(train.sources, train.targets, sources, None, config.retrieval)
    summary = summarize(exposures, config)
    with stages.stage("write outputs"):
        if args.segment_out:
            rows = [
                {
                    "index": i,
                    "source_exposure": e.source[0].score,
                    "source_nn_index": e.source[0].row,
                    "source_exact": e.source_exact,
                    "bin": b,
                }
                for i, (e, b) in enumerate(zip(exposures, summary.item_bins, strict=True))
            ]
            if args.output_schema == V1:
                rows = v1_segment_rows(rows)
            write_jsonl(args.segment_out, rows)
        if args.json_out:
            data = {
                "num_train": exposures.num_train,
                "num_test": len(sources),
                "num_refs": 0,
                "train_fingerprint": train.fingerprint,
            }
            document = source_side_report_json(
                config,
                signature(config, exposures.num_train, train.fingerprint, exposures.strategy, 0),
                summary,
                exposures,
                data,
                backend_of(config, exposures.strategy),
                {"sacrebleu": SACREBLEU_VERSION},
            )
            write_json(
                args.json_out, json_document(args, document, config, exposures, stages.timings)
            )
    return summary


def _tm_baseline(args: argparse.Namespace) -> int:
    stages = Stages(args.verbose, args.quiet)
    config = config_from(args)
    with stages.stage("read inputs"):
        train = corpus_from_options(args)
        (sources,) = read_aligned([args.test_src])
    with stages.stage("retrieve"):
        exposures = find_exposures(train.sources, train.targets, sources, None, config.retrieval)
        hyps = tm_hypotheses(exposures, train.targets, config.tm_zero_policy)
    with stages.stage("write outputs"):
        write_lines(args.out, hyps)
        if args.metadata_out:
            write_jsonl(
                args.metadata_out,
                [
                    {
                        "index": i,
                        "tm_source_index": e.source[0].row,
                        "tm_source_similarity": e.source[0].score,
                        "tm_zero": e.source[0].overlap == 0,
                    }
                    for i, e in enumerate(exposures)
                ],
            )
    if not args.quiet:
        print(f"{len(hyps):,} TM hypotheses written to {args.out}")
    return 0


def _cached_reports(
    args: argparse.Namespace, systems: list[tuple[str, Path]], stages: Stages
) -> tuple[list[tuple[str, ReportDocument]], Exposures]:
    """Each system's report from the segment file, and the exposures it holds."""
    config = config_from(args)
    with stages.stage("read segments"):
        segments = read_segments(args.segment_in)
        if args.num_train is not None and args.num_train != segments.meta["num_train"]:
            raise InvalidOptionError(
                f"--num-train: {args.num_train}, but {args.segment_in} was made of a training "
                f"corpus of {segments.meta['num_train']} rows"
            )
        refs_files = read_aligned(args.ref)
        refs = [list(r) for r in zip(*refs_files, strict=True)]
        segments.check(config, refs)
        audit = segments.audit()  # read once for every system
    out = []
    for name, path in systems:
        with stages.stage(f"score {name}"):
            (hyps,) = read_aligned([path])
            if len(hyps) != len(refs):
                raise InvalidOptionError(
                    f"{path}: {len(hyps)} lines, the references have {len(refs)}"
                )
            meta = segments.meta
            report = report_from_audit(
                audit,
                meta["num_train"],
                meta["train_fingerprint"],
                hyps,
                refs,
                config,
                artifact_backend=meta["strategy"],
            )
        out.append((name, report))
    return out, audit.exposures


def _score_cached(args: argparse.Namespace) -> int:
    stages = Stages(args.verbose, args.quiet)
    ((_, report),), exposures = _cached_reports(args, [("system", args.hyp)], stages)
    with stages.stage("write outputs"):
        _finish(args, report, exposures, stages)
    return 0


def _score_cached_batch(args: argparse.Namespace) -> int:
    systems = systems_of(args)
    chosen = {"bs": args.paired_bs, "ar": args.paired_ar, "bs-shift": args.paired_bs_shift}
    test = next((name for name, on in chosen.items() if on), None)
    baseline = baseline_of(args, systems) if test else None
    stages = Stages(args.verbose, args.quiet)
    reports, exposures = _cached_reports(args, systems, stages)
    with stages.stage("write outputs"):
        for name, report in reports:
            if args.json_out_dir:
                document = json_document(
                    args, report.as_json(), report.config, exposures, stages.timings
                )
                write_json(args.json_out_dir / f"{name}.tame.json", document)
            if not args.quiet:
                print(f"== {name}\n{render_report(report)}\n")
    if test and baseline:
        with stages.stage("paired tests"):
            _paired(args, reports, baseline, test)
    elif args.html_out:
        name, report = reports[0]
        write_text(args.html_out, render_html(report, title=f"TAME report: {name}"))
    return 0


def _paired(
    args: argparse.Namespace, reports: list[tuple[str, ReportDocument]], baseline: str, test: str
) -> None:
    """The paired tests of every system against ``baseline`` (the TM one of them)."""
    first = reports[0][1]
    statistics = {name: report.system_statistics for name, report in reports}
    statistics[TM] = first.tm_statistics
    found = comparison(
        statistics,
        first.summary.item_bins,
        baseline,
        first.config,
        test,
        args.paired_n,
        first.signature,
        dict(reports),
    )
    finish_comparison(args, found)  # the page too, with the tests


def _full_audit_reads_cache(args: argparse.Namespace) -> bool:
    return bool(args.ref) and not args.shard


def _num_train(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a count of rows, got {text!r}")
    return value


def _num_train_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--num-train",
        type=_num_train,
        metavar="N",
        help="the training corpus's rows: checked against the segment file's sidecar",
    )


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    def command(name: str, help: str) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, parents=[common], help=help)
        add_report_options(parser)
        return parser

    score = command("score", "the TAME report of a system")
    add_train_options(score)
    score.add_argument("--test-src", type=READ, required=True)
    score.add_argument("--ref", type=READ, action="append", required=True, help="repeat for more")
    score.add_argument("--hyp", type=READ, required=True)
    add_output_options(score)
    add_schema_option(score)
    score.set_defaults(run=_score, reads_cache=True)

    audit = command("audit", "exposure of a test set (no system); references optional")
    add_train_options(audit)
    audit.add_argument("--test-src", type=READ, required=True)
    audit.add_argument("--ref", type=READ, action="append")
    audit.add_argument("--shard", help="i/n: audit only shard i of n (with --partial-out)")
    audit.add_argument("--partial-out", type=WRITE, help="the partial audit of --shard")
    add_output_options(audit)
    add_schema_option(audit)
    # Only the full audit (references given, not a shard) goes through the cache.
    audit.set_defaults(run=_audit_command, reads_cache=_full_audit_reads_cache)

    tm = command("tm-baseline", "write the translation-memory hypotheses")
    add_train_options(tm, index=False)
    tm.add_argument("--test-src", type=READ, required=True)
    tm.add_argument("--out", type=WRITE, required=True)
    tm.add_argument("--metadata-out", type=WRITE)
    tm.set_defaults(run=_tm_baseline)

    cached = command("score-cached", "score a system from cached segment diagnostics")
    cached.add_argument("--segment-in", type=SEGMENTS_READ, required=True)
    cached.add_argument("--ref", type=READ, action="append", required=True)
    cached.add_argument("--hyp", type=READ, required=True)
    _num_train_option(cached)
    add_output_options(cached, segments=False)
    add_schema_option(cached)
    cached.set_defaults(run=_score_cached)

    batch = command("score-cached-batch", "score many systems from cached diagnostics")
    batch.add_argument("--segment-in", type=SEGMENTS_READ, required=True)
    batch.add_argument("--ref", type=READ, action="append", required=True)
    batch.add_argument(
        "--system", type=NAMED_READ, action="append", required=True, help="NAME=PATH, repeated"
    )
    _num_train_option(batch)
    batch.add_argument("--json-out-dir", type=JSON_OUT_DIR)
    add_schema_option(batch)
    batch.add_argument(
        "--html-out", type=WRITE, help="the first system's page, with the paired tests"
    )
    paired = batch.add_mutually_exclusive_group()
    paired.add_argument("--paired-bs", action="store_true", help="paired bootstrap resampling")
    paired.add_argument("--paired-ar", action="store_true", help="approximate randomisation")
    paired.add_argument(
        "--paired-bs-shift", action="store_true", help="paired bootstrap, shifted null"
    )
    add_paired_options(batch)
    batch.set_defaults(run=_score_cached_batch)
