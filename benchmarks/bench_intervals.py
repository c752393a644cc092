"""What the bootstrap intervals cost on the user's path: each run a fresh
process with an empty cache, measured from outside (wall, CPU of the child),
every mode in turn, this checkout and a baseline alternating (A B A B):

- ``score-json``: ``tame-mt-metric score ... --json-out`` (the JSON report
  holds every interval and the exposure curve's; 1,000 resamples);
- ``score-json-0``: the same with ``--n-bootstrap 0`` (no intervals);
- ``compute-report``: ``tame_mt_metric.load(train=...)`` and
  ``compute(return_report=True)`` (the report, so its intervals) twice: the
  first call runs the audit, the second finds it cached (a training loop's
  later evaluation);
- ``compute``: the same two ``compute()`` calls without the report.

The intervals' share of a fresh ``score`` is ``1 - score-json-0 / score-json``
of the same round (the two runs next to each other); the ``compute`` modes
also print the seconds of each ``compute()`` call inside the process.

The test set is Multi30k's ``test_2016_flickr`` (1,000 items, English to
French) against its 29,000 training pairs; the hypotheses are the references
with a fifth of their words dropped (seeded).

    python benchmarks/bench_intervals.py prepare --out DIR [--data ../shared/data]
    python benchmarks/bench_intervals.py compare --folder DIR --repeat 5 \\
        [--baseline SRC] [--modes score-json,score-json-0]

``--baseline SRC`` puts ``SRC`` (a source tree of the package before a change,
e.g. ``git archive REV | tar -x -C SRC``) ahead on ``PYTHONPATH`` for the B
runs; without it only this checkout runs.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_retrieval import measure

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
MODES = ("score-json", "score-json-0", "compute-report", "compute")
FIGURES = ("wall_s", "cpu_s", "compute_s", "warm_s")


def _lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def prepare(out: Path, data: Path) -> None:
    multi30k = data / "multi30k"
    out.mkdir(parents=True, exist_ok=True)
    refs = _lines(multi30k / "test_2016_flickr.fr.gz")
    rng = random.Random(7)
    hyps = [" ".join(w for w in r.split() if rng.random() > 0.2) or r for r in refs]
    files = {
        "train.src": _lines(multi30k / "train.en.gz"),
        "train.tgt": _lines(multi30k / "train.fr.gz"),
        "test.src": _lines(multi30k / "test_2016_flickr.en.gz"),
        "test.ref": refs,
        "test.hyp": hyps,
    }
    for name, lines in files.items():
        (out / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"{out}: {len(files['train.src']):,} training pairs, {len(refs):,} test items")


def child(mode: str, folder: Path, cache: Path) -> None:
    """A ``compute()`` run in this fresh process; prints one JSON line."""
    import tame_mt_metric
    from tame_mt_metric.retrieval.inputs import read_lines

    def read(name: str) -> list[str]:
        return read_lines(folder / name)

    train = {"source": read("train.src"), "target": read("train.tgt")}
    metric = tame_mt_metric.load(train=train, tame_cache_dir=str(cache), keep_in_memory=True)
    args = {"predictions": read("test.hyp"), "references": read("test.ref")}
    args["sources"] = read("test.src")
    seconds = []
    for _ in range(2):  # the audit, then the same call with the audit cached
        started = time.perf_counter()
        fields = metric.compute(**args, return_report=mode == "compute-report")
        seconds.append(time.perf_counter() - started)
        assert fields is not None
    print(json.dumps({"compute_s": seconds[0], "warm_s": seconds[1], "bleu": fields["bleu"]}))


def _command(mode: str, folder: Path, work: Path) -> list[str]:
    if mode in ("compute-report", "compute"):
        script = str(Path(__file__).resolve())
        return [sys.executable, script, "child", mode, str(folder), str(work / "cache")]
    files = ["--train-src", "train.src", "--train-tgt", "train.tgt", "--test-src", "test.src"]
    files += ["--ref", "test.ref", "--hyp", "test.hyp"]
    cmd = [sys.executable, "-m", "tame_mt_metric", "score"]
    cmd += [str(folder / f) if f.startswith(("train.", "test.")) else f for f in files]
    cmd += ["--json-out", str(work / "report.json"), "--quiet"]
    return cmd + (["--n-bootstrap", "0"] if mode == "score-json-0" else [])


def _run(mode: str, folder: Path, baseline: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-intervals-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "TAME_MT_PROGRESS": "0"}
        env["TAME_MT_CACHE"] = str(work / "cache")
        paths = [str(baseline) if baseline else str(ROOT), env.get("PYTHONPATH", "")]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
        measured = measure(_command(mode, folder, work), work / "output.log", 600, env)
        output = (work / "output.log").read_text(encoding="utf-8", errors="replace")
        report = work / "report.json"
        intervals = json.loads(report.read_text())["intervals"] if report.exists() else None
    if measured["rc"] != 0:
        raise SystemExit(f"{mode}: failed ({measured['rc']})\n{output[-2000:]}")
    run = {"mode": mode, "wall_s": measured["wall_s"], "cpu_s": measured["cpu_s"]}
    if mode.startswith("compute"):
        line = [x for x in output.splitlines() if x.startswith("{")][-1]
        run.update({k: v for k, v in json.loads(line).items() if k.endswith("_s")})
    run["intervals"] = intervals
    return run


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}" if values else "-"


def compare(folder: Path, repeat: int, modes: list[str], baseline: Path | None) -> None:
    builds = ["this", "baseline"] if baseline else ["this"]
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    print(f"load average before: {os.getloadavg()}")
    for r in range(repeat):
        for mode in modes:
            for build in builds:
                run = _run(mode, folder, baseline if build == "baseline" else None)
                runs.setdefault((build, mode), []).append(run)
                extra = ""
                if "compute_s" in run:
                    extra = f" compute() {run['compute_s']:.2f} s, warm {run['warm_s']:.2f} s"
                print(f"round {r + 1} {build:8} {mode:15} {run['wall_s']:6.2f} s{extra}")
    print(f"load average after: {os.getloadavg()}")
    if baseline and "score-json" in modes:
        same = all(
            a["intervals"] == b["intervals"]
            for a, b in zip(runs["this", "score-json"], runs["baseline", "score-json"], strict=True)
        )
        print(f"the JSON reports' intervals equal the baseline's: {same}")
    head = "| build | mode | wall s (runs) | median wall s | median CPU s | compute() s | warm s |"
    print(f"\n{head}\n| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for (build, mode), found in runs.items():
        walls = ", ".join(f"{x['wall_s']:.2f}" for x in found)
        medians = [_median([x[k] for x in found if k in x]) for k in FIGURES]
        print(f"| {build} | {mode} | {walls} | {' | '.join(medians)} |")
    print()
    for build in builds:
        if {"score-json", "score-json-0"} <= set(modes):
            with_ci, without = runs[build, "score-json"], runs[build, "score-json-0"]
            shares = [1 - b["wall_s"] / a["wall_s"] for a, b in zip(with_ci, without, strict=True)]
            listed = ", ".join(f"{s:.0%}" for s in shares)
            print(f"{build}: the intervals' share of a fresh score --json-out: {listed}", end="")
            print(f" (median {statistics.median(shares):.0%})")
        if {"compute-report", "compute"} <= set(modes):
            for key, name in (("compute_s", "first call"), ("warm_s", "audit cached")):
                pairs = zip(runs[build, "compute-report"], runs[build, "compute"], strict=True)
                listed = ", ".join(f"{a[key] / b[key]:.2f}" for a, b in pairs)
                print(f"{build}: compute(return_report=True) / compute(), {name}: {listed}")
    if baseline:
        for mode in modes:
            pairs = zip(runs["this", mode], runs["baseline", mode], strict=True)
            ratios = [a["wall_s"] / b["wall_s"] for a, b in pairs]
            listed = ", ".join(f"{x:.2f}" for x in ratios)
            print(f"{mode}: this / baseline wall, round by round: {listed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--data", type=Path, default=DATA)
    c = sub.add_parser("compare")
    c.add_argument("--folder", type=Path, required=True)
    c.add_argument("--repeat", type=int, default=5)
    c.add_argument("--modes", default=",".join(MODES))
    c.add_argument("--baseline", type=Path)
    k = sub.add_parser("child")
    k.add_argument("mode", choices=("compute-report", "compute"))
    k.add_argument("folder", type=Path)
    k.add_argument("cache", type=Path)
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.out, args.data)
    elif args.command == "compare":
        modes = args.modes.split(",")
        unknown = sorted(set(modes) - set(MODES))
        if unknown:
            parser.error(f"--modes: unknown {unknown}; expected some of {MODES}")
        compare(args.folder, args.repeat, modes, args.baseline)
    else:
        child(args.mode, args.folder, args.cache)


if __name__ == "__main__":
    main()
