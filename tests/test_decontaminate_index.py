"""Decontamination through a saved index: the same answer as the pass over the
corpus on every rule (random corpora and settings, and the bundled real data
through ``index build`` and ``decontaminate --index``), and an index of other
settings, of another corpus or naming no corpus refused with a typed error."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings

from tame_mt_metric import IndexFileError, RetrievalConfig, TextFiles, decontaminate
from tame_mt_metric.cache.corpus_file import open_with_text
from tame_mt_metric.retrieval.decontaminate import RULES, evaluation_sets
from tame_mt_metric.retrieval.exposure import TrainingIndex
from tame_mt_metric.retrieval.reference import brute_force_decontaminate
from tests.test_decontaminate import Case, _flores, _planted_corpus, case_test_sets, cases


def _index_of(sources: list[str], targets: list[str], config: RetrievalConfig) -> TrainingIndex:
    """An index of the corpus naming its fingerprint, as a saved one does."""
    built = TrainingIndex.build(sources, targets, config)
    fingerprint = decontaminate(
        {"source": sources, "target": targets}, ["x"], threshold=1, config=config, progress=False
    ).fingerprint
    return TrainingIndex(built._core, built.config, fingerprint)


@settings(max_examples=150)
@given(cases())
def test_the_index_answers_as_the_pass(case: Case) -> None:
    """Every rule, threshold (1 included), several test sets and references, any
    settings: the index's answer is the pass's, field for field."""
    train, _, _, threshold, by, config = case
    sources, references = case_test_sets(case)
    corpus = {"source": [u for u, _ in train], "target": [v for _, v in train]}
    index = _index_of(corpus["source"], corpus["target"], config)

    def run(index: TrainingIndex | None) -> object:
        return decontaminate(
            corpus,
            sources,
            references,
            threshold=threshold,
            by=by,
            config=config,
            progress=False,
            index=index,
        )

    assert run(index) == run(None)


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The planted real corpus as text files and its index from ``index build``."""
    from tame_mt_metric.cli import main

    folder = tmp_path_factory.mktemp("saved")
    train_sw, train_zu, _ = _planted_corpus()
    src = _write_lines(folder / "train.sw", train_sw)
    tgt = _write_lines(folder / "train.zu", train_zu)
    index = folder / "index"
    words = ["index", "build", "--train-src", src, "--train-tgt", tgt, "--out", index, "--quiet"]
    assert main([str(w) for w in words]) == 0
    return src, tgt, index


@pytest.mark.parametrize("by", RULES)
@pytest.mark.parametrize("threshold", [Fraction(1), Fraction(3, 5)])
def test_a_saved_index_of_real_data_answers_as_the_pass(
    saved: tuple[Path, Path, Path], by: str, threshold: Fraction
) -> None:
    src, tgt, folder = saved
    index = open_with_text(folder)
    sources, references = _flores()
    config = RetrievalConfig(block_rows=97)
    with_index = decontaminate(
        TextFiles(src, tgt), sources, references, threshold=threshold, by=by,
        config=config, progress=False, index=index,
    )  # fmt: skip
    without = decontaminate(
        TextFiles(src, tgt), sources, references, threshold=threshold, by=by,
        config=config, progress=False,
    )  # fmt: skip
    assert with_index == without
    assert with_index.removed, "the planted rows reach every threshold on every rule"
    train_sw, train_zu, _ = _planted_corpus()
    removed, rules = brute_force_decontaminate(
        train_sw, train_zu, evaluation_sets(sources, references), threshold, by, config
    )
    assert (with_index.removed, with_index.removed_by_rule) == (removed, rules)


def test_an_index_of_other_settings_is_refused(saved: tuple[Path, Path, Path]) -> None:
    src, tgt, folder = saved
    index = open_with_text(folder)
    with pytest.raises(IndexFileError, match="built with norm"):
        decontaminate(
            TextFiles(src, tgt), ["a"], threshold=1, progress=False, index=index,
            config=RetrievalConfig(ngram_orders=(2, 3)),
        )  # fmt: skip


def test_an_index_of_another_corpus_is_refused(
    saved: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    src, tgt, folder = saved
    index = open_with_text(folder)
    lines = src.read_text(encoding="utf-8").splitlines()
    other = _write_lines(tmp_path / "other.sw", [*lines[:-1], lines[-1] + "!"])
    with pytest.raises(IndexFileError, match="indexes another corpus"):
        decontaminate(TextFiles(other, tgt), ["a"], threshold=1, progress=False, index=index)
    shorter = _write_lines(tmp_path / "shorter.sw", lines[:-1])
    shorter_tgt = _write_lines(
        tmp_path / "shorter.zu", tgt.read_text(encoding="utf-8").splitlines()[:-1]
    )
    with pytest.raises(IndexFileError, match="indexes another corpus"):
        decontaminate(
            TextFiles(shorter, shorter_tgt), ["a"], threshold=1, progress=False, index=index
        )


def test_an_index_naming_no_corpus_is_refused() -> None:
    index = TrainingIndex.build(["a red house"], ["x"])
    with pytest.raises(IndexFileError, match="names no corpus fingerprint"):
        decontaminate(
            {"source": ["a red house"], "target": ["x"]}, ["a red house"], threshold=1,
            progress=False, index=index,
        )  # fmt: skip


def _command(src: Path, tgt: Path, out: Path, *extra: str | Path) -> list[str]:
    sources, references = _flores()
    names = list(sources)[:2]
    words: list[str | Path] = ["decontaminate", "--train-src", src, "--train-tgt", tgt]
    for name in names:
        test = _write_lines(out.parent / f"{name}.src", sources[name])
        ref = _write_lines(out.parent / f"{name}.ref", references[name])
        words += ["--test-src", test, "--ref", ref]
    words += ["--out-src", out / "kept.sw", "--out-tgt", out / "kept.zu"]
    words += ["--removed-out", out / "removed.jsonl", "--json-out", out / "summary.json"]
    return [str(w) for w in [*words, "--threshold", "0.6", "--quiet", *extra]]


def test_the_command_with_index_writes_what_it_writes_without(
    saved: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    from tame_mt_metric.cli import main

    src, tgt, folder = saved
    outputs = {}
    runs: list[tuple[str, list[str | Path]]] = [("pass", []), ("index", ["--index", folder])]
    for name, extra in runs:
        out = tmp_path / name
        assert main(_command(src, tgt, out, *extra)) == 0
        outputs[name] = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    assert outputs["index"] == outputs["pass"]
    assert json.loads(outputs["index"]["summary.json"])["rows_removed"] > 0


def test_the_command_refuses_an_index_of_other_files(
    saved: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tame_mt_metric.cli import main

    src, tgt, folder = saved
    lines = tgt.read_text(encoding="utf-8").splitlines()
    other = _write_lines(tmp_path / "other.zu", [lines[0] + " x", *lines[1:]])
    out = tmp_path / "out"
    assert main(_command(src, other, out, "--index", folder)) != 0
    assert "indexes another corpus" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())
