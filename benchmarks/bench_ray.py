"""Scale-out benchmark: the audit of a 2k-item test set against a large corpus
on Ray with 1 and 2 workers (one core each, one shard per worker), against the
one-machine streaming audit; throughput (training pairs per second), the
scaling ratio, peak memory per worker, and agreement with one machine.

    python benchmarks/bench_ray.py --workloads real1m,synth1m --out ray.json
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

from bench_retrieval import DATA, DEFAULT_CACHE, prepare, read_lines

from tame_mt_metric import RetrievalConfig
from tame_mt_metric.scale.ray_engine import TextFiles, _audit_range
from tame_mt_metric.scale.shards import audit_shard, merge_partials, shard_ranges


def _measured(train: Any, start: int, stop: int, test: Any) -> tuple[Any, float, float]:
    began = time.perf_counter()
    part = _audit_range(train, start, stop, test)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return part, peak_mb, time.perf_counter() - began


def bench(folder: Path, workers: list[int], one_machine: bool = True) -> dict[str, Any]:
    import ray

    files = TextFiles(folder / "train.src", folder / "train.tgt")
    rows = files.num_rows
    sources, refs = read_lines(folder / "test.src"), [[r] for r in read_lines(folder / "test.ref")]
    config = RetrievalConfig(threads=1)
    out: dict[str, Any] = {"rows": rows, "items": len(sources)}
    whole = None
    if one_machine:
        began = time.perf_counter()
        blocks = files.blocks(config.block_rows)
        whole = audit_shard(blocks, 0, sources, refs, config).exposures
        out["one_machine_s"] = time.perf_counter() - began
    for n in workers:
        ray.init(num_cpus=n, include_dashboard=False, log_to_driver=False)
        try:
            test = ray.put((sources, refs, config))
            task = ray.remote(num_cpus=1)(_measured)
            began = time.perf_counter()
            results = ray.get([task.remote(files, a, b, test) for a, b in shard_ranges(rows, n)])
            merged = merge_partials([r[0] for r in results])
            seconds = time.perf_counter() - began
        finally:
            ray.shutdown()
        if whole is None:  # compare the worker counts with each other
            whole = merged.exposures
        out[f"workers_{n}"] = {
            "seconds": seconds,
            "pairs_per_s": rows / seconds,
            "peak_rss_mb_per_worker": max(r[1] for r in results),
            "task_seconds": [round(r[2], 1) for r in results],
            "equals_reference": merged.exposures.items == whole.items,
        }
        print(json.dumps({str(folder.name): out}), file=sys.stderr)
    if len(workers) > 1:
        first, last = out[f"workers_{workers[0]}"], out[f"workers_{workers[-1]}"]
        out["scaling"] = last["pairs_per_s"] / first["pairs_per_s"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workloads", default="synth100k")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--skip-one-machine",
        action="store_true",
        help="compare the worker counts with each other only (for very large corpora)",
    )
    args = parser.parse_args()
    results = json.loads(args.out.read_text()) if args.out and args.out.exists() else {}
    for name in args.workloads.split(","):
        workers = [int(w) for w in args.workers.split(",")]
        folder = prepare(name, args.cache, args.data)
        results[name] = bench(folder, workers, not args.skip_one_machine)
        if args.out:
            args.out.write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
