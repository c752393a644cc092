"""Lookups in a saved index from a notebook's point of view: open the index
once (``SavedIndex.open``), then look the same sentences up again and again;
prints the open's time and each lookup's. Run it twice alternating, once with
another build of the core first on ``PYTHONPATH``, to compare two builds of
the search on identical work:

    python benchmarks/bench_lookup.py --index DIR/ours-index --sentences DIR/ten.txt --rounds 3
    PYTHONPATH=OTHER_BUILD python benchmarks/bench_lookup.py ...

DIR is a folder of ``bench_user_path.py prepare``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--sentences", type=Path, required=True)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from tame_mt_metric.lookup import SavedIndex

    sentences = args.sentences.read_text(encoding="utf-8").splitlines()
    start = time.perf_counter()
    saved = SavedIndex.open(args.index)
    print(f"open {time.perf_counter() - start:.3f} s")
    times = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        saved.lookup(sentences, args.top_k)
        times.append(time.perf_counter() - start)
    print("lookups " + " ".join(f"{t:.3f}" for t in times) + " s")
    print(f"median {statistics.median(times):.3f} s")


if __name__ == "__main__":
    main()
