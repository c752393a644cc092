"""``flores eval``, ``flores audit``, ``xsts calibrate``, ``correlate`` and
``toxicity``: thin wrappers of ``tame_mt_metric.flores.protocol``, ``xsts``,
``correlation`` and ``toxicity``."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from tame_mt_metric.cli.common import add_report_options, config_from, read_aligned, write_json
from tame_mt_metric.cli.path_options import NAMED_READ, READ, READ_TEXT, WRITE
from tame_mt_metric.errors import InputTextError, InvalidOptionError, MisalignedInputError
from tame_mt_metric.flores.correlation import Correlation, correlate, segment_correlation
from tame_mt_metric.flores.protocol import FLORES_METRICS, contamination, score_directions
from tame_mt_metric.flores.segment_scores import sentence_scores
from tame_mt_metric.flores.toxicity import added_toxicity
from tame_mt_metric.flores.xsts import calibrate
from tame_mt_metric.report.labels import exposure_text, rate_text
from tame_mt_metric.retrieval.inputs import read_lines

__all__ = ["register"]


def _flores_eval(args: argparse.Namespace) -> int:
    config = config_from(args, metrics=FLORES_METRICS)
    scores = score_directions(args.flores, args.outputs, args.split, config)
    if args.json_out:
        write_json(args.json_out, json.loads(scores.to_json()))
    if not args.quiet:
        print(scores.markdown())
    return 0


def _flores_audit(args: argparse.Namespace) -> int:
    corpus = {}
    for item in args.corpus:
        lang, eq, path = item.partition("=")
        if not eq or not lang or not path:
            raise InvalidOptionError(f"--corpus: expected LANG=PATH, got {item!r}")
        corpus[lang] = Path(path)
    report = contamination(corpus, args.flores, args.splits.split(","))
    if args.json_out:
        write_json(args.json_out, report)
    if not args.quiet:
        print(
            "| language | FLORES items | training lines | exposure mean | exact | "
            + " | ".join(f">= {t}" for t in next(iter(report.values()))["at_threshold"])
            + " |"
        )
        print(
            "| --- | ---: | ---: | ---: | ---: | "
            + " | ".join("---:" for _ in next(iter(report.values()))["at_threshold"])
            + " |"
        )
        for lang, r in report.items():
            shares = " | ".join(rate_text(v) for v in r["at_threshold"].values())
            print(
                f"| {lang} | {r['items']} | {r['training_lines']:,} | "
                f"{exposure_text(r['source_exposure_mean'])} | {rate_text(r['exact_rate'])} | "
                f"{shares} |"
            )
    return 0


def _xsts(args: argparse.Namespace) -> int:
    result = calibrate(args.scores, args.calibration, args.c_mean, args.recipe)
    if args.json_out:
        write_json(args.json_out, result)
    if not args.quiet:
        print("| direction | items | raw | calibration raw | calibrated |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for direction, r in result.items():
            print(
                f"| {direction} | {r['items']} | {r['raw']:.3f} | {r['calibration_raw']:.3f} | "
                f"{r['calibrated']:.3f} |"
            )
    return 0


def _human_scores(path: Path, column: str) -> list[float]:
    """One number per line, or a TSV whose header names ``column``."""
    rows = list(csv.reader(read_lines(path), delimiter="\t"))
    at, first = 0, 1
    if rows and len(rows[0]) > 1:
        if column not in rows[0]:
            raise InputTextError(f"{path}:1: a header with a {column!r} column is needed")
        at, first, rows = rows[0].index(column), 2, rows[1:]
    scores = []
    for number, row in enumerate(rows, start=first):
        try:
            scores.append(float(row[at]))
        except (ValueError, IndexError) as exc:
            raise InputTextError(f"{path}:{number}: the human score is not a number") from exc
    return scores


def _segment_correlations(args: argparse.Namespace) -> dict[str, Correlation]:
    if not args.ref or not args.hyp or not args.scores:
        raise InvalidOptionError("correlate --segments: --ref, --hyp and --scores are required")
    files = read_aligned([*([args.src] if args.src else []), *args.ref, args.hyp])
    hyps = files[-1]
    refs = [list(r) for r in zip(*files[1 if args.src else 0 : -1], strict=True)]
    human = _human_scores(args.scores, args.human)
    if len(human) != len(hyps):
        raise MisalignedInputError(
            f"{args.scores}: {len(human)} scores, {args.hyp} has {len(hyps)} lines"
        )
    scores = sentence_scores(hyps, refs, args.spm_model)
    return {
        name: segment_correlation(human, values, args.n_bootstrap, args.seed)
        for name, values in scores.items()
    }


def _direction_correlations(args: argparse.Namespace) -> dict[str, Correlation]:
    """A TSV with a header: direction, the human score column, then metric columns."""
    if not args.table:
        raise InvalidOptionError("correlate: --table is required (or --segments)")
    lines = read_lines(args.table)
    rows = list(csv.reader(lines, delimiter="\t"))
    if not rows or args.human not in rows[0]:
        raise InputTextError(f"{args.table}:1: a header with a {args.human!r} column is needed")
    header, body = rows[0], rows[1:]
    columns = {name: i for i, name in enumerate(header)}
    for number, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise InputTextError(
                f"{args.table}:{number}: {len(row)} fields, the header has {len(header)}"
            )

    def column(name: str) -> dict[str, float]:
        out = {}
        for number, row in enumerate(body, start=2):
            try:
                out[row[0]] = float(row[columns[name]])
            except ValueError as exc:
                raise InputTextError(f"{args.table}:{number}: {name} is not a number") from exc
        return out

    metrics = {name: column(name) for name in header[1:] if name != args.human}
    return correlate(column(args.human), metrics, args.n_bootstrap, args.seed)


def _correlate(args: argparse.Namespace) -> int:
    result = _segment_correlations(args) if args.segments else _direction_correlations(args)
    if args.json_out:
        write_json(args.json_out, result)
    if not args.quiet:
        print("| metric | n | Spearman | Pearson | Kendall tau-b |")
        print("| --- | ---: | --- | --- | --- |")
        for name, r in result.items():
            cells = []
            for kind in ("spearman", "pearson", "kendall"):
                c = r[kind]
                low, high = c["low"], c["high"]
                interval = (
                    f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
                )
                cells.append(f"{c['value']:.3f}{interval}")
            print(f"| {name} | {r['n']} | " + " | ".join(cells) + " |")
    return 0


def _toxicity(args: argparse.Namespace) -> int:
    sources, hyps = read_aligned([args.src, args.hyp])
    result = added_toxicity(sources, hyps, args.source_lang, args.target_lang, args.lists)
    if args.json_out:
        write_json(
            args.json_out,
            {
                "rate": result.rate,
                "segments": result.segments,
                "flagged": result.flagged,
                "terms": {str(k): v for k, v in result.terms.items()},
            },
        )
    if not args.quiet:
        print(
            f"added toxicity: {len(result.flagged)} of {result.segments} segments "
            f"({rate_text(result.rate)})"
        )
        for i in result.flagged:
            print(f"  {i}: {', '.join(result.terms[i])}")
    return 0


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    flores = sub.add_parser("flores", help="the FLORES-200 protocol")
    actions = flores.add_subparsers(dest="action", required=True)
    evaluate = actions.add_parser("eval", parents=[common], help="score every direction")
    evaluate.add_argument("--flores", type=READ, required=True, help="the FLORES-200 folder")
    evaluate.add_argument(
        "--outputs", type=READ, required=True, help="<src>-<tgt>.<split>.hyp files"
    )
    evaluate.add_argument("--split", default="devtest", choices=("dev", "devtest"))
    evaluate.add_argument("--json-out", type=WRITE)
    add_report_options(evaluate)
    evaluate.set_defaults(run=_flores_eval)
    audit = actions.add_parser("audit", parents=[common], help="FLORES contamination of a corpus")
    audit.add_argument("--flores", type=READ, required=True)
    audit.add_argument(
        "--corpus", type=NAMED_READ, action="append", required=True, help="LANG=PATH, repeated"
    )
    audit.add_argument("--splits", default="dev,devtest")
    audit.add_argument("--json-out", type=WRITE)
    audit.set_defaults(run=_flores_audit)

    xsts = sub.add_parser("xsts", help="XSTS human scores")
    xsts_actions = xsts.add_subparsers(dest="action", required=True)
    cal = xsts_actions.add_parser("calibrate", parents=[common], help="calibrate XSTS scores")
    cal.add_argument(
        "--scores", type=READ, required=True, help="TSV: direction, item, annotator, score"
    )
    cal.add_argument("--calibration", type=READ, required=True)
    cal.add_argument("--c-mean", type=float, default=3.01)
    cal.add_argument("--recipe", choices=("card", "symmetric"), default="card")
    cal.add_argument("--json-out", type=WRITE)
    cal.set_defaults(run=_xsts)

    corr = sub.add_parser("correlate", parents=[common], help="metric-human correlation")
    corr.add_argument("--table", type=READ, help="TSV: direction, human, metrics...")
    corr.add_argument(
        "--segments",
        action="store_true",
        help="segment level: sentence BLEU/chrF++ (spBLEU with --spm-model) of --hyp "
        "against --ref, correlated with --scores",
    )
    corr.add_argument("--src", type=READ, help="with --segments: checked for alignment")
    corr.add_argument("--ref", type=READ, action="append", help="with --segments; repeatable")
    corr.add_argument("--hyp", type=READ, help="with --segments")
    corr.add_argument(
        "--scores", type=READ, help="with --segments: a number per line, or a TSV with --human"
    )
    corr.add_argument(
        "--spm-model", type=READ_TEXT, help="with --segments: sentence spBLEU over its pieces"
    )
    corr.add_argument("--human", default="xsts", help="the human score column (default xsts)")
    corr.add_argument("--n-bootstrap", type=int, default=1000)
    corr.add_argument("--seed", type=int, default=12345)
    corr.add_argument("--json-out", type=WRITE)
    corr.set_defaults(run=_correlate)

    tox = sub.add_parser("toxicity", parents=[common], help="added toxicity of a system")
    tox.add_argument("--src", type=READ, required=True)
    tox.add_argument("--hyp", type=READ, required=True)
    tox.add_argument("--source-lang", required=True)
    tox.add_argument("--target-lang", required=True)
    tox.add_argument("--lists", type=READ, help="a Toxicity-200 or LDNOOBW folder")
    tox.add_argument("--json-out", type=WRITE)
    tox.set_defaults(run=_toxicity)
