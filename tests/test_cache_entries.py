"""The cache: audits and indexes are reused only when they answer exactly what
a fresh computation answers; anything damaged is rebuilt or refused; concurrent
processes build an index once; a killed build leaves nothing trusted."""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tame_mt_metric import (
    CacheWarning,
    IndexFileError,
    RetrievalConfig,
    TameConfig,
    TrainingCorpus,
    TrainingIndex,
    score_tame,
)
from tame_mt_metric.cache.entries import (
    CacheOptions,
    cached_index,
    clear,
    list_entries,
    main,
    remove,
)
from tame_mt_metric.cache.index_files import read_index
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.report import audit
from tests.processes import FAULT_SEEDS, kill_at

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def data() -> dict[str, list[str]]:
    d = example_corpus()
    d["predictions"] = [" ".join(r.split()[::2]) for r in d["references"]]
    return d


@pytest.fixture(scope="module")
def corpus(data: dict[str, list[str]]) -> TrainingCorpus:
    return TrainingCorpus(data["train_sources"], data["train_targets"])


def _score(
    corpus: TrainingCorpus,
    data: dict[str, list[str]],
    cache: CacheOptions,
    n: int = 400,
    **options: Any,
) -> Any:
    return score_tame(
        corpus,
        data["predictions"][:n],
        data["references"][:n],
        data["test_sources"][:n],
        TameConfig.from_options(**options),
        cache=cache,
    )


def _same_fields(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(
        (isinstance(v, float) and math.isnan(v) and math.isnan(b[k])) or v == b[k]
        for k, v in a.items()
    )


@pytest.mark.parametrize("strategy", ["streaming", "indexed"])
def test_a_cached_audit_answers_what_a_fresh_one_does(
    tmp_path: Path, corpus: TrainingCorpus, data: dict[str, list[str]], strategy: str
) -> None:
    cache = CacheOptions(cache_dir=tmp_path)
    fresh = _score(corpus, data, CacheOptions(enabled=False), strategy=strategy)
    first = _score(corpus, data, cache, strategy=strategy)
    again = _score(corpus, data, cache, strategy=strategy)
    assert not first.report.backend["audit_cached"] and again.report.backend["audit_cached"]
    for result in (first, again):
        assert _same_fields(result.report.fields(), fresh.report.fields())
        assert result.segments == fresh.segments
    kinds = sorted(e.kind for e in list_entries(tmp_path))
    assert kinds == (["audit", "index"] if strategy == "indexed" else ["audit"])


def test_new_predictions_reuse_the_audit_and_new_references_do_not(
    tmp_path: Path, corpus: TrainingCorpus, data: dict[str, list[str]]
) -> None:
    cache = CacheOptions(cache_dir=tmp_path)
    _score(corpus, data, cache, n=50)
    other = dict(data, predictions=data["references"])
    assert _score(corpus, other, cache, n=50).report.backend["audit_cached"]
    changed = dict(data, references=[*data["references"][:49], "Kunye."])
    result = _score(corpus, changed, cache, n=50)
    assert not result.report.backend["audit_cached"]
    fresh = _score(corpus, changed, CacheOptions(enabled=False), n=50)
    assert _same_fields(result.report.fields(), fresh.report.fields())
    assert not _score(corpus, data, cache, n=50, lowercase=True).report.backend["audit_cached"]


def test_a_cached_audit_keeps_the_reference_of_each_pair(
    tmp_path: Path, corpus: TrainingCorpus, data: dict[str, list[str]]
) -> None:
    n = 40
    sources = data["test_sources"][:n]
    # Another item's reference first: most pairs reach their maximum on the second.
    refs = [[data["references"][(i + 1) % n], data["references"][i]] for i in range(n)]
    config = TameConfig.from_options()
    cache = CacheOptions(cache_dir=tmp_path)
    fresh = audit.run_audit(corpus, sources, refs, config, CacheOptions(enabled=False))
    audit.run_audit(corpus, sources, refs, config, cache)
    audit._RECENT.clear()  # as in a new process: read back from the file
    cached = audit.run_audit(corpus, sources, refs, config, cache)
    assert cached.from_cache and cached.exposures.items == fresh.exposures.items
    assert {e.pair.reference for e in fresh.exposures if e.pair} == {0, 1}


def test_a_damaged_audit_is_recomputed_with_a_warning(
    tmp_path: Path, corpus: TrainingCorpus, data: dict[str, list[str]]
) -> None:
    cache = CacheOptions(cache_dir=tmp_path)
    expected = _score(corpus, data, cache, n=40).report.fields()
    (entry,) = [e for e in list_entries(tmp_path) if e.kind == "audit"]
    entry.path.write_bytes(entry.path.read_bytes()[:300])
    audit._RECENT.clear()  # as in a new process: the file is all there is
    with pytest.warns(CacheWarning, match="recomputing the cached audit"):
        result = _score(corpus, data, cache, n=40)
    assert _same_fields(result.report.fields(), expected)


def _edit(path: Path, what: str) -> None:
    """A value changed, the key metadata kept: what a byte flip or a hand edit
    of one cell (or of the corpus size recorded beside the key) can do."""
    table = pa.ipc.open_file(pa.BufferReader(path.read_bytes())).read_all()  # not mapped
    if what == "cell":
        column = table.column("source_overlap").to_pylist()
        column[3] += 1
        array = pa.array(column, pa.uint64())
        table = table.set_column(
            table.column_names.index("source_overlap"), "source_overlap", array
        )
    else:
        meta = dict(table.schema.metadata or {})
        table = table.replace_schema_metadata({**meta, b"num_train": b"7"})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


@pytest.mark.parametrize("seed", FAULT_SEEDS)
def test_any_damage_to_a_cached_audit_gives_the_cold_numbers(
    tmp_path: Path, corpus: TrainingCorpus, data: dict[str, list[str]], seed: int
) -> None:
    """Seeded damage past the header (byte flips, zeroed or repeated bytes, a
    cell edited under the same key, a folder in the file's place; damaged
    offsets once crashed pyarrow's reader): the next call in a new process returns
    the numbers of a cold run, with a warning whenever it noticed."""
    cache = CacheOptions(cache_dir=tmp_path)
    cold = _score(corpus, data, CacheOptions(enabled=False), n=40)
    _score(corpus, data, cache, n=40)
    (entry,) = [e for e in list_entries(tmp_path) if e.kind == "audit"]
    rng = random.Random(seed)
    if seed in (0, 2):
        _edit(entry.path, "cell" if seed == 0 else "num_train")
    elif seed == 1:
        entry.path.unlink()
        entry.path.mkdir()
    else:  # bits flipped, bytes zeroed or repeated: offsets and lengths among them
        raw = bytearray(entry.path.read_bytes())
        at = rng.randrange(64, len(raw))
        if seed % 3 == 0:
            raw[at : at + 64] = bytes(len(raw[at : at + 64]))
        elif seed % 3 == 1:
            raw[at:at] = raw[at : at + rng.randint(1, 256)]
        else:
            for _ in range(rng.randint(1, 4)):
                raw[rng.randrange(64, len(raw))] ^= 1 << rng.randrange(8)
        entry.path.write_bytes(bytes(raw))
    audit._RECENT.clear()  # as in a new process: the file is all there is
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _score(corpus, data, cache, n=40)
    assert _same_fields(result.report.fields(), cold.report.fields())
    assert result.segments == cold.segments
    if seed < 3:
        assert [w for w in caught if issubclass(w.category, CacheWarning)]
    audit._RECENT.clear()
    assert _score(corpus, data, cache, n=40).report.backend["audit_cached"]  # whole again


def _index_folder(root: Path) -> Path:
    (entry,) = [e for e in list_entries(root) if e.kind == "index"]
    return entry.path


def _damage(folder: Path, how: str) -> None:
    packed = folder / "source.packed.arrow"
    raw = bytearray(packed.read_bytes())
    if how == "flip":
        raw[len(raw) // 2] ^= 0x40
        packed.write_bytes(bytes(raw))
    elif how == "truncate":
        packed.write_bytes(bytes(raw[: len(raw) // 2]))
    elif how == "foreign":
        packed.write_bytes((folder / "target.packed.arrow").read_bytes())
    elif how == "manifest":
        (folder / "manifest.json").write_text("{", encoding="utf-8")
    elif how == "manifest-list":
        (folder / "manifest.json").write_text("[]", encoding="utf-8")
    elif how in ("rows-negative", "rows-huge", "checksum-huge"):
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        if how == "checksum-huge":
            manifest["arrays"][0]["xxh3_64"] = 2**64
        else:
            manifest["rows"] = -1 if how == "rows-negative" else 2**70
        (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    elif how == "file":
        shutil.rmtree(folder)
        folder.write_text("not an index", encoding="utf-8")
    else:
        (folder / "target.sizes.arrow").unlink()


DAMAGE = ["flip", "truncate", "foreign", "manifest", "missing", "manifest-list"]
DAMAGE += ["rows-negative", "rows-huge", "checksum-huge", "file"]


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_index_is_refused_or_rebuilt(
    tmp_path: Path, corpus: TrainingCorpus, data: dict[str, list[str]], how: str
) -> None:
    config = RetrievalConfig(strategy="indexed")
    cache = CacheOptions(cache_dir=tmp_path)
    built = cached_index(corpus, config, cache)
    expected = built.find_exposures(data["test_sources"][:30], data["references"][:30])
    del built
    folder = _index_folder(tmp_path)
    _damage(folder, how)
    with pytest.raises(IndexFileError):
        read_index(folder, config)
    with pytest.warns(CacheWarning, match="rebuilding the cached index"):
        rebuilt = cached_index(corpus, config, cache)
    again = rebuilt.find_exposures(data["test_sources"][:30], data["references"][:30])
    assert again.items == expected.items
    read_index(folder, config)  # whole again


def test_an_index_is_read_only_with_its_own_settings(
    tmp_path: Path, corpus: TrainingCorpus
) -> None:
    cached_index(corpus, RetrievalConfig(), CacheOptions(cache_dir=tmp_path))
    with pytest.raises(IndexFileError, match="built with"):
        read_index(_index_folder(tmp_path), RetrievalConfig(lowercase=True))


@pytest.mark.parametrize("rows", [10, None], ids=["fewer-rows", "same-rows"])
def test_an_index_of_another_corpus_is_rebuilt(
    tmp_path: Path, corpus: TrainingCorpus, data: dict[str, list[str]], rows: int | None
) -> None:
    """A train_key kept while the corpus behind it changes, or another corpus's
    index of the same size copied over the entry: found by the fingerprint."""
    if rows is None:  # the same row count, other text
        other = TrainingCorpus(corpus.sources[::-1], corpus.targets[::-1])
    else:
        other = TrainingCorpus(corpus.sources[:rows], corpus.targets[:rows])
    cache = CacheOptions(cache_dir=tmp_path, train_key="bible")
    cached_index(other, RetrievalConfig(), cache)
    with pytest.warns(CacheWarning, match="indexes another corpus"):
        index = cached_index(corpus, RetrievalConfig(), cache)
    fresh = TrainingIndex.build(corpus.sources, corpus.targets)
    test, refs = data["test_sources"][:30], data["references"][:30]
    assert index.find_exposures(test, refs).items == fresh.find_exposures(test, refs).items


def test_list_remove_clear(
    tmp_path: Path,
    corpus: TrainingCorpus,
    data: dict[str, list[str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _score(corpus, data, CacheOptions(cache_dir=tmp_path), n=20, strategy="indexed")
    entries = list_entries(tmp_path)
    assert sorted(e.kind for e in entries) == ["audit", "index"]
    assert all(e.nbytes > 0 and e.complete for e in entries)
    main(["--cache-dir", str(tmp_path), "list"])
    out = capsys.readouterr().out
    assert out.startswith(f"{tmp_path}: 2 entries") and entries[0].name in out
    assert remove(entries[0].name, tmp_path).name == entries[0].name
    assert len(list_entries(tmp_path)) == 1
    (tmp_path / "index" / "x.tmp-1-abc").mkdir()
    assert not next(e for e in list_entries(tmp_path) if e.name == "x.tmp-1-abc").complete
    assert len(clear(tmp_path)) == 2 and list_entries(tmp_path) == []
    with pytest.raises(ValueError, match="no such cache entry"):
        remove("nothing", tmp_path)


def _python(script: str, cache: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script],
        env={**__import__("os").environ, "TAME_MT_CACHE": str(cache), "TAME_MT_THREADS": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


COMPUTE = """
from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.cache import entries as cache
from tame_mt_metric.demo import example_corpus
d = example_corpus()
train = TrainingCorpus(d["train_sources"], d["train_targets"])
r = score_tame(train, d["references"][:100], d["references"][:100], d["test_sources"][:100],
               TameConfig(strategy="indexed"))
print(cache.BUILDS["index"], r.report.fields()["source_exposure_mean"], r.segments[7])
"""


@pytest.mark.parametrize("processes", [4, 8])
def test_processes_on_a_cold_cache_build_the_index_once(tmp_path: Path, processes: int) -> None:
    runs = [_python(COMPUTE, tmp_path) for _ in range(processes)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert all(run.returncode == 0 for run in runs), [err for _, err in outputs]
    builds = [int(out.split(" ", 1)[0]) for out, _ in outputs]
    assert sum(builds) == 1
    assert len({out.split(" ", 1)[1] for out, _ in outputs}) == 1  # identical results
    assert len([e for e in list_entries(tmp_path) if e.kind == "index"]) == 1


SLOW_WRITE = """
import time
from tame_mt_metric.cache import index_files as index_store
real = index_store._write_array
def slow(path, *args):
    real(path, *args)
    print("wrote", path.name, flush=True)
    time.sleep(120)
index_store._write_array = slow
"""


def test_a_build_killed_half_way_leaves_nothing_trusted(tmp_path: Path) -> None:
    kill_at(_python(SLOW_WRITE + COMPUTE, tmp_path), "wrote")
    (leftover,) = list_entries(tmp_path)
    assert not leftover.complete and ".tmp-" in leftover.name
    done = _python(COMPUTE, tmp_path)
    out, err = done.communicate(timeout=300)
    assert done.returncode == 0, err
    assert out.startswith("1 ")  # the half-written folder was not used
    # ...and was removed by the next build, its process being dead.
    assert not leftover.path.exists()
    assert sorted(e.complete for e in list_entries(tmp_path)) == [True, True]


SLOW_AUDIT = """
import os, time
real_replace = os.replace
def replace(src, dst):
    if os.path.basename(os.path.dirname(dst)) == "audit":
        print("wrote", os.path.basename(src), flush=True)
        time.sleep(120)
    real_replace(src, dst)
os.replace = replace
"""


def test_an_audit_killed_before_its_rename_leaves_nothing_trusted(tmp_path: Path) -> None:
    """Killed (SIGKILL) with the audit file written under its temporary name,
    at the step this test picks: the next process does not read it, computes
    the audit again and gives the same numbers as an undisturbed run."""
    kill_at(_python(SLOW_AUDIT + COMPUTE, tmp_path), "wrote")
    audits = [e for e in list_entries(tmp_path) if e.kind == "audit"]
    assert [e.complete for e in audits] == [False]
    done = _python(COMPUTE, tmp_path)
    out, err = done.communicate(timeout=300)
    assert done.returncode == 0, err
    clean = _python(COMPUTE, tmp_path / "clean")
    assert out.split(" ", 1)[1] == clean.communicate(timeout=300)[0].split(" ", 1)[1]
    audits = [e for e in list_entries(tmp_path) if e.kind == "audit"]
    assert sorted(e.complete for e in audits) == [False, True]
