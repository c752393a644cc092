"""Cache benchmark: the training index in the cache, and training-loop speed.

Every stage runs in its own child process (wall, CPU, peak RSS of that child):

- build: read the training files, build the index and write it to the cache
  (`tame_mt_metric.cache.entries.cached_index`); index files' size;
- load: open the cached index (memory map, checksums and invariants); resident
  memory before and after, from /proc/self/status;
- query: open the cached index and audit the 2k test items with it;
- streaming: audit the 2k test items by one pass over the training files (the
  `auto` choice for a fresh test set of this size);
- warm: a metric with the corpus given at load time; one compute() audits
  the test set, then compute() with new predictions is timed against
  sacrebleu's corpus BLEU + chrF++ alone on the same predictions (median of 5);
- tame_build / tame_query: `tame-mt index build` and `tame-mt audit --index`
  (native_exact) of the published tame-mt 0.2.2 (`TAME_MT_CLI`), with --tame.

    python benchmarks/bench_cache.py --workloads synth100k --out cache.json
    python benchmarks/bench_cache.py --workloads synth1m --tame --out cache.json
    python benchmarks/bench_cache.py --workloads synth1m --stages build,load   # the open alone
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_retrieval import DATA, DEFAULT_CACHE, DEFAULT_TAME, measure, prepare, read_lines

HERE = Path(__file__).resolve().parent
STAGES = ("build", "load", "query", "streaming", "warm")


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _degrade(text: str) -> str:
    return " ".join(w for i, w in enumerate(text.split()) if i % 4 != 3)


def child(stage: str, folder: Path, cache_dir: Path, result: Path) -> None:
    import tame_mt_metric as tm
    from tame_mt_metric.cache.entries import CacheOptions, cached_index, list_entries
    from tame_mt_metric.cache.index_files import read_index

    out: dict[str, Any] = {}
    cache = CacheOptions(cache_dir=cache_dir, train_key=folder.name)
    config = tm.RetrievalConfig(strategy="indexed")
    test_src, test_ref = read_lines(folder / "test.src"), read_lines(folder / "test.ref")
    if stage in ("build", "streaming", "warm"):
        corpus = tm.TrainingCorpus(
            read_lines(folder / "train.src"), read_lines(folder / "train.tgt")
        )
    t0 = time.perf_counter()
    if stage == "build":
        cached_index(corpus, config, cache)
        out["seconds"] = time.perf_counter() - t0
        out["index_bytes"] = sum(e.nbytes for e in list_entries(cache_dir) if e.kind == "index")
    elif stage in ("load", "query"):
        (entry,) = [e for e in list_entries(cache_dir) if e.kind == "index"]
        before = _rss_mb()
        index = read_index(entry.path, config)
        out["load_s"] = time.perf_counter() - t0
        out["rss_before_mb"], out["rss_after_mb"] = before, _rss_mb()
        if stage == "query":
            t1 = time.perf_counter()
            found = index.find_exposures(test_src, test_ref)
            out["query_s"] = time.perf_counter() - t1
            out["source_exposure_sum"] = sum(found.source_exposure)
        out["seconds"] = time.perf_counter() - t0
    elif stage == "streaming":
        pairs = zip(corpus.sources, corpus.targets, strict=True)
        found = tm.stream_exposures(pairs, test_src, test_ref)
        out["seconds"] = time.perf_counter() - t0
        out["source_exposure_sum"] = sum(found.source_exposure)
    elif stage == "warm":
        import sacrebleu

        metric = tm.load(
            train=corpus, keep_in_memory=True, tame_cache_dir=str(cache_dir), train_key=folder.name
        )
        metric.compute(predictions=test_ref, references=test_ref, sources=test_src)
        out["first_s"] = time.perf_counter() - t0
        hyps = [_degrade(r) for r in test_ref]
        ours, theirs = [], []
        for _ in range(5):
            t1 = time.perf_counter()
            metric.compute(predictions=hyps, references=test_ref, sources=test_src)
            ours.append(time.perf_counter() - t1)
            t1 = time.perf_counter()
            sacrebleu.corpus_bleu(hyps, [test_ref])
            sacrebleu.corpus_chrf(hyps, [test_ref], word_order=2)
            theirs.append(time.perf_counter() - t1)
        out["warm_s"], out["sacrebleu_s"] = statistics.median(ours), statistics.median(theirs)
        out["seconds"] = time.perf_counter() - t0
    result.write_text(json.dumps(out))


def _tame(tame: Path, stage: str, folder: Path, work: Path) -> list[str]:
    bundle = work / "train.tameidx"
    if stage == "tame_build":
        return [
            str(tame),
            "index",
            "build",
            "--train-src",
            str(folder / "train.src"),
            "--train-tgt",
            str(folder / "train.tgt"),
            "--out",
            str(bundle),
        ]
    return [
        str(tame),
        "audit",
        "--index",
        str(bundle),
        "--test-src",
        str(folder / "test.src"),
        "--ref",
        str(folder / "test.ref"),
        "--index-mode",
        "native_exact",
        "--diagnostic-out",
        str(work / "diag.jsonl"),
        "--max-index-load-bytes",
        str(64 << 30),
        "--quiet",
    ]


def bench(name: str, args: argparse.Namespace) -> dict[str, Any]:
    folder = prepare(name, args.cache, args.data)
    work = Path(tempfile.mkdtemp(prefix=f"tame-cache-{name}-"))
    cache_dir = work / "cache"
    runs: dict[str, Any] = {}
    for stage in args.stages:
        result = work / f"{stage}.json"
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--child",
            stage,
            "--folder",
            str(folder),
            "--cache-dir",
            str(cache_dir),
            "--result",
            str(result),
        ]
        runs[stage] = measure(cmd, work / f"{stage}.log", args.timeout)
        if runs[stage]["rc"] != 0:
            print((work / f"{stage}.log").read_text(), file=sys.stderr)
            raise SystemExit(f"[{name}] {stage} failed")
        runs[stage].update(json.loads(result.read_text()))
        print(f"[{name}] {stage}: {runs[stage]}", file=sys.stderr)
    if args.tame:
        for stage in ("tame_build", "tame_query"):
            runs[stage] = measure(
                _tame(args.tame_cli, stage, folder, work), work / f"{stage}.log", args.timeout
            )
            print(f"[{name}] {stage}: {runs[stage]}", file=sys.stderr)
    if "query" in runs and "streaming" in runs:
        query, streaming = (runs[s]["source_exposure_sum"] for s in ("query", "streaming"))
        runs["query_equals_streaming"] = abs(query - streaming) < 1e-9
    return runs


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "| workload | stage | wall s | peak RSS MB | notes |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    for name, runs in results.items():
        for stage in (*STAGES, "tame_build", "tame_query"):
            if stage not in runs:
                continue
            r = runs[stage]
            notes = {
                "build": lambda r: f"index files {r['index_bytes'] / 2**20:,.0f} MiB",
                "load": lambda r: (
                    f"load {r['load_s']:.2f} s, RSS {r['rss_before_mb']:.0f} -> "
                    f"{r['rss_after_mb']:.0f} MB"
                ),
                "query": lambda r: f"load {r['load_s']:.2f} s + query {r['query_s']:.1f} s",
                "warm": lambda r: (
                    f"first compute {r['first_s']:.1f} s; warm {r['warm_s']:.3f} s "
                    f"vs sacrebleu {r['sacrebleu_s']:.3f} s = {r['warm_s'] / r['sacrebleu_s']:.2f}x"
                ),
            }.get(stage, lambda r: "")(r)
            lines.append(
                f"| {name} | {stage} | {r['wall_s']:.1f} | {r['peak_rss_mb']:,.0f} | {notes} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workloads", default="synth100k")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--tame", action="store_true", help="also time tame-mt 0.2.2")
    parser.add_argument("--tame-cli", type=Path, default=DEFAULT_TAME)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--stages",
        type=lambda v: [s for s in STAGES if s in v.split(",")],
        default=list(STAGES),
        help="comma-separated, run in their usual order (default: all; load and query need build)",
    )
    parser.add_argument("--child", choices=STAGES)
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--cache-dir", type=Path)
    parser.add_argument("--result", type=Path)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.folder, args.cache_dir, args.result)
        return
    results = json.loads(args.out.read_text()) if args.out and args.out.exists() else {}
    for name in args.workloads.split(","):
        results[name] = bench(name, args)
        if args.out:
            args.out.write_text(json.dumps(results, indent=1))
    print(markdown(results))


if __name__ == "__main__":
    main()
