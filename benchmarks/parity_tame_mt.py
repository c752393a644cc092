"""Parity of our TAME report with the published tame-mt 0.2.2, on Multi30k en-de.

Training: Multi30k task 1 train (29,000 en-de pairs); test: test_2016_flickr (1,000
items), both read from ../shared/data/multi30k relative to the repository root (or
--data). Two deterministic systems are made from the German reference:

- drop5: every word at position i % 5 == 3 dropped (a degraded reference);
- swap4: the words at positions i and i + 1 swapped wherever i % 4 == 1.

For each system the same plain-text files go to `tame-mt score --index-mode
native_exact` (run as a black box in a child process; the CLI is found on PATH or
through TAME_MT_CLI, or given by --tame) and to `tame_mt_metric.score_tame` with the
default TameConfig. Then:

- every number both reports give (BLEU, chrF, TM-BLEU, TM-chrF, source and target
  exposure means, the count and the four scores of each bin, GenGap) must agree
  within 1e-9 (undefined on both sides, nan or null, agrees);
- per segment, source and target exposure (within 1e-12), their neighbours, the bin
  and the TM hypothesis must be identical;
- pair exposure: ours is the exact maximum, tame-mt reranks the top-k source and
  target candidates, so ours may be higher but never lower (beyond 1e-12); the
  differences and both means are reported.

Wall times of both runs are printed (tame-mt: the whole child process, start-up
included; ours: reading the same files and scoring, in this process) but not gated.
The exit status is 1 when anything that must agree does not, 2 when the CLI or the data
are missing or a run fails.

    TAME_MT_CLI=/path/to/venv/bin/tame-mt python benchmarks/parity_tame_mt.py
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.retrieval.inputs import read_lines

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"
DEFAULT_TAME = Path(os.environ.get("TAME_MT_CLI", "tame-mt"))
TAME_VERSION = "0.2.2"
REPORT_TOL = 1e-9
SEGMENT_TOL = 1e-12
BINS = ("source_exact", "near", "medium", "far")
METRICS = ("bleu", "chrf")
# Our file names in the work folder -> Multi30k files under DATA/multi30k.
INPUTS = {
    "train.src": "train.en.gz",
    "train.tgt": "train.de.gz",
    "test.src": "test_2016_flickr.en.gz",
    "test.ref": "test_2016_flickr.de.gz",
}
# Per-segment fields that must be identical (exposures within SEGMENT_TOL).
SEGMENT_FIELDS = (
    "source_exposure",
    "source_nn_index",
    "target_exposure",
    "target_nn_index",
    "bin",
    "tm_hyp",
)

Number = float | int | None


def fail(message: str) -> NoReturn:
    """Stop with status 2 (not 1, which means a disagreement)."""
    print(message, file=sys.stderr)
    raise SystemExit(2)


# ---------------------------------------------------------------- systems


def drop_words(line: str) -> str:
    """The line without the words at positions i % 5 == 3."""
    return " ".join(w for i, w in enumerate(line.split()) if i % 5 != 3)


def swap_words(line: str) -> str:
    """The line with words i and i + 1 swapped wherever i % 4 == 1."""
    words = line.split()
    for i in range(1, len(words) - 1, 4):
        words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


SYSTEMS: dict[str, Callable[[str], str]] = {"drop5": drop_words, "swap4": swap_words}


# ---------------------------------------------------------------- runs


@dataclass
class Run:
    """One system's report and segments from one implementation."""

    wall_s: float
    report: dict[str, Number]
    segments: list[dict[str, Any]]


def write_lines(path: Path, lines: Sequence[str]) -> None:
    for i, line in enumerate(lines):
        if "\n" in line or "\r" in line:
            fail(f"{path}: line {i + 1} holds a line break; cannot write it")
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def prepare(data: Path, work: Path) -> dict[str, Path]:
    """Plain-text training, test and hypothesis files in `work`; their paths by name."""
    folder = data / "multi30k"
    missing = [name for name in INPUTS.values() if not (folder / name).is_file()]
    if missing:
        fail(
            f"Multi30k not found: {', '.join(str(folder / m) for m in missing)} missing. "
            "The benchmark reads ../shared/data/multi30k relative to the repository root; "
            "give another data folder with --data."
        )
    paths: dict[str, Path] = {}
    lines: dict[str, list[str]] = {}
    for name, source in INPUTS.items():
        lines[name] = read_lines(folder / source)
        paths[name] = work / name
        write_lines(paths[name], lines[name])
    for system, degrade in SYSTEMS.items():
        paths[f"hyp.{system}"] = work / f"hyp.{system}"
        write_lines(paths[f"hyp.{system}"], [degrade(r) for r in lines["test.ref"]])
    return paths


def _flat_tame(report: dict[str, Any]) -> dict[str, Number]:
    """tame-mt's JSON report under the keys of our `ReportDocument.fields()`."""
    out: dict[str, Number] = {}
    for m in METRICS:
        out[m] = report["quality"]["system"][m]
        out[f"tm_{m}"] = report["quality"]["tm"][m]
    for side in ("source", "target", "pair"):
        out[f"{side}_exposure_mean"] = report["exposure"][side]["mean"]
    for m in METRICS:
        out[f"gen_gap_{m}"] = report["generalization_gap"][m]
    for b in report["bins"]:
        out[f"bin/{b['name']}/count"] = b["count"]
        for m in METRICS:
            out[f"bin/{b['name']}/{m}"] = b["system"][m]
            out[f"bin/{b['name']}/tm_{m}"] = b["tm"][m]
    return out


def run_tame(tame: Path, paths: dict[str, Path], system: str, work: Path) -> Run:
    report_path, segments_path = work / f"tame.{system}.json", work / f"tame.{system}.jsonl"
    cmd = [
        str(tame),
        "score",
        "--train-src",
        str(paths["train.src"]),
        "--train-tgt",
        str(paths["train.tgt"]),
        "--test-src",
        str(paths["test.src"]),
        "--ref",
        str(paths["test.ref"]),
        "--hyp",
        str(paths[f"hyp.{system}"]),
        "--index-mode",
        "native_exact",
        "--json-out",
        str(report_path),
        "--cache-out",  # the per-segment file with TM hypotheses (--segment-out is its alias)
        str(segments_path),
        "--quiet",
    ]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        fail(f"tame-mt failed (rc {proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-4000:]}")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    version = report.get("tame_version")
    if version != TAME_VERSION:
        fail(f"{tame} is tame-mt {version}, expected {TAME_VERSION}")
    rows = [json.loads(line) for line in read_lines(segments_path) if line.strip()]
    rows.sort(key=lambda row: int(row["index"]))
    return Run(wall, _flat_tame(report), rows)


def run_ours(paths: dict[str, Path], system: str) -> Run:
    started = time.perf_counter()
    train = TrainingCorpus(read_lines(paths["train.src"]), read_lines(paths["train.tgt"]))
    result = score_tame(
        train,
        read_lines(paths[f"hyp.{system}"]),
        read_lines(paths["test.ref"]),
        read_lines(paths["test.src"]),
        TameConfig(),
    )
    wall = time.perf_counter() - started
    report: dict[str, Number] = {}
    for key, value in result.report.fields().items():
        if not isinstance(value, str):
            report[key] = value
    return Run(wall, report, result.segments)


# ---------------------------------------------------------------- comparison


def _undefined(value: Number) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _agree(a: Number, b: Number, tol: float) -> bool:
    if _undefined(a) or _undefined(b):
        return _undefined(a) and _undefined(b)
    assert a is not None and b is not None
    return abs(a - b) <= tol


def _diff(a: Number, b: Number) -> float | None:
    if _undefined(a) or _undefined(b):
        return None
    assert a is not None and b is not None
    return abs(a - b)


def report_keys() -> list[str]:
    keys = [*METRICS, *(f"tm_{m}" for m in METRICS)]
    keys += ["source_exposure_mean", "target_exposure_mean"]
    keys += [f"gen_gap_{m}" for m in METRICS]
    for b in BINS:
        keys.append(f"bin/{b}/count")
        keys += [f"bin/{b}/{m}" for m in METRICS]
        keys += [f"bin/{b}/tm_{m}" for m in METRICS]
    return keys


@dataclass
class Comparison:
    """Everything compared for one system; `failures` lists what must agree but does not."""

    system: str
    ours: Run
    tame: Run
    report_rows: list[tuple[str, Number, Number, float | None, bool]] = field(default_factory=list)
    segment_rows: list[tuple[str, int, float | None]] = field(default_factory=list)
    pair: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def compare(system: str, ours: Run, tame: Run) -> Comparison:
    c = Comparison(system, ours, tame)
    for key in report_keys():
        if key not in ours.report or key not in tame.report:
            c.failures.append(
                f"{key}: missing from {'ours' if key not in ours.report else 'tame-mt'}"
            )
            continue
        a, b = ours.report[key], tame.report[key]
        ok = _agree(a, b, REPORT_TOL)
        c.report_rows.append((key, a, b, _diff(a, b), ok))
        if not ok:
            c.failures.append(f"{key}: ours {a!r}, tame-mt {b!r}")
    if len(ours.segments) != len(tame.segments):
        c.failures.append(f"segments: ours {len(ours.segments)}, tame-mt {len(tame.segments)}")
        return c
    for name in SEGMENT_FIELDS:
        differing, largest = 0, None
        examples: list[str] = []
        for i, (mine, theirs) in enumerate(zip(ours.segments, tame.segments, strict=True)):
            a, b = mine[name], theirs[name]
            if name.endswith("_exposure"):
                d = abs(a - b)
                largest = d if largest is None else max(largest, d)
                same = d <= SEGMENT_TOL
            else:
                same = a == b
            if not same:
                differing += 1
                if len(examples) < 3:
                    examples.append(f"item {i}: ours {a!r}, tame-mt {b!r}")
        c.segment_rows.append((name, differing, largest))
        if differing:
            c.failures.append(f"{name}: {differing} items differ ({'; '.join(examples)})")
    diffs = [
        mine["pair_exposure"] - theirs["pair_exposure"]
        for mine, theirs in zip(ours.segments, tame.segments, strict=True)
    ]
    higher = [d for d in diffs if d > SEGMENT_TOL]
    lower = [d for d in diffs if d < -SEGMENT_TOL]
    same_nn = sum(
        mine["pair_nn_index"] == theirs["pair_nn_index"]
        for mine, theirs in zip(ours.segments, tame.segments, strict=True)
    )
    c.pair = {
        "items": len(diffs),
        "differ": len(higher) + len(lower),
        "ours_higher": len(higher),
        "ours_lower": len(lower),
        "max_diff": max(diffs, default=0.0),
        "mean_diff": math.fsum(diffs) / len(diffs) if diffs else 0.0,
        "mean_diff_differing": math.fsum(higher + lower) / len(higher + lower)
        if higher or lower
        else 0.0,
        "same_neighbor": same_nn,
        "ours_mean": ours.report.get("pair_exposure_mean"),
        "tame_mean": tame.report.get("pair_exposure_mean"),
    }
    if lower:
        c.failures.append(
            f"pair_exposure: ours lower than tame-mt on {len(lower)} items "
            f"(by up to {-min(lower):.3g})"
        )
    return c


# ---------------------------------------------------------------- output


def _value(v: Number) -> str:
    if _undefined(v):
        return "undefined"
    if isinstance(v, int):
        return f"{v:,}"
    assert v is not None
    return f"{v:.10f}"


def _small(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1e}"


def markdown(comparisons: Sequence[Comparison]) -> str:
    lines = ["| system | quantity | ours | tame-mt | abs diff | agree |"]
    lines.append("| --- | --- | ---: | ---: | ---: | --- |")
    for c in comparisons:
        for key, a, b, d, ok in c.report_rows:
            diff = "0" if d == 0 else _small(d)
            lines.append(
                f"| {c.system} | {key} | {_value(a)} | {_value(b)} | {diff} | "
                f"{'yes' if ok else '**NO**'} |"
            )
    lines += ["", "| system | segment field | items differing | max abs diff |"]
    lines.append("| --- | --- | ---: | ---: |")
    for c in comparisons:
        for name, differing, largest in c.segment_rows:
            n = len(c.ours.segments)
            lines.append(f"| {c.system} | {name} | {differing} of {n} | {_small(largest)} |")
    lines += [
        "",
        "| system | pair exposure differs | ours higher | ours lower | max diff | "
        "mean diff (all / differing) | same pair neighbour | mean ours | mean tame-mt |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in comparisons:
        p = c.pair
        if not p:
            continue
        lines.append(
            f"| {c.system} | {p['differ']} of {p['items']} | {p['ours_higher']} | "
            f"{p['ours_lower']} | {p['max_diff']:.4f} | {p['mean_diff']:.5f} / "
            f"{p['mean_diff_differing']:.4f} | {p['same_neighbor']} | "
            f"{_value(p['ours_mean'])} | {_value(p['tame_mean'])} |"
        )
    lines += ["", "| system | ours wall s | tame-mt wall s |", "| --- | ---: | ---: |"]
    for c in comparisons:
        lines.append(f"| {c.system} | {c.ours.wall_s:.2f} | {c.tame.wall_s:.2f} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- driver


def find_cli(tame: Path) -> Path:
    found = shutil.which(str(tame))
    if found is None:
        fail(
            f"tame-mt CLI not found: {tame}. Install tame-mt {TAME_VERSION} in a virtual "
            "environment of its own and set TAME_MT_CLI (or --tame) to its bin/tame-mt."
        )
    return Path(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="shared data folder")
    parser.add_argument("--tame", type=Path, default=DEFAULT_TAME, help="tame-mt 0.2.2 CLI")
    parser.add_argument("--work", type=Path, help="keep the input and output files here")
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help=f"comma-separated, from {','.join(SYSTEMS)}"
    )
    args = parser.parse_args()
    tame = find_cli(args.tame)
    systems = [s for s in args.systems.split(",") if s]
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown or not systems:
        parser.error(f"--systems: choose from {','.join(SYSTEMS)}")
    with tempfile.TemporaryDirectory(prefix="tame-parity-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        paths = prepare(args.data, work)
        comparisons = []
        for system in systems:
            print(f"[{system}] tame-mt ...", file=sys.stderr, flush=True)
            theirs = run_tame(tame, paths, system, work)
            print(f"[{system}] ours ...", file=sys.stderr, flush=True)
            ours = run_ours(paths, system)
            comparisons.append(compare(system, ours, theirs))
    print(markdown(comparisons))
    failures = [f"{c.system}: {f}" for c in comparisons for f in c.failures]
    print()
    if failures:
        print(f"DISAGREE ({len(failures)}):")
        for line in failures:
            print(f"  {line}")
        sys.exit(1)
    print(
        f"AGREE: every report number within {REPORT_TOL:g}, every segment field identical "
        f"(exposures within {SEGMENT_TOL:g}), pair exposure never lower than tame-mt's."
    )


if __name__ == "__main__":
    main()
