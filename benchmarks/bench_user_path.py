"""The paths users take, end to end, each run a fresh process measured from
outside (wall, CPU of the child, peak RSS), alternating (A B A B) with tame-mt
0.2.2 and the floor in one run:

- ``compute``: import datasets and evaluate, ``tame_mt_metric.load(train=<a saved
  Dataset>)``, ``compute()`` of 2k items against an empty cache;
- ``warm``: the same with the audit in the cache (a training loop's later
  evaluation in a new process); its fixed cost against ``sacrebleu``
- ``score-cached``: ``tame-mt-metric score-cached`` of the same hypotheses with
  the audit's segment file (the command line's warm path);
- ``sacrebleu``: sacrebleu's BLEU and chrF++ of the same hypotheses alone;
- ``imports``: ``import datasets, evaluate`` and nothing else (what any metric
  of the ecosystem pays before it starts, the interpreter's exit included), so
  that ``warm`` less ``imports`` is this package's own fixed cost;
- ``score`` / ``audit``: ``tame-mt-metric score`` / ``audit`` from the text files;
- ``index-build``: ``tame-mt-metric index build --out`` (index and corpus.arrow);
- ``audit-index``: ``tame-mt-metric audit --index`` of the saved index with a test
  set it has not seen (a fresh cache);
- ``lookup``: ``tame-mt-metric lookup --index`` of 10 test sentences;
- ``verify``: ``tame-mt-metric index verify`` of the saved index (every checksum
  and every posting list decoded, what an open skips);
- ``floor``: read the training files and extract every line's gram set
  (``count_grams``), the least work an exact audit does;
- ``tame-fast`` / ``tame-exact``: ``tame-mt score`` in ``native_fast``
  (approximate) and ``native_exact`` mode; ``tame-index-build`` / ``tame-audit-index``:
  ``tame-mt index build`` and ``tame-mt audit --index`` of its bundle.

    python benchmarks/bench_scale.py prepare --from SYNTH --rows 100000 --out DIR
    python benchmarks/bench_user_path.py prepare --folder DIR
    python benchmarks/bench_user_path.py compare --folder DIR --repeat 2 \
        [--once tame-exact,tame-index-build,tame-audit-index] [--python PY]

``prepare`` builds both saved indexes and the warm cache once. ``--python`` runs
our modes with another interpreter (an environment without transformers, where
``import evaluate`` does not pull in torch); ``TAME_MT_CLI`` names tame-mt's CLI.
``--baseline DIR`` runs each of our modes twice a round, once with ``DIR`` ahead
on ``PYTHONPATH`` (a checkout of the package before a change, or a folder holding
another build of ``tame_mt_core``) and once as installed, the baseline first in
odd rounds and second in even ones (A B B A): a change measured in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_retrieval import DEFAULT_TAME, measure

OURS = ("floor", "compute", "warm", "imports", "score-cached", "sacrebleu", "score", "audit")
OURS_INDEX = ("index-build", "audit-index", "lookup", "verify")
THEIRS = ("tame-fast", "tame-exact", "tame-index-build", "tame-audit-index")
# Modes that run nothing of this package, so a baseline does not change them.
OUTSIDE = ("sacrebleu", "imports", *THEIRS)
TAME = str(DEFAULT_TAME)


def child(mode: str, folder: Path, cache: Path) -> None:
    """A Python-API run in this fresh process; prints one JSON line."""
    if mode == "sacrebleu":
        import sacrebleu

        refs = (folder / "test.ref").read_text(encoding="utf-8").splitlines()
        bleu = sacrebleu.corpus_bleu(refs, [refs]).score
        chrf = sacrebleu.corpus_chrf(refs, [refs], word_order=2).score
        print(json.dumps({"bleu": bleu, "chrf": chrf}))
        return
    if mode == "floor":
        import tame_mt_metric as tm
        from tame_mt_metric.retrieval.inputs import read_lines

        grams = sum(tm.count_grams(read_lines(folder / f"train.{s}")) for s in ("src", "tgt"))
        print(json.dumps({"grams": grams}))
        return
    import datasets
    import evaluate  # noqa: F401 (what a user of the metric has imported)

    if mode == "imports":
        print(json.dumps({"imported": ["datasets", "evaluate"]}))
        return

    import tame_mt_metric
    from tame_mt_metric.retrieval.inputs import read_lines

    sources, refs = read_lines(folder / "test.src"), read_lines(folder / "test.ref")
    train = datasets.load_from_disk(str(folder / "dataset"))
    metric = tame_mt_metric.load(train=train, tame_cache_dir=str(cache))
    fields = metric.compute(predictions=refs, references=refs, sources=sources)
    assert fields is not None
    print(json.dumps({k: v for k, v in fields.items() if k != "audit_cached"}, default=str))


def _command(mode: str, folder: Path, work: Path, python: str) -> list[str]:
    train = ["--train-src", str(folder / "train.src"), "--train-tgt", str(folder / "train.tgt")]
    test = ["--test-src", str(folder / "test.src"), "--ref", str(folder / "test.ref")]
    ours = [python, "-m", "tame_mt_metric"]
    if mode in ("compute", "warm", "imports", "sacrebleu", "floor"):
        cache = folder / "warm-cache" if mode == "warm" else work / "cache"
        return [python, str(Path(__file__).resolve()), "child", mode, str(folder), str(cache)]
    if mode == "score":
        return [*ours, "score", *train, *test, "--hyp", str(folder / "test.ref"), "--quiet"]
    if mode == "audit":
        return [*ours, "audit", *train, *test, "--quiet"]
    if mode == "score-cached":
        segments = ["--segment-in", str(folder / "audit.jsonl"), "--ref", str(folder / "test.ref")]
        return [*ours, "score-cached", *segments, "--hyp", str(folder / "test.ref"), "--quiet"]
    if mode == "index-build":
        return [*ours, "index", "build", *train, "--out", str(work / "index"), "--quiet"]
    if mode == "audit-index":
        return [*ours, "audit", "--index", str(folder / "ours-index"), *test, "--quiet"]
    if mode == "lookup":
        sentences = (folder / "ten.txt").read_text(encoding="utf-8").splitlines()
        return [*ours, "lookup", "--index", str(folder / "ours-index"), *sentences]
    if mode == "verify":
        return [*ours, "index", "verify", str(folder / "ours-index"), "--quiet"]
    hyp = ["--hyp", str(folder / "test.ref"), "--json-out", str(work / "report.json"), "--quiet"]
    if mode == "tame-fast":
        fast = ["--index-mode", "native_fast", "--retrieval", "approx", "--allow-approximate"]
        return [TAME, "score", *train, *test, *hyp, *fast]
    if mode == "tame-exact":
        return [TAME, "score", *train, *test, *hyp, "--index-mode", "native_exact"]
    if mode == "tame-index-build":
        return [TAME, "index", "build", *train, "--out", str(work / "bundle"), "--quiet"]
    if mode == "tame-audit-index":
        # Its default load limit refuses a bundle of 10^6 pairs.
        out = ["--json-out", str(work / "audit.json"), "--max-index-load-bytes", str(1 << 36)]
        out.append("--quiet")
        return [TAME, "audit", "--index", str(folder / "tame-index"), *test, *out]
    raise ValueError(f"unknown mode {mode!r}")


def _run(mode: str, folder: Path, python: str, baseline: Path | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-user-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "TAME_MT_PROGRESS": "0"}
        env["TAME_MT_CACHE"] = str(work / "cache")
        if baseline is not None:
            env["PYTHONPATH"] = os.pathsep.join(
                filter(None, [str(baseline), env.get("PYTHONPATH")])
            )
        cmd = _command(mode, folder, work, python)
        measured = measure(cmd, work / "output.log", timeout=3600, env=env)
        output = (work / "output.log").read_text(encoding="utf-8", errors="replace")
    if measured["rc"] != 0:
        raise SystemExit(f"{mode}: failed ({measured['rc']}): {' '.join(cmd)}\n{output[-2000:]}")
    label = mode if baseline is None else f"{mode} (baseline)"
    run = {"mode": label, "wall_s": measured["wall_s"], "cpu_s": measured["cpu_s"]}
    run["peak_mb"] = measured["peak_rss_mb"]
    if mode in ("compute", "warm"):
        # The child's one JSON line (its stderr shares the log).
        run["fields"] = [line for line in output.splitlines() if line.startswith("{")][-1]
    return run


def prepare(folder: Path, python: str) -> None:
    """Both saved indexes, ten lookup sentences, the warm cache and the audit's
    segment file, once."""
    with open(folder / "test.src", encoding="utf-8") as f:
        (folder / "ten.txt").write_text("".join(f.readline() for _ in range(10)), encoding="utf-8")
    for name, mode in (("ours-index", "index-build"), ("tame-index", "tame-index-build")):
        if (folder / name).exists():
            continue
        with tempfile.TemporaryDirectory(prefix="bench-user-") as tmp:
            cmd = _command(mode, folder, Path(tmp), python)
            subprocess.run(cmd, check=True, env={**os.environ, "TAME_MT_PROGRESS": "0"})
            built = Path(tmp) / ("index" if mode == "index-build" else "bundle")
            shutil.move(built, folder / name)
    if not (folder / "warm-cache").exists():
        cmd = [python, str(Path(__file__).resolve()), "child", "compute", str(folder)]
        subprocess.run([*cmd, str(folder / "warm-cache")], check=True, stdout=subprocess.DEVNULL)
    if not (folder / "audit.jsonl").exists():
        audit = _command("audit", folder, folder, python)
        subprocess.run([*audit, "--segment-out", str(folder / "audit.jsonl")], check=True)
    print(f"{folder}: saved indexes, ten.txt, warm-cache and audit.jsonl ready")


def compare(
    folder: Path,
    modes: list[str],
    once: set[str],
    repeat: int,
    python: str,
    baseline: Path | None = None,
) -> None:
    with open(folder / "train.src", "rb") as f:
        rows = sum(1 for _ in f)
    print(f"{folder.name}: {rows:,} training pairs, 2k test items; python {python}")
    if baseline is not None:
        print(
            f"baseline: {baseline} ahead on PYTHONPATH, each of our modes run with and without it"
        )
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    runs: list[dict[str, Any]] = []
    for r in range(repeat):
        for mode in modes:
            if r > 0 and mode in once:
                continue
            builds: list[Path | None] = [None]
            if baseline is not None and mode not in OUTSIDE:
                # A B, then B A: neither build always runs first.
                builds = [baseline, None] if r % 2 == 0 else [None, baseline]
            for build in builds:
                run = _run(mode, folder, python, build)
                runs.append(run)
                print(
                    f"  run {r + 1} {run['mode']:<28} wall {run['wall_s']:7.2f} s  "
                    f"cpu {run['cpu_s']:7.2f} s  peak {run['peak_mb']:7.0f} MB",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    fields = {r["fields"] for r in runs if "fields" in r}
    print(f"compute and warm give the same fields in every run: {len(fields) <= 1}")
    labels = list(dict.fromkeys(r["mode"] for r in runs))
    _table(labels, runs)


def _median(runs: list[dict[str, Any]], mode: str) -> float:
    walls = [r["wall_s"] for r in runs if r["mode"] == mode]
    return statistics.median(walls) if walls else float("nan")


def _table(modes: list[str], runs: list[dict[str, Any]]) -> None:
    print("\n| path | wall s | CPU s | peak RSS MB |")
    print("| --- | ---: | ---: | ---: |")
    for mode in modes:
        mine = [r for r in runs if r["mode"] == mode]
        cells = [
            ", ".join(f"{r[k]:.{d}f}" for r in mine)
            for k, d in (("wall_s", 2), ("cpu_s", 1), ("peak_mb", 0))
        ]
        print(f"| {mode} | {' | '.join(cells)} |")
    ratios = [
        ("tame-fast / compute", "tame-fast", "compute"),
        ("tame-exact / compute", "tame-exact", "compute"),
        ("warm / sacrebleu", "warm", "sacrebleu"),
        ("score-cached / sacrebleu", "score-cached", "sacrebleu"),
        ("audit-index / audit", "audit-index", "audit"),
        ("tame-audit-index / audit-index", "tame-audit-index", "audit-index"),
        ("audit / floor", "audit", "floor"),
        ("compute / floor", "compute", "floor"),
    ]
    print("\n| ratio (medians of wall) | value |")
    print("| --- | ---: |")
    ratios += [(f"{m} / baseline", m, f"{m} (baseline)") for m in OURS + OURS_INDEX]
    for name, a, b in ratios:
        if a in modes and b in modes:
            print(f"| {name} | {_median(runs, a) / _median(runs, b):.2f} |")
    if {"warm", "imports", "sacrebleu"} <= set(modes):
        own = _median(runs, "warm") - _median(runs, "imports")
        print(f"| (warm - imports) / sacrebleu | {own / _median(runs, 'sacrebleu'):.2f} |")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--folder", type=Path, required=True)
    p.add_argument("--python", default=sys.executable)
    c = sub.add_parser("compare")
    c.add_argument("--folder", type=Path, required=True)
    c.add_argument("--modes", default=",".join(OURS + OURS_INDEX + THEIRS))
    c.add_argument("--once", default="", help="modes run in the first round only")
    c.add_argument("--repeat", type=int, default=2)
    c.add_argument("--python", default=sys.executable)
    c.add_argument("--baseline", type=Path, help="a folder ahead on PYTHONPATH for A B A B")
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.folder, args.python)
        return
    modes = args.modes.split(",")
    known = OURS + OURS_INDEX + THEIRS
    if unknown := set(modes) - set(known):
        raise SystemExit(f"--modes: unknown {sorted(unknown)}; choose from {known}")
    once = set(filter(None, args.once.split(",")))
    compare(args.folder, modes, once, args.repeat, args.python, args.baseline)


if __name__ == "__main__":
    main()
