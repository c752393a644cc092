"""The command line end to end, each command in a subprocess: its numbers equal
the Python API's, cached scoring equals fresh scoring, gzip round trips, and
damaged sidecars and indexes are refused with the right exit codes."""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.demo import example_corpus
from tame_mt_metric.digest import proof
from tame_mt_metric.errors import InvalidOptionError
from tests.processes import kill_at

SLICE = Path(__file__).resolve().parent.parent / "tame_mt_metric" / "data" / "flores200_slice"


def cli(
    *args: str | Path, check: int | None = 0, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "tame_mt_metric", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "TAME_MT_THREADS": "1", **(env or {})},
        timeout=300,
    )
    if check is not None:
        assert done.returncode == check, done.stderr + done.stdout
    return done


def _write(path: Path, lines: list[str]) -> Path:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = example_corpus()
    root = tmp_path_factory.mktemp("cli")
    refs = d["references"][:60]
    return {
        "train_src": _write(root / "train.sw.gz", d["train_sources"][:1500]),
        "train_tgt": _write(root / "train.zu", d["train_targets"][:1500]),
        "test_src": _write(root / "test.sw", d["test_sources"][:60]),
        "ref": _write(root / "test.zu", refs),
        "hyp": _write(root / "hyp_a.zu", [" ".join(r.split()[1:]) for r in refs]),
        "hyp_b": _write(root / "hyp_b.zu.gz", [" ".join(r.split()[:-1]) for r in refs]),
        "root": root,
    }


def _train(f: dict[str, Path]) -> list[str | Path]:
    return ["--train-src", f["train_src"], "--train-tgt", f["train_tgt"]]


def _test(f: dict[str, Path], hyp: str = "hyp") -> list[str | Path]:
    return ["--test-src", f["test_src"], "--ref", f["ref"], "--hyp", f[hyp]]


def _segments(files: dict[str, Path], path: Path, *extra: str | Path) -> Path:
    """``audit --segment-out path`` of the test set and its references."""
    cli(
        "audit",
        *_train(files),
        "--test-src",
        files["test_src"],
        "--ref",
        files["ref"],
        "--segment-out",
        path,
        "--quiet",
        *extra,
    )
    return path


def _json(path: Path) -> Any:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def _api(f: dict[str, Path], hyp: str = "hyp") -> dict[str, Any]:
    from tame_mt_metric.retrieval.inputs import read_lines

    train = TrainingCorpus(read_lines(f["train_src"]), read_lines(f["train_tgt"]))
    return score_tame(
        train, read_lines(f[hyp]), read_lines(f["ref"]), read_lines(f["test_src"]), TameConfig()
    ).report.as_json()


def _same_numbers(a: dict[str, Any], b: dict[str, Any]) -> None:
    for key in ("quality", "exposure", "bins", "generalization_gap", "signature", "warnings"):
        assert a[key] == b[key], key


def test_score_equals_the_api_and_writes_gzip(files: dict[str, Path]) -> None:
    out = files["root"]
    done = cli(
        "score",
        *_train(files),
        *_test(files),
        "--json-out",
        out / "r.json.gz",
        "--tm-out",
        out / "tm.zu.gz",
        "--segment-out",
        out / "seg.jsonl.gz",
    )
    report = _json(out / "r.json.gz")
    _same_numbers(report, _api(files))
    assert report["signature"] in done.stdout and "Scores by bin" in done.stdout
    with gzip.open(out / "tm.zu.gz", "rt", encoding="utf-8") as f:
        assert len(f.read().splitlines()) == 60
    with gzip.open(out / "seg.jsonl.gz", "rt", encoding="utf-8") as f:
        segment = json.loads(f.readline())
    assert "tm_hyp" not in segment and "source" not in segment  # no raw text by default
    assert (out / "seg.jsonl.gz.meta.json").is_file()


def test_cached_scoring_equals_fresh_scoring(files: dict[str, Path]) -> None:
    out = files["root"]
    _segments(files, out / "audit.jsonl", "--include-source-text")
    first = json.loads((out / "audit.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert "source" in first and "tm_hyp" not in first
    cli(
        "score-cached",
        "--segment-in",
        out / "audit.jsonl",
        "--ref",
        files["ref"],
        "--hyp",
        files["hyp"],
        "--json-out",
        out / "cached.json",
        "--quiet",
    )
    _same_numbers(_json(out / "cached.json"), _api(files))
    cli(
        "score-cached-batch",
        "--segment-in",
        out / "audit.jsonl",
        "--ref",
        files["ref"],
        "--system",
        f"a={files['hyp']}",
        "--system",
        f"b={files['hyp_b']}",
        "--json-out-dir",
        out / "batch",
        "--quiet",
    )
    _same_numbers(_json(out / "batch" / "b.tame.json"), _api(files, "hyp_b"))
    _same_numbers(_json(out / "batch" / "a.tame.json"), _api(files))


def test_cached_reports_keep_the_artifacts_backend(files: dict[str, Path]) -> None:
    """The spec's backend.artifact_backend: the strategy that made the segment file."""
    out = files["root"]
    _segments(files, out / "made.jsonl", "--json-out", out / "made.json")
    made = _json(out / "made.json")["backend"]["strategy"]
    meta = json.loads((out / "made.jsonl.meta.json").read_text(encoding="utf-8"))
    assert made == meta["strategy"] and made in ("indexed", "streaming")
    base: list[str | Path] = ["--segment-in", out / "made.jsonl", "--ref", files["ref"]]
    cli("score-cached", *base, "--hyp", files["hyp"], "--json-out", out / "c.json", "--quiet")
    batch = out / "made-batch"
    cli("score-cached-batch", *base, "--system", f"a={files['hyp']}", "--json-out-dir", batch)
    for backend in (_json(out / "c.json")["backend"], _json(batch / "a.tame.json")["backend"]):
        assert list(backend)[:6] == SPEC_BACKEND
        assert backend["artifact_backend"] == made
        assert (backend["name"], backend["resolved_mode"]) == ("cached", "cached")
        assert backend["index_reused"] is False


def test_cached_scoring_refuses_other_settings_or_references(files: dict[str, Path]) -> None:
    out = files["root"]
    _segments(files, out / "refuse.jsonl")
    base: list[str | Path] = ["score-cached", "--segment-in", out / "refuse.jsonl"]
    base += ["--hyp", files["hyp"]]
    done = cli(*base, "--ref", files["ref"], "--near-threshold", "0.8", check=1)
    assert "made with other settings (--near-threshold: 0.7 there, 0.8 now)" in done.stderr
    other_refs = _write(out / "other.zu", [f"x {i}" for i in range(60)])
    assert "made with other references" in cli(*base, "--ref", other_refs, check=1).stderr
    meta = out / "refuse.jsonl.meta.json"
    meta.write_text("{", encoding="utf-8")
    assert "not a readable segments sidecar" in cli(*base, "--ref", files["ref"], check=1).stderr
    assert done.stderr.count("\n") == 1  # one line, no traceback


def test_index_build_inspect_verify_and_score_from_it(files: dict[str, Path]) -> None:
    out = files["root"] / "idx"
    cli("index", "build", *_train(files), "--out", out, "--quiet")
    assert "training text: yes" in cli("index", "inspect", out).stdout
    assert ": ok (1,500 training pairs)" in cli("index", "verify", out).stdout
    cli(
        "score",
        "--index",
        out,
        *_test(files),
        "--json-out",
        files["root"] / "fromidx.json",
        "--quiet",
    )
    from_index = _json(files["root"] / "fromidx.json")
    fresh = _api(files)
    assert from_index["quality"] == fresh["quality"] and from_index["bins"] == fresh["bins"]
    packed = out / "source.packed.arrow"
    raw = bytearray(packed.read_bytes())
    raw[len(raw) // 2] ^= 0x10
    packed.write_bytes(bytes(raw))
    done = cli("index", "verify", out, check=1)
    assert "index array source.packed: checksum mismatch" in done.stderr


def test_training_corpus_from_saved_datasets(files: dict[str, Path]) -> None:
    import datasets

    from tame_mt_metric.retrieval.inputs import read_lines

    data = datasets.Dataset.from_dict(
        {"sw": read_lines(files["train_src"]), "zu": read_lines(files["train_tgt"])}
    )
    root = files["root"]
    data.save_to_disk(str(root / "saved"))
    data.to_parquet(str(root / "train.parquet"))
    data.to_json(str(root / "train.jsonl"))
    expected = _api(files)["quality"]
    for source in (root / "saved", root / "train.parquet", root / "train.jsonl"):
        cli(
            "score",
            "--train-dataset",
            source,
            "--source-column",
            "sw",
            "--target-column",
            "zu",
            *_test(files),
            "--json-out",
            root / "ds.json",
            "--quiet",
        )
        assert _json(root / "ds.json")["quality"] == expected, source


def test_tm_baseline(files: dict[str, Path]) -> None:
    out = files["root"]
    cli(
        "tm-baseline",
        *_train(files),
        "--test-src",
        files["test_src"],
        "--out",
        out / "tm.txt",
        "--metadata-out",
        out / "tm.jsonl",
        "--quiet",
    )
    lines = (out / "tm.txt").read_text(encoding="utf-8").splitlines()
    meta = [json.loads(line) for line in (out / "tm.jsonl").read_text().splitlines()]
    assert len(lines) == len(meta) == 60 and meta[0]["index"] == 0


def test_metrics_by_spaces_as_the_spec_writes_them_or_by_commas(files: dict[str, Path]) -> None:
    from tame_mt_metric.cli import build_parser
    from tame_mt_metric.cli.common import config_from

    base = ["score", "--test-src", "t", "--ref", "r", "--hyp", "h", "--metrics"]
    for given in (["chrf", "bleu"], ["chrf,bleu"], ["chrf,", "bleu"]):
        args = build_parser("score").parse_args([*base, *given])
        if "" in ",".join(given).split(","):
            with pytest.raises(InvalidOptionError, match="an empty item"):
                config_from(args)
        else:
            assert config_from(args).metrics == ("chrf", "bleu"), given
    out = files["root"] / "spaced.json"
    cli("score", *_train(files), *_test(files), "--metrics", "chrf", "bleu", "--json-out", out)
    assert list(_json(out)["quality"]["system"]) == ["chrf", "bleu"]


STAGE = re.compile(r"\[[^]]+\] \d+\.\d\d s")


def _stages(stderr: str) -> list[str]:
    """The stage names of --verbose's timing lines."""
    return [line.split("]")[0][1:] for line in stderr.splitlines() if STAGE.fullmatch(line)]


def test_verbose_times_the_stages_of_every_long_command(files: dict[str, Path]) -> None:
    """The spec's --verbose: stage timings on stderr, the outputs unchanged."""
    out = files["root"]
    segments = _segments(files, out / "timed.jsonl")
    tm = ["tm-baseline", *_train(files), "--test-src", files["test_src"], "--out", out / "tm.txt"]
    cached: list[str | Path] = ["--segment-in", segments, "--ref", files["ref"]]
    commands: list[list[str | Path]] = [
        ["score", *_train(files), *_test(files)],
        ["audit", *_train(files), "--test-src", files["test_src"], "--ref", files["ref"]],
        tm,
        ["score-cached", *cached, "--hyp", files["hyp"]],
        ["score-cached-batch", *cached, "--system", f"a={files['hyp']}"],
    ]
    for command in commands:
        quiet, verbose = cli(*command), cli(*command, "--verbose")
        assert len(_stages(verbose.stderr)) >= 2, command[0]
        assert not _stages(quiet.stderr)
        assert verbose.stdout == quiet.stdout, command[0]


def test_score_cached_checks_the_num_train_given(files: dict[str, Path]) -> None:
    """The spec's score-cached --num-train N: accepted when the segment file was
    made of a corpus of N rows, else a usage error naming both."""
    out = files["root"]
    segments = _segments(files, out / "counted.jsonl")
    cached: list[str | Path] = ["--segment-in", segments, "--ref", files["ref"], "--quiet"]
    one = ["score-cached", *cached, "--hyp", files["hyp"]]
    batch = ["score-cached-batch", *cached, "--system", f"a={files['hyp']}"]
    for command in (one, batch):
        cli(*command, "--num-train", "1500")
        wrong = cli(*command, "--num-train", "1499", check=2).stderr
        assert "--num-train: 1499" in wrong and "1500 rows" in wrong
        assert "--num-train" in cli(*command, "--num-train", "-3", check=2).stderr


def test_usage_and_data_errors(files: dict[str, Path]) -> None:
    assert (
        "--far-threshold: must lie in [0, 1], got 1.2"
        in cli("score", *_train(files), *_test(files), "--far-threshold", "1.2", check=2).stderr
    )
    assert (
        "an empty item"
        in cli(
            "score", *_train(files), *_test(files), "--leak-thresholds", "0.70,,0.85", check=2
        ).stderr
    )
    short = _write(files["root"] / "short.zu", ["one"])
    done = cli(
        "score",
        *_train(files),
        "--test-src",
        files["test_src"],
        "--ref",
        short,
        "--hyp",
        files["hyp"],
        check=1,
    )
    assert f"{short}: 1 lines, but {files['test_src']} has 60" in done.stderr
    assert "exactly one of" in cli("score", *_test(files), check=2).stderr
    assert "Traceback" in cli("score", *_test(files), "--verbose", check=2).stderr


def test_doctor_and_demo() -> None:
    out = cli("doctor").stdout
    assert "tame-mt-metric 0.1.0, core 0.1.0" in out and "spBLEU flores200" in out
    assert "TM-BLEU" in cli("demo").stdout


def test_flores_xsts_correlate_toxicity(tmp_path: Path) -> None:
    refs = (SLICE / "devtest" / "swh_Latn.devtest").read_text(encoding="utf-8").splitlines()
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    _write(outputs / "eng_Latn-swh_Latn.devtest.hyp", [" ".join(r.split()[:-1]) for r in refs])
    done = cli(
        "flores",
        "eval",
        "--flores",
        SLICE,
        "--outputs",
        outputs,
        "--metrics",
        "chrf++,chrf++_avg",
        "--json-out",
        tmp_path / "f.json",
    )
    assert "| eng_Latn-swh_Latn | out_of_english |" in done.stdout
    assert _json(tmp_path / "f.json")["averages"]["all"]["directions"] == 1
    corpus = _write(tmp_path / "web.en", [*refs[:3], "unrelated"])
    done = cli("flores", "audit", "--flores", SLICE, "--corpus", f"swh_Latn={corpus}")
    assert "| swh_Latn | 200 | 4 |" in done.stdout and "1.50%" in done.stdout
    scores = _write(
        tmp_path / "s.tsv", ["eng-zul\t1\ta\t4", "eng-zul\t1\tb\t5", "eng-zul\t2\ta\t3"]
    )
    calibration = _write(tmp_path / "c.tsv", ["eng-zul\t9\ta\t2", "eng-zul\t9\tb\t3"])
    done = cli("xsts", "calibrate", "--scores", scores, "--calibration", calibration)
    assert "| eng-zul | 2 | 3.750 | 2.500 |" in done.stdout
    bad = _write(tmp_path / "bad.tsv", ["eng-zul\t1\ta\t7"])
    assert (
        f"{bad}:1"
        in cli("xsts", "calibrate", "--scores", bad, "--calibration", calibration, check=1).stderr
    )
    table = _write(
        tmp_path / "t.tsv",
        ["direction\txsts\tchrf", "a\t1\t10", "b\t2\t30", "c\t3\t20", "d\t4\t40"],
    )
    done = cli("correlate", "--table", table, "--json-out", tmp_path / "c.json")
    assert math.isclose(_json(tmp_path / "c.json")["chrf"]["spearman"]["value"], 0.8)
    src = _write(tmp_path / "src.de", ["Guten Tag.", "Du Idiot!"])
    hyp = _write(tmp_path / "hyp.en", ["Hello, you idiot.", "You idiot!"])
    done = cli(
        "toxicity",
        "--src",
        src,
        "--hyp",
        hyp,
        "--source-lang",
        "deu_Latn",
        "--target-lang",
        "eng_Latn",
    )
    assert "added toxicity: 1 of 2 segments (50.00%)" in done.stdout and "0: idiot" in done.stdout


REPORT_KEYS = [
    "schema_version",
    "tame_version",
    "signature",
    "data",
    "backend",
    "quality",
    "exposure",
    "bins",
    "generalization_gap",
    "intervals",
    "curve",
    "warnings",
    "config",
]
SPEC_BACKEND = ["name", "native", "exact", "requested_mode", "resolved_mode", "index_reused"]


def test_a_source_only_audit(files: dict[str, Path]) -> None:
    """The spec's source-side audit: --train-src and --test-src alone give the
    source's exposure and the bins, in the report's structure."""
    out = files["root"]
    done = cli(
        "audit",
        "--train-src",
        files["train_src"],
        "--test-src",
        files["test_src"],
        "--json-out",
        out / "src.json",
        "--segment-out",
        out / "src.jsonl",
    )
    report = _json(out / "src.json")
    assert list(report) == REPORT_KEYS and list(report["backend"])[:6] == SPEC_BACKEND
    assert report["quality"] is None and report["generalization_gap"] is None
    assert report["exposure"]["target"] is None and report["exposure"]["pair"] is None
    assert report["data"]["num_test"] == 60 and report["data"]["num_train"] == 1500
    assert sum(b["count"] for b in report["bins"]) == 60
    assert all(b["system"] is None for b in report["bins"])
    full = _api(files)
    assert report["exposure"]["source"] == full["exposure"]["source"]
    assert [b["count"] for b in report["bins"]] == [b["count"] for b in full["bins"]]
    assert "source  mean" in done.stdout and "PairLeak" not in done.stdout
    first = json.loads((out / "src.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert set(first) == {"index", "source_exposure", "source_nn_index", "source_exact", "bin"}


def test_an_audits_report_is_the_score_reports_structure(files: dict[str, Path]) -> None:
    out = files["root"]
    _segments(files, out / "structure.jsonl", "--json-out", out / "audit.json")
    report, scored = _json(out / "audit.json"), _api(files)
    assert list(report) == list(scored) == REPORT_KEYS
    assert report["quality"] is None and report["generalization_gap"] is None
    assert report["exposure"] == scored["exposure"]
    assert [b["tm"] for b in report["bins"]] == [b["tm"] for b in scored["bins"]]
    assert all(b["system"] is None and b["delta_tm"] is None for b in report["bins"])
    assert list(report["backend"])[:6] == SPEC_BACKEND


def test_engine_ray_gives_the_same_report(files: dict[str, Path]) -> None:
    out = files["root"]
    cli(
        "score",
        *_train(files),
        *_test(files),
        "--engine",
        "ray",
        "--json-out",
        out / "ray.json",
        "--quiet",
    )
    on_ray, local = _json(out / "ray.json"), _api(files)
    _same_numbers(on_ray, local)
    assert on_ray["config"]["engine"] == "ray"


def _edit_segments(path: Path, how: str) -> None:
    meta_path = path.with_name(path.name + ".meta.json")
    lines = path.read_text(encoding="utf-8").splitlines()
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if how in ("fraction", "strings"):
        row = json.loads(lines[3])
        if how == "fraction":
            row["exact"]["source"][1] += 1
        else:
            row["exact"]["source"] = ["a", "b", "c", "d"]
        lines[3] = json.dumps(row)
    elif how == "duplicate":
        lines.insert(3, lines[3])
    elif how in ("num_train", "train_fingerprint", "signature"):
        meta[how] = 7 if how == "num_train" else "0" * 32
    else:  # a sidecar written by another version, consistent in itself
        meta["version"] = "0.0.9"
        meta["proof"] = proof(meta)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    meta_path.write_text(json.dumps(meta), encoding="utf-8")


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("fraction", "its lines differ from those it was written with"),
        ("strings", "edited-strings.jsonl:4: malformed segment (not a neighbour"),
        ("duplicate", "its lines differ from those it was written with"),
        ("num_train", "its fields differ from those it was written with"),
        ("train_fingerprint", "its fields differ from those it was written with"),
        ("signature", "its fields differ from those it was written with"),
        ("version", "made by tame-mt-metric 0.0.9, this is 0.1.0"),
    ],
)
def test_edited_segment_files_are_refused(files: dict[str, Path], how: str, message: str) -> None:
    out = files["root"]
    segments = out / f"edited-{how}.jsonl"
    _segments(files, segments)
    _edit_segments(segments, how)
    done = cli(
        "score-cached",
        "--segment-in",
        segments,
        "--ref",
        files["ref"],
        "--hyp",
        files["hyp"],
        check=1,
    )
    assert message in done.stderr and done.stderr.count("\n") == 1, done.stderr


KILLED_BEFORE_SIDECAR = """
import sys, time
from tame_mt_metric.cli import main, segments
def held(fields):
    print("segment lines written", flush=True)
    time.sleep(120)
segments.proof = held
sys.exit(main(sys.argv[1:]))
"""


def test_an_audit_killed_between_lines_and_sidecar_leaves_the_old_pair(
    files: dict[str, Path],
) -> None:
    """Segments rewritten for other references, the process killed (SIGKILL)
    after the lines and before their sidecar: the lines and the sidecar are
    renamed into place together, so the old pair is left whole and scores as
    before."""
    out = files["root"]
    segments = out / "killed.jsonl"
    audit = ["audit", *_train(files), "--test-src", files["test_src"], "--segment-out", segments]
    cli(*audit, "--ref", files["ref"], "--quiet")
    before = segments.read_bytes(), segments.with_name("killed.jsonl.meta.json").read_bytes()
    scored = cli("score-cached", "--segment-in", segments, *_test(files)[2:]).stdout
    other_refs = _write(out / "other-killed.zu", [f"y {i}" for i in range(60)])
    run = subprocess.Popen(
        [sys.executable, "-c", KILLED_BEFORE_SIDECAR, *map(str, audit), "--ref", str(other_refs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TAME_MT_THREADS": "1"},
    )
    kill_at(run, "segment lines written")
    after = segments.read_bytes(), segments.with_name("killed.jsonl.meta.json").read_bytes()
    assert after == before
    assert cli("score-cached", "--segment-in", segments, *_test(files)[2:]).stdout == scored


def _compared(f: dict[str, Path], baseline: str, test: str) -> dict[str, Any]:
    from tame_mt_metric import compare
    from tame_mt_metric.retrieval.inputs import read_lines

    train = TrainingCorpus(read_lines(f["train_src"]), read_lines(f["train_tgt"]))
    systems = {"a": read_lines(f["hyp"]), "b": read_lines(f["hyp_b"])}
    return compare(
        systems,
        read_lines(f["ref"]),
        read_lines(f["test_src"]),
        train,
        baseline,
        test=test,
        n_samples=50,
        n_bootstrap=30,
    ).as_dict()


@pytest.mark.parametrize(("baseline", "test"), [("a", "bs"), ("tm", "ar"), ("b", "bs-shift")])
def test_compare_and_cached_batch_paired_tests_equal_the_api(
    files: dict[str, Path], baseline: str, test: str
) -> None:
    out = files["root"] / f"compare-{baseline}-{test}"
    systems = ["--system", f"a={files['hyp']}", "--system", f"b={files['hyp_b']}"]
    settings = ["--paired-n", "50", "--n-bootstrap", "30", "--baseline", baseline]
    done = cli(
        "compare",
        *_train(files),
        "--test-src",
        files["test_src"],
        "--ref",
        files["ref"],
        *systems,
        "--test",
        test,
        *settings,
        "--paired-json-out",
        out / "compare.json",
    )
    want = _compared(files, baseline, test)
    assert _json(out / "compare.json") == want
    assert "Paired significance" in done.stdout and "whole" in done.stdout
    # The diagnostics do not depend on the interval settings.
    segments = _segments(files, out / "audit.jsonl", "--n-bootstrap", "7")
    cli(
        "score-cached-batch",
        "--segment-in",
        segments,
        "--ref",
        files["ref"],
        *systems,
        f"--paired-{test}",
        *settings,
        "--paired-json-out",
        out / "batch.json",
        "--quiet",
    )
    assert _json(out / "batch.json") == want


def test_compare_refuses_unknown_baselines_and_repeated_names(files: dict[str, Path]) -> None:
    base: list[str | Path] = ["compare", *_train(files), "--test-src", files["test_src"]]
    base += ["--ref", files["ref"], "--system", f"a={files['hyp']}"]
    done = cli(*base, "--baseline", "zz", check=2)
    assert "--baseline: 'zz' is neither a --system name nor 'tm'" in done.stderr
    done = cli(*base, "--system", f"a={files['hyp_b']}", check=2)
    assert "--system: a name is repeated" in done.stderr


def test_correlate_segments_equals_sacrebleu_sentence_scores_correlated(
    files: dict[str, Path],
) -> None:
    import sacrebleu

    from tame_mt_metric.flores.correlation import segment_correlation
    from tame_mt_metric.retrieval.inputs import read_lines

    refs, hyps = read_lines(files["ref"]), read_lines(files["hyp_b"])
    # A human score column beside another in a TSV (any numbers serve the plumbing).
    human = [float(len(h) % 7) + 0.5 * (i % 3) for i, h in enumerate(hyps)]
    table = files["root"] / "human.tsv"
    _write(table, ["id\tda", *(f"{i}\t{v}" for i, v in enumerate(human))])
    out = files["root"] / "segments-corr.json"
    args: list[str | Path] = ["correlate", "--segments", "--src", files["test_src"]]
    args += ["--ref", files["ref"], "--hyp", files["hyp_b"], "--scores", table]
    done = cli(*args, "--human", "da", "--n-bootstrap", "50", "--json-out", out)
    assert "| bleu | 60 |" in done.stdout
    got = _json(out)
    assert set(got) == {"bleu", "chrf++"}
    bleu = [sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hyps, refs, strict=True)]
    chrf = [
        sacrebleu.sentence_chrf(h, [r], word_order=2).score for h, r in zip(hyps, refs, strict=True)
    ]
    assert got["bleu"] == json.loads(json.dumps(segment_correlation(human, bleu, 50)))
    assert got["chrf++"] == json.loads(json.dumps(segment_correlation(human, chrf, 50)))
    plain = files["root"] / "human.txt"
    _write(plain, [str(v) for v in human[:-1]])
    done = cli(*args[:-1], plain, check=1)
    assert f"{plain}: 59 scores, {files['hyp_b']} has 60 lines" in done.stderr
    _write(plain, [*map(str, human[:-1]), "good"])
    done = cli(*args[:-1], plain, check=1)
    assert f"{plain}:60: the human score is not a number" in done.stderr
    done = cli("correlate", "--segments", "--hyp", files["hyp_b"], check=2)
    assert "--ref, --hyp and --scores are required" in done.stderr


def test_each_command_is_registered_by_the_module_named_for_it() -> None:
    import argparse
    import importlib

    from tame_mt_metric.cli import COMMANDS, build_parser

    for module, names in COMMANDS.items():
        sub = argparse.ArgumentParser().add_subparsers()
        common = argparse.ArgumentParser(add_help=False)
        importlib.import_module(f"tame_mt_metric.cli.{module}").register(sub, common)
        assert tuple(sub.choices) == names
    every = [n for names in COMMANDS.values() for n in names]
    parser = build_parser()
    (sub_action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(sub_action.choices) == every


def test_a_lookup_imports_no_scoring(tmp_path: Path) -> None:
    code = f"""
import sys
from tame_mt_metric.cli import main
assert main(["lookup", "--index", {str(tmp_path / "none")!r}, "a sentence"]) == 1
print(sorted(m for m in ("sacrebleu", "tame_mt_metric.report.html") if m in sys.modules))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
    assert "tame-mt-metric: error:" in run.stderr


def test_version_names_the_package_its_core_sacrebleu_and_python() -> None:
    import sacrebleu

    out = cli("--version").stdout.splitlines()
    assert out[0] == "tame-mt-metric 0.1.0"
    assert out[1].startswith("tame-mt-core ")
    assert out[2] == f"sacrebleu {sacrebleu.__version__}"
    assert out[3] == f"CPython {sys.version.split()[0]}"


def test_a_mistyped_option_names_the_nearest_one(files: dict[str, Path]) -> None:
    # --hpy for --hyp: argparse would print the whole usage for the missing --hyp.
    test: list[str | Path] = ["--test-src", files["test_src"], "--ref", files["ref"]]
    test += ["--hpy", files["hyp"]]
    done = cli("score", *_train(files), *test, check=2)
    assert done.stderr == (
        "tame-mt-metric score: error: unknown option --hpy; did you mean --hyp? "
        "(tame-mt-metric score --help lists its options)\n"
    )
    nested = cli("flores", "eval", "--slice", check=2).stderr
    assert "tame-mt-metric flores eval: error: unknown option --slice; did you mean --split?" in (
        nested
    )
    # A prefix argparse resolves is no unknown option: argparse reads it as --hyp.
    prefix = cli("score", *_train(files), "--hy", check=2).stderr
    assert "unknown option" not in prefix and "argument --hyp: expected one argument" in prefix


def test_a_reader_that_leaves_ends_the_command_quietly() -> None:
    for args in (["doctor"], ["--version"]):
        with subprocess.Popen(
            [sys.executable, "-m", "tame_mt_metric", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            proc.stdout.close()  # ``| head`` that has read all it wanted
            err = proc.stderr.read()
            assert proc.wait(timeout=120) == 141, err
        assert err == ""


def test_errors_speak_the_command_lines_words(files: dict[str, Path]) -> None:
    test: list[str | Path] = ["--test-src", files["test_src"], "--hyp", files["hyp"]]
    folder = cli("score", *_train(files), *test, "--ref", ".", check=1).stderr
    assert folder == "tame-mt-metric: error: --ref .: a folder, not a file\n"
    far: list[str | Path] = ["--ref", files["ref"], "--far-threshold", "1.5"]
    wide = cli("score", *_train(files), *test, *far, check=2).stderr
    assert wide == "tame-mt-metric: error: --far-threshold: must lie in [0, 1], got 1.5\n"
    crossed = cli("score", *_train(files), *test, *far[:3], "0.8", check=2).stderr
    assert crossed == "tame-mt-metric: error: --far-threshold 0.80 exceeds --near-threshold 0.70\n"
    whole = files["train_src"].read_bytes()
    cut = files["root"] / "cut.sw.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    train: list[str | Path] = ["--train-src", cut, "--train-tgt", files["train_tgt"]]
    truncated = cli("score", *train, *test, "--ref", files["ref"], check=1).stderr
    assert truncated.startswith(
        f"tame-mt-metric: error: --train-src {cut}: a truncated gzip file: it ends after line "
    )
    no_index = cli("score", "--index", files["root"], *test, "--ref", files["ref"], check=1).stderr
    assert no_index == (
        f"tame-mt-metric: error: --index {files['root']}: not an index folder (it holds no "
        "manifest.json; `tame-mt-metric index build --out` makes one)\n"
    )


def test_the_flores_model_message_names_the_option(tmp_path: Path) -> None:
    model = tmp_path / "spm_model" / "flores200.model"
    done = cli(
        "flores", "eval", "--flores", SLICE, "--outputs", tmp_path, "--spm-model", model, check=1
    )
    assert f"{model} does not exist (given by --spm-model)" in done.stderr
    assert "give its path with the --spm-model option" in done.stderr
    assert "spm_model option" not in done.stderr and "by spm_model" not in done.stderr


def test_toxicity_takes_a_bibliographic_language_code(tmp_path: Path) -> None:
    src = _write(tmp_path / "src.en", ["Good day.", "You fool."])
    hyp = _write(tmp_path / "hyp.de", ["Guten Tag, Idiot.", "Du Narr."])
    args: list[str | Path] = [
        "toxicity",
        "--src",
        src,
        "--hyp",
        hyp,
        "--source-lang",
        "en",
        "--target-lang",
    ]
    done = cli(*args, "ger")
    assert "added toxicity: 1 of 2 segments (50.00%)" in done.stdout
    named = cli(*args, "German", check=2).stderr
    assert "--target-lang: 'German' is not a language code" in named and "'deu_Latn'" in named


def _human(files: dict[str, Path], **options: Any) -> tuple[str, Any]:
    from tame_mt_metric.cli.human import render_report
    from tame_mt_metric.retrieval.inputs import read_lines

    train = TrainingCorpus(read_lines(files["train_src"]), read_lines(files["train_tgt"]))
    config = TameConfig.from_options(n_bootstrap=0, **options)
    refs, hyps = read_lines(files["ref"]), read_lines(files["hyp"])
    report = score_tame(train, hyps, refs, read_lines(files["test_src"]), config).report
    return render_report(report), report


def test_the_text_report_names_chrf_by_its_word_order_and_once_per_number(
    files: dict[str, Path],
) -> None:
    from tame_mt_metric.report.labels import exposure_text, rate_text, score_text

    text, report = _human(files, metrics=("bleu", "chrf", "chrf++", "chrf++_avg"))
    quality = text.split("\n\n")[0].splitlines()
    assert report.system["chrf"] == report.system["chrf++"]  # one number, two keys
    labels = [line.split("  ")[1] for line in quality[3:]]
    assert labels == ["BLEU", "chrF++ (chrf = chrf++)", "chrF++ (sentence mean)"]
    chrf_row = quality[4].split()
    expected = [report.system["chrf"], report.tm["chrf"], report.delta_tm["chrf"]]
    assert chrf_row[-3:] == [score_text(v) for v in expected]
    assert " chrf " not in text and " chrf++ " not in text  # JSON keys only in the merged label
    source = report.summary.source
    assert f"mean {exposure_text(source.mean):>6}   exact overlap" in text
    assert f"{'PairLeak@0.70':<16} {rate_text(report.summary.pair_leak['0.70']):>8}" in text
    # chrF at word order 0 is chrF2: another number, its own row, beside chrF++.
    text, report = _human(files, metrics=("chrf", "chrf++"), chrf_word_order=0)
    assert report.system["chrf"] != report.system["chrf++"]
    rows = [line.split()[0] for line in text.split("\n\n")[0].splitlines()[3:]]
    assert rows == ["chrF2", "chrF++"]
    assert "TM-chrF2" in text and "TM-chrF++" in text


def test_the_comparison_table_names_chrf_by_its_word_order(files: dict[str, Path]) -> None:
    from tame_mt_metric.cli.compare_command import render_comparison
    from tame_mt_metric.report.labels import score_text
    from tame_mt_metric.report.significance import compare
    from tame_mt_metric.retrieval.inputs import read_lines

    train = TrainingCorpus(read_lines(files["train_src"]), read_lines(files["train_tgt"]))
    hyps = {"a": read_lines(files["hyp"]), "b": read_lines(files["hyp_b"])}
    found = compare(
        hyps,
        [[r] for r in read_lines(files["ref"])],
        read_lines(files["test_src"]),
        train,
        "a",
        n_samples=20,
        metrics=("bleu", "chrf", "chrf++"),
        n_bootstrap=0,
    )
    lines = render_comparison(found).splitlines()
    whole = [line for line in lines if line.startswith("  whole ")]
    assert [line.split()[2] for line in whole] == ["BLEU", "chrF++"] * 3
    assert all("(chrf = chrf++)" in line for line in whole[1::2])
    b = found.whole["b"]["chrf"]
    interval = f"[{score_text(b.ci_low)}, {score_text(b.ci_high)}]"
    assert whole[3].split()[6:9] == [score_text(b.score), *interval.split()]


def test_the_demo_writes_exposures_rates_and_scores_as_the_reports_do(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import re

    from tame_mt_metric.demo import main as demo

    demo([])
    out = capsys.readouterr().out
    for side in ("source", "target", "pair"):
        assert re.search(rf"^  {side} exposure \(mean\) +0\.\d{{3}}$", out, re.M), out
        assert re.search(rf"^  {side} exact overlap +\d+\.\d\d%$", out, re.M), out
    assert re.search(r"^  PairLeak@0\.70 +\d+\.\d\d%$", out, re.M), out
    assert re.search(r"^    far +\d+ +\d+\.\d\d%$", out, re.M), out
    assert re.search(r"^    TM-BLEU +\d+\.\d\d    TM-chrF\+\+ +\d+\.\d\d$", out, re.M), out
