"""What every command shares: the report options (the TAME-MT spec's names),
the training corpus options, reading aligned text files, writing outputs
whole (temporary name, then rename; ``.gz`` compressed), and stage timings."""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from fractions import Fraction
from pathlib import Path
from typing import Any

from tame_mt_metric.cache.corpus_file import corpus_of_index
from tame_mt_metric.cache.index_files import retrieval_of
from tame_mt_metric.cli.path_options import READ, READ_TEXT, SEGMENTS_WRITE, WRITE
from tame_mt_metric.digest import digest
from tame_mt_metric.errors import InvalidOptionError, MisalignedInputError
from tame_mt_metric.files import atomic_path, output_stream, regular_file
from tame_mt_metric.progress import PROGRESS_ENV
from tame_mt_metric.report.config import OPTIONS, TameConfig
from tame_mt_metric.report.metric_registry import METRICS
from tame_mt_metric.report.v1_schema import OUTPUT_SCHEMAS, V1, v1_report
from tame_mt_metric.retrieval.corpus import TrainingCorpus
from tame_mt_metric.retrieval.exposure import Exposures
from tame_mt_metric.retrieval.inputs import TEST_ITEMS_ENV, max_test_items, read_lines
from tame_mt_metric.retrieval.text_files import TextFiles

# The JSON of a file written beside another, made from the other's digest.
Sidecar = Callable[[str], Any]

# The first bytes of an Arrow IPC file (a stream opens otherwise).
_IPC_FILE_MAGIC = b"ARROW1"

__all__ = [
    "Stages",
    "add_output_options",
    "add_report_options",
    "add_schema_option",
    "add_train_options",
    "config_from",
    "corpus_from_options",
    "is_ipc_file",
    "json_document",
    "read_aligned",
    "train_form",
    "write_json",
    "write_jsonl",
    "write_lines",
    "write_text",
]


def add_report_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("report settings")
    group.add_argument(
        "--metrics",
        nargs="+",
        metavar="METRIC",
        help=f"from {','.join(METRICS)}, by spaces or commas (default bleu chrf)",
    )
    group.add_argument("--ngram-orders", help="comma list of n-gram orders (default 3,4,5)")
    group.add_argument("--far-threshold", help="default 0.30")
    group.add_argument("--near-threshold", help="default 0.70")
    group.add_argument("--leak-thresholds", help="comma list (default 0.70,0.85,0.95)")
    group.add_argument("--min-bin-size-warning", type=int)
    group.add_argument("--confidence", type=float, help="of the bootstrap intervals (0.95)")
    group.add_argument("--n-bootstrap", type=int, help="resamples for intervals (1000; 0: none)")
    group.add_argument("--seed", type=int, help="of the resamples (12345)")
    group.add_argument("--curve-bands", type=int, help="exposure curve bands (10: deciles)")
    group.add_argument("--curve-edges", help="comma list of exposure curve edges, in (0, 1)")
    group.add_argument("--tm-zero-policy", choices=("empty", "nearest"))
    group.add_argument("--lowercase", action="store_true", default=None)
    group.add_argument("--strip-diacritics", action="store_true", default=None)
    group.add_argument("--normalize-punctuation", action="store_true", default=None)
    group.add_argument("--bleu-tokenize")
    group.add_argument("--bleu-lowercase", action="store_true", default=None)
    group.add_argument("--chrf-word-order", type=int)
    group.add_argument("--spbleu-tokenize", choices=("flores200", "flores101"))
    group.add_argument(
        "--spm-model", type=READ_TEXT, help="the SentencePiece model file for spBLEU"
    )
    group.add_argument("--strategy", choices=("auto", "indexed", "streaming"))
    group.add_argument("--threads", type=int)
    group.add_argument("--engine", choices=("local", "ray"), help="ray: shards on Ray")
    group.add_argument("--ray-address", help="an existing Ray cluster")


def config_from(args: argparse.Namespace, **defaults: Any) -> TameConfig:
    """The report settings given on the command line (checked by ``TameConfig``).
    With ``--index``, the retrieval settings not given are the index's own."""
    options = dict(defaults)
    if getattr(args, "index", None) is not None:
        built = retrieval_of(args.index)
        options.update(ngram_orders=built.ngram_orders, **built.normalization_flags())
    given = {name: getattr(args, name, None) for name in OPTIONS}
    options.update({k: v for k, v in given.items() if v is not None})
    if isinstance(options.get("metrics"), list):  # --metrics bleu chrf, or bleu,chrf
        options["metrics"] = ",".join(options["metrics"])
    for name in ("metrics", "leak_thresholds", "curve_edges"):
        if isinstance(options.get(name), str):
            items = [item.strip() for item in options[name].split(",")]
            if "" in items:
                raise InvalidOptionError(
                    f"--{name.replace('_', '-')}: an empty item in {options[name]!r}"
                )
            options[name] = tuple(items)
    # Thresholds are numbers: the decimals given here, read exactly.
    for name in ("far_threshold", "near_threshold"):
        if isinstance(options.get(name), str):
            options[name] = _decimal(name, options[name])
    for name in ("leak_thresholds", "curve_edges"):
        if name in options:
            options[name] = tuple(
                _decimal(name, t) if isinstance(t, str) else t for t in options[name]
            )
    return TameConfig.from_options(**options)


def _decimal(name: str, text: str) -> Fraction:
    """A decimal given on the command line, exactly ("0.30" is 3/10)."""
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError) as exc:
        raise InvalidOptionError(
            f"--{name.replace('_', '-')}: expected a number in [0, 1], got {text!r}"
        ) from exc


def add_train_options(parser: argparse.ArgumentParser, index: bool = True) -> None:
    title = "files, a saved dataset, or an index" if index else "files or a saved dataset"
    group = parser.add_argument_group(f"training corpus ({title})")
    group.add_argument("--train-src", type=READ)
    group.add_argument("--train-tgt", type=READ)
    group.add_argument(
        "--train-dataset",
        type=READ,
        help="a save_to_disk folder, or an .arrow, .parquet or .jsonl file",
    )
    group.add_argument("--source-column", default="source")
    group.add_argument("--target-column", default="target")
    group.add_argument("--source-lang", help="with --target-lang: a 'translation' column")
    group.add_argument("--target-lang")
    if index:
        group.add_argument("--index", type=READ, help="an index folder from 'index build'")


def _dataset(path: Path) -> Any:
    import datasets

    if path.is_dir():
        return datasets.load_from_disk(str(path))
    regular_file(path, "--train-dataset")
    suffix = path.suffixes[-2] if path.suffix == ".gz" else path.suffix
    if suffix == ".arrow" and is_ipc_file(path):
        import pyarrow as pa

        return datasets.Dataset(pa.ipc.open_file(pa.memory_map(str(path))).read_all())
    if suffix == ".arrow":
        return datasets.Dataset.from_file(str(path))
    if suffix == ".parquet":
        return datasets.Dataset.from_parquet(str(path))
    if suffix in (".jsonl", ".json"):
        return datasets.Dataset.from_json(str(path))
    raise InvalidOptionError(
        f"--train-dataset: {path}: expected a folder or .arrow/.parquet/.jsonl"
    )


def is_ipc_file(path: Path) -> bool:
    """``path`` holds the Arrow IPC file format (``datasets`` writes the stream format)."""
    with open(path, "rb") as f:
        return f.read(len(_IPC_FILE_MAGIC)) == _IPC_FILE_MAGIC


def train_form(args: argparse.Namespace, sources_only: bool = False) -> str:
    """Which training corpus the options name, checked before any work: exactly one
    of --train-src/--train-tgt, --train-dataset and (where the command takes it)
    --index; ``sources_only``: --train-src may come alone."""
    forms = [
        ("--train-src/--train-tgt", args.train_src or args.train_tgt),
        ("--train-dataset", args.train_dataset),
    ]
    if hasattr(args, "index"):  # the commands that take a saved index
        forms.append(("--index", args.index))
    given = [name for name, present in forms if present]
    if len(given) != 1:
        raise InvalidOptionError(
            f"training corpus: give exactly one of {', '.join(name for name, _ in forms)} "
            f"(got {', '.join(given) or 'none'})"
        )
    both = args.train_src and args.train_tgt
    if given[0] == forms[0][0] and not both and not (sources_only and args.train_src):
        raise InvalidOptionError("--train-src and --train-tgt go together")
    return given[0]


def corpus_from_options(args: argparse.Namespace, sources_only: bool = False) -> TrainingCorpus:
    """The corpus from exactly one of: --train-src/--train-tgt, --train-dataset, --index.
    ``sources_only`` (a source-side audit): --train-src may come alone, and its
    lines stand for both sides."""
    form = train_form(args, sources_only)
    if form == "--index":
        return corpus_of_index(args.index)
    if form == "--train-dataset":
        if not args.train_dataset.exists():
            raise FileNotFoundError(f"--train-dataset: {args.train_dataset} does not exist")
        return TrainingCorpus.from_any(
            _dataset(args.train_dataset),
            source_column=args.source_column,
            target_column=args.target_column,
            source_lang=args.source_lang,
            target_lang=args.target_lang,
        )
    if not args.train_tgt:
        lines = read_lines(args.train_src)  # read once, standing for both sides
        return TrainingCorpus(lines, lines)
    return TextFiles(args.train_src, args.train_tgt)


def read_aligned(paths: Sequence[Path]) -> list[list[str]]:
    """Files of equal line counts; the first that differs from the first file is named."""
    texts = []
    for path in paths:
        limit = f"the test set's limit ({TEST_ITEMS_ENV})"  # read no further than it
        texts.append(read_lines(path, max_lines=max_test_items(), lines_limit=limit))
    for path, lines in zip(paths[1:], texts[1:], strict=True):
        if len(lines) != len(texts[0]):
            raise MisalignedInputError(
                f"{path}: {len(lines)} lines, but {paths[0]} has {len(texts[0])}"
            )
    return texts


def add_output_options(parser: argparse.ArgumentParser, segments: bool = True) -> None:
    group = parser.add_argument_group("outputs (.gz compresses)")
    group.add_argument("--json-out", type=WRITE, help="the JSON report")
    group.add_argument("--html-out", type=WRITE, help="the report as one self-contained page")
    if segments:
        group.add_argument(
            "--segment-out", type=SEGMENTS_WRITE, help="JSONL diagnostics + .meta.json"
        )
        group.add_argument("--tm-out", type=WRITE, help="the TM hypotheses, one per line")
        for side in ("source", "reference", "hyp", "neighbor"):
            group.add_argument(
                f"--include-{side}-text",
                action="store_true",
                help="write this raw text into segment files"
                + (" (training text)" if side == "neighbor" else ""),
            )


@contextmanager
def _atomic(path: Path) -> Iterator[Any]:
    with (
        atomic_path(path) as tmp,
        output_stream(path, tmp) as raw,
        io.TextIOWrapper(raw, encoding="utf-8") as handle,
    ):
        yield handle


def write_text(path: Path, text: str) -> None:
    with _atomic(path) as handle:
        handle.write(text)


def write_lines(path: Path, lines: Sequence[str]) -> None:
    with _atomic(path) as handle:
        for line in lines:
            handle.write(line.replace("\n", " ") + "\n")


def write_json(path: Path, value: Any) -> None:
    with _atomic(path) as handle:
        json.dump(value, handle, ensure_ascii=False, indent=1, allow_nan=False)
        handle.write("\n")


def write_jsonl(
    path: Path, rows: Sequence[dict[str, Any]], sidecar: tuple[Path, Sidecar] | None = None
) -> str:
    """Write one JSON object a line; returns the digest of the lines (as ``digest``
    over them, without their newlines). ``sidecar``: a second file's path and its
    JSON, made from that digest; the two files are written to temporary names
    and renamed only when both are whole, so neither appears without the other."""
    lines = [json.dumps(row, ensure_ascii=False, allow_nan=False) for row in rows]
    lines_digest = digest(lines)
    with ExitStack() as outputs:
        handle = outputs.enter_context(_atomic(path))
        for line in lines:
            handle.write(line + "\n")
        if sidecar is not None:
            side = outputs.enter_context(_atomic(sidecar[0]))
            json.dump(sidecar[1](lines_digest), side, ensure_ascii=False, indent=1)
            side.write("\n")
    return lines_digest


def json_document(
    args: argparse.Namespace,
    document: dict[str, Any],
    config: TameConfig,
    exposures: Exposures,
    timings: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The JSON report in the shape ``--output-schema`` names; ``timings``: the
    stages' seconds, which the v1 shape carries."""
    if args.output_schema == V1:
        return v1_report(document, config, exposures, timings)
    return document


def add_schema_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output-schema",
        choices=OUTPUT_SCHEMAS,
        default=OUTPUT_SCHEMAS[0],
        help="the shape of the JSON report and segment rows: this package's own "
        f"(default), or {V1}, the reference implementation's v1 schemas",
    )


class Stages:
    """Stage timings on stderr with --verbose, and kept (``timings``, seconds by
    stage) for the reports that carry them. The long steps show their own
    progress bars (``tame_mt_metric.progress``); --quiet turns them off."""

    def __init__(self, verbose: bool, quiet: bool) -> None:
        self.verbose = verbose
        self.timings: dict[str, float] = {}
        if quiet:
            os.environ[PROGRESS_ENV] = "0"
        if verbose:  # the package's own notes (the strategy chosen and why)
            log = logging.getLogger("tame_mt_metric")
            if not log.handlers:
                handler = logging.StreamHandler(sys.stderr)
                handler.setFormatter(logging.Formatter("[%(message)s]"))
                log.addHandler(handler)
            log.setLevel(logging.INFO)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - started
            self.timings[name] = self.timings.get(name, 0.0) + seconds
            if self.verbose:
                print(f"[{name}] {seconds:.2f} s", file=sys.stderr)
