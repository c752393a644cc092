"""The main job on the bundled real example: an exposure audit of Swahili ->
Zulu Bible verses (Luke) against a training corpus (Matthew, Mark, John,
Acts), with the translation-memory baseline's BLEU and chrF++. Scores and numbers
are named and written as on every human surface (``report.labels``).

    python -m tame_mt_metric.demo [--strategy indexed|streaming] [--threads N]
"""

from __future__ import annotations

import argparse
import time
from importlib import resources
from pathlib import Path

from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.report.exposure_summary import summarize
from tame_mt_metric.report.labels import exposure_text, metric_label, rate_text, score_text
from tame_mt_metric.report.scores import Scorers
from tame_mt_metric.report.tm_baseline import tm_hypotheses
from tame_mt_metric.retrieval.config import STRATEGIES
from tame_mt_metric.retrieval.exposure import find_exposures
from tame_mt_metric.retrieval.inputs import read_lines

__all__ = ["example_corpus", "main"]


def example_corpus() -> dict[str, list[str]]:
    """The bundled example: train_sources, train_targets, test_sources, references."""
    root = Path(str(resources.files("tame_mt_metric") / "data" / "bible_sw_zu"))
    return {
        "train_sources": read_lines(root / "train.sw.gz"),
        "train_targets": read_lines(root / "train.zu.gz"),
        "test_sources": read_lines(root / "test.sw"),
        "references": read_lines(root / "test.zu"),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--strategy", choices=STRATEGIES, default="auto")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    config = TameConfig(strategy=args.strategy, threads=args.threads)
    data = example_corpus()
    started = time.perf_counter()
    exposures = find_exposures(config=config.retrieval, **data)
    seconds = time.perf_counter() - started
    summary = summarize(exposures, config)
    hyps = tm_hypotheses(exposures, data["train_targets"])
    tm = Scorers(config, [[r] for r in data["references"]]).statistics(hyps).score()

    print("Bundled example: Swahili -> Zulu Bible verses (CC0)")
    print(f"  training pairs {len(data['train_sources']):>8,}   test items {summary.items:>6,}")
    print(f"  retrieval      {exposures.strategy} (exact), {seconds:.2f} s")
    print()
    exposures_and_rates = [
        ("source exposure (mean)", exposure_text(summary.source.mean)),
        ("target exposure (mean)", exposure_text(summary.target.mean)),
        ("pair exposure (mean)", exposure_text(summary.pair.mean)),
        ("source exact overlap", rate_text(summary.source.exact_overlap)),
        ("target exact overlap", rate_text(summary.target.exact_overlap)),
        ("pair exact overlap", rate_text(summary.pair.exact_overlap)),
        *((f"PairLeak@{t}", rate_text(v)) for t, v in summary.pair_leak.items()),
    ]
    for name, value in exposures_and_rates:
        print(f"  {name:<24} {value:>8}")
    print()
    print("  exposure bins (by source exposure)")
    for name, count in summary.bins.items():
        print(f"    {name:<14} {count:>6}  {rate_text(count / summary.items):>7}")
    print()
    print("  translation-memory baseline (nearest training source's target)")
    scores = (
        f"TM-{metric_label(m, config.chrf_word_order)} {score_text(tm[m]):>6}"
        for m in config.metrics
    )
    print("    " + "    ".join(scores))
    print()
    print(f"  signature: {config.retrieval.signature()}")


if __name__ == "__main__":
    main()
