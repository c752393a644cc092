"""The Ray engine on a real cluster: a head and two worker nodes, each its own
set of processes on 127.0.0.1, and a driver in another process that connects to
them by address. The driver runs the audit through the metric
(``engine="ray"``, ``ray_address``) and through ``ray_audit`` on two text files
and on a saved ``datasets.Dataset``, neither of which it reads into memory; the
tasks run on more than one node. Every answer (each item's neighbours as exact
integers, the TM hypotheses, the corpus fingerprint, the whole flat dict of
``compute()`` with its signature, the report and the segments) equals the audit
of one machine in this process, bit for bit.

The training corpus is the bundled one (Swahili -> Zulu Bible verses), repeated
with row-dependent suffixes to more than two fingerprint blocks, so that it is
cut into three shards, with test pairs planted in the later shards (exact
copies, some of them in two shards, and near copies)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasets
import pytest

import tame_mt_metric
from tame_mt_metric import RetrievalConfig, TrainingCorpus, find_exposures
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.report.tm_baseline import tm_hypotheses
from tame_mt_metric.scale.shards import SHARD_ALIGN, shard_ranges

# Three shards of whole fingerprint blocks, the last one short.
SHARD = 6 * SHARD_ALIGN
ROWS = 2 * SHARD + 5_200
ITEMS = 100
NODES = 3
SHARD_STARTS = [0, SHARD, 2 * SHARD]
# What the direct ray_audit calls keep per side: more than one neighbour, so that
# the merge of top-k lists across shards is exercised too.
TOP_K = 3
COLUMNS = {"source_column": "sw", "target_column": "zu"}
# Each node: one CPU (so that three tasks need three nodes), a small object store.
NODE = {"num_cpus": 1, "object_store_memory": 80 << 20, "node_ip_address": "127.0.0.1"}
RAY_ENV = {
    # Ray turns a loopback address given to ray.init() into the machine's
    # network address, where a cluster on 127.0.0.1 does not listen; with this
    # (a switch meant for clusters on macOS and Windows) it keeps 127.0.0.1.
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
}
DRIVER_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The address of a head and two worker nodes started by this test (and
    stopped after it: only the processes these nodes started)."""
    # Sessions, sockets and the cluster's address file go to a folder of the
    # test's own (RAY_TMPDIR: a head's _temp_dir alone still writes the address
    # file under /tmp/ray). Unix socket paths are limited to 107 bytes, too few
    # under tmp_path: a short folder.
    folder = tempfile.mkdtemp(prefix="rc", dir="/tmp" if os.path.isdir("/tmp") else None)
    env = {**RAY_ENV, "RAY_TMPDIR": folder}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    started: Any = None
    try:
        try:
            from ray.cluster_utils import Cluster

            started = Cluster()
            started.add_node(**NODE, include_dashboard=False)  # the head
            for _ in range(NODES - 1):
                started.add_node(**NODE)
            started.wait_for_nodes()
            address = str(started.address)
        except Exception as exc:
            pytest.skip(f"Ray cannot start here: {exc}")
        yield address
    finally:
        try:
            if started is not None:
                started.shutdown()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            shutil.rmtree(folder, ignore_errors=True)


@dataclasses.dataclass(frozen=True)
class Data:
    sources: list[str]  # training sources, in memory (for the one-machine audit)
    targets: list[str]
    test_sources: list[str]
    references: list[list[str]]
    predictions: list[str]
    files: dict[str, str]  # what the driver reads (and its trace folder)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Data:
    bundled = example_corpus()
    train_src, train_tgt = bundled["train_sources"], bundled["train_targets"]
    n = len(train_src)
    sources = [f"{train_src[i % n]} {i * 7919 % 1000}" for i in range(ROWS)]
    targets = [f"{train_tgt[i % n]} {i * 104729 % 1000}" for i in range(ROWS)]
    test_sources = bundled["test_sources"][:ITEMS]
    refs = bundled["references"][:ITEMS]
    # Items 0-9 are in the corpus word for word in the last shard, items 0-4
    # also in the second one (the lower row wins the tie); items 10-14 nearly.
    for j in range(10):
        sources[2 * SHARD + 2_000 + 37 * j] = test_sources[j]
        targets[2 * SHARD + 2_000 + 37 * j] = refs[j]
    for j in range(5):
        sources[SHARD + 1_000 + 41 * j] = test_sources[j]
        targets[SHARD + 1_000 + 41 * j] = refs[j]
    for j in range(10, 15):
        sources[2 * SHARD + 5_000 + j] = test_sources[j].rsplit(" ", 1)[0]
        targets[2 * SHARD + 5_000 + j] = refs[j][:-1]
    references = [[r, r.rsplit(" ", 1)[0]] for r in refs]
    predictions = [r.rsplit(" ", 2)[0] for r in refs]

    folder = tmp_path_factory.mktemp("ray_cluster_data")
    (folder / "train.sw").write_text("\n".join(sources) + "\n", encoding="utf-8")
    (folder / "train.zu").write_text("\n".join(targets) + "\n", encoding="utf-8")
    datasets.Dataset.from_dict({"sw": sources, "zu": targets}).save_to_disk(str(folder / "dataset"))
    test = {"sources": test_sources, "references": references, "predictions": predictions}
    (folder / "test.json").write_text(json.dumps(test), encoding="utf-8")
    files = {
        "train_src": str(folder / "train.sw"),
        "train_tgt": str(folder / "train.zu"),
        "dataset": str(folder / "dataset"),
        "test": str(folder / "test.json"),
        "trace": str(folder / "trace"),
    }
    return Data(sources, targets, test_sources, references, predictions, files)


def _driver(settings: str) -> None:
    """The driver, run in its own process (its source is sent with ``-c``, so
    that it is linted and type-checked here): the audits on the cluster, printed
    as one line of JSON. Each audit task records the node it ran on."""
    import dataclasses
    import json
    import os
    from collections.abc import Callable
    from contextlib import contextmanager
    from pathlib import Path

    import datasets
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    import tame_mt_metric
    from tame_mt_metric import RetrievalConfig
    from tame_mt_metric.scale import ray_engine
    from tame_mt_metric.scale.ray_engine import TextFiles, ray_audit

    args = json.loads(settings)
    address, files, columns = args["address"], args["files"], args["columns"]
    test = json.loads(Path(files["test"]).read_text(encoding="utf-8"))
    sources, references = test["sources"], test["references"]

    def traced(folder: Path) -> Callable[..., Any]:
        def task(train: Any, start: int, stop: int, shared: Any) -> Any:
            from tame_mt_metric.scale import ray_engine as engine  # the worker's, not patched

            node = ray.get_runtime_context().get_node_id()
            (folder / f"{start}-{stop}-{node}").touch()
            return engine._audit_range(train, start, stop, shared)

        return task

    @contextmanager
    def tracing(name: str) -> Iterator[Path]:
        """What ray_audit sends to Ray, wrapped to record each task's node."""
        folder = Path(files["trace"]) / name
        folder.mkdir(parents=True)
        original = ray_engine._audit_range
        ray_engine._audit_range = traced(folder)
        try:
            yield folder
        finally:
            ray_engine._audit_range = original

    def tasks(folder: Path) -> list[list[Any]]:
        parts = (p.name.split("-") for p in folder.iterdir())
        return sorted([int(start), int(stop), node] for start, stop, node in parts)

    out: dict[str, Any] = {"pid": os.getpid(), "tasks": {}, "audits": {}}
    with tracing("compute") as folder:
        train = datasets.load_from_disk(files["dataset"])
        metric = tame_mt_metric.load(
            train=train,
            engine="ray",
            ray_address=address,
            use_cache=False,
            keep_in_memory=True,
            **columns,
        )
        out["compute"] = metric.compute(
            predictions=test["predictions"],
            references=references,
            sources=sources,
            return_report=True,
        )
    out["tasks"]["compute"] = tasks(folder)
    out["compute_corpus"] = {
        "arrow": metric.train.is_arrow,
        "lists_made": sorted({"sources", "targets"} & set(vars(metric.train))),
        "memory_mapped": bool(train.cache_files),
    }

    config = RetrievalConfig(top_k=args["top_k"])
    text_files = TextFiles(files["train_src"], files["train_tgt"])
    saved = datasets.load_from_disk(files["dataset"])
    for name, corpus, names in (("text_files", text_files, {}), ("dataset", saved, columns)):
        with tracing(name) as folder:
            merged = ray_audit(corpus, sources, references, config, shards=3, **names)
        out["tasks"][name] = tasks(folder)
        out["audits"][name] = {
            "exposures": [dataclasses.asdict(e) for e in merged.exposures],
            "tm_hypotheses": merged.tm_hypotheses,
            "fingerprint": merged.fingerprint,
            "num_train": merged.num_train,
        }
    out["text_files_lists_made"] = sorted({"sources", "targets"} & set(vars(text_files)))

    @ray.remote(num_cpus=1)
    def probe() -> list[str]:
        import tame_mt_core

        return [ray.get_runtime_context().get_node_id(), tame_mt_core.__version__]

    alive = sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])  # type: ignore[no-untyped-call]
    pinned = [
        probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))
        for node in alive
    ]
    out["nodes"] = {
        "alive": alive,
        "cpus": ray.cluster_resources().get("CPU"),  # type: ignore[no-untyped-call]
        "probes": ray.get([p.remote() for p in pinned]),
    }
    print(json.dumps(out))


@pytest.fixture(scope="module")
def driver(cluster: str, data: Data) -> dict[str, Any]:
    """What the driver process printed."""
    settings = {"address": cluster, "files": data.files, "columns": COLUMNS, "top_k": TOP_K}
    # Annotations stay unevaluated there, as here.
    header = "from __future__ import annotations\n"
    script = f"{header}{inspect.getsource(_driver)}\n_driver({json.dumps(settings)!r})\n"
    done = subprocess.run(  # with RAY_ENV, set by the cluster fixture
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=DRIVER_TIMEOUT_S,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 0, done.stderr[-6000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _json(value: object) -> str:
    """Exact text of a value: integers stay integers, floats print every bit
    (``repr``), nan prints as NaN, keys sorted."""
    return json.dumps(value, sort_keys=True)


def test_the_cluster_has_three_nodes_that_run_the_package(driver: dict[str, Any]) -> None:
    nodes = driver["nodes"]
    assert len(nodes["alive"]) == NODES and nodes["cpus"] == NODES
    assert [p[0] for p in nodes["probes"]] == nodes["alive"]
    assert {p[1] for p in nodes["probes"]} == {tame_mt_metric.core_version}
    assert driver["pid"] != os.getpid()


def test_the_audit_ran_in_shards_on_several_nodes(driver: dict[str, Any]) -> None:
    assert shard_ranges(ROWS, 3) == [
        (SHARD_STARTS[0], SHARD_STARTS[1]),
        (SHARD_STARTS[1], SHARD_STARTS[2]),
        (SHARD_STARTS[2], ROWS),
    ]
    alive = set(driver["nodes"]["alive"])
    used: set[str] = set()
    # compute() asks for one shard per CPU of the cluster: three as well.
    for name in ("compute", "text_files", "dataset"):
        ran = driver["tasks"][name]
        assert ran, f"{name}: no task recorded; ray_audit no longer sends ray_engine._audit_range"
        assert [[start, stop] for start, stop, _ in ran] == [list(r) for r in shard_ranges(ROWS, 3)]
        nodes = {node for _, _, node in ran}
        assert nodes <= alive and len(nodes) >= 2, (name, ran)
        used |= nodes
    assert used == alive


def test_the_driver_never_held_the_corpus(driver: dict[str, Any]) -> None:
    assert driver["compute_corpus"] == {"arrow": True, "lists_made": [], "memory_mapped": True}
    assert driver["text_files_lists_made"] == []


@pytest.fixture(scope="module")
def one_machine(data: Data) -> dict[str, Any]:
    """The direct audit in this process, without Ray."""
    whole = find_exposures(
        data.sources,
        data.targets,
        data.test_sources,
        data.references,
        RetrievalConfig(top_k=TOP_K),
    )
    audit = {
        "exposures": [dataclasses.asdict(e) for e in whole],
        "tm_hypotheses": tm_hypotheses(whole, data.targets),
        "fingerprint": TrainingCorpus(data.sources, data.targets).fingerprint,
        "num_train": ROWS,
    }
    result: dict[str, Any] = json.loads(_json(audit))  # as the driver's came: through JSON
    return result


def test_the_planted_pairs_are_found_in_the_later_shards(one_machine: dict[str, Any]) -> None:
    """The test data is what it claims: the best rows lie in more than one shard."""
    items = one_machine["exposures"]
    assert all(e["pair_exact"] for e in items[:10])
    assert [e["pair"]["row"] // SHARD for e in items[:10]] == [1] * 5 + [2] * 5
    shards = {n["row"] // SHARD for e in items for n in (*e["source"], *e["target"])}
    assert shards == {0, 1, 2}


@pytest.mark.parametrize("train", ["text_files", "dataset"])
def test_ray_audit_on_the_cluster_equals_one_machine(
    driver: dict[str, Any], one_machine: dict[str, Any], train: str
) -> None:
    on_ray = driver["audits"][train]
    assert on_ray["fingerprint"] == one_machine["fingerprint"]
    assert on_ray["num_train"] == one_machine["num_train"]
    assert on_ray["tm_hypotheses"] == one_machine["tm_hypotheses"]
    for i, (got, want) in enumerate(
        zip(on_ray["exposures"], one_machine["exposures"], strict=True)
    ):
        assert got == want, f"item {i}"
    assert _json(on_ray) == _json(one_machine)


def test_compute_on_the_cluster_equals_one_machine(driver: dict[str, Any], data: Data) -> None:
    metric = tame_mt_metric.load(
        train=datasets.load_from_disk(data.files["dataset"]),
        use_cache=False,
        keep_in_memory=True,
        **COLUMNS,
    )
    local = metric.compute(
        predictions=data.predictions,
        references=data.references,
        sources=data.test_sources,
        return_report=True,
    )
    local = json.loads(_json(local))  # as the driver's came: through JSON
    on_ray = json.loads(_json(driver["compute"]))  # a copy: the fixture is shared
    report, local_report = on_ray.pop("report"), local.pop("report")
    segments, local_segments = on_ray.pop("segments"), local.pop("segments")
    assert sorted(on_ray) == sorted(local)
    for key in local:
        assert _json(on_ray[key]) == _json(local[key]), key
    fingerprint = TrainingCorpus(data.sources, data.targets).fingerprint
    assert f"|train:{ROWS}_{fingerprint[:16]}|" in on_ray["signature"]
    assert on_ray["bin/source_exact/count"] == 10
    assert _json(segments) == _json(local_segments)
    # The report names the engine it ran on; nothing else in it differs.
    config, local_config = report.pop("config"), local_report.pop("config")
    assert (config["engine"], local_config["engine"]) == ("ray", "local")
    assert config["ray_address"] and local_config["ray_address"] is None
    for name in ("engine", "ray_address"):
        del config[name], local_config[name]
    assert _json(config) == _json(local_config)
    assert _json(report) == _json(local_report)
