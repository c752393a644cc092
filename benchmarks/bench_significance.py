"""Intervals and paired tests on a 2k-item test set: the time to make every
interval of a report (``report.intervals``: 1,000 resamples by default) and
the exposure curve with its intervals (``report.curve``), as the JSON report
makes them (the cyclic collector paused), and the false-positive rate of the
paired tests where the true difference is zero.

    python benchmarks/bench_significance.py --folder DIR [--trials 200]

``--trials 0`` times the intervals and the curve only.

DIR holds ``test.src`` / ``test.ref`` and ``train.src`` / ``train.tgt``
(``bench_scale.py prepare``); the report is made against the first
``--train-rows`` training pairs. A system's hypothesis of an item drops each
word of the reference with probability 0.2 (seeded). For the coverage check
every item gets ``--variants`` such hypotheses; in each trial, systems A and B
each pick one variant per item at random, independently, so the two systems
come from the same distribution and every difference between them is chance.
A trial counts a false positive when the paired test's p-value is below 0.05;
the rate over the trials is printed with its 95% Wilson interval, per test and
metric.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time
from itertools import islice
from pathlib import Path


def _degrade(text: str, rng: random.Random) -> str:
    words = text.split()
    kept = [w for w in words if rng.random() >= 0.2]
    return " ".join(kept or words[:1])


def _wilson(hits: int, n: int) -> tuple[float, float]:
    z, p = 1.96, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--train-rows", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--variants", type=int, default=6)
    parser.add_argument("--n-samples", type=int, default=1000)
    args = parser.parse_args()

    from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
    from tame_mt_metric.cache.entries import CacheOptions
    from tame_mt_metric.interpreter import collector_paused
    from tame_mt_metric.report.curve import exposure_curve
    from tame_mt_metric.report.intervals import score_intervals
    from tame_mt_metric.report.scores import Scorers
    from tame_mt_metric.report.significance import paired_table
    from tame_mt_metric.retrieval.inputs import read_lines

    sources = read_lines(args.folder / "test.src")
    refs = read_lines(args.folder / "test.ref")
    with open(args.folder / "train.src", encoding="utf-8") as s:
        train_sources = [line.rstrip("\n") for line in islice(s, args.train_rows)]
    with open(args.folder / "train.tgt", encoding="utf-8") as t:
        train_targets = [line.rstrip("\n") for line in islice(t, args.train_rows)]
    rng = random.Random(1)
    hyps = [_degrade(r, rng) for r in refs]
    config = TameConfig()
    result = score_tame(
        TrainingCorpus(train_sources, train_targets),
        hyps,
        refs,
        sources,
        config,
        cache=CacheOptions(enabled=False),
    )
    report = result.report
    bins = report.summary.item_bins
    print(f"{len(refs):,} test items, bins {report.summary.bins}")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    sys_stats, tm_stats = report.system_statistics, report.tm_statistics
    exposures = report.source_exposures
    c = config
    times: dict[str, list[float]] = {"intervals": [], "curve": []}
    for _ in range(args.repeat):
        with collector_paused():
            began = time.perf_counter()
            intervals = score_intervals(
                sys_stats, tm_stats, bins, c.confidence, c.n_bootstrap, c.seed
            )
            middle = time.perf_counter()
            curve = exposure_curve(
                exposures,
                sys_stats,
                tm_stats,
                c.curve_bands,
                c.curve_edges,
                c.confidence,
                c.n_bootstrap,
                c.seed,
            )
            ended = time.perf_counter()
        times["intervals"].append(middle - began)
        times["curve"].append(ended - middle)
    print(f"\n{len(intervals)} intervals, {len(curve)} curve bands, {c.n_bootstrap} resamples:")
    for what, taken in times.items():
        runs = ", ".join(f"{t:.3f}" for t in taken)
        print(f"  {what}: median {statistics.median(taken):.3f} s ({runs})")
    if args.trials == 0:
        return

    scorers = Scorers.for_references(config, [[r] for r in refs])
    pool = []
    for v in range(args.variants):
        variant_rng = random.Random(100 + v)
        pool.append(scorers.statistics([_degrade(r, variant_rng) for r in refs]).rows())
    names = list(pool[0])
    pick = random.Random(7)
    tests = ("bs", "bs-shift", "ar")
    rejected = {(test, m): 0 for test in tests for m in config.metrics}
    began = time.perf_counter()
    for _ in range(args.trials):
        systems = {}
        for system in ("A", "B"):
            choice = [pick.randrange(args.variants) for _ in refs]
            rows = {n: [pool[c][n][i] for i, c in enumerate(choice)] for n in names}
            systems[system] = scorers.from_rows(rows)
        seed = pick.randrange(1, 2**31)
        for test in tests:
            whole = paired_table(
                systems, "A", list(range(len(refs))), test, args.n_samples, 0, seed
            )
            for m in config.metrics:
                p = whole["B"][m].p_value
                assert p is not None
                rejected[(test, m)] += p < 0.05
    seconds = time.perf_counter() - began
    print(
        f"\nfalse positives at p < 0.05, {args.trials} trials of two systems from one "
        f"distribution ({args.n_samples} samples each; {seconds:.0f} s):\n"
    )
    print("| test | metric | rate | 95% Wilson interval |")
    print("| --- | --- | ---: | --- |")
    for (test, m), hits in rejected.items():
        low, high = _wilson(hits, args.trials)
        print(f"| {test} | {m} | {hits / args.trials:.3f} | [{low:.3f}, {high:.3f}] |")


if __name__ == "__main__":
    main()
