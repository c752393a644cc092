"""The streaming pass alone, for changes to the core: builds of ``tame_mt_core``
timed in one alternating run (A B B A), each run a fresh process that opens a
saved Dataset and feeds all of it to one ``StreamingAudit`` (``streaming_pass``,
the pass a fresh ``compute()`` makes). The pass is timed inside the child
(wall and CPU of the process over the pass, without the imports), and each run
prints a digest of the exposures and TM candidates it found, so that the builds
are seen to give the same answer.

    python benchmarks/bench_pass.py --folder P100K --builds DIR_A,DIR_B --repeat 4

Each of ``--builds`` is a folder holding a build of ``tame_mt_core`` (``pip
install --target DIR <wheel>``), put ahead on ``PYTHONPATH``; ``installed``
names the one installed. ``--folder`` is a ``bench_scale.py prepare`` folder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def child(folder: Path) -> None:
    """One pass over the saved Dataset; prints one JSON line."""
    import datasets

    from tame_mt_metric.digest import digest
    from tame_mt_metric.retrieval.config import RetrievalConfig
    from tame_mt_metric.retrieval.corpus import training_corpus
    from tame_mt_metric.retrieval.inputs import read_lines
    from tame_mt_metric.retrieval.streaming_pass import streaming_pass

    sources = read_lines(folder / "test.src")
    references = [[r] for r in read_lines(folder / "test.ref")]
    train = training_corpus(datasets.load_from_disk(str(folder / "dataset")))
    config = RetrievalConfig()
    wall, cpu = time.perf_counter(), time.process_time()
    exposures, candidates, _ = streaming_pass(
        train.blocks(config.block_rows), 0, sources, references, config
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    answer = digest((repr(e) for e in exposures.items), candidates)
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "answer": answer[:16]}))


def run(folder: Path, build: str) -> tuple[float, float, str]:
    """(wall s, CPU s, answer) of one pass with ``build``."""
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "TAME_MT_PROGRESS": "0"}
    if build != "installed":
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [build, env.get("PYTHONPATH")]))
    cmd = [sys.executable, str(Path(__file__).resolve()), "child", str(folder)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    result = json.loads(out.splitlines()[-1])
    return result["wall_s"], result["cpu_s"], result["answer"]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(Path(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--builds", required=True, help="two or more, comma-separated")
    parser.add_argument("--repeat", type=int, default=4)
    args = parser.parse_args()
    builds = args.builds.split(",")
    print(f"{args.folder.name}; load average before: {os.getloadavg()[0]:.2f}", flush=True)
    runs: dict[str, list[tuple[float, float, str]]] = {b: [] for b in builds}
    for r in range(args.repeat):
        for build in builds if r % 2 == 0 else builds[::-1]:
            wall, cpu, answer = run(args.folder, build)
            runs[build].append((wall, cpu, answer))
            print(f"  round {r + 1} {build}: {wall:.2f} s wall, {cpu:.2f} s CPU, answer {answer}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    answers = {answer for rs in runs.values() for _, _, answer in rs}
    print(f"every run gave the same answer: {len(answers) == 1}\n")
    first = statistics.median(wall for wall, _, _ in runs[builds[0]])
    print(f"| build | wall s | CPU s | median wall / {builds[0]}'s |")
    print("| --- | --- | --- | ---: |")
    for build, rs in runs.items():
        walls = ", ".join(f"{wall:.2f}" for wall, _, _ in rs)
        cpus = ", ".join(f"{cpu:.2f}" for _, cpu, _ in rs)
        ratio = statistics.median(wall for wall, _, _ in rs) / first
        print(f"| {build} | {walls} | {cpus} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
