"""Metric-human correlation on real human scores: MLQE-PE's direct assessments (DA).

MLQE-PE gives, for 7 language pairs, MT outputs with per-sentence DA scores
(0-100, the mean of several annotators, and z-scores), but no references. Its
``post-editing/`` part has a post-edit of the same MT output for the same items,
in the same order: we use the post-edit as the reference. The alignment is
checked, not assumed: the DA source of every item must equal the post-editing
source up to tokenisation (whitespace), zero-width joiners (which Moses removes)
and HTML escapes; items that do not match are dropped and counted.

The post-editing files are Moses-tokenised; the DA files hold the detokenised
text that annotators rated. ``--hypothesis tokenised`` (the default) scores the
post-editing file's ``.mt`` (the same output, tokenised like its post-edit, and
word-segmented for Chinese) against the post-edit; ``--hypothesis da`` scores the
detokenised DA translation against the tokenised post-edit. chrF++'s character
n-grams ignore whitespace, so only its word n-grams and BLEU feel the choice.

Per language pair it computes sentence-level chrF++ (``sentence_chrf(hyp, [ref],
word_order=2)``) and sentence BLEU (tokeniser ``zh`` into Chinese, ``13a``
otherwise), their segment-level Spearman, Pearson and Kendall tau-b with the mean
DA score (or ``--human z_mean``), and then the direction-level correlation over
the 7 pairs of the mean DA with corpus chrF++, mean sentence chrF++ and corpus
BLEU. Intervals are seeded bootstrap percentiles (``tame_mt_metric.flores.correlation``).

    python benchmarks/mlqe_correlation.py                       # test split, 1000 resamples
    python benchmarks/mlqe_correlation.py --split dev --n-bootstrap 200 --json out.json
"""

from __future__ import annotations

import argparse
import csv
import html
import io
import json
import re
import statistics
import sys
import tarfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sacrebleu

from tame_mt_metric.flores.correlation import Correlation, Interval, correlate, segment_correlation

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"
PAIRS = ("en-de", "en-zh", "et-en", "ne-en", "ro-en", "ru-en", "si-en")
SPLITS = ("train", "dev", "test")
SEGMENT_METRICS = ("chrF++", "BLEU")
_INVISIBLE = re.compile(r"[\s\u00ad\u200b\u200c\u200d\ufeff]+")
# Moses' punctuation normalisation turns curly quotes, guillemets and dashes into
# ASCII ones (and '' into "): quotes are left out of the comparison, dashes unified.
_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\"'`\u00b4\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb"),
        "\u2013": "-",
        "\u2014": "-",
        "\u2026": "...",
    }
)


@dataclass(frozen=True)
class PairData:
    """One language pair's aligned items: what annotators rated, its post-edit,
    and how many items were dropped or whose two MT texts differ."""

    pair: str
    hypotheses: list[str]
    references: list[str]
    human: list[float]
    dropped: int
    mt_differs: int


def squeezed(text: str) -> str:
    """The text without whitespace, zero-width characters and soft hyphens, quotes
    or HTML escapes (some lines are escaped twice), dashes unified: to compare a
    Moses-tokenised line with its detokenised form."""
    return html.unescape(html.unescape(_INVISIBLE.sub("", text))).translate(_PUNCTUATION)


def tar_members(path: Path, suffixes: Sequence[str]) -> dict[str, str]:
    """The one member of a .tar.gz archive whose name ends with each suffix, as text."""
    texts = {}
    with tarfile.open(path, "r:gz") as archive:
        for suffix in suffixes:
            members = [m for m in archive.getmembers() if m.isfile() and m.name.endswith(suffix)]
            handle = archive.extractfile(members[0]) if len(members) == 1 else None
            if handle is None:
                names = [m.name for m in members]
                sys.exit(f"{path}: expected one file ending {suffix!r}, found {names}")
            texts[suffix] = handle.read().decode("utf-8")
    return texts


def read_da(path: Path) -> list[dict[str, str]]:
    """Rows of the DA TSV (columns by header: original, translation, mean, z_mean...)."""
    text = tar_members(path, [".df.short.tsv"])[".df.short.tsv"]
    reader = csv.DictReader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    rows = list(reader)
    for needed in ("original", "translation", "mean", "z_mean"):
        if reader.fieldnames is None or needed not in reader.fieldnames:
            sys.exit(f"{path}: no {needed!r} column in {reader.fieldnames}")
    return rows


def lines(text: str) -> list[str]:
    return text.removesuffix("\n").split("\n")


def load_pair(data: Path, pair: str, split: str, hypothesis: str, human: str) -> PairData:
    da_path = data / "direct-assessments" / split / f"{pair}-{split}.tar.gz"
    pe_path = data / "post-editing" / split / f"{pair}-{split}.tar.gz"
    rows = read_da(da_path)
    pe = tar_members(pe_path, (".src", ".mt", ".pe"))
    sources, mts, edits = (lines(pe[suffix]) for suffix in (".src", ".mt", ".pe"))
    if not len(rows) == len(sources) == len(mts) == len(edits):
        sys.exit(
            f"{pair}: {len(rows)} DA rows but {len(sources)} post-editing sources, "
            f"{len(mts)} MT lines and {len(edits)} post-edits"
        )
    kept = [i for i, row in enumerate(rows) if squeezed(row["original"]) == squeezed(sources[i])]
    differs = sum(squeezed(rows[i]["translation"]) != squeezed(mts[i]) for i in kept)
    return PairData(
        pair=pair,
        hypotheses=[rows[i]["translation"] if hypothesis == "da" else mts[i] for i in kept],
        references=[edits[i] for i in kept],
        human=[float(rows[i][human]) for i in kept],
        dropped=len(rows) - len(kept),
        mt_differs=differs,
    )


def bleu_tokenizer(pair: str) -> str:
    return "zh" if pair.endswith("-zh") else "13a"


def sentence_scores(data: PairData) -> dict[str, list[float]]:
    tokenize = bleu_tokenizer(data.pair)
    chrf, bleu = [], []
    for hyp, ref in zip(data.hypotheses, data.references, strict=True):
        chrf.append(sacrebleu.sentence_chrf(hyp, [ref], word_order=2).score)
        bleu.append(sacrebleu.sentence_bleu(hyp, [ref], tokenize=tokenize).score)
    return {"chrF++": chrf, "BLEU": bleu}


def corpus_scores(data: PairData) -> dict[str, float]:
    refs = [data.references]
    chrf = sacrebleu.corpus_chrf(data.hypotheses, refs, word_order=2).score
    # force: the texts are Moses-tokenised on purpose (see the module's docstring).
    bleu = sacrebleu.corpus_bleu(
        data.hypotheses, refs, tokenize=bleu_tokenizer(data.pair), force=True
    ).score
    return {"chrF++ (corpus)": float(chrf), "BLEU (corpus)": float(bleu)}


def cell(interval: Interval) -> str:
    low, high = interval["low"], interval["high"]
    bounds = "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"
    return f"{interval['value']:.3f}{bounds}"


def correlation_cells(result: Correlation) -> str:
    values = " | ".join(cell(result[name]) for name in ("spearman", "pearson", "kendall"))
    return f"{result['n']} | {values} | {result['resamples']}"


def markdown(report: dict[str, Any]) -> str:
    settings = report["settings"]
    level = round(100 * settings["confidence"])
    out = [
        f"MLQE-PE {settings['split']}: hypothesis {settings['hypothesis']}, human "
        f"{settings['human']}, {settings['n_bootstrap']} bootstrap resamples (seed "
        f"{settings['seed']}), {level}% percentile intervals.",
        "",
        "| pair | items | dropped | MT differs | mean DA | corpus chrF++ | mean sentence chrF++ "
        "| corpus BLEU | mean sentence BLEU |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for pair, row in report["pairs"].items():
        out.append(
            f"| {pair} | {row['items']} | {row['dropped']} | {row['mt_differs']} "
            f"| {row['human']:.2f} | {row['chrF++ (corpus)']:.2f} "
            f"| {row['chrF++ (mean sentence)']:.2f} | {row['BLEU (corpus)']:.2f} "
            f"| {row['BLEU (mean sentence)']:.2f} |"
        )
    out += [
        "",
        "Segment level (per pair, metric against the human score):",
        "",
        "| pair | metric | n | Spearman | Pearson | Kendall tau-b | resamples |",
        "| --- | --- | ---: | --- | --- | --- | ---: |",
    ]
    for pair, row in report["pairs"].items():
        for metric in SEGMENT_METRICS:
            out.append(f"| {pair} | {metric} | {correlation_cells(row['segment'][metric])} |")
    out += [
        "",
        "Direction level (over the pairs, metric against the mean human score):",
        "",
        "| metric | n | Spearman | Pearson | Kendall tau-b | resamples |",
        "| --- | ---: | --- | --- | --- | ---: |",
    ]
    for metric, result in report["directions"].items():
        out.append(f"| {metric} | {correlation_cells(result)} |")
    return "\n".join(out)


def run(args: argparse.Namespace) -> dict[str, Any]:
    data: Path = args.data / "mlqe-pe"
    if not (data / "direct-assessments").is_dir() or not (data / "post-editing").is_dir():
        sys.exit(
            f"MLQE-PE not found: {data} needs direct-assessments/ and post-editing/ "
            "(the shared data folder is ../shared/data beside the repository; see --data)"
        )
    boot = {"n_bootstrap": args.n_bootstrap, "seed": args.seed, "confidence": args.confidence}
    pairs: dict[str, dict[str, Any]] = {}
    for pair in args.pairs:
        started = time.perf_counter()
        loaded = load_pair(data, pair, args.split, args.hypothesis, args.human)
        sentences = sentence_scores(loaded)
        pairs[pair] = {
            "items": len(loaded.human),
            "dropped": loaded.dropped,
            "mt_differs": loaded.mt_differs,
            "human": statistics.fmean(loaded.human),
            **corpus_scores(loaded),
            "chrF++ (mean sentence)": statistics.fmean(sentences["chrF++"]),
            "BLEU (mean sentence)": statistics.fmean(sentences["BLEU"]),
            "segment": {
                metric: segment_correlation(loaded.human, sentences[metric], **boot)
                for metric in SEGMENT_METRICS
            },
        }
        print(f"{pair}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    direction_metrics = ("chrF++ (corpus)", "chrF++ (mean sentence)", "BLEU (corpus)")
    directions = correlate(
        {pair: row["human"] for pair, row in pairs.items()},
        {
            metric: {pair: row[metric] for pair, row in pairs.items()}
            for metric in direction_metrics
        },
        **boot,
    )
    settings = {
        "split": args.split,
        "hypothesis": args.hypothesis,
        "human": args.human,
        "sacrebleu": sacrebleu.__version__,
        **boot,
    }
    return {"settings": settings, "pairs": pairs, "directions": directions}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DATA, help="shared data folder")
    parser.add_argument("--split", choices=SPLITS, default="test")
    parser.add_argument("--pairs", type=lambda s: s.split(","), default=list(PAIRS))
    parser.add_argument("--hypothesis", choices=("tokenised", "da"), default="tokenised")
    parser.add_argument("--human", choices=("mean", "z_mean"), default="mean")
    parser.add_argument("--n-bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    report = run(args)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
