"""Decontamination against what practitioners use, each method a fresh process
measured from outside (wall, CPU of the child, peak RSS), in alternating
order (A B C, then C B A, ...) in one run, the machine's load average printed
before and after:

- ``tame``: ``tame-mt-metric decontaminate`` of the training files (exact),
  the command as users run it, writing the kept files and the removed rows;
  its answer (the removed rows' ``train_index``) is the truth the others are
  scored against;
- ``indexed``: the same command given a saved index of the corpus
  (``--index``; built once by ``tame-mt-metric index build`` before the rounds,
  its build measured and printed apart), which searches the index for each
  test text instead of judging every row (same answer);
- ``audit``: a fresh ``tame-mt-metric audit`` of the same corpus and test set
  (the target: ``tame`` within 1.5x of it);
- ``minhash``: datasketch's MinHash LSH (128 permutations) at the same
  threshold, over the same character n-gram sets (the text normalised as the
  package normalises it, orders 3, 4 and 5), so that the only difference is
  the sketch: the test items are indexed and each training row queried;
- ``ngram13``: a word 13-gram overlap filter in the style of datatrove's and
  the lm-evaluation-harness's decontamination, written here in a few lines (not
  their code, which reads documents, not two files): text lowercased, stripped
  of punctuation and split on whitespace; a training side is flagged when one
  of its word 13-grams is one of the test side's. It has no threshold, and a
  sentence of fewer than 13 words has no 13-gram, so it cannot be flagged.

Each method answers which training rows it removes under ``--by`` (``source``:
the test sources against the training sources; ``target``: the references
against the training targets; ``any``: either); recall and precision are
counted against ``tame``'s rows. ``pair`` is ``tame``'s alone.

    python benchmarks/synthetic.py --train 100000 --test 2000 --out P100K
    python benchmarks/bench_decontaminate.py run --folder P100K --threshold 0.7 --repeat 2
    python benchmarks/bench_decontaminate.py smoke

``run`` reads ``DIR/train.src``, ``train.tgt``, ``test.src`` and ``test.ref``
(what ``synthetic.py`` and ``real_corpus.py`` write); ``--methods`` chooses
among ``tame,indexed,audit,minhash,ngram13``. ``smoke`` runs every method once on a
small synthetic corpus in a temporary folder (a few seconds). Needs
``datasketch`` (``pip install datasketch``) for ``minhash``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

from bench_retrieval import measure

METHODS = ("tame", "indexed", "audit", "minhash", "ngram13")
ORDERS = (3, 4, 5)
NUM_PERM = 128
WORDS = 13


def _lines(path: Path) -> Iterator[str]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            yield line.rstrip("\n").removesuffix("\r")


def _sides(by: str) -> tuple[str, ...]:
    return ("source", "target") if by == "any" else (by,)


# The methods, each run in a child process ------------------------------------


def _shingles(text: str) -> set[bytes]:
    """The character n-grams of the text, normalised as the package does it."""
    from tame_mt_metric import normalize

    s = normalize(text)
    if s and len(s) < ORDERS[0]:
        return {s.encode()}
    return {s[i : i + n].encode() for n in ORDERS for i in range(len(s) - n + 1)}


def _minhash(folder: Path, threshold: Fraction, by: str) -> list[int]:
    from datasketch import (  # type: ignore[import-untyped, import-not-found, unused-ignore]
        MinHash,
        MinHashLSH,
    )

    flagged: set[int] = set()
    for side in _sides(by):
        test_file, train_file = (
            ("test.src", "train.src") if side == "source" else ("test.ref", "train.tgt")
        )
        lsh = MinHashLSH(threshold=float(threshold), num_perm=NUM_PERM)
        for i, text in enumerate(_lines(folder / test_file)):
            sketch = MinHash(num_perm=NUM_PERM)
            sketch.update_batch(list(_shingles(text)))
            lsh.insert(str(i), sketch)
        for j, text in enumerate(_lines(folder / train_file)):
            sketch = MinHash(num_perm=NUM_PERM)
            sketch.update_batch(list(_shingles(text)))
            if lsh.query(sketch):
                flagged.add(j)
    return sorted(flagged)


_PUNCTUATION = re.compile(r"[^\w\s]")


def _word_grams(text: str) -> set[tuple[str, ...]]:
    words = _PUNCTUATION.sub(" ", text.lower()).split()
    return {tuple(words[i : i + WORDS]) for i in range(len(words) - WORDS + 1)}


def _ngram13(folder: Path, threshold: Fraction, by: str) -> list[int]:
    flagged: set[int] = set()
    for side in _sides(by):
        test_file, train_file = (
            ("test.src", "train.src") if side == "source" else ("test.ref", "train.tgt")
        )
        seen: set[tuple[str, ...]] = set()
        for text in _lines(folder / test_file):
            seen |= _word_grams(text)
        for j, text in enumerate(_lines(folder / train_file)):
            if not seen.isdisjoint(_word_grams(text)):
                flagged.add(j)
    return sorted(flagged)


def child(method: str, folder: Path, result: Path, threshold: Fraction, by: str) -> None:
    started = time.perf_counter()
    rows = {"minhash": _minhash, "ngram13": _ngram13}[method](folder, threshold, by)
    seconds = time.perf_counter() - started
    result.write_text(json.dumps({"removed": rows, "inner_s": seconds}), encoding="utf-8")


# The parent: fresh processes, alternating ----------------------------------------


def _train(folder: Path) -> list[str]:
    return ["--train-src", str(folder / "train.src"), "--train-tgt", str(folder / "train.tgt")]


def _command(
    method: str, folder: Path, work: Path, threshold: str, by: str, index: Path | None
) -> list[str]:
    train = _train(folder)
    test = ["--test-src", str(folder / "test.src"), "--ref", str(folder / "test.ref")]
    if method == "audit":
        return [sys.executable, "-m", "tame_mt_metric", "audit", *train, *test, "--quiet"]
    if method in ("tame", "indexed"):
        outputs = ["--out-src", str(work / "kept.src"), "--out-tgt", str(work / "kept.tgt")]
        outputs += ["--removed-out", str(work / "removed.jsonl")]
        saved = ["--index", str(index)] if method == "indexed" and index else []
        return [
            *(sys.executable, "-m", "tame_mt_metric", "decontaminate", *train, *saved, *test),
            *("--threshold", threshold, "--by", by, *outputs, "--quiet"),
        ]
    here = str(Path(__file__).resolve())
    result = str(work / "result.json")
    return [sys.executable, here, "child", method, str(folder), result, threshold, by]


def _answer(method: str, work: Path) -> dict[str, Any]:
    """The rows a method removed: the command's removed rows, a child's result."""
    if method == "audit":
        return {}
    if method in ("tame", "indexed"):
        with open(work / "removed.jsonl", encoding="utf-8") as f:
            return {"removed": [json.loads(line)["train_index"] for line in f]}
    return dict(json.loads((work / "result.json").read_text(encoding="utf-8")))


def _env(work: Path, threads: int | None) -> dict[str, str]:
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "TAME_MT_PROGRESS": "0"}
    env["TAME_MT_CACHE"] = str(work / "cache")
    if threads:
        env["TAME_MT_THREADS"] = str(threads)
    return env


def _build_index(folder: Path, out: Path, threads: int | None) -> None:
    """The saved index ``indexed`` searches, built once before the rounds (not
    counted in its times), its build measured and printed."""
    cmd = [sys.executable, "-m", "tame_mt_metric", "index", "build", *_train(folder)]
    cmd += ["--out", str(out / "index"), "--quiet"]
    measured = measure(cmd, out / "build.log", timeout=7200, env=_env(out, threads))
    if measured["rc"] != 0:
        raise SystemExit(f"index build failed: {(out / 'build.log').read_text()[-2000:]}")
    print(
        f"index build (once, for indexed): wall {measured['wall_s']:.2f} s  "
        f"cpu {measured['cpu_s']:.2f} s  peak {measured['peak_rss_mb']:.0f} MB",
        flush=True,
    )


def _run(
    method: str, folder: Path, threshold: str, by: str, threads: int | None, index: Path | None
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-decontaminate-") as tmp:
        work = Path(tmp)
        env = _env(work, threads)
        cmd = _command(method, folder, work, threshold, by, index)
        measured = measure(cmd, work / "output.log", timeout=7200, env=env)
        output = (work / "output.log").read_text(encoding="utf-8", errors="replace")
        if measured["rc"] != 0:
            raise SystemExit(
                f"{method}: failed ({measured['rc']}): {' '.join(cmd)}\n{output[-2000:]}"
            )
        answer = _answer(method, work)
    return {
        "method": method,
        "wall_s": measured["wall_s"],
        "cpu_s": measured["cpu_s"],
        "peak_mb": measured["peak_rss_mb"],
        "removed": answer.get("removed"),
    }


def run(
    folder: Path, methods: list[str], threshold: str, by: str, repeat: int, threads: int | None
) -> list[dict[str, Any]]:
    with open(folder / "train.src", "rb") as f:
        rows = sum(1 for _ in f)
    with open(folder / "test.src", "rb") as f:
        items = sum(1 for _ in f)
    print(
        f"{folder.name}: {rows:,} training pairs x {items:,} test items; t = {threshold}, by {by}"
    )
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-decontaminate-index-") as saved:
        index = None
        if "indexed" in methods:
            _build_index(folder, Path(saved), threads)
            index = Path(saved) / "index"
        for r in range(repeat):
            order = methods if r % 2 == 0 else methods[::-1]  # A B C, then C B A
            for method in order:
                found = _run(method, folder, threshold, by, threads, index)
                runs.append(found)
                print(
                    f"  run {r + 1} {method:<8} wall {found['wall_s']:8.2f} s  "
                    f"cpu {found['cpu_s']:8.2f} s  peak {found['peak_mb']:7.0f} MB",
                    flush=True,
                )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    _table(methods, runs)
    return runs


def _table(methods: list[str], runs: list[dict[str, Any]]) -> None:
    exact = next((set(r["removed"]) for r in runs if r["method"] == "tame"), None)
    print(
        "\n| method | wall s (median) | CPU s | peak RSS MB | rows removed | recall | precision |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for method in methods:
        mine = [r for r in runs if r["method"] == method]
        wall = statistics.median(r["wall_s"] for r in mine)
        cpu = statistics.median(r["cpu_s"] for r in mine)
        peak = max(r["peak_mb"] for r in mine)
        answers = {tuple(r["removed"]) for r in mine if r["removed"] is not None}
        if len(answers) > 1:
            raise SystemExit(f"{method}: different answers in different runs")
        cells = ["-", "-", "-"]
        if answers:
            found = set(next(iter(answers)))
            cells[0] = f"{len(found):,}"
            if exact is not None:
                hit = len(found & exact)
                cells[1] = f"{hit / len(exact):.4f}" if exact else "-"
                cells[2] = f"{hit / len(found):.4f}" if found else "-"
        print(f"| {method} | {wall:.2f} | {cpu:.1f} | {peak:.0f} | {' | '.join(cells)} |")
    walls = {m: statistics.median(r["wall_s"] for r in runs if r["method"] == m) for m in methods}
    if "tame" in walls and "audit" in walls:
        print(f"\ntame / audit (medians of wall): {walls['tame'] / walls['audit']:.2f}")


def smoke() -> None:
    """Every method once on a small synthetic corpus (a few seconds)."""
    from synthetic import generate

    with tempfile.TemporaryDirectory(prefix="bench-decontaminate-smoke-") as tmp:
        folder = Path(tmp) / "smoke"
        generate(folder, 2_000, 100, vocab_size=5_000)
        run(folder, list(METHODS), "0.7", "any", 1, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="time every method on a folder's files")
    go.add_argument("--folder", type=Path, required=True)
    go.add_argument("--methods", default=",".join(METHODS))
    go.add_argument("--threshold", default="0.7", help="in (0, 1], read exactly")
    go.add_argument("--by", choices=("source", "target", "any"), default="any")
    go.add_argument("--repeat", type=int, default=2)
    go.add_argument("--threads", type=int, help="TAME_MT_THREADS of tame and audit")
    go.add_argument("--out", type=Path, help="every run as JSON")
    sub.add_parser("smoke", help="every method once on a small synthetic corpus")
    kid = sub.add_parser("child")
    kid.add_argument("method", choices=("minhash", "ngram13"))
    kid.add_argument("folder", type=Path)
    kid.add_argument("result", type=Path)
    kid.add_argument("threshold")
    kid.add_argument("by")
    args = parser.parse_args()
    if args.command == "child":
        child(args.method, args.folder, args.result, Fraction(args.threshold), args.by)
    elif args.command == "smoke":
        smoke()
    else:
        methods = [m.strip() for m in args.methods.split(",")]
        unknown = sorted(set(methods) - set(METHODS))
        if unknown:
            parser.error(f"--methods: unknown {', '.join(unknown)} (from {', '.join(METHODS)})")
        runs = run(args.folder, methods, args.threshold, args.by, args.repeat, args.threads)
        if args.out:
            args.out.write_text(json.dumps(runs), encoding="utf-8")


if __name__ == "__main__":
    main()
