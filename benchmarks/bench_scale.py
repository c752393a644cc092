"""Large corpora on the path users run, each run a fresh process (import, load,
compute; or the CLI), measured from outside: wall time, and peak resident memory
(the child's ``ru_maxrss``) against its baseline (its resident memory once
datasets, evaluate and the package are imported, before the corpus is opened;
``import evaluate`` imports torch where it is installed, about 730 MB).

    python benchmarks/bench_scale.py prepare --from DIR --rows N --out OUT
    python benchmarks/bench_scale.py compare --folder OUT --modes dataset,cli --repeat 2

``prepare`` takes the first N training pairs of a ``synthetic.py`` folder and
writes them as text files, a saved Dataset (``save_to_disk``, one Arrow file)
and Parquet (row groups of 65,536), with the folder's test set. ``compare``
runs the modes alternately (A B A B), each against a fresh cache folder, checks
that every run of the metric gives the same fields, and prints a table:

- ``dataset``: ``compute(train=datasets.load_from_disk(...))``
- ``stream``: ``compute(train=load_dataset("parquet", ..., streaming=True))``
- ``batches``: ``compute(train=<a generator of the Parquet file's row groups as
  record batches>)``, each row group read when it is needed
- ``cli``: ``tame-mt-metric score --train-src --train-tgt`` (the text files)
- ``before``: ``dataset`` with the package of another checkout (``--before DIR``,
  its ``tame_mt_metric`` imported with this build of the core)
- ``quiet`` / ``bar``: ``dataset`` with the progress bar off / forced on
- ``ray``: ``dataset`` with ``engine="ray"`` on a cluster this script starts
  once on 127.0.0.1 (``ray.cluster_utils.Cluster``: a head with no CPU for
  tasks and ``--ray-workers`` worker nodes of one CPU each, separate processes);
  the driver sends the saved Dataset by its file name
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from itertools import islice
from pathlib import Path
from typing import Any

from bench_retrieval import measure

MODES = ("dataset", "stream", "batches", "cli", "before", "quiet", "bar", "ray")


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def prepare(source: Path, rows: int, out: Path) -> None:
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tame_mt_metric.retrieval.text_files import file_lines

    out.mkdir(parents=True, exist_ok=True)
    for name in ("train.src", "train.tgt"):
        with open(source / name, "rb") as f, open(out / name, "wb") as g:
            g.writelines(islice(f, rows))
    for name in ("test.src", "test.ref"):
        shutil.copy(source / name, out / name)
    sides = [pa.chunked_array(list(file_lines(out / n))) for n in ("train.src", "train.tgt")]
    table = pa.table({"source": sides[0], "target": sides[1]})
    assert table.num_rows == rows, table.num_rows
    datasets.Dataset(table).save_to_disk(str(out / "dataset"), max_shard_size="1TB")
    pq.write_table(table, out / "train.parquet", row_group_size=65536)
    print(f"{out}: {rows:,} pairs as text, a saved Dataset and Parquet")


def child(mode: str, folder: Path, cache: Path) -> None:
    """One run, in this fresh process; prints its JSON line last."""
    import datasets
    import evaluate  # noqa: F401 (imports torch where it is installed: part of the baseline)

    import tame_mt_metric
    from tame_mt_metric.retrieval.inputs import read_lines

    baseline = _rss_mb()
    sources, refs = read_lines(folder / "test.src"), read_lines(folder / "test.ref")
    out: dict[str, Any] = {"mode": mode, "baseline_mb": baseline}
    if mode == "cli":
        from tame_mt_metric.cli import main

        report = cache / "report.json"
        argv = ["score", "--train-src", str(folder / "train.src"), "--train-tgt"]
        argv += [str(folder / "train.tgt"), "--test-src", str(folder / "test.src")]
        argv += ["--ref", str(folder / "test.ref"), "--hyp", str(folder / "test.ref")]
        argv += ["--quiet", "--json-out", str(report)]
        os.environ["TAME_MT_CACHE"] = str(cache / "tame")
        code = main(argv)
        out["signature"] = json.loads(report.read_text())["signature"]
        out["code"] = code
    else:
        if mode == "stream":
            train: Any = datasets.load_dataset(
                "parquet", data_files=str(folder / "train.parquet"), split="train", streaming=True
            )
        elif mode == "batches":
            import pyarrow.parquet as pq

            parquet = pq.ParquetFile(folder / "train.parquet")
            groups = range(parquet.num_row_groups)
            train = (b for g in groups for b in parquet.read_row_group(g).to_batches())
        else:
            train = datasets.load_from_disk(str(folder / "dataset"))
        options = {}
        if mode == "ray":
            options = {"engine": "ray", "ray_address": os.environ["BENCH_RAY_ADDRESS"]}
        metric = tame_mt_metric.load(train=train, tame_cache_dir=str(cache / "tame"), **options)
        fields = metric.compute(predictions=refs, references=refs, sources=sources)
        assert fields is not None
        out["signature"] = fields["signature"]
        out["fields"] = json.dumps(fields, sort_keys=True, default=str)
    print(json.dumps(out))


def _run(mode: str, folder: Path, before: Path | None) -> dict[str, Any]:
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1"}
    env["TAME_MT_PROGRESS"] = {"bar": "1", "quiet": "0"}.get(mode, "0")
    if mode == "before":
        assert before is not None, "--before names the other checkout"
        env["PYTHONPATH"] = str(before)
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as cache:
        name = "dataset" if mode in ("before", "quiet", "bar") else mode
        argv = [sys.executable, __file__, "child", name, str(folder), cache]
        log = Path(cache) / "output.log"
        measured = measure(argv, log, timeout=7200, env=env)
        output = log.read_text(encoding="utf-8", errors="replace")
    if measured["rc"] != 0:
        raise SystemExit(f"{mode}: the run failed ({measured['rc']})\n{output[-2000:]}")
    # The child's JSON line is its last (its stderr shares the log).
    result: dict[str, Any] = json.loads(
        [ln for ln in output.splitlines() if ln.startswith("{")][-1]
    )
    result.update(mode=mode, wall_s=measured["wall_s"], peak_mb=measured["peak_rss_mb"])
    result["cpu_s"] = measured["cpu_s"]
    return result


def _start_cluster(workers: int) -> Any:
    """A head (no CPU for tasks) and one-CPU worker nodes on 127.0.0.1, each its
    own processes, sessions under a short folder of their own."""
    folder = tempfile.mkdtemp(prefix="rb", dir="/tmp")
    # Ray turns a loopback address into the machine's own unless told not to.
    os.environ.update(
        RAY_TMPDIR=folder, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0"
    )
    from ray.cluster_utils import Cluster

    node: dict[str, Any] = {"object_store_memory": 200 << 20, "node_ip_address": "127.0.0.1"}
    cluster = Cluster()
    cluster.add_node(num_cpus=0, include_dashboard=False, **node)
    for _ in range(workers):
        cluster.add_node(num_cpus=1, **node)
    cluster.wait_for_nodes()
    os.environ["BENCH_RAY_ADDRESS"] = str(cluster.address)
    return cluster


def compare(
    folder: Path, modes: list[str], repeat: int, before: Path | None, workers: int = 2
) -> None:
    with open(folder / "train.src", "rb") as f:
        rows = sum(1 for _ in f)
    load = os.getloadavg()[0]
    print(f"{folder.name}: {rows:,} training pairs; load average before: {load:.2f}")
    runs: list[dict[str, Any]] = []
    cluster = _start_cluster(workers) if "ray" in modes else None
    try:
        _alternate(folder, modes, repeat, before, runs)
    finally:
        if cluster is not None:
            cluster.shutdown()
    _table(modes, runs)


def _alternate(
    folder: Path, modes: list[str], repeat: int, before: Path | None, runs: list[dict[str, Any]]
) -> None:
    for r in range(repeat):
        for mode in modes:
            run = _run(mode, folder, before)
            runs.append(run)
            print(
                f"  run {r + 1} {mode:<8} wall {run['wall_s']:7.1f} s  cpu {run['cpu_s']:7.1f} s  "
                f"peak {run['peak_mb']:7.0f} MB  (baseline {run['baseline_mb']:.0f} MB)",
                flush=True,
            )


def _table(modes: list[str], runs: list[dict[str, Any]]) -> None:
    answers = {r["fields"] for r in runs if "fields" in r}
    signatures = {r["signature"].replace("idx:auto|backend:indexed", "") for r in runs}
    print(f"same fields in every metric run: {len(answers) <= 1}; signatures: {len(signatures)}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print("\n| mode | wall s | CPU s | peak RSS MB | above baseline MB |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for mode in modes:
        mine = [r for r in runs if r["mode"] == mode]
        walls = ", ".join(f"{r['wall_s']:.1f}" for r in mine)
        cpus = ", ".join(f"{r['cpu_s']:.1f}" for r in mine)
        peaks = ", ".join(f"{r['peak_mb']:.0f}" for r in mine)
        above = ", ".join(f"{r['peak_mb'] - r['baseline_mb']:.0f}" for r in mine)
        print(f"| {mode} | {walls} | {cpus} | {peaks} | {above} |")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--from", dest="source", type=Path, required=True)
    p.add_argument("--rows", type=int, required=True)
    p.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare")
    c.add_argument("--folder", type=Path, required=True)
    c.add_argument("--modes", default="dataset,cli")
    c.add_argument("--repeat", type=int, default=2)
    c.add_argument("--before", type=Path)
    c.add_argument("--ray-workers", type=int, default=2)
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.source, args.rows, args.out)
    else:
        modes = args.modes.split(",")
        unknown = set(modes) - set(MODES)
        if unknown:
            raise SystemExit(f"--modes: unknown {sorted(unknown)}; choose from {MODES}")
        compare(args.folder, modes, args.repeat, args.before, args.ray_workers)


if __name__ == "__main__":
    main()
