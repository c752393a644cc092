"""Faults while outputs are written, a seeded few of ``benchmarks/output_faults.py``'s
trials: a full device (a file size limit, which anyone may set; a real full
tmpfs where this process may mount one) under commands that write files, a
dataset and an index folder; and ``score --segment-out --html-out`` and
``decontaminate`` stopped by SIGINT and SIGKILL at write steps. Nothing
half-written is left or read back as whole, and a rerun equals a clean run."""

from __future__ import annotations

import gzip
import importlib.util
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARK = Path(__file__).parents[1] / "benchmarks" / "output_faults.py"


def _campaign() -> ModuleType:
    spec = importlib.util.spec_from_file_location("output_faults", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


faults = _campaign()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return faults.prepare(tmp_path_factory.mktemp("inputs"))  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "name", ["score", "decontaminate", "decontaminate --out-dataset", "index build --out"]
)
def test_a_full_device_is_a_typed_error_naming_the_folder(
    name: str, inputs: Path, tmp_path: Path
) -> None:
    clean = faults.clean_outputs(name, inputs, tmp_path)
    for room in (1024, 6000):  # the temporary folder's probe at import fits
        out = Path(tempfile.mkdtemp(dir=tmp_path))
        done = faults.run(name, inputs, out, out / "cache", fsize=room)
        assert done.returncode == 1, done.stderr
        assert faults.judge_full(done, out, clean) is None
        assert "no space left to write" in done.stderr
    again = Path(tempfile.mkdtemp(dir=tmp_path))
    assert faults.run(name, inputs, again / "o", again / "cache").returncode == 0
    assert faults.contents(again / "o") == clean


def test_a_full_tmpfs_as_output_folder_and_as_cache(inputs: Path, tmp_path: Path) -> None:
    probe = Path(tempfile.mkdtemp(dir=tmp_path))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(probe)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("this process may not mount a tmpfs (the file size limit test runs instead)")
    subprocess.run(["umount", str(probe)], check=True)
    found = faults.disk_trials(inputs, tmp_path, "tmpfs", ["score"])
    assert [wrong for _, wrong in found if wrong] == []
    assert any(label.startswith("the cache full") for label, _ in found)


@pytest.mark.parametrize("name", ["score", "decontaminate"])
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_a_stopped_writer_leaves_whole_outputs_or_none(
    name: str, how: signal.Signals, inputs: Path, tmp_path: Path
) -> None:
    clean = faults.clean_outputs(name, inputs, tmp_path)
    for step in (1, 2, 5):
        folder = Path(tempfile.mkdtemp(dir=tmp_path))
        stopped = faults.interrupted(name, inputs, folder, how, step, 0.0)
        assert stopped is not None, f"{name} has fewer than {step} write steps"
        if how == signal.SIGINT:
            assert stopped.returncode == 130 and "interrupted" in stopped.stderr, stopped.stderr
        left = faults.contents(folder / "o")
        assert left.items() <= clean.items()  # what is there is whole
        again = faults.run(name, inputs, folder / "o", folder / "cache")
        assert again.returncode == 0 and faults.contents(folder / "o") == clean


def test_a_gz_output_is_the_same_file_for_the_same_content(tmp_path: Path) -> None:
    """No time and no (temporary) name in the gzip header: a rerun's output,
    or one written elsewhere, is byte for byte the first."""
    from tame_mt_metric.cli.common import write_lines

    first, second = tmp_path / "a" / "tm.txt.gz", tmp_path / "b" / "tm.txt.gz"
    write_lines(first, ["one", "two"])
    time.sleep(1.1)  # a gzip header's time is in seconds
    write_lines(second, ["one", "two"])
    assert first.read_bytes() == second.read_bytes()
    assert b".tmp-" not in first.read_bytes()
    assert gzip.decompress(first.read_bytes()) == b"one\ntwo\n"
