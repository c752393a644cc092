"""The cost model of ``auto`` against both strategies' measured times: for test
sets of several sizes drawn from one test set, search an index of the corpus
and stream the corpus once, alternating, and print each one's wall time, the
model's estimate and its choice (``retrieval/strategy.py`` was fitted to these
figures).

    python benchmarks/bench_strategy.py --folder DIR --sizes 8,32,128,512,2000

DIR holds a saved Dataset (``dataset/``) and ``test.src`` / ``test.ref``
(``bench_scale.py prepare``). The index is built once in this process, outside
the timings; each timing is the median of ``--repeat`` alternating runs.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--sizes", default="8,32,128,512,2000")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    import datasets

    from tame_mt_metric.retrieval.config import RetrievalConfig
    from tame_mt_metric.retrieval.corpus import TrainingCorpus
    from tame_mt_metric.retrieval.exposure import TrainingIndex
    from tame_mt_metric.retrieval.inputs import read_lines
    from tame_mt_metric.retrieval.strategy import choose_strategy, estimate
    from tame_mt_metric.retrieval.streaming_pass import streaming_pass

    train = TrainingCorpus.from_any(datasets.load_from_disk(str(args.folder / "dataset")))
    sources, refs = read_lines(args.folder / "test.src"), read_lines(args.folder / "test.ref")
    config = RetrievalConfig()
    began = time.perf_counter()
    index = TrainingIndex.build(*train.whole(), config)
    print(f"{train.num_rows:,} pairs; index built in {time.perf_counter() - began:.1f} s")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    order = list(range(len(sources)))
    random.Random(1).shuffle(order)
    head = "items | search s | stream s | model search s | model stream s | choice | chosen / best"
    print(f"\n| {head} |")
    print("| ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    for n in map(int, args.sizes.split(",")):
        test = [sources[i] for i in order[:n]]
        test_refs = [[refs[i]] for i in order[:n]]
        times: dict[str, list[float]] = {"indexed": [], "streaming": []}
        for _ in range(args.repeat):
            t = time.perf_counter()
            index.find_exposures(test, test_refs)
            times["indexed"].append(time.perf_counter() - t)
            t = time.perf_counter()
            streaming_pass(train.blocks(config.block_rows), 0, test, test_refs, config)
            times["streaming"].append(time.perf_counter() - t)
        search, stream = (sorted(v)[len(v) // 2] for v in times.values())
        volume = index.search_volume(test, test_refs)
        model = estimate(*volume, n)
        choice = choose_strategy(config, train.num_rows, n, volume).strategy
        chosen = search if choice == "indexed" else stream
        print(
            f"| {n} | {search:.2f} | {stream:.2f} | {model.indexed_s:.2f} | "
            f"{model.streaming_s:.2f} | {choice} | {chosen / min(search, stream):.2f} |",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
