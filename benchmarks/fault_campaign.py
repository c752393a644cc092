"""A fault-injection campaign over the three kinds of artifact the package
writes and reads back: the audit cache, the index cache and segment files.

Each trial restores a pristine entry, damages it (bit flips, truncation,
inserted or zeroed bytes, a chunk repeated, a file swapped with another of the
same kind, a JSON field of the manifest or sidecar set to another value), then
reads it the way users do and sorts the outcome:

- ``identical``: the numbers of a cold run (rebuilt with a CacheWarning, or
  the damage changed nothing that is read);
- ``typed error``: the direct reader raised the package's error;
- ``wrong number``, ``other exception``, ``hang or crash``: failures.

    python benchmarks/fault_campaign.py [--trials 1700] [--seed 1]

Each kind runs in a child process (a crash there is counted, not fatal); a
trial that runs past 60 s counts as a hang. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

KINDS = ("audit", "index (compute)", "index (read_index)", "segments (score-cached)")
OUTCOMES = ("identical", "typed error", "wrong number", "other exception", "hang or crash")
ITEMS = 40


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(
        (isinstance(v, float) and math.isnan(v) and math.isnan(b[k])) or v == b[k]
        for k, v in a.items()
    )


def damage(raw: bytes, rng: random.Random, other: bytes) -> bytes:
    """One random damage of a file's bytes."""
    data = bytearray(raw)
    how = rng.choice(("flip", "truncate", "insert", "zero", "repeat", "swap"))
    if how == "flip" or not data:
        for _ in range(rng.randint(1, 8)):
            if data:
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif how == "truncate":
        del data[rng.randrange(len(data)) :]
    elif how == "insert":
        at = rng.randrange(len(data) + 1)
        data[at:at] = rng.randbytes(rng.randint(1, 64))
    elif how == "zero":
        at = rng.randrange(len(data))
        data[at : at + rng.randint(1, 256)] = bytes(min(256, len(data) - at))
    elif how == "repeat":
        at = rng.randrange(len(data))
        data[at:at] = data[at : at + rng.randint(1, 512)]
    else:
        return other
    return bytes(data)


def edit_json(raw: bytes, rng: random.Random) -> bytes:
    """A JSON object with one field (top level or one level down) set to another value."""
    value = json.loads(raw)
    target = value
    if rng.random() < 0.5:
        nested = [v for v in value.values() if isinstance(v, dict | list) and v]
        if nested:
            target = rng.choice(nested)
            if isinstance(target, list):
                target = rng.choice([t for t in target if isinstance(t, dict)] or [value])
    key = rng.choice(sorted(target))
    target[key] = rng.choice((-1, 0, 7, 2**64, 2**70, 1.5, "x", "", None, [], {}, True))
    return json.dumps(value).encode()


def run_kind(kind: str, trials: int, seed: int) -> Counter[str]:
    from tame_mt_metric import TameError, TrainingCorpus, score_tame
    from tame_mt_metric.cache.entries import CacheOptions, list_entries
    from tame_mt_metric.cache.index_files import read_index
    from tame_mt_metric.cli.segments import read_segments, write_segments
    from tame_mt_metric.demo import example_corpus
    from tame_mt_metric.report import audit as audit_module
    from tame_mt_metric.report.config import TameConfig
    from tame_mt_metric.report.pipeline import report_from_audit
    from tame_mt_metric.space import simulated_system

    data = example_corpus()
    train = TrainingCorpus(data["train_sources"], data["train_targets"])
    sources, references = data["test_sources"][:ITEMS], data["references"][:ITEMS]
    predictions = simulated_system(references)
    refs = [[r] for r in references]
    config = TameConfig(strategy="streaming" if kind == "audit" else "indexed", threads=1)
    root = Path(tempfile.mkdtemp(prefix="tame-campaign-"))
    cache = CacheOptions(cache_dir=root / "cache")

    def score(test: list[str] = sources) -> Any:
        return score_tame(train, predictions, references, test, config, cache=cache)

    cold = score_tame(
        train, predictions, references, sources, config, cache=CacheOptions(enabled=False)
    )
    rng = random.Random(f"{seed}-{kind}")
    outcomes: Counter[str] = Counter()

    def trial(body: Callable[[], str]) -> None:
        signal.alarm(60)
        try:
            outcomes[body()] += 1
        except TimeoutError:
            outcomes["hang or crash"] += 1
        except TameError:
            outcomes["typed error"] += 1
        except Exception:
            outcomes["other exception"] += 1
        finally:
            signal.alarm(0)

    def numbers(result: Any) -> str:
        same = _same(result.report.fields(), cold.report.fields())
        return "identical" if same and result.segments == cold.segments else "wrong number"

    if kind == "audit":
        score(sources[::-1])  # another audit, to swap in
        (theirs,) = [e.path for e in list_entries(root / "cache")]
        score()
        (ours,) = [e.path for e in list_entries(root / "cache") if e.path != theirs]
        files = {path: path.read_bytes() for path in (ours, theirs)}

        def audit_trial() -> str:
            for path, raw in files.items():
                path.write_bytes(raw)
            ours.write_bytes(damage(files[ours], rng, files[theirs]))
            audit_module._RECENT.clear()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return numbers(score())

        for _ in range(trials):
            trial(audit_trial)
    elif kind.startswith("index"):
        score()
        (folder,) = [e.path for e in list_entries(root / "cache") if e.kind == "index"]
        pristine = {p: p.read_bytes() for p in sorted(folder.iterdir())}
        cold_exposures = read_index(folder, config.retrieval).find_exposures(sources, refs)

        def index_trial() -> str:
            if not folder.is_dir():
                shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(exist_ok=True)
            for path, raw in pristine.items():
                path.write_bytes(raw)
            path = rng.choice(sorted(pristine))
            if path.suffix == ".json" and rng.random() < 0.5:
                path.write_bytes(edit_json(pristine[path], rng))
            else:
                other = pristine[rng.choice(sorted(pristine))]
                path.write_bytes(damage(pristine[path], rng, other))
            audit_module._RECENT.clear()
            for entry in list_entries(root / "cache"):
                if entry.kind == "audit":
                    entry.path.unlink()
            if kind == "index (read_index)":
                found = read_index(folder, config.retrieval).find_exposures(sources, refs)
                return "identical" if found.items == cold_exposures.items else "wrong number"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return numbers(score())

        for _ in range(trials):
            trial(index_trial)
    else:
        result = score()
        segments = root / "segments.jsonl"
        write_segments(segments, result, sources, refs, predictions, {})
        other = root / "other.jsonl"
        write_segments(other, score(sources[::-1]), sources[::-1], refs, predictions, {})
        sidecar = segments.with_name(segments.name + ".meta.json")
        pristine = {segments: segments.read_bytes(), sidecar: sidecar.read_bytes()}
        others = {
            segments: other.read_bytes(),
            sidecar: other.with_name(other.name + ".meta.json").read_bytes(),
        }

        def segments_trial() -> str:
            for path, raw in pristine.items():
                path.write_bytes(raw)
            path = rng.choice(sorted(pristine))
            if path == sidecar and rng.random() < 0.5:
                path.write_bytes(edit_json(pristine[path], rng))
            else:
                path.write_bytes(damage(pristine[path], rng, others[path]))
            found = read_segments(segments)
            found.check(config, refs)
            audit = found.audit()
            meta = found.meta
            report = report_from_audit(
                audit, meta["num_train"], meta["train_fingerprint"], predictions, refs, config
            )
            same = _same(report.fields(), cold.report.fields())
            return "identical" if same else "wrong number"

        for _ in range(trials):
            trial(segments_trial)
    shutil.rmtree(root, ignore_errors=True)
    return outcomes


def _on_alarm(signum: int, frame: object) -> None:
    raise TimeoutError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=1700, help="per kind")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kind", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.kind:  # the child
        signal.signal(signal.SIGALRM, _on_alarm)
        print(json.dumps(run_kind(args.kind, args.trials, args.seed)))
        return
    print(f"| artifact | trials | {' | '.join(OUTCOMES)} |")
    print(f"| --- | ---: | {' | '.join('---:' for _ in OUTCOMES)} |")
    for kind in KINDS:
        child = subprocess.run(
            [
                sys.executable,
                __file__,
                "--kind",
                kind,
                "--trials",
                str(args.trials),
                "--seed",
                str(args.seed),
            ],
            capture_output=True,
            text=True,
            env={**__import__("os").environ, "TAME_MT_THREADS": "1"},
        )
        if child.returncode == 0:
            counts = Counter(json.loads(child.stdout.splitlines()[-1]))
        else:  # the child died: every trial it owed counts as a crash
            counts = Counter({"hang or crash": args.trials})
            print(child.stderr[-2000:], file=sys.stderr)
        print(
            f"| {kind} | {sum(counts.values())} | "
            f"{' | '.join(f'{counts[o]:,}' for o in OUTCOMES)} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
