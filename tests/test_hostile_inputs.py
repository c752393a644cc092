"""Hostile inputs and artifacts: every count option is bounded before any work,
no read blocks on a special file or holds an endless line, a saved index is
used only with its own settings and proved to hold them, a ``train_key`` is
checked against the corpus, index folders appear whole, each segment file has
its own sidecar, and an unusable cache still gives the right numbers."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tame_mt_metric import (
    CacheWarning,
    InputTooLargeError,
    InvalidOptionError,
    SpecialFileError,
    TameConfig,
    TrainingCorpus,
    TrainingStream,
    score_tame,
)
from tame_mt_metric.cache.entries import CacheOptions
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.digest import PROOF, proof
from tame_mt_metric.retrieval.inputs import read_lines
from tame_mt_metric.retrieval.text_files import TextFiles
from tame_mt_metric.scale.shards import PartialAudit, audit_shard
from tests.processes import kill_at
from tests.test_cli import cli

N = 40


@pytest.fixture(scope="module")
def data() -> dict[str, list[str]]:
    d = example_corpus()
    return {
        "train_sources": d["train_sources"][:800],
        "train_targets": d["train_targets"][:800],
        "test_sources": d["test_sources"][:N],
        "references": d["references"][:N],
        "predictions": [" ".join(r.split()[::2]) for r in d["references"][:N]],
    }


@pytest.fixture(scope="module")
def files(data: dict[str, list[str]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hostile")
    paths = {}
    for name, key in (
        ("train.src", "train_sources"),
        ("train.tgt", "train_targets"),
        ("test.src", "test_sources"),
        ("test.ref", "references"),
        ("hyp", "predictions"),
    ):
        paths[name] = root / name
        paths[name].write_text("\n".join(data[key]) + "\n", encoding="utf-8")
    paths["root"] = root
    return paths


def _train(f: dict[str, Path]) -> list[str | Path]:
    return ["--train-src", f["train.src"], "--train-tgt", f["train.tgt"]]


def _test(f: dict[str, Path]) -> list[str | Path]:
    return ["--test-src", f["test.src"], "--ref", f["test.ref"]]


@pytest.mark.parametrize(
    "option",
    [
        {"n_bootstrap": 10**9},
        {"curve_bands": 10**9},
        {"chrf_word_order": 1000},
        {"seed": 1180591620717411303424},
        {"curve_edges": (0.5, 0.3)},
    ],
    ids=["n_bootstrap", "curve_bands", "chrf_word_order", "seed", "decreasing_edges"],
)
def test_count_options_are_bounded(option: dict[str, Any]) -> None:
    name = next(iter(option))
    with pytest.raises(InvalidOptionError, match=name):
        TameConfig.from_options(**option)


@pytest.mark.parametrize(
    "flag",
    [
        ["--n-bootstrap", "1000000000"],
        ["--curve-bands", "1000000000"],
        ["--chrf-word-order", "1000"],
        ["--curve-edges", "0.5,0.3"],
        ["--seed", "1180591620717411303424"],
    ],
)
def test_the_cli_refuses_absurd_counts_at_once(files: dict[str, Path], flag: list[str]) -> None:
    done = cli("score", *_train(files), *_test(files), "--hyp", files["hyp"], *flag, check=2)
    assert f"error: {flag[0]}" in done.stderr  # named by the option the user gave


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_special_files_are_refused_not_read(files: dict[str, Path], kind: str) -> None:
    path = files["root"] / f"special-{kind}"
    if kind == "fifo":
        _fifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    with pytest.raises(SpecialFileError, match=r"not a regular file|a folder"):
        read_lines(path)
    with pytest.raises(SpecialFileError):
        _ = TextFiles(path, files["train.tgt"]).num_rows
    done = cli("audit", *_train(files), "--test-src", path, "--ref", files["test.ref"], check=1)
    assert str(path) in done.stderr
    assert "not a regular file" in done.stderr or "a folder" in done.stderr


def _gzip_bomb(path: Path, data: bytes, copies: int) -> Path:
    with gzip.open(path, "wb", compresslevel=9) as f:
        for _ in range(copies):
            f.write(data)
    return path


def test_a_gzip_bomb_of_one_line_is_a_typed_error(files: dict[str, Path]) -> None:
    bomb = _gzip_bomb(files["root"] / "bomb.gz", b"\0" * (1 << 20), 64)  # 64 MiB, one line
    assert bomb.stat().st_size < 1 << 20
    with pytest.raises(InputTooLargeError, match="line limit"):
        read_lines(bomb)
    with pytest.raises(InputTooLargeError, match="line limit"):
        _ = TextFiles(bomb, bomb).num_rows
    for where in (["--train-src", bomb, "--train-tgt", bomb, *_test(files)],):
        done = cli("audit", *where, check=1)
        assert "line limit" in done.stderr
    done = cli("audit", *_train(files), "--test-src", bomb, "--ref", files["test.ref"], check=1)
    assert f"{bomb}:1: a line longer than 1,048,576 bytes" in done.stderr
    # The limit is the user's to set.
    long = files["root"] / "long.txt"
    long.write_text("a" * 300 + "\n")
    args = ["audit", *_train(files), "--test-src", long, "--ref", long, "--quiet"]
    done = cli(*args, "--max-line-bytes", "100", check=1)
    assert f"{long}:1: a line longer than 100 bytes" in done.stderr
    cli(*args, "--max-line-bytes", "300")


def test_lookup_reads_standard_input_in_bounded_lines(files: dict[str, Path]) -> None:
    folder = files["root"] / "index-stdin"
    cli("index", "build", *_train(files), "--out", folder, "--quiet")
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run(
            ["python", "-m", "tame_mt_metric", "lookup", "--index", str(folder)],
            stdin=zero,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1 and "line limit" in done.stderr, done.stderr


def _index(files: dict[str, Path], name: str, *settings: str) -> Path:
    folder = files["root"] / name
    if not folder.exists():
        cli("index", "build", *_train(files), *settings, "--out", folder, "--quiet")
    return folder


def test_an_index_is_used_with_its_own_settings_only(
    files: dict[str, Path], tmp_path: Path
) -> None:
    folder = _index(files, "index-plain")
    cache = {"TAME_MT_CACHE": str(tmp_path / "cache")}
    for other in (["--lowercase"], ["--ngram-orders", "2,3"], ["--strip-diacritics"]):
        done = cli("audit", "--index", folder, *_test(files), *other, check=1, env=cache)
        assert "built with the settings" in done.stderr and "were asked for" in done.stderr
    # Nothing wrong entered the cache: the files give their own numbers after.
    from_files, fresh = tmp_path / "files.json", tmp_path / "fresh.json"
    lowercase = ["audit", *_train(files), *_test(files), "--lowercase", "--json-out"]
    cli(*lowercase, from_files, env=cache)
    cli(*lowercase, fresh, env={"TAME_MT_CACHE": str(tmp_path / "other")})
    a, b = (json.loads(p.read_text()) for p in (from_files, fresh))
    assert a["exposure"] == b["exposure"]
    # An index built with settings is used with them when none are given.
    lowered = _index(files, "index-lower", "--lowercase")
    from_index = tmp_path / "index.json"
    cli("audit", "--index", lowered, *_test(files), "--json-out", from_index, env=cache)
    c = json.loads(from_index.read_text())
    assert "nfkc_ws_lc" in c["signature"] and c["exposure"] == b["exposure"]


def _saved_index(files: dict[str, Path], folder: Path) -> Path:
    cli("index", "build", *_train(files), "--out", folder, "--quiet")
    return folder


def _edit_manifest(folder: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """Change the manifest and recompute its proof, as a forger would."""
    manifest = json.loads((folder / "manifest.json").read_text())
    edit(manifest)
    manifest[PROOF] = proof(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))


def _readers_refuse(folder: Path, sentence: str, message: str) -> None:
    """``index verify`` and ``lookup`` both exit 1 saying ``message``."""
    commands: list[list[str | Path]] = [
        ["index", "verify", folder],
        ["lookup", "--index", folder, sentence],
    ]
    for command in commands:
        done = cli(*command, check=1)
        assert message in done.stderr


def test_a_forged_manifest_is_refused(files: dict[str, Path], tmp_path: Path) -> None:
    folder = _saved_index(files, tmp_path / "forged")
    _edit_manifest(folder, lambda m: m["settings"].update(lowercase=True))
    _readers_refuse(folder, "a house", "the manifest does not describe this index")
    done = cli("audit", "--index", folder, *_test(files), check=1)
    assert "does not describe" in done.stderr


@pytest.mark.parametrize("name", ["../other/source.vocab", "/etc/passwd", "source/../x"])
def test_manifest_members_stay_in_the_folder(
    files: dict[str, Path], tmp_path: Path, name: str
) -> None:
    folder = _saved_index(files, tmp_path / "escape")
    _edit_manifest(folder, lambda m: m["arrays"][0].update(name=name))
    done = cli("index", "verify", folder, check=1)
    assert "another shape" in done.stderr


def test_a_manifest_that_is_a_fifo_is_refused(files: dict[str, Path], tmp_path: Path) -> None:
    folder = _saved_index(files, tmp_path / "fifo-index")
    (folder / "manifest.json").unlink()
    _fifo(folder / "manifest.json")
    _readers_refuse(folder, "a", "FIFO")
    array = next(folder.glob("*.vocab.arrow"))
    array.unlink()
    array.symlink_to("/dev/zero")
    done = cli("index", "verify", folder, check=1)
    assert "FIFO" in done.stderr or "device" in done.stderr


def test_an_index_folder_appears_whole_or_not_at_all(
    files: dict[str, Path], tmp_path: Path
) -> None:
    folder = tmp_path / "whole"
    # A build killed earlier leaves its temporary folder (named with its process,
    # here one that cannot be alive): the next one removes it.
    abandoned = tmp_path / ".whole.tmp-999999999-1-deadbeef"
    abandoned.mkdir()
    (abandoned / "manifest.json").write_text("{}")
    cli("index", "build", *_train(files), "--out", folder, "--quiet")
    assert not abandoned.exists()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["corpus_file"] == "corpus.arrow"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["whole"]
    # The manifest names the text: verify refuses a folder without it.
    (folder / "corpus.arrow").unlink()
    done = cli("index", "verify", folder, check=1)
    assert "no corpus.arrow" in done.stderr


def test_each_segment_file_has_its_own_sidecar(files: dict[str, Path], tmp_path: Path) -> None:
    plain, packed = tmp_path / "x.jsonl", tmp_path / "x.jsonl.gz"
    for out in (plain, packed):
        cli("audit", *_train(files), *_test(files), "--segment-out", out, "--quiet")
    assert (tmp_path / "x.jsonl.meta.json").is_file()
    assert (tmp_path / "x.jsonl.gz.meta.json").is_file()
    for seg in (plain, packed):
        cli("score-cached", "--segment-in", seg, "--ref", files["test.ref"], "--hyp", files["hyp"])
    sidecar = tmp_path / "x.jsonl.meta.json"
    sidecar.unlink()
    _fifo(sidecar)
    done = cli(
        "score-cached", "--segment-in", plain, "--ref", files["test.ref"], "--hyp", files["hyp"],
        check=1,
    )  # fmt: skip
    assert "FIFO" in done.stderr


def _score(data: dict[str, list[str]], train: Any, cache: CacheOptions) -> str:
    """The report's fields as JSON (NaN equal to NaN), ``audit_cached`` left out."""
    fields = score_tame(
        train,
        data["predictions"],
        data["references"],
        data["test_sources"],
        TameConfig(n_bootstrap=0),
        cache=cache,
    ).report.fields()
    fields.pop("audit_cached", None)
    return json.dumps(fields, sort_keys=True)


def test_a_train_key_is_checked_against_the_corpus(
    data: dict[str, list[str]], tmp_path: Path
) -> None:
    a = TrainingCorpus(data["train_sources"], data["train_targets"])
    b = TrainingCorpus(data["train_sources"][::2], data["train_targets"][::2])
    keyed = CacheOptions(cache_dir=tmp_path, train_key="my-corpus")
    _score(data, a, keyed)
    with pytest.warns(CacheWarning, match="not of the one at hand"):
        got = _score(data, b, keyed)
    assert got == _score(data, b, CacheOptions(enabled=False))
    # A stream that can be read again is fingerprinted before its cached audit is used.
    rows = [{"source": s, "target": t} for s, t in zip(*(data[k][:300] for k in
            ("train_sources", "train_targets")), strict=True)]  # fmt: skip
    with pytest.warns(CacheWarning, match="not of the one at hand"):
        streamed = _score(data, TrainingStream(rows), keyed)
    assert streamed == _score(data, TrainingStream(rows), CacheOptions(enabled=False))


def test_an_unusable_cache_still_gives_the_numbers(
    data: dict[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = TrainingCorpus(data["train_sources"], data["train_targets"])
    expected = _score(data, corpus, CacheOptions(enabled=False))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(InvalidOptionError, match="a-file/cache: cannot be created"):
        _score(data, corpus, CacheOptions(cache_dir=blocker / "cache"))

    from tame_mt_metric.report import audit

    def full(path: Path, *args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(audit, "save_audit", full)
    with pytest.warns(CacheWarning, match="nothing was cached.*No space left"):
        got = _score(data, corpus, CacheOptions(cache_dir=tmp_path / "full"))
    assert got == expected


def test_a_tampered_partial_audit_is_refused(data: dict[str, list[str]], tmp_path: Path) -> None:
    from tame_mt_metric import RetrievalConfig
    from tame_mt_metric.errors import InputTextError

    corpus = TrainingCorpus(data["train_sources"], data["train_targets"])
    blocks = corpus.blocks(1 << 16)
    part = audit_shard(blocks, 0, data["test_sources"], data["references"], RetrievalConfig())
    path = tmp_path / "part.arrow"
    part.save(path)
    assert PartialAudit.load(path).exposures == part.exposures
    import pyarrow as pa

    table = pa.ipc.open_file(str(path)).read_all()
    rows = table.column("item").to_pylist()
    rows[0] = rows[1]  # another item's neighbours, well-formed
    forged = pa.table({"item": pa.array(rows, pa.large_string())}).replace_schema_metadata(
        table.schema.metadata
    )
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, forged.schema) as w:
        w.write_table(forged)
    with pytest.raises(InputTextError, match="differs from what it was written with"):
        PartialAudit.load(path)
    path.unlink()
    _fifo(path)
    with pytest.raises(SpecialFileError, match="FIFO"):
        PartialAudit.load(path)


def test_space_uploads_are_bounded(tmp_path: Path) -> None:
    from tame_mt_metric import space

    bomb = _gzip_bomb(tmp_path / "newlines.gz", b"\n" * (1 << 20), 64)  # 64 Mi empty lines
    with pytest.raises(InputTooLargeError, match="lines"):
        space.uploaded_inputs(str(bomb), str(bomb), str(bomb), [str(bomb)], str(bomb))
    assert space.MAX_UPLOAD.upper() in space.LIMITS


def test_a_test_set_over_its_limit_is_refused_before_any_work(
    data: dict[str, list[str]], files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = TrainingCorpus(data["train_sources"], data["train_targets"])
    monkeypatch.setenv("TAME_MT_MAX_TEST_ITEMS", "10")
    with pytest.raises(InputTooLargeError, match="40 test items, over the limit of 10"):
        _score(data, corpus, CacheOptions(enabled=False))
    monkeypatch.delenv("TAME_MT_MAX_TEST_ITEMS")
    # A million empty lines: refused as the file is read, naming the limit.
    empty = files["root"] / "million-empty-lines.txt"
    empty.write_bytes(b"\n" * 10**6)
    done = cli("audit", *_train(files), "--test-src", empty, "--ref", empty, check=1)
    assert "more than 262,144 lines: over the test set's limit" in done.stderr


KILLED_AT = """
import sys, time
from tame_mt_metric import files
from tame_mt_metric.cache import audit_file, corpus_file, index_files
from tame_mt_metric.cli import main
step = sys.argv.pop(1)
def held(real):
    def hold(*args, **kwargs):
        if step == "rename" and not str(args[0]).rsplit("/", 1)[-1].startswith(".out.tmp-"):
            return real(*args, **kwargs)
        if step == "array":
            real(*args, **kwargs)
        print("at", step, flush=True)
        time.sleep(120)
    return hold
module, name = {
    "array": (index_files, "_write_array"),
    "text": (corpus_file, "write_arrow"),
    "manifest": (index_files, "proof"),
    "rename": (files, "fsync_folder"),  # the whole folder flushed, before its rename
    "audit cache": (audit_file, "write_arrow"),
}[step]
setattr(module, name, held(getattr(module, name)))
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("step", ["array", "text", "manifest", "rename"])
def test_an_index_build_killed_at_any_step_leaves_nothing(
    files: dict[str, Path], tmp_path: Path, step: str
) -> None:
    """SIGKILL at each write step of ``index build --out``: no folder appears;
    the next build removes the leftovers and gives the cold run's numbers."""
    out = tmp_path / "out"
    build = ["index", "build", *_train(files), "--out", str(out), "--quiet"]
    run = subprocess.Popen(
        [sys.executable, "-c", KILLED_AT, step, *map(str, build)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    kill_at(run, f"at {step}")
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] != []
    cli(*build)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    cli("index", "verify", out)
    cold, indexed = tmp_path / "cold.json", tmp_path / "indexed.json"
    cli("audit", *_train(files), *_test(files), "--json-out", cold, "--quiet")
    cli("audit", "--index", out, *_test(files), "--json-out", indexed, "--quiet")
    assert json.loads(cold.read_text())["exposure"] == json.loads(indexed.read_text())["exposure"]


def test_a_cache_write_killed_leaves_the_cold_numbers(
    files: dict[str, Path], tmp_path: Path
) -> None:
    cache = {"TAME_MT_CACHE": str(tmp_path / "cache")}
    args = ["audit", *_train(files), *_test(files), "--quiet", "--json-out"]
    run = subprocess.Popen(
        [sys.executable, "-c", KILLED_AT, "audit cache", *map(str, args), str(tmp_path / "x")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **cache},
    )
    kill_at(run, "at audit cache")
    cli(*args, tmp_path / "after.json", env=cache)
    cli(*args, tmp_path / "cold.json", env={"TAME_MT_CACHE": str(tmp_path / "cold")})
    after, cold = (json.loads((tmp_path / n).read_text()) for n in ("after.json", "cold.json"))
    assert after == cold
