"""Faults while outputs are written, tried on every command that writes:

- ``disk``: the output folder (or the cache) on a full device: a small tmpfs
  filled to a chosen number of free bytes (``--device tmpfs``, needs root), or
  a file size limit (``RLIMIT_FSIZE``, ``--device rlimit``, anyone). Good: a
  typed one-line error naming the folder with nothing half-written left
  there (only empty folders and the cache's lock files), or, where it all
  fit, the clean run's outputs; and then a run elsewhere equals the clean run.
- ``interrupt``: ``score --segment-out --html-out ...`` and ``decontaminate``
  stopped by SIGINT or SIGKILL at moments spread over a clean run's time and
  at every write step (each file flushed, each rename flushed). Good: every
  output present is byte for byte the clean run's (a temporary name is never
  read back), and a rerun into the same folder, with the same cache, equals
  the clean run.

    python benchmarks/output_faults.py [--faults disk,interrupt] [--device tmpfs]

Prints a Markdown table per fault (trials, good, bad); a bad trial is listed.
The inputs are the bundled Swahili-Zulu example (3,635 pairs, 400 items).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tame_mt_metric" / "data"
SLICE = DATA / "flores200_slice"

# Each command that writes, with its outputs in {O} and its inputs in {D}.
TRAIN = "--train-src {D}/train.sw --train-tgt {D}/train.zu"
TEST = "--test-src {D}/test.sw --ref {D}/test.zu"
WORKLOADS = {
    "score": f"score {TRAIN} {TEST} --hyp {{D}}/sys.zu --json-out {{O}}/r.json "
    "--html-out {O}/r.html --segment-out {O}/s.jsonl --tm-out {O}/tm.txt",
    "audit": f"audit {TRAIN} {TEST} --json-out {{O}}/a.json --segment-out {{O}}/s.jsonl.gz",
    "audit --shard": f"audit {TRAIN} {TEST} --shard 0/1 --partial-out {{O}}/part.arrow",
    "tm-baseline": f"tm-baseline {TRAIN} --test-src {{D}}/test.sw --out {{O}}/tm.txt "
    "--metadata-out {O}/tm.jsonl",
    "score-cached": "score-cached --segment-in {D}/seg.jsonl.gz --ref {D}/test.zu --hyp {D}/sys.zu "
    "--json-out {O}/r.json --html-out {O}/r.html",
    "score-cached-batch": "score-cached-batch --segment-in {D}/seg.jsonl.gz --ref {D}/test.zu "
    "--system a={D}/sys.zu --system b={D}/sys2.zu --paired-bs --paired-n 50 "
    "--json-out-dir {O}/reports --paired-json-out {O}/p.json --html-out {O}/p.html",
    "compare": f"compare {TRAIN} {TEST} --system a={{D}}/sys.zu --system b={{D}}/sys2.zu "
    "--paired-n 50 --paired-json-out {O}/p.json --html-out {O}/p.html",
    "merge": "merge --partial {D}/part.arrow --test-src {D}/test.sw --ref {D}/test.zu "
    "--hyp {D}/sys.zu --json-out {O}/m.json --html-out {O}/m.html --segment-out {O}/s.jsonl "
    "--tm-out {O}/tm.txt",
    "index build --out": f"index build {TRAIN} --out {{O}}/index",
    "index build --cache-dir": f"index build {TRAIN} --cache-dir {{O}}/cache",
    "decontaminate": f"decontaminate {TRAIN} {TEST} --threshold 0.5 --out-src {{O}}/kept.sw.gz "
    "--out-tgt {O}/kept.zu.gz --removed-out {O}/removed.jsonl --json-out {O}/d.json",
    "decontaminate --out-dataset": "decontaminate --train-dataset {D}/train.parquet "
    f"{TEST} --threshold 0.5 --out-dataset {{O}}/kept.parquet --removed-out {{O}}/removed.jsonl",
    "flores eval": f"flores eval --flores {SLICE} --outputs {{D}}/outputs --metrics chrf++ "
    "--json-out {O}/f.json",
    "flores audit": f"flores audit --flores {SLICE} --corpus swh_Latn={{D}}/web.sw "
    "--json-out {O}/fa.json",
    "xsts calibrate": "xsts calibrate --scores {D}/s.tsv --calibration {D}/c.tsv "
    "--json-out {O}/x.json",
    "correlate": "correlate --table {D}/t.tsv --json-out {O}/c.json",
    "toxicity": "toxicity --src {D}/src.de --hyp {D}/hyp.en --source-lang deu_Latn "
    "--target-lang eng_Latn --json-out {O}/t.json",
}
# The cache on the full device, the outputs elsewhere: the numbers all the same.
CACHE_WORKLOAD = "score"
INTERRUPTED = ("score", "decontaminate")

# A child that runs the command line, pausing at write step N (each file
# flushed before its rename, each folder flushed after one) to say so.
CHILD = """
import sys, time
from tame_mt_metric import files
from tame_mt_metric.cli import main
pause, steps = int(sys.argv[1]), [0]
def step(real):
    def paused(path):
        steps[0] += 1
        if steps[0] == pause:
            print(f"step {pause}", flush=True)
            time.sleep(60)
        return real(path)
    return paused
files.fsync_file = step(files.fsync_file)
files.fsync_folder = step(files.fsync_folder)
if len(sys.argv) > 2 and sys.argv[2] == "--fsize":
    import resource, signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    argv = sys.argv[4:]
else:
    argv = sys.argv[2:]
sys.exit(main(argv))
"""


def _lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def prepare(folder: Path) -> Path:
    """The inputs of every workload, in ``folder``."""
    bible = DATA / "bible_sw_zu"
    for side in ("sw", "zu"):
        with gzip.open(bible / f"train.{side}.gz", "rt", encoding="utf-8") as f:
            (folder / f"train.{side}").write_text(f.read(), encoding="utf-8")
        shutil.copy(bible / f"test.{side}", folder / f"test.{side}")
    refs = (folder / "test.zu").read_text(encoding="utf-8").splitlines()
    _lines(folder / "sys.zu", [" ".join(r.split()[:-1]) for r in refs])
    _lines(folder / "sys2.zu", [" ".join(r.split()[1:]) for r in refs])
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {
        s: (folder / f"train.{s}").read_text(encoding="utf-8").splitlines() for s in ("sw", "zu")
    }
    pq.write_table(
        pa.table({"source": columns["sw"], "target": columns["zu"]}), folder / "train.parquet"
    )
    flores = (SLICE / "devtest" / "swh_Latn.devtest").read_text(encoding="utf-8").splitlines()
    (folder / "outputs").mkdir()
    _lines(
        folder / "outputs" / "eng_Latn-swh_Latn.devtest.hyp",
        [" ".join(r.split()[:-1]) for r in flores],
    )
    _lines(folder / "web.sw", [*flores[:3], "unrelated"])
    _lines(folder / "s.tsv", ["eng-zul\t1\ta\t4", "eng-zul\t1\tb\t5", "eng-zul\t2\ta\t3"])
    _lines(folder / "c.tsv", ["eng-zul\t9\ta\t2", "eng-zul\t9\tb\t3"])
    _lines(
        folder / "t.tsv", ["direction\txsts\tchrf", "a\t1\t10", "b\t2\t30", "c\t3\t20", "d\t4\t40"]
    )
    _lines(folder / "src.de", ["Guten Tag.", "Du Idiot!"])
    _lines(folder / "hyp.en", ["Hello, you idiot.", "You idiot!"])
    made = folder / "made"
    for name in ("audit", "audit --shard"):
        run(name, folder, made, folder / "cache-prepare")
    shutil.move(made / "s.jsonl.gz", folder / "seg.jsonl.gz")
    shutil.move(made / "s.jsonl.gz.meta.json", folder / "seg.jsonl.gz.meta.json")
    shutil.move(made / "part.arrow", folder / "part.arrow")
    shutil.rmtree(made)
    return folder


def argv(name: str, inputs: Path, outputs: Path) -> list[str]:
    return [*WORKLOADS[name].format(D=inputs, O=outputs).split(), "--quiet"]


def _env(cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TAME_MT_CACHE": str(cache),
        "TAME_MT_PROGRESS": "0",
        "HF_DATASETS_OFFLINE": "1",
        "PYTHONWARNINGS": "ignore",
    }


def run(
    name: str, inputs: Path, outputs: Path, cache: Path, fsize: int | None = None
) -> subprocess.CompletedProcess[str]:
    """One workload in a fresh process (with a file size limit, ``fsize``)."""
    limit = ["--fsize", str(fsize)] if fsize is not None else []
    child = [sys.executable, "-c", CHILD, "0", *limit, *argv(name, inputs, outputs)]
    return subprocess.run(child, env=_env(cache), capture_output=True, text=True, timeout=300)


# Whether the audit came from the cache: a rerun after a stop may find the
# audit the stopped run stored, and says so; every number is the same.
_CACHE_STATE = re.compile(rb'"audit_cached": (true|false)')


def contents(folder: Path) -> dict[str, bytes]:
    """Every regular file under ``folder`` but temporary names and cache locks,
    with the report's word on whether its audit was cached left out."""
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): _CACHE_STATE.sub(b'"audit_cached": -', p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".tmp-" not in p.name and p.suffix != ".lock"
    }


def clean_outputs(name: str, inputs: Path, scratch: Path) -> dict[str, bytes]:
    out = Path(tempfile.mkdtemp(dir=scratch))
    done = run(name, inputs, out / "o", out / "cache")
    assert done.returncode == 0, (name, done.stderr)
    return contents(out / "o")


# --- the full device ----------------------------------------------------------


@contextlib.contextmanager
def tmpfs(size: int, free: int) -> Iterator[Path]:
    """A tmpfs of ``size`` bytes with about ``free`` of them left free."""
    mount = Path(tempfile.mkdtemp(prefix="full-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], check=True)
    try:
        fd = os.open(mount / ".filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        os.truncate(mount / ".filler", max(0, os.path.getsize(mount / ".filler") - free))
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)
        mount.rmdir()


def judge_full(
    done: subprocess.CompletedProcess[str], folder: Path, clean: dict[str, bytes]
) -> str | None:
    """None when the trial went as it must, else what went wrong."""
    left = contents(folder)
    left.pop(".filler", None)
    if done.returncode == 0:
        return None if left == clean else f"exit 0 but outputs differ: {sorted(left)}"
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    if done.returncode != 1 or not last.startswith("tame-mt-metric: error: "):
        return f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
    if str(folder) not in last:
        return f"the folder is not named: {last}"
    if "Traceback" in done.stderr:
        return "a traceback"
    half = [p for p in left if left[p] != clean.get(p)]
    return f"half-written: {half}" if half else None


def disk_trials(
    inputs: Path, scratch: Path, device: str, names: list[str]
) -> list[tuple[str, str | None]]:
    """(workload and free room, what went wrong or None) of every trial."""
    found: list[tuple[str, str | None]] = []
    for name in names:
        clean = clean_outputs(name, inputs, scratch)
        # A file size limit holds every file the process writes, the temporary
        # folder's probe at import among them: it starts above nothing.
        for free in (0 if device == "tmpfs" else 1024, 4096, 32768, 262144, 2 << 20):
            label = f"{name}, {free:,} bytes free"
            if device == "tmpfs":
                with tmpfs(8 << 20, free) as mount:
                    done = run(name, inputs, mount, Path(tempfile.mkdtemp(dir=scratch)))
                    found.append((_said(label, done), judge_full(done, mount, clean)))
            else:
                out = Path(tempfile.mkdtemp(dir=scratch))
                done = run(name, inputs, out, Path(tempfile.mkdtemp(dir=scratch)), fsize=free)
                found.append((_said(label, done), judge_full(done, out, clean)))
        again = Path(tempfile.mkdtemp(dir=scratch))  # a later run elsewhere
        done = run(name, inputs, again / "o", again / "cache")
        ok = done.returncode == 0 and contents(again / "o") == clean
        found.append((f"{name}, a later run elsewhere", None if ok else done.stderr[-300:]))
    if device == "tmpfs":  # the cache full, the outputs elsewhere: the same numbers
        clean = clean_outputs(CACHE_WORKLOAD, inputs, scratch)
        for free in (0, 4096, 32768, 262144):
            with tmpfs(8 << 20, free) as mount:
                out = Path(tempfile.mkdtemp(dir=scratch))
                done = run(CACHE_WORKLOAD, inputs, out, mount / "cache")
                ok = done.returncode == 0 and contents(out) == clean
                found.append(
                    (f"the cache full, {free:,} bytes free", None if ok else done.stderr[-300:])
                )
    return found


# --- interrupted ----------------------------------------------------------------


def interrupted(
    name: str, inputs: Path, folder: Path, how: signal.Signals, pause: int, delay: float
) -> subprocess.CompletedProcess[str] | None:
    """The workload stopped by ``how``: at write step ``pause`` (> 0), or ``delay``
    seconds after its start. None when it ended before the moment came."""
    child = [sys.executable, "-c", CHILD, str(pause), *argv(name, inputs, folder / "o")]
    proc = subprocess.Popen(
        child, env=_env(folder / "cache"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    if pause > 0:
        if not proc.stdout.readline().startswith(f"step {pause}"):
            proc.communicate()
            return None
    else:
        time.sleep(delay)
        if proc.poll() is not None:
            proc.communicate()
            return None
    proc.send_signal(how)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(child, proc.returncode, out, err)


def interrupt_trials(
    inputs: Path, scratch: Path, names: tuple[str, ...], moments: int
) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    for name in names:
        started = time.perf_counter()
        clean = clean_outputs(name, inputs, scratch)
        wall = time.perf_counter() - started
        for how in (signal.SIGINT, signal.SIGKILL):
            plans = [(0, wall * (k + 0.5) / moments) for k in range(moments)]
            plans += [(step, 0.0) for step in range(1, 64)]
            for pause, delay in plans:
                folder = Path(tempfile.mkdtemp(dir=scratch))
                stopped = interrupted(name, inputs, folder, how, pause, delay)
                if stopped is None:
                    if pause > 0:
                        break  # no more write steps
                    continue  # it ended first: not a trial
                moment = f"write step {pause}" if pause else f"{delay:.2f} s"
                kind = "at write steps" if pause else "at timed moments"
                label = f"{name} {how.name} {kind}, at {moment}"
                left = contents(folder / "o")
                wrong = [p for p in left if left[p] != clean.get(p)]
                if wrong:
                    found.append((label, f"read back as whole but not: {wrong}"))
                    continue
                again = run(name, inputs, folder / "o", folder / "cache")
                same = again.returncode == 0 and contents(folder / "o") == clean
                found.append((label, None if same else f"the rerun differs: {again.stderr[-300:]}"))
    return found


def _said(label: str, done: subprocess.CompletedProcess[str]) -> str:
    return f"{label}, {'a typed error' if done.returncode else 'it fit'}"


def table(title: str, found: list[tuple[str, str | None]]) -> str:
    """Trials, good and bad by workload (and, of the full device's, those that
    ended in a typed error rather than fitting)."""
    by: Counter[str] = Counter()
    bad: Counter[str] = Counter()
    typed: Counter[str] = Counter()
    for label, wrong in found:
        key = label.split(",")[0]
        by[key] += 1
        bad[key] += wrong is not None
        typed[key] += label.endswith("a typed error") and wrong is None
    extra = any(typed.values())
    head = f"| {title} | trials | good | bad |" + (" of which a typed error |" if extra else "")
    rows = [head, "| --- | ---: | ---: | ---: |" + (" ---: |" if extra else "")]
    for key, n in by.items():
        cells = f"| {key} | {n} | {n - bad[key]} | {bad[key]} |"
        rows.append(cells + (f" {typed[key]} |" if extra else ""))
    rows += [f"- {label}: {wrong}" for label, wrong in found if wrong is not None]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", default="disk,interrupt")
    parser.add_argument("--device", choices=("tmpfs", "rlimit"), default="tmpfs")
    parser.add_argument("--moments", type=int, default=12, help="timed moments per signal")
    parser.add_argument("--only", action="append", help="a workload (repeatable)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        (scratch / "inputs").mkdir()
        inputs = prepare(scratch / "inputs")
        if "disk" in args.faults:
            found = disk_trials(inputs, scratch, args.device, args.only or list(WORKLOADS))
            print(table(f"full device ({args.device})", found) + "\n")
        if "interrupt" in args.faults:
            names = tuple(args.only or INTERRUPTED)
            print(table("interrupted", interrupt_trials(inputs, scratch, names, args.moments)))


if __name__ == "__main__":
    main()
