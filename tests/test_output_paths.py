"""No command writes over what it reads: the whole matrix of (command, output
option, input option), built from the parser itself, so that an option added
later is in it; and the ways two paths can name one file (a symlink, ``..``,
a hard link), a file inside a folder that is read (a saved index, a dataset,
the cache), the files written beside an output (a segment file's sidecar, a
folder of reports), outputs that alias each other, and two ``index build``
at once."""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tame_mt_metric.cli import build_parser, main
from tame_mt_metric.cli.path_options import JSON_OUT_DIR, PathOption
from tame_mt_metric.errors import OutputExistsError, OutputPathError
from tame_mt_metric.files import NamedPath, refuse_overwrites, rename_folder

# Values for the required options that name no path.
FILLERS = {"threshold": "0.5", "source_lang": "eng_Latn", "target_lang": "fra_Latn"}

# Options whose names say that they name a file or a folder: each must declare
# its role (a ``PathOption`` type), or the rule could not see it.
PATH_WORDS = (
    "out", "dir", "src", "tgt", "ref", "hyp", "index", "dataset", "model", "segment-in",
    "partial", "system", "corpus", "flores", "lists", "scores", "table", "calibration",
    "folder",
)  # fmt: skip
NOT_PATHS = {"--include-reference-text", "--include-hyp-text", "--include-source-text",
             "--include-neighbor-text", "--output-schema", "--segments"}  # fmt: skip


def _leaves(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _leaves(sub, (*words, name))
            return
    yield words, parser


COMMANDS = list(_leaves(build_parser()))


def _name(action: argparse.Action) -> str:
    return next((o for o in action.option_strings if o.startswith("--")), action.dest)


def _path_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if isinstance(a.type, PathOption)]


@pytest.mark.parametrize(("words", "parser"), COMMANDS, ids=[" ".join(w) for w, _ in COMMANDS])
def test_every_path_option_declares_its_role(
    words: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    for action in parser._actions:
        name = _name(action)
        assert action.type is not Path, f"{' '.join(words)} {name}: type=Path without a role"
        looks_like_path = any(word in name.lstrip("-").split("-") for word in PATH_WORDS)
        if looks_like_path and name not in NOT_PATHS and name != "--help":
            assert isinstance(action.type, PathOption), f"{' '.join(words)} {name}: no role"


@dataclass
class Invocation:
    """One command's arguments: a distinct file for every path option read, a
    fresh path for every one written."""

    words: tuple[str, ...]
    values: dict[str, list[str]]  # option (or positional dest) -> its values
    positional: set[str]

    def argv(self) -> list[str]:
        out = list(self.words)
        for option, values in self.values.items():
            for value in values:
                out += [value] if option in self.positional else [option, value]
        return out


def _invocation(
    words: tuple[str, ...], parser: argparse.ArgumentParser, folder: Path
) -> tuple[Invocation, dict[str, Path], dict[str, Path]]:
    """The command with every path option given; its read and written paths by option."""
    values: dict[str, list[str]] = {}
    reads: dict[str, Path] = {}
    writes: dict[str, Path] = {}
    positional = set()
    for k, action in enumerate(parser._actions):
        name = _name(action)
        if not action.option_strings:
            positional.add(name)
        kind = action.type
        if isinstance(kind, PathOption):
            path = folder / f"p{k}.tame.json"  # a folder of reports could name it
            if kind.role == "read":
                path.write_text(f"input {k}\n", encoding="utf-8")
                reads[name] = path
            else:
                writes[name] = path
            values[name] = [f"s{k}={path}" if kind.named else str(path)]
        elif action.required:
            assert action.dest in FILLERS, f"{' '.join(words)} {name}: no filler value"
            values[name] = [FILLERS[action.dest]]
    run = Invocation(words, values, positional)
    parsed = parser.parse_args(run.argv()[len(words) :])
    for action in _path_actions(parser):  # an output's first file (in a folder it names)
        name = _name(action)
        if name in writes:
            writes[name] = action.type.paths(str(writes[name]), parsed)[0]  # type: ignore[union-attr]
    return run, reads, writes


def _aimed(parser: argparse.ArgumentParser, run: Invocation, option: str, target: Path) -> None:
    """``option`` (an output) given so that it writes ``target``."""
    action = next(a for a in parser._actions if _name(a) == option)
    if action.type is JSON_OUT_DIR:  # writes NAME.tame.json for each --system NAME
        run.values[option] = [str(target.parent)]
        system = run.values["--system"][0].partition("=")[2]
        run.values["--system"] = [f"{target.name.removesuffix('.tame.json')}={system}"]
    else:
        run.values[option] = [str(target)]


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _cases() -> Iterator[tuple[tuple[str, ...], str, str]]:
    """(command, output option, input option or another output) of every command."""
    for words, parser in COMMANDS:
        actions = _path_actions(parser)
        outputs = [_name(a) for a in actions if a.type.role == "write"]  # type: ignore[union-attr]
        inputs = [_name(a) for a in actions if a.type.role == "read"]  # type: ignore[union-attr]
        if parser.get_default("reads_cache"):
            inputs.append("the cache")
        for out in outputs:
            for other in [*inputs, *(o for o in outputs if o != out)]:
                yield words, out, other


CASES = list(_cases())


def test_the_matrix_covers_every_command_that_writes() -> None:
    writers = {" ".join(words) for words, _, _ in CASES}
    assert {"score", "audit", "tm-baseline", "score-cached", "score-cached-batch", "compare",
            "merge", "index build", "decontaminate", "flores eval", "flores audit",
            "xsts calibrate", "correlate", "toxicity"} <= writers  # fmt: skip
    assert len(CASES) > 250, len(CASES)


@pytest.mark.parametrize(
    ("words", "output", "other"), CASES, ids=[f"{' '.join(w)} {o}={i}" for w, o, i in CASES]
)
def test_no_output_may_name_an_input_or_another_output(
    words: tuple[str, ...],
    output: str,
    other: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = dict(COMMANDS)[words]
    run, reads, writes = _invocation(words, parser, tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "entry").write_text("cached\n", encoding="utf-8")
    monkeypatch.setenv("TAME_MT_CACHE", str(cache))
    target = reads.get(other) or writes.get(other) or cache / "entry"
    _aimed(parser, run, output, target)
    before = _snapshot(tmp_path)
    with pytest.raises(SystemExit) as exit:
        main(run.argv())
    err = capsys.readouterr().err
    assert exit.value.code == 2, err
    named = f"error: {output} " in err and other in err
    assert named or (f"error: {other} " in err and f"as {output} " in err), err
    assert _snapshot(tmp_path) == before  # nothing changed, nothing written


def _reads(parser: argparse.ArgumentParser) -> set[str]:
    return {_name(a) for a in _path_actions(parser) if a.type.role == "read"}  # type: ignore[union-attr]


READ_CASES = [case for case in CASES if case[2] in _reads(dict(COMMANDS)[case[0]])]


@pytest.mark.parametrize(
    ("words", "output", "read"),
    READ_CASES,
    ids=[f"{' '.join(w)} {o} in {i}" for w, o, i in READ_CASES],
)
def test_no_output_may_lie_inside_a_folder_that_is_read(
    words: tuple[str, ...],
    output: str,
    read: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An input given as a folder (a saved index, a dataset, a FLORES folder)
    protects what it holds from every output."""
    parser = dict(COMMANDS)[words]
    run, reads, _ = _invocation(words, parser, tmp_path)
    folder = reads[read]
    folder.unlink()
    folder.mkdir()
    (folder / "member.tame.json").write_text("kept\n", encoding="utf-8")
    _aimed(parser, run, output, folder / "member.tame.json")
    before = _snapshot(tmp_path)
    with pytest.raises(SystemExit) as exit:
        main(run.argv())
    err = capsys.readouterr().err
    assert exit.value.code == 2 and f"error: {output} " in err and f"inside {read} " in err, err
    assert _snapshot(tmp_path) == before


def test_links_and_dot_dot_name_the_same_file(tmp_path: Path) -> None:
    ref = tmp_path / "ref.txt"
    ref.write_text("a\n", encoding="utf-8")
    (tmp_path / "soft").symlink_to(ref)
    os.link(ref, tmp_path / "hard")
    (tmp_path / "sub").mkdir()
    (tmp_path / "elsewhere").symlink_to(tmp_path / "sub")
    reads = [NamedPath("--ref", ref)]
    for alias in (
        tmp_path / "soft",
        tmp_path / "hard",
        tmp_path / "sub" / ".." / "ref.txt",
        tmp_path / "elsewhere" / ".." / "ref.txt",  # .. of the link's target
    ):
        with pytest.raises(OutputPathError, match=r"the same file as --ref"):
            refuse_overwrites(reads, [NamedPath("--json-out", alias)])
    refuse_overwrites(reads, [NamedPath("--json-out", tmp_path / "sub" / "ref.txt")])


def test_a_hard_link_to_a_file_inside_a_read_folder_is_refused(tmp_path: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    (index / "manifest.json").write_text("{}", encoding="utf-8")
    os.link(index / "manifest.json", tmp_path / "out.json")
    with pytest.raises(OutputPathError, match=r"inside --index"):
        out = NamedPath("--json-out", tmp_path / "out.json")
        refuse_overwrites([NamedPath("--index", index)], [out])


def test_an_output_folder_holding_an_input_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "kept"
    folder.mkdir()
    (folder / "train.src").write_text("a\n", encoding="utf-8")
    with pytest.raises(OutputPathError, match=r"--out-dataset .*: holds --train-src"):
        refuse_overwrites(
            [NamedPath("--train-src", folder / "train.src")], [NamedPath("--out-dataset", folder)]
        )


def test_the_files_written_beside_an_output_are_outputs_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--segment-out F`` writes ``F.meta.json``; ``--segment-in F`` reads it."""
    for name in ("t.src", "ref.txt", "hyp.txt", "tr.src", "tr.tgt"):
        (tmp_path / name).write_text("a b c\n", encoding="utf-8")
    (tmp_path / "seg.jsonl.meta.json").write_text("{}", encoding="utf-8")
    before = _snapshot(tmp_path)
    common = ["--train-src", "tr.src", "--train-tgt", "tr.tgt", "--test-src", "t.src"]
    common += ["--ref", "ref.txt", "--hyp", "hyp.txt"]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):  # the sidecar would replace the test sources
        main(["score", *common, "--segment-out", "t.src.meta.json/../t.src"])
    assert "--segment-out" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["score", *common, "--segment-out", "x.jsonl", "--json-out", "x.jsonl.meta.json"])
    err = capsys.readouterr().err
    assert "--segment-out x.jsonl (its x.jsonl.meta.json): the same file as --json-out" in err
    cached = ["score-cached", "--segment-in", "seg.jsonl", "--ref", "ref.txt", "--hyp", "hyp.txt"]
    with pytest.raises(SystemExit):
        main([*cached, "--json-out", "seg.jsonl.meta.json"])
    assert "the same file as --segment-in" in capsys.readouterr().err
    assert _snapshot(tmp_path) == before


def test_a_folder_another_process_renamed_first_is_a_typed_error(tmp_path: Path) -> None:
    winner, loser = tmp_path / "index", tmp_path / ".index.tmp-1"
    for folder in (winner, loser):
        folder.mkdir()
        (folder / "manifest.json").write_text(folder.name, encoding="utf-8")
    with pytest.raises(OutputExistsError, match=r"index: another process wrote this folder first"):
        rename_folder(loser, winner)
    assert (winner / "manifest.json").read_text(encoding="utf-8") == "index"


def test_index_builds_at_once_leave_one_whole_index(tmp_path: Path) -> None:
    """Four ``index build --out DIR`` at once: one writes the folder, which
    verifies; each other exits 1 with a typed message naming the folder."""
    data = Path(__file__).parents[1] / "tame_mt_metric" / "data" / "bible_sw_zu"
    lines = (data / "test.sw").read_text(encoding="utf-8").splitlines()
    (tmp_path / "tr.src").write_text("\n".join(lines * 20) + "\n", encoding="utf-8")
    (tmp_path / "tr.tgt").write_text("\n".join(lines[::-1] * 20) + "\n", encoding="utf-8")
    build = [sys.executable, "-m", "tame_mt_metric", "index", "build", "--quiet"]
    build += ["--train-src", "tr.src", "--train-tgt", "tr.tgt", "--out", "DIR"]
    runs = [
        subprocess.Popen(build, cwd=tmp_path, stderr=subprocess.PIPE, text=True) for _ in range(4)
    ]
    results = [(run.wait(timeout=300), run.communicate()[1]) for run in runs]
    assert sorted(code for code, _ in results) == [0, 1, 1, 1], results
    for code, err in results:
        if code:
            assert err.startswith("tame-mt-metric: error: ") and "DIR" in err, err
            assert "Errno" not in err, err
    verify = [sys.executable, "-m", "tame_mt_metric", "index", "verify", "DIR"]
    assert subprocess.run(verify, cwd=tmp_path, capture_output=True).returncode == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
