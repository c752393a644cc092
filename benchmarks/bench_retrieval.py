"""Fresh-audit retrieval benchmark: tame_mt_metric against tame-mt 0.2.2 and a floor.

For each workload every measurement runs in its own child process, so wall time,
CPU time (user + sys of the child) and peak RSS belong to that run alone:

- floor: read the four files and count the distinct n-grams of every training
  source and target (`tm.count_grams`), the least work any exact audit must do;
- streaming / indexed: `tm.find_exposures` with that strategy (indexed: build and
  query timed separately inside the child, index size from `index.nbytes`);
- tame_fast / tame_exact: the `tame-mt audit` CLI of the published package in
  `native_fast` (approximate) and `native_exact` modes;
- reference: exact exposures of a random sample of test items, from
  `stream_oracle.py` (one pass of plain Python over the training files) and, for
  small training sets, from `tm.reference.brute_force_exposures`.

It then reports agreement (streaming vs indexed, ours vs the reference sample, ours
vs tame-mt) and prints Markdown tables. Results are merged into --out, so workloads
can be run one at a time:

    python benchmarks/bench_retrieval.py --workloads multi30k,synth100k --out results.json
    python benchmarks/bench_retrieval.py --report results.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"
# Data and run files; the tame-mt 0.2.2 CLI, installed in a virtual environment of its own.
DEFAULT_CACHE = Path(os.environ.get("TAME_BENCH_CACHE", Path(tempfile.gettempdir()) / "tame-bench"))
DEFAULT_TAME = Path(os.environ.get("TAME_MT_CLI", "tame-mt"))
RUNS = ("floor", "streaming", "indexed", "tame_fast", "tame_exact", "reference")
FIELDS = (
    "source_exposure",
    "source_neighbor",
    "target_exposure",
    "target_neighbor",
    "pair_exposure",
    "pair_neighbor",
    "source_exact",
    "target_exact",
    "pair_exact",
)
TAME_FIELDS = {
    "source_neighbor": "source_nn_index",
    "target_neighbor": "target_nn_index",
    "pair_neighbor": "pair_nn_index",
}
EPS = 1e-9

Result = dict[str, list[Any]]


# ---------------------------------------------------------------- workloads


def read_lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _prepare_multi30k(folder: Path, data: Path) -> None:
    names = {
        "train.src": "train.en",
        "train.tgt": "train.de",
        "test.src": "test_2016_flickr.en",
        "test.ref": "test_2016_flickr.de",
    }
    folder.mkdir(parents=True, exist_ok=True)
    for target, source in names.items():
        with gzip.open(data / "multi30k" / f"{source}.gz", "rb") as handle:
            (folder / target).write_bytes(handle.read())


def _prepare_synthetic(n_train: int) -> Callable[[Path, Path], None]:
    def prepare(folder: Path, data: Path) -> None:
        run(
            [
                sys.executable,
                str(HERE / "synthetic.py"),
                "--train",
                str(n_train),
                "--test",
                "2000",
                "--out",
                str(folder),
            ]
        )

    return prepare


def _prepare_real(folder: Path, data: Path) -> None:
    run(
        [
            sys.executable,
            str(HERE / "real_corpus.py"),
            "--out",
            str(folder),
            "--data",
            str(data),
            "--max-train",
            "1000000",
        ]
    )


WORKLOADS: dict[str, Callable[[Path, Path], None]] = {
    "multi30k": _prepare_multi30k,
    "synth100k": _prepare_synthetic(100_000),
    "synth1m": _prepare_synthetic(1_000_000),
    "synth10m": _prepare_synthetic(10_000_000),
    "real1m": _prepare_real,
}


def run(cmd: Sequence[str]) -> None:
    subprocess.run(cmd, check=True)


def prepare(name: str, cache: Path, data: Path) -> Path:
    folder = cache / name
    if not all((folder / f).exists() for f in ("train.src", "train.tgt", "test.src", "test.ref")):
        print(f"[{name}] preparing data in {folder}", file=sys.stderr)
        WORKLOADS[name](folder, data)
    return folder


# ---------------------------------------------------------------- child processes


def _config(tm: Any, strategy: str, threads: int | None) -> Any:
    return tm.RetrievalConfig(ngram_orders=(3, 4, 5), strategy=strategy, threads=threads)


def _as_result(exposures: Any) -> Result:
    return {name: list(getattr(exposures, name)) for name in FIELDS}


def child(
    kind: str, folder: Path, result_path: Path, threads: int | None, sample: list[int]
) -> None:
    """Run one measurement in this (child) process and write its JSON result."""
    started = time.perf_counter()
    test_src = read_lines(folder / "test.src")
    test_ref = read_lines(folder / "test.ref")
    out: dict[str, Any] = {}
    if kind == "oracle":
        from stream_oracle import stream_exposures

        oracle = stream_exposures(
            folder / "train.src",
            folder / "train.tgt",
            [test_src[i] for i in sample],
            [test_ref[i] for i in sample],
            workers=threads or os.cpu_count() or 1,
        )
        out["result"] = oracle.fields()
        result_path.write_text(json.dumps(out))
        return

    import tame_mt_core

    import tame_mt_metric as tm

    core = next(Path(tame_mt_core.__file__).parent.glob("tame_mt_core*.so"))
    out["package"] = {"version": tm.__version__, "core": core.name, "mtime": core.stat().st_mtime}
    train_src = read_lines(folder / "train.src")
    train_tgt = read_lines(folder / "train.tgt")
    out["read_s"] = time.perf_counter() - started
    t0 = time.perf_counter()
    if kind == "floor":
        cfg = _config(tm, "streaming", threads)
        out["grams"] = tm.count_grams(train_src, config=cfg) + tm.count_grams(train_tgt, config=cfg)
    elif kind == "streaming":
        cfg = _config(tm, "streaming", threads)
        exposures = tm.find_exposures(train_src, train_tgt, test_src, test_ref, config=cfg)
        out["result"] = _as_result(exposures)
    elif kind == "indexed":
        index = tm.TrainingIndex.build(train_src, train_tgt, config=_config(tm, "indexed", threads))
        out["build_s"] = time.perf_counter() - t0
        out["index_bytes"] = int(index.nbytes)
        t1 = time.perf_counter()
        out["result"] = _as_result(index.find_exposures(test_src, test_ref))
        out["query_s"] = time.perf_counter() - t1
    elif kind == "package_reference":
        cfg = _config(tm, "streaming", threads)
        exposures = tm.reference.brute_force_exposures(
            train_src,
            train_tgt,
            [test_src[i] for i in sample],
            [test_ref[i] for i in sample],
            config=cfg,
        )
        out["result"] = _as_result(exposures)
    else:
        raise ValueError(f"unknown child kind {kind!r}")
    out["compute_s"] = time.perf_counter() - t0
    result_path.write_text(json.dumps(out))


def measure(
    cmd: Sequence[str], log: Path, timeout: float, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run `cmd` as a child (its output into `log`); wall, user + sys CPU and peak
    RSS of that child alone."""
    started = time.perf_counter()
    with open(log, "wb") as handle:
        proc = subprocess.Popen(cmd, stdout=handle, stderr=subprocess.STDOUT, cwd=HERE, env=env)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "rc": proc.returncode,
        "wall_s": time.perf_counter() - started,
        "user_s": usage.ru_utime,
        "sys_s": usage.ru_stime,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
    }


def _child_cmd(
    kind: str, folder: Path, result: Path, threads: int | None, sample: list[int]
) -> list[str]:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        kind,
        "--data-dir",
        str(folder),
        "--result",
        str(result),
        "--sample-items",
        ",".join(map(str, sample)),
    ]
    return cmd + (["--threads", str(threads)] if threads else [])


def _tame_cmd(tame: Path, mode: str, folder: Path, diag: Path, threads: int | None) -> list[str]:
    cmd = [
        str(tame),
        "audit",
        "--train-src",
        str(folder / "train.src"),
        "--train-tgt",
        str(folder / "train.tgt"),
        "--test-src",
        str(folder / "test.src"),
        "--ref",
        str(folder / "test.ref"),
        "--index-mode",
        mode,
        "--diagnostic-out",
        str(diag),
        "--quiet",
        "--threads",
        str(threads or "auto"),
    ]
    if mode == "native_fast":
        cmd += ["--retrieval", "approx", "--allow-approximate"]
    return cmd


def _read_tame(diag: Path) -> Result:
    rows = [json.loads(line) for line in read_lines(diag)]
    return {name: [row[TAME_FIELDS.get(name, name)] for row in rows] for name in FIELDS}


# ---------------------------------------------------------------- agreement


def identical(a: Result, b: Result) -> dict[str, Any]:
    """Field-by-field identity of two full results."""
    mismatches = {
        name: sum(x != y for x, y in zip(a[name], b[name], strict=True)) for name in FIELDS
    }
    return {"identical": not any(mismatches.values()), "mismatches": mismatches}


def against_sample(ours: Result, ref: Result, sample: list[int]) -> dict[str, Any]:
    """Ours on the sampled items against an exact reference; lists every difference."""
    differences = []
    for k, i in enumerate(sample):
        for name in FIELDS:
            mine, theirs = ours[name][i], ref[name][k]
            same = abs(mine - theirs) <= EPS if name.endswith("exposure") else mine == theirs
            if name.endswith("neighbor") and ref[name.replace("neighbor", "exposure")][k] == 0:
                same = True  # with nothing shared any row is a neighbour
            if not same:
                differences.append({"item": i, "field": name, "ours": mine, "reference": theirs})
    return {
        "items": len(sample),
        "agree": not differences,
        "differences": differences[:50],
    }


def against_tame(ours: Result, tame: Result) -> dict[str, Any]:
    """How often tame-mt's answers equal ours, and by how much they differ."""
    n = len(ours["source_exposure"])
    report: dict[str, Any] = {"items": n}
    for side in ("source", "target", "pair"):
        mine, theirs = ours[f"{side}_exposure"], tame[f"{side}_exposure"]
        diffs = [t - m for m, t in zip(mine, theirs, strict=True)]
        report[side] = {
            "same_exposure": sum(abs(d) <= EPS for d in diffs) / n,
            "same_neighbor": sum(
                a == b
                for a, b in zip(ours[f"{side}_neighbor"], tame[f"{side}_neighbor"], strict=True)
            )
            / n,
            "max_abs_diff": max(abs(d) for d in diffs),
            "tame_lower": sum(d < -EPS for d in diffs),
            "tame_higher": sum(d > EPS for d in diffs),
        }
    return report


# ---------------------------------------------------------------- driver


def bench_workload(name: str, args: argparse.Namespace) -> dict[str, Any]:
    folder = prepare(name, args.cache, args.data)
    work = args.cache / "runs" / name
    work.mkdir(parents=True, exist_ok=True)
    n_test = len(read_lines(folder / "test.src"))
    sample = sorted(random.Random(args.seed).sample(range(n_test), min(args.sample, n_test)))
    with open(folder / "train.src", "rb") as handle:
        n_train = sum(1 for _ in handle)
    entry: dict[str, Any] = {
        "n_train": n_train,
        "n_test": n_test,
        "runs": {},
        "agreement": {},
    }
    results: dict[str, Result] = {}
    runs = [r for r in args.runs if not (args.skip_reference and r == "reference")]
    for kind in runs:
        jobs: list[tuple[str, list[str], Path]] = []
        if kind.startswith("tame_"):
            diag = work / f"{kind}.jsonl"
            mode = "native_fast" if kind == "tame_fast" else "native_exact"
            jobs.append((kind, _tame_cmd(args.tame, mode, folder, diag, args.threads), diag))
        elif kind == "reference":
            jobs.append(("oracle", [], work / "oracle.json"))
            if n_train <= args.package_reference_max:
                jobs.append(("package_reference", [], work / "package_reference.json"))
        else:
            jobs.append((kind, [], work / f"{kind}.json"))
        for label, cmd, path in jobs:
            path.unlink(missing_ok=True)
            cmd = cmd or _child_cmd(label, folder, path, args.threads, sample)
            print(f"[{name}] {label} ...", file=sys.stderr, flush=True)
            stats = measure(cmd, work / f"{label}.log", args.timeout)
            if stats["rc"] == 0 and path.exists():
                if label.startswith("tame_"):
                    results[label] = _read_tame(path)
                else:
                    inner = json.loads(path.read_text())
                    if "result" in inner:
                        results[label] = inner.pop("result")
                    stats.update(inner)
            else:
                stats["log_tail"] = (work / f"{label}.log").read_text(errors="replace")[-2000:]
            entry["runs"][label] = stats
            print(f"[{name}] {label}: {_brief(stats)}", file=sys.stderr, flush=True)
    entry["agreement"] = agreement(results, sample)
    return entry


def agreement(results: dict[str, Result], sample: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    ours = results.get("streaming") or results.get("indexed")
    if "streaming" in results and "indexed" in results:
        out["streaming_vs_indexed"] = identical(results["streaming"], results["indexed"])
    if ours is None:
        return out
    for ref in ("oracle", "package_reference"):
        if ref in results:
            out[f"ours_vs_{ref}"] = against_sample(ours, results[ref], sample)
    for tame in ("tame_exact", "tame_fast"):
        if tame in results:
            out[f"{tame}_vs_ours"] = against_tame(ours, results[tame])
    return out


def _brief(stats: dict[str, Any]) -> str:
    if stats["rc"] != 0:
        return f"FAILED rc={stats['rc']}"
    return f"wall {stats['wall_s']:.1f}s cpu {stats['cpu_s']:.1f}s rss {stats['peak_rss_mb']:.0f}MB"


# ---------------------------------------------------------------- report


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "| workload | run | wall s | CPU s | peak RSS MB | notes |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for name, entry in results.items():
        for kind, s in entry["runs"].items():
            notes = []
            if s["rc"] != 0:
                notes.append(f"failed (rc {s['rc']})")
            if "build_s" in s:
                notes.append(
                    f"build {s['build_s']:.1f} s, query {s['query_s']:.1f} s, "
                    f"index {s['index_bytes'] / 2**20:.0f} MB"
                )
            if "grams" in s:
                notes.append(f"{s['grams']:,} grams")
            lines.append(
                f"| {name} ({entry['n_train']:,} x {entry['n_test']:,}) | {kind} | "
                f"{s['wall_s']:.1f} | {s['cpu_s']:.1f} | {s['peak_rss_mb']:.0f} | "
                f"{'; '.join(notes)} |"
            )
    lines += ["", "| workload | check | result |", "| --- | --- | --- |"]
    for name, entry in results.items():
        for check, a in entry["agreement"].items():
            lines.append(f"| {name} | {check} | {_agreement_text(a)} |")
    lines += [
        "",
        "Ratios, streaming / indexed (targets: wall vs tame_fast <= 0.2, RSS vs tame-mt <= 0.5,"
        + " wall vs floor <= 5, index <= 1024 MB):",
        "",
        "| workload | ours / tame_fast wall | ours / tame_exact peak RSS | ours / floor wall"
        + " | index MB |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, entry in results.items():
        r = entry["runs"]
        cells = [
            " / ".join(_ratio(r, ours, other, key) for ours in ("streaming", "indexed"))
            for other, key in (
                ("tame_fast", "wall_s"),
                ("tame_exact", "peak_rss_mb"),
                ("floor", "wall_s"),
            )
        ]
        index_mb = (
            f"{r['indexed']['index_bytes'] / 2**20:.0f}"
            if "index_bytes" in r.get("indexed", {})
            else "n/a"
        )
        lines.append(f"| {name} | {' | '.join(cells)} | {index_mb} |")
    return "\n".join(lines)


def _ratio(runs: dict[str, Any], a: str, b: str, key: str) -> str:
    if a in runs and b in runs and runs[a]["rc"] == 0 and runs[b]["rc"] == 0:
        return f"{runs[a][key] / runs[b][key]:.2f}"
    return "n/a"


def _agreement_text(a: dict[str, Any]) -> str:
    if "identical" in a:
        return "identical" if a["identical"] else f"DIFFERENT: {a['mismatches']}"
    if "differences" in a:
        if a["agree"]:
            return f"all {a['items']} sampled items agree"
        return f"{len(a['differences'])} DIFFERENCES, first: {a['differences'][0]}"
    parts = []
    for side in ("source", "target", "pair"):
        s = a[side]
        parts.append(
            f"{side}: same {s['same_exposure']:.1%} (nn {s['same_neighbor']:.1%}), "
            f"max diff {s['max_abs_diff']:.3f}, lower {s['tame_lower']}, "
            f"higher {s['tame_higher']}"
        )
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--workloads",
        default="multi30k,synth100k",
        help=f"comma-separated, from {','.join(WORKLOADS)}",
    )
    parser.add_argument("--runs", default=",".join(RUNS), help="comma-separated subset")
    parser.add_argument("--skip-reference", action="store_true", help="no exact sample check")
    parser.add_argument("--sample", type=int, default=20, help="test items checked exactly")
    parser.add_argument(
        "--package-reference-max",
        type=int,
        default=30_000,
        help="also run tm.reference up to this many training pairs",
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--threads", type=int, default=None, help="default: all cores")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="data and run files")
    parser.add_argument("--data", type=Path, default=DATA, help="shared data folder")
    parser.add_argument("--tame", type=Path, default=DEFAULT_TAME, help="tame-mt 0.2.2 CLI")
    parser.add_argument("--out", type=Path, help="results JSON (merged when it exists)")
    parser.add_argument("--report", type=Path, help="only print the tables of this JSON")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--sample-items", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sample = [int(i) for i in args.sample_items.split(",") if i]
        child(args.child, args.data_dir, args.result, args.threads, sample)
        return
    if args.report:
        print(markdown(json.loads(args.report.read_text())))
        return
    args.runs = [r for r in args.runs.split(",") if r]
    results: dict[str, Any] = {}
    if args.out and args.out.exists():
        results = json.loads(args.out.read_text())
    for name in args.workloads.split(","):
        results[name] = bench_workload(name, args)
        if args.out:
            args.out.write_text(json.dumps(results, indent=1))
    print(markdown(results))


if __name__ == "__main__":
    main()
