"""A fault-injection campaign over every kind of artifact the package writes
and reads back: the audit cache, the index cache, a saved index with its
training text (``index build --out``), a shard's partial audit, and segment
files with their sidecars.

Each trial restores a pristine entry, damages it (bit flips, truncation,
inserted or zeroed bytes, a chunk repeated, a file swapped with another of the
same kind, a JSON field of the manifest or sidecar set to another value, a
manifest's proof recomputed half the time as a forger would, since the index's
content can check every claim of its manifest; or the file replaced by
a FIFO, a symlink to ``/dev/zero``, ``/dev/urandom`` or ``/dev/null``, or a
folder), then reads it the way users do and sorts the outcome:

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
import os
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

from tame_mt_metric.digest import PROOF, proof

KINDS = (
    "audit",
    "index (compute)",
    "index (read_index)",
    "saved index (lookup)",
    "partial audit (merge)",
    "segments (score-cached)",
)
# What stands in a file's place instead of a file (one trial in ten).
SPECIALS = ("fifo", "/dev/zero", "/dev/urandom", "/dev/null", "folder")
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


EDITS: list[str] = []


def restore(path: Path, raw: bytes) -> None:
    """``path`` holds ``raw`` again, whatever stood in its place."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.is_symlink() or path.exists():
        path.unlink()
    path.write_bytes(raw)


def special(path: Path, rng: random.Random) -> None:
    """Put something that is not a regular file in ``path``'s place."""
    how = rng.choice(SPECIALS)
    path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "folder":
        path.mkdir()
    else:
        path.symlink_to(how)


HARMS: list[str] = []  # what was done to the file in each trial, for the failures' list


def harm(path: Path, pristine: bytes, other: bytes, rng: random.Random) -> None:
    """One damage of ``path``: a special file in its place, an edited JSON field
    (its proof recomputed half the time), or damaged bytes."""
    if rng.random() < 0.1:
        special(path, rng)
        HARMS.append(f"{path.name}: replaced by a special file")
    elif path.suffix == ".json" and rng.random() < 0.5:
        path.write_bytes(edit_json(pristine, rng, forge=path.name == "manifest.json"))
        HARMS.append(f"{path.name}: {EDITS[-1]}")
    else:
        path.write_bytes(damage(pristine, rng, other))
        HARMS.append(f"{path.name}: bytes damaged")


def edit_json(raw: bytes, rng: random.Random, forge: bool = False) -> bytes:
    """A JSON object with one field (top level or one level down) set to another
    value; with ``forge``, its proof recomputed half the time, as a forger would:
    for an index manifest, whose every claim the index's content can check."""
    value = json.loads(raw)
    target = value
    if rng.random() < 0.5:
        nested = [v for v in value.values() if isinstance(v, dict | list) and v]
        if nested:
            target = rng.choice(nested)
            if isinstance(target, list):
                target = rng.choice([t for t in target if isinstance(t, dict)] or [value])
    key = rng.choice(sorted(target))
    EDITS.append(f"field {key!r} edited")
    target[key] = rng.choice(
        (-1, 0, 7, 2**64, 2**70, 1.5, "x", "", None, [], {}, True, False, "../x", "/etc/passwd")
    )
    if forge and rng.random() < 0.5:
        value[PROOF] = proof(value)  # as a forger would
        EDITS[-1] += ", proof recomputed"
    return json.dumps(value).encode()


def run_kind(kind: str, trials: int, seed: int) -> Counter[str]:
    from tame_mt_metric import TameError, TrainingCorpus, TrainingIndex, score_tame
    from tame_mt_metric.cache.corpus_file import open_with_text, texts_of_index, write_corpus
    from tame_mt_metric.cache.entries import CacheOptions, list_entries
    from tame_mt_metric.cache.index_files import read_index, write_index
    from tame_mt_metric.cli.segments import read_segments, write_segments
    from tame_mt_metric.demo import example_corpus
    from tame_mt_metric.report import audit as audit_module
    from tame_mt_metric.report.config import TameConfig
    from tame_mt_metric.report.pipeline import report_from_audit
    from tame_mt_metric.scale.shards import (
        PartialAudit,
        audit_shard,
        check_partial,
        merge_partials,
    )
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
            outcome = body()
            outcomes[outcome] += 1
            if outcome == "wrong number":
                print(f"wrong number: {kind}: {HARMS[-1]}", file=sys.stderr)
        except TimeoutError:
            outcomes["hang or crash"] += 1
            print(f"hang: {kind}: {HARMS[-1] if HARMS else ''}", file=sys.stderr)
        except TameError:
            outcomes["typed error"] += 1
        except Exception as exc:
            outcomes["other exception"] += 1
            print(f"other exception: {kind}: {HARMS[-1]}: {exc!r}", file=sys.stderr)
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
                restore(path, raw)
            harm(ours, files[ours], files[theirs], rng)
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
                restore(path, raw)
            path = rng.choice(sorted(pristine))
            harm(path, pristine[path], pristine[rng.choice(sorted(pristine))], rng)
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
    elif kind == "saved index (lookup)":
        folder = root / "saved"
        built = TrainingIndex.build(*train.whole(), config.retrieval)
        extra = {"train_fingerprint": train.fingerprint, "train_rows": train.num_rows}
        write_index(built, folder, extra, lambda tmp: write_corpus(tmp, train))
        pristine = {p: p.read_bytes() for p in sorted(folder.iterdir())}
        cold_found = built.find_exposures(sources, refs)
        cold_rows = [e.source[0].row for e in cold_found]
        cold_texts = (train.sources_at(cold_rows), train.targets_at(cold_rows))

        def saved_trial() -> str:
            for path, raw in pristine.items():
                restore(path, raw)
            path = rng.choice(sorted(pristine))
            harm(path, pristine[path], pristine[rng.choice(sorted(pristine))], rng)
            found = open_with_text(folder).find_exposures(sources, refs)
            texts = texts_of_index(folder, [e.source[0].row for e in found])
            same = found.items == cold_found.items and texts == cold_texts
            return "identical" if same else "wrong number"

        for _ in range(trials):
            trial(saved_trial)
    elif kind == "partial audit (merge)":
        part, other_part = (
            audit_shard(train.blocks(1 << 16), 0, test, refs, config.retrieval)
            for test in (sources, sources[::-1])
        )
        path, other_path = root / "part.arrow", root / "other.arrow"
        part.save(path)
        other_part.save(other_path)
        pristine_part, other_raw = path.read_bytes(), other_path.read_bytes()
        cold_merge = merge_partials([part])

        def partial_trial() -> str:
            restore(path, pristine_part)
            harm(path, pristine_part, other_raw, rng)
            loaded = PartialAudit.load(path)
            check_partial(loaded, sources, refs, config.retrieval)
            merged = merge_partials([loaded])
            same = (merged.exposures, merged.tm_hypotheses, merged.fingerprint) == (
                cold_merge.exposures,
                cold_merge.tm_hypotheses,
                cold_merge.fingerprint,
            )
            return "identical" if same else "wrong number"

        for _ in range(trials):
            trial(partial_trial)
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
                restore(path, raw)
            path = rng.choice(sorted(pristine))
            harm(path, pristine[path], others[path], rng)
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
            failures = [line for line in child.stderr.splitlines() if ": " in line]
            print("\n".join(f"  {line}" for line in failures), file=sys.stderr)
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
