"""Bad input, the way users give it: through ``compute()`` (and the metric's
load-time options), the Python API, the command line and the Space. Every case
must end in one of the package's typed errors whose message names the place
(the argument, option or file); anything else (a raw exception, a message that
does not say where, a traceback from the CLI, a run that accepts the input, or
one that hangs past its time) is listed. Hostile files are among them: a FIFO,
``/dev/zero``, ``/dev/urandom`` and ``/dev/null`` in a file's place, a gzip bomb
of one endless line, a file of a million empty lines.

    python benchmarks/bad_inputs.py [--fresh]

``--fresh`` runs each Python case in a process of its own, as each CLI case
always is.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, cast

import tame_mt_metric
from tame_mt_metric import RetrievalConfig, TrainingIndex, find_exposures, stream_exposures
from tame_mt_metric.errors import TameError
from tame_mt_metric.retrieval.inputs import read_lines

TRAIN = {"source": ["the house is small", "a dog sleeps"], "target": ["das Haus", "ein Hund"]}
GOOD = {"predictions": ["das Haus"], "references": ["das Haus"], "sources": ["the house"]}
NOT_TEXTS: list[Any] = [None, 3, b"x", "a string", {"a": 1}, [None], [3], [b"x"], ["\ud800"]]

Case = tuple[str, str, Callable[[], object]]  # where, the place the message names, the call


def _compute_cases() -> list[Case]:
    metric = tame_mt_metric.load(train=TRAIN, keep_in_memory=True)
    cases: list[Case] = []
    for name in ("predictions", "references", "sources"):
        for value in NOT_TEXTS:
            args = {**GOOD, name: value}
            cases.append((f"compute({name}={value!r})", name, partial(metric.compute, **args)))
    for name in ("predictions", "references", "sources"):
        args = {**GOOD, name: [*GOOD[name], "more"]}
        cases.append(
            (f"compute({name}: one item too many)", "has", partial(metric.compute, **args))
        )
    cases += [
        (
            "compute(empty test set)",
            "predictions",
            lambda: metric.compute(predictions=[], references=[], sources=[]),
        ),
        (
            "compute(references of 1 and 2)",
            "references",
            lambda: metric.compute(
                predictions=["a", "b"], references=[["a"], ["a", "b"]], sources=["a", "b"]
            ),
        ),
        (
            "compute(an item with no reference)",
            "references",
            lambda: metric.compute(predictions=["a"], references=[[]], sources=["a"]),
        ),
        ("compute(unknown argument)", "colour", lambda: metric.compute(**GOOD, colour=1)),
    ]
    for flag in ("return_report", "include_neighbor_text"):
        for value in ("yes", 1, None, [True]):
            cases.append(
                (
                    f"compute({flag}={value!r})",
                    flag,
                    partial(metric.compute, **GOOD, **{flag: value}),
                )
            )
    trains: list[tuple[Any, str]] = [
        ({"source": ["a"]}, "target"),
        ({"source": [], "target": []}, "train"),
        ([], "train"),
        ("corpus", "train"),
        ({"source": ["a"], "target": [3]}, "target"),
    ]
    for train, place in trains:
        cases.append(
            (f"compute(train={train!r})", place, partial(metric.compute, **GOOD, train=train))
        )
    return cases


def _option_cases(folder: Path) -> list[Case]:
    a_file = folder / "a-file"
    a_file.write_text("", encoding="utf-8")
    values: dict[str, list[Any]] = {
        "threads": [0, -1, 10**6, "2", 2.5, True],
        "far_threshold": [-1, 2, "x", "0.3", None, [], math.nan, math.inf],
        "near_threshold": [-0.1, 1.5, "y", None],
        "leak_thresholds": ["", [], "a,b", [2], "0.7,0.7", "0.5,0.9", [0.7, "0.9"]],
        "ngram_orders": [(), (0,), (7,), "3,x", (3, 3), 3.5, [2.5]],
        "strategy": ["fast", 1, None],
        "metrics": ["bleu,nope", [], "xx", 3],
        "tm_zero_policy": ["x", None],
        "lowercase": ["yes", 1, None],
        "min_bin_size_warning": [-1, "x", 2.5],
        "bleu_tokenize": ["nope", 3],
        "chrf_word_order": [-1, "2", 3.5, 1000],
        "block_rows": [0, "x", 10**9],
        "colour": ["blue"],
        "n_bootstrap": [10**9, -1],
        "curve_bands": [10**9, 0],
        "curve_edges": [(0.5, 0.3), (0.0, 0.5)],
        "seed": [2**70, -1],
        "confidence": [1.0],
    }
    cases: list[Case] = []
    for name, options in values.items():
        for value in options:

            def call(n: str = name, v: Any = value) -> object:
                metric = tame_mt_metric.load(train=TRAIN, keep_in_memory=True, **{n: v})
                return metric.compute(**GOOD)

            cases.append((f"load({name}={value!r})", name, call))
    for what, cache_dir in (
        ("a file", a_file),
        ("under a file", a_file / "cache"),
        ("/proc/x", Path("/proc/x")),
    ):
        cases.append(
            (
                f"load(tame_cache_dir=<{what}>)",
                "tame_cache_dir",
                partial(_with_cache, cache_dir),
            )
        )
    return cases


def _with_cache(cache_dir: Path) -> object:
    metric = tame_mt_metric.load(train=TRAIN, tame_cache_dir=str(cache_dir), keep_in_memory=True)
    return metric.compute(**GOOD)


def _api_cases(folder: Path) -> list[Case]:
    cases: list[Case] = []
    for value in NOT_TEXTS:
        cases.append(
            (
                f"find_exposures(train_sources={value!r})",
                "train_sources",
                partial(find_exposures, value, ["x"], ["a"]),
            )
        )
        cases.append(
            (
                f"find_exposures(test_sources={value!r})",
                "test_sources",
                partial(find_exposures, ["a"], ["x"], value),
            )
        )
        cases.append(
            (
                f"TrainingIndex.build(train_targets={value!r})",
                "train_targets",
                partial(TrainingIndex.build, ["a"], value),
            )
        )
    cases += [
        (
            "find_exposures(empty test)",
            "test_sources",
            lambda: find_exposures(["a"], ["b"], [], []),
        ),
        ("find_exposures(empty training)", "train_sources", lambda: find_exposures([], [], ["a"])),
        (
            "find_exposures(misaligned training)",
            "train_targets",
            lambda: find_exposures(["a", "b"], ["x"], ["a"]),
        ),
        (
            "find_exposures(config=dict)",
            "config",
            lambda: find_exposures(["a"], ["b"], ["a"], config=cast(Any, {"lowercase": True})),
        ),
        ("stream_exposures(no pairs)", "train", lambda: stream_exposures([], ["a"])),
        (
            "stream_exposures(empty test)",
            "test_sources",
            lambda: stream_exposures([("a", "b")], []),
        ),
        ("RetrievalConfig(top_k=0)", "top_k", lambda: RetrievalConfig(top_k=0)),
        ("RetrievalConfig(top_k=10**9)", "top_k", lambda: RetrievalConfig(top_k=10**9)),
        ("RetrievalConfig(threads=4096)", "threads", lambda: RetrievalConfig(threads=4096)),
    ]
    files = _bad_files(folder)
    for name, path in files.items():
        cases.append((f"read_lines({name})", str(path), partial(read_lines, path)))
    return cases


def _bad_files(folder: Path) -> dict[str, Path]:
    whole = gzip.compress("".join(f"line {i}\n" for i in range(3000)).encode())
    files = {
        "missing file": folder / "missing.txt",
        "a folder": folder,
        "truncated .gz": folder / "truncated.gz",
        "plain file named .gz": folder / "plain.gz",
        "invalid UTF-8": folder / "latin1.txt",
        "invalid UTF-8 in .gz": folder / "latin1.txt.gz",
    }
    files.update(
        {
            "a FIFO": folder / "fifo.txt",
            "a symlink to /dev/zero": folder / "zero.txt",
            "a symlink to /dev/urandom": folder / "urandom.txt",
            "/dev/null": Path("/dev/null"),
            "a gzip bomb of one line": folder / "bomb.txt.gz",
            "a line over the limit": folder / "long.txt",
        }
    )
    if not files["a FIFO"].exists():
        os.mkfifo(files["a FIFO"])
        files["a symlink to /dev/zero"].symlink_to("/dev/zero")
        files["a symlink to /dev/urandom"].symlink_to("/dev/urandom")
    with gzip.open(files["a gzip bomb of one line"], "wb") as bomb:
        for _ in range(64):
            bomb.write(bytes(1 << 20))  # 64 MiB of NULs, no newline: 64 KiB compressed
    files["a line over the limit"].write_text("x" * (2 << 20) + "\n", encoding="utf-8")
    files["truncated .gz"].write_bytes(whole[: len(whole) // 2])
    files["plain file named .gz"].write_text("Mhello\n", encoding="utf-8")
    files["invalid UTF-8"].write_bytes("caf\u00e9\n".encode("latin-1"))
    files["invalid UTF-8 in .gz"].write_bytes(gzip.compress("caf\u00e9\n".encode("latin-1")))
    return files


def _cli_cases(folder: Path) -> list[tuple[str, str, list[str]]]:
    good = folder / "good.txt"
    good.write_text("the house\n", encoding="utf-8")
    two = folder / "two.txt"
    two.write_text("a\nb\n", encoding="utf-8")
    base = ["--test-src", str(good), "--ref", str(good), "--hyp", str(good)]
    train = ["--train-src", str(good), "--train-tgt", str(good)]
    cases = []
    for name, path in _bad_files(folder).items():
        if name == "a folder":
            continue
        for role in ("--train-src", "--test-src", "--ref", "--hyp"):
            args = {
                "--train-src": str(good),
                "--train-tgt": str(good),
                "--test-src": str(good),
                "--ref": str(good),
                "--hyp": str(good),
                role: str(path),
            }
            flat = [x for pair in args.items() for x in pair]
            cases.append((f"score {role} <{name}>", str(path), ["score", *flat]))
    for option, value in (
        ("--n-bootstrap", "1000000000"),
        ("--curve-bands", "1000000000"),
        ("--chrf-word-order", "1000"),
        ("--curve-edges", "0.5,0.3"),
        ("--seed", "1180591620717411303424"),
        ("--max-line-bytes", "0"),
        ("--threads", "0"),
        ("--threads", "100000"),
        ("--far-threshold", "2"),
        ("--far-threshold", "x"),
        ("--metrics", "nope"),
        ("--ngram-orders", "9"),
        ("--leak-thresholds", "0.7,"),
        ("--strategy", "fast"),
    ):
        cases.append(
            (
                f"score {option} {value}",
                option.lstrip("-").replace("-", "_"),
                ["score", *train, *base, option, value],
            )
        )
    cases.append(
        ("score misaligned hyp", str(two), ["score", *train, *base[:4], "--hyp", str(two)])
    )
    cases.append(
        (
            "score-cached missing segments",
            "--segment-in",
            ["score-cached", "--segment-in", str(folder / "none.jsonl"), *base[2:]],
        )
    )
    cases.append(
        (
            "score --train-dataset bad suffix",
            "--train-dataset",
            ["score", "--train-dataset", str(good), *base],
        )
    )
    index = folder / "index"
    if not index.exists():
        subprocess.run(
            [sys.executable, "-m", "tame_mt_metric", "index", "build", *train, "--out", str(index)],
            check=True,
            capture_output=True,
        )
    for setting in (["--lowercase"], ["--ngram-orders", "2,3"], ["--strip-diacritics"]):
        cases.append(
            (
                f"score --index <built without {setting[0]}> {' '.join(setting)}",
                "built with the settings",
                ["score", "--index", str(index), *base, *setting],
            )
        )
    for device in ("/dev/zero", "/dev/urandom"):
        cases.append(
            (
                f"lookup < {device}",
                "standard input",
                ["lookup", "--index", str(index), f"<{device}"],
            )
        )
    return cases


def _space_cases(folder: Path) -> list[Case]:
    from tame_mt_metric.space import uploaded_inputs

    good = folder / "good.txt"
    good.write_text("the house\n", encoding="utf-8")
    empty_lines = folder / "newlines.txt.gz"
    with gzip.open(empty_lines, "wb") as bomb:
        for _ in range(64):
            bomb.write(b"\n" * (1 << 20))  # 64 Mi empty lines
    cases: list[Case] = []
    bad = {**_bad_files(folder), "a newline bomb": empty_lines}
    for name, path in bad.items():
        for upload in ("training sources", "test sources", "hypotheses"):
            files = {"training sources": good, "test sources": good, "hypotheses": good}
            files[upload] = path
            cases.append(
                (
                    f"Space upload: {upload} <{name}>",
                    upload,
                    partial(
                        uploaded_inputs,
                        str(files["training sources"]),
                        str(good),
                        str(files["test sources"]),
                        [str(good)],
                        str(files["hypotheses"]),
                    ),
                )
            )
    return cases


def _names(place: str, message: str) -> bool:
    """The message names the place (an option as the API or the CLI spells it)."""
    return place in message or place.replace("_", "-") in message


def _on_alarm(signum: int, frame: object) -> None:
    raise TimeoutError


def _python_cases(folder: Path) -> list[tuple[str, Case]]:
    return [
        *(("compute()", c) for c in _compute_cases()),
        *(("compute() options", c) for c in _option_cases(folder)),
        *(("Python API", c) for c in _api_cases(folder)),
        *(("Space", c) for c in _space_cases(folder)),
    ]


def _run_case(what: str, place: str, call: Callable[[], object]) -> tuple[str, str | None]:
    """The outcome of one Python case, and its line in the list of problems."""
    signal.alarm(60)
    try:
        call()
    except TimeoutError:
        return "hang", f"{what}: no answer after 60 s"
    except (TameError, FileNotFoundError) as exc:
        if _names(place, str(exc)):
            return "typed, names the place", None
        return "typed, place unnamed", f"{what}: {type(exc).__name__}: {exc}"
    except Exception as exc:
        return "other exception", f"{what}: {type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)
    return "accepted", f"{what}: accepted"


def _in_fresh_process(folder: Path, number: int, what: str) -> tuple[str, str | None]:
    """Case ``number`` run by a child of its own (a crash or a hang is counted)."""
    try:
        child = subprocess.run(
            [sys.executable, __file__, "--folder", str(folder), "--case", str(number)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        return "hang", f"{what}: no answer after 120 s"
    if child.returncode != 0:
        return "other exception", f"{what}: the process died: {child.stderr.strip()[-300:]}"
    kind, problem = json.loads(child.stdout.splitlines()[-1])
    return kind, problem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--fresh", action="store_true", help="each Python case in a fresh process too"
    )
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--case", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _on_alarm)
    if args.case is not None:  # the child of --fresh
        _, (what, place, call) = _python_cases(args.folder)[args.case]
        print(json.dumps(_run_case(what, place, call)))
        return
    outcomes: Counter[tuple[str, str]] = Counter()
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for number, (group, (what, place, call)) in enumerate(_python_cases(folder)):
            if args.fresh:
                kind, problem = _in_fresh_process(folder, number, what)
            else:
                kind, problem = _run_case(what, place, call)
            outcomes[(group, kind)] += 1
            if problem is not None:
                problems.append(problem)
        for what, place, command in _cli_cases(folder):
            stdin = next((a[1:] for a in command if a.startswith("<")), None)
            command = [a for a in command if not a.startswith("<")]
            try:
                with open(stdin or os.devnull, "rb") as source:
                    done = subprocess.run(
                        [sys.executable, "-m", "tame_mt_metric", *command, "--quiet"],
                        stdin=source,
                        capture_output=True,
                        text=True,
                        timeout=120,
                    )
            except subprocess.TimeoutExpired:
                outcomes[("CLI", "hang")] += 1
                problems.append(f"{what}: no answer after 120 s")
                continue
            # One error line (argparse's own usage errors print the usage first).
            last = (done.stderr.strip().splitlines() or [""])[-1]
            error_line = last.startswith("tame-mt-metric") and "error:" in last
            clean = done.returncode in (1, 2) and error_line and "Traceback" not in done.stderr
            if clean and _names(place, last):
                outcomes[("CLI", "typed, names the place")] += 1
            else:
                kind = "accepted" if done.returncode == 0 else "other exception"
                if clean:
                    kind = "typed, place unnamed"
                outcomes[("CLI", kind)] += 1
                problems.append(f"{what}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    kinds = (
        "typed, names the place",
        "typed, place unnamed",
        "other exception",
        "accepted",
        "hang",
    )
    print(f"| entry point | cases | {' | '.join(kinds)} |")
    print(f"| --- | ---: | {' | '.join('---:' for _ in kinds)} |")
    for group in ("compute()", "compute() options", "Python API", "Space", "CLI"):
        counts = [outcomes[(group, k)] for k in kinds]
        print(f"| {group} | {sum(counts)} | {' | '.join(str(c) for c in counts)} |")
    print(f"\n{len(problems)} cases other than a typed error naming the place:")
    for problem in problems:
        print(f"- {problem}")


if __name__ == "__main__":
    main()
