"""Bad input: typed errors that name the argument, file, line or item."""

from __future__ import annotations

import gzip
import math
import re
import zlib
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tame_mt_metric import (
    EmptyCorpusError,
    EmptyTestSetError,
    InputTextError,
    InvalidOptionError,
    MisalignedInputError,
    RetrievalConfig,
    SpecialFileError,
    StreamingAudit,
    TameError,
    TrainingIndex,
    find_exposures,
    stream_exposures,
)
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.retrieval.inputs import read_lines
from tame_mt_metric.retrieval.text_files import TextFiles


def test_errors_are_value_errors_of_the_package() -> None:
    for cls in (EmptyCorpusError, InputTextError, InvalidOptionError, MisalignedInputError):
        assert issubclass(cls, TameError) and issubclass(cls, ValueError)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ngram_orders": (0, 3)}, "ngram_orders: must be at least 1"),
        ({"ngram_orders": (3, 3)}, "ngram_orders: repeated order"),
        ({"ngram_orders": (7,)}, "ngram_orders: order 7 exceeds 6"),
        ({"ngram_orders": ()}, "ngram_orders: expected a non-empty sequence"),
        ({"ngram_orders": 3}, "ngram_orders: expected a non-empty sequence"),
        ({"ngram_orders": 3.5}, "ngram_orders: expected a non-empty sequence"),
        ({"ngram_orders": (2.5,)}, "ngram_orders: expected an integer"),
        ({"top_k": 0}, "top_k: must be at least 1"),
        ({"threads": 0}, "threads: must be at least 1"),
        ({"threads": 257}, "threads: must be at most 256"),
        ({"threads": 4096}, "threads: must be at most 256"),
        ({"strategy": "fast"}, "strategy: expected one of"),
        ({"lowercase": "yes"}, "lowercase: expected True or False"),
    ],
)
def test_invalid_options(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        RetrievalConfig(**kwargs)


def test_threads_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAME_MT_THREADS", "3")
    assert RetrievalConfig().resolved_threads() == 3
    monkeypatch.setenv("TAME_MT_THREADS", "many")
    with pytest.raises(InvalidOptionError, match="TAME_MT_THREADS"):
        RetrievalConfig().resolved_threads()
    monkeypatch.setenv("TAME_MT_THREADS", "99999")
    with pytest.raises(InvalidOptionError, match="TAME_MT_THREADS: must be at most 256"):
        RetrievalConfig().resolved_threads()


@pytest.mark.parametrize("strategy", ["indexed", "streaming"])
def test_bad_corpora(strategy: str) -> None:
    config = RetrievalConfig(strategy=strategy)  # type: ignore[arg-type]
    with pytest.raises(MisalignedInputError, match="train_sources has 2 items but train_targets"):
        find_exposures(["a", "b"], ["a"], ["a"], config=config)
    with pytest.raises(EmptyCorpusError, match="train_sources"):
        find_exposures([], [], ["a"], config=config)
    with pytest.raises(
        InputTextError, match=r"train_targets\[1\]: expected a string, got NoneType"
    ):
        find_exposures(["a", "b"], ["a", None], ["a"], config=config)  # type: ignore[list-item]
    with pytest.raises(InputTextError, match=r"test_sources\[0\]: expected a string, got int"):
        find_exposures(["a"], ["a"], [3], config=config)  # type: ignore[list-item]
    with pytest.raises(InputTextError, match="test_sources: expected a list of strings, got str"):
        find_exposures(["a"], ["a"], "abc", config=config)
    with pytest.raises(MisalignedInputError, match="references has 1 items but test_sources has 2"):
        find_exposures(["a"], ["a"], ["a", "b"], ["x"], config=config)
    with pytest.raises(MisalignedInputError, match=r"references\[1\] has 1 references"):
        find_exposures(["a"], ["a"], ["a", "b"], [["x", "y"], ["z"]], config=config)
    with pytest.raises(InputTextError, match=r"references\[1\]\[0\]: expected a string, got bytes"):
        find_exposures(["a"], ["a"], ["a", "b"], [["x"], [b"z"]], config=config)  # type: ignore[list-item]


@pytest.mark.parametrize("strategy", ["indexed", "streaming"])
def test_lone_surrogates_name_the_item(strategy: str) -> None:
    """A str with a lone surrogate has no UTF-8 form: a typed error, not a codec error."""
    config = RetrievalConfig(strategy=strategy)  # type: ignore[arg-type]
    train = ["a b", "c d", "e f"]
    with pytest.raises(InputTextError, match=r"train_sources\[2\]: not valid Unicode"):
        find_exposures(["a", "b", "x\ud800"], train, ["a"], config=config)
    with pytest.raises(InputTextError, match=r"test_sources\[1\]: not valid Unicode"):
        find_exposures(train, train, ["a", "\udc00"], config=config)
    with pytest.raises(InputTextError, match=r"references\[0\]\[1\]: not valid Unicode"):
        find_exposures(train, train, ["a"], [["x", "y\udfff"]], config=config)


def test_core_takes_no_bare_string_for_a_list() -> None:
    import tame_mt_core as _core

    with pytest.raises(InvalidOptionError, match="texts: expected a list of strings, got str"):
        _core.count_grams("abc", _core.GramSettings([3]))  # type: ignore[arg-type]


def test_feeds_name_the_global_row() -> None:
    audit = StreamingAudit(["a"], ["x"])
    audit.feed(["a", "b"], ["x", "y"], row_base=0)
    with pytest.raises(InputTextError, match=r"train_targets\[3\]: not valid Unicode"):
        audit.feed(["c", "d"], ["z", "\ud800"], row_base=2)


def test_streamed_pairs_name_the_bad_row() -> None:
    pairs = [("a", "b")] * 5 + [("a", None)]
    with pytest.raises(InputTextError, match=r"train_targets\[5\]: expected a string"):
        stream_exposures(iter(pairs), ["a"], config=RetrievalConfig(block_rows=4))  # type: ignore[arg-type]
    with pytest.raises(EmptyCorpusError, match="train_pairs"):
        stream_exposures(iter([]), ["a"])


def test_index_reports_bad_test_input() -> None:
    index = TrainingIndex.build(["a"], ["b"])
    with pytest.raises(InputTextError, match=r"test_sources\[1\]"):
        index.find_exposures(["a", None])  # type: ignore[list-item]


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    plain = tmp_path / "train.src"
    plain.write_bytes(b"fine\nalso fine\nbad \xff byte\n")
    with pytest.raises(InputTextError, match=r"train\.src:3: not valid UTF-8"):
        read_lines(plain)
    packed = tmp_path / "train.src.gz"
    with gzip.open(packed, "wb") as f:
        f.write(b"ok\n\xc3\n")
    with pytest.raises(InputTextError, match=r"train\.src\.gz:2: not valid UTF-8"):
        read_lines(packed)


def test_lines_keep_inner_carriage_returns_and_gzip(tmp_path: Path) -> None:
    packed = tmp_path / "t.gz"
    with gzip.open(packed, "wt", encoding="utf-8") as f:
        f.write("a\r\nb\n\nc")
    assert read_lines(packed) == ["a", "b", "", "c"]


@pytest.mark.parametrize("bad", [1.2, -0.1, math.nan, math.inf, Fraction(11, 10), None, [], "0.3"])
def test_thresholds_are_numbers_in_the_unit_interval(bad: object) -> None:
    with pytest.raises(InvalidOptionError, match="near_threshold"):
        TameConfig(near_threshold=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="leak_thresholds"):
        TameConfig(leak_thresholds=(0.5, bad))  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="far_threshold"):
        TameConfig(far_threshold=bad)  # type: ignore[arg-type]


def test_a_threshold_out_of_range_is_written_as_a_number() -> None:
    for given, shown in ((Fraction(3, 2), "1.5"), (Fraction(4, 3), "4/3"), (1.25, "1.25")):
        with pytest.raises(InvalidOptionError) as caught:
            TameConfig(far_threshold=given)  # type: ignore[arg-type]
        assert str(caught.value) == f"far_threshold: must lie in [0, 1], got {shown}"


def test_a_string_of_thresholds_is_refused() -> None:
    with pytest.raises(InvalidOptionError, match="leak_thresholds: expected a non-empty list"):
        TameConfig(leak_thresholds="0.5,0.9")  # type: ignore[arg-type]


def test_an_empty_test_set_is_refused_by_every_entry_point() -> None:
    index = TrainingIndex.build(["a b c"], ["x y z"])
    for call in (
        lambda: find_exposures(["a b c"], ["x y z"], [], []),
        lambda: stream_exposures([("a b c", "x y z")], []),
        lambda: StreamingAudit([]),
        lambda: index.find_exposures([]),
    ):
        with pytest.raises(EmptyTestSetError, match="test_sources: the test set is empty"):
            call()


def test_retrieval_settings_of_another_type_are_refused() -> None:
    with pytest.raises(InvalidOptionError, match="config: expected a RetrievalConfig, got dict"):
        find_exposures(["a"], ["b"], ["a"], config={"lowercase": True})  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="config: expected a RetrievalConfig"):
        TrainingIndex.build(["a"], ["b"], "streaming")  # type: ignore[arg-type]


def _whole_lines_of(data: bytes) -> int:
    """The whole lines in the decompressible prefix of a damaged gzip stream."""
    out = zlib.decompressobj(wbits=31).decompress(data)
    return out.count(b"\n")


def test_gzip_damage_names_the_file_what_is_wrong_and_the_last_whole_line(
    tmp_path: Path,
) -> None:
    whole = gzip.compress("".join(f"line {i}\n" for i in range(200_000)).encode())
    truncated, plain, tiny = tmp_path / "truncated.gz", tmp_path / "plain.gz", tmp_path / "t.gz"
    truncated.write_bytes(whole[: len(whole) // 2])
    plain.write_text("Mhello\n", encoding="utf-8")
    tiny.write_bytes(whole[:12])
    reached = _whole_lines_of(truncated.read_bytes())
    assert reached > 1000
    cut = (
        f"{truncated}: a truncated gzip file: it ends after line {reached:,}, before gzip's "
        "end-of-stream marker"
    )
    with pytest.raises(InputTextError, match=re.escape(cut)):
        read_lines(truncated)
    # A training corpus is read in blocks of megabytes: the same file, the same line.
    with pytest.raises(InputTextError, match=re.escape(cut)):
        TextFiles(truncated, truncated).num_rows  # noqa: B018
    with pytest.raises(InputTextError, match=r"t\.gz: a truncated gzip file: it ends within its"):
        read_lines(tiny)
    with pytest.raises(InputTextError, match=rf"{plain}: not a gzip file, though its name ends"):
        read_lines(plain)
    damaged = bytearray(whole)
    damaged[len(damaged) // 2] ^= 0xFF
    (tmp_path / "damaged.gz").write_bytes(bytes(damaged))
    with pytest.raises(InputTextError, match=r"damaged.gz: a damaged gzip file: unreadable after"):
        read_lines(tmp_path / "damaged.gz")


def test_a_folder_is_not_a_text_file(tmp_path: Path) -> None:
    with pytest.raises(SpecialFileError, match=f"{tmp_path}: a folder, not a file"):
        read_lines(tmp_path)


def test_a_byte_order_mark_starts_no_text(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffthe house\n\ufeffinside\n".encode())
    assert read_lines(path) == ["the house", "\ufeffinside"]  # only the file's first


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"predictions": ["x\ud800", "y"]}, r"predictions\[0\]: not valid Unicode"),
        ({"sources": ["a", "\udfff"]}, r"sources\[1\]: not valid Unicode"),
        ({"references": ["x", "y\udc00"]}, r"references\[1\]: not valid Unicode"),
        ({"references": [["x", "x"], ["y", "\udc00"]]}, r"references\[1\]\[1\]: not valid"),
    ],
)
def test_a_lone_surrogate_in_compute_is_an_input_text_error(
    kwargs: dict[str, Any], message: str
) -> None:
    import tame_mt_metric

    metric = tame_mt_metric.load(train={"source": ["a b"], "target": ["x y"]}, keep_in_memory=True)
    inputs = {"predictions": ["x", "y"], "references": ["x", "y"], "sources": ["a", "b"]}
    with pytest.raises(InputTextError, match=message):
        metric.compute(**{**inputs, **kwargs})


@pytest.mark.parametrize("flag", ["return_report", "include_neighbor_text"])
def test_compute_flags_are_booleans(flag: str) -> None:
    import tame_mt_metric

    metric = tame_mt_metric.load(train={"source": ["a b"], "target": ["x y"]}, keep_in_memory=True)
    with pytest.raises(InvalidOptionError, match=f"{flag}: expected True or False, got 'yes'"):
        metric.compute(predictions=["x"], references=["x"], sources=["a"], **{flag: "yes"})


def test_a_cache_folder_that_is_a_file_is_named(tmp_path: Path) -> None:
    import tame_mt_metric

    path = tmp_path / "not-a-folder"
    path.write_text("", encoding="utf-8")
    metric = tame_mt_metric.load(
        train={"source": ["a b"], "target": ["x y"]}, keep_in_memory=True, tame_cache_dir=str(path)
    )
    with pytest.raises(InvalidOptionError, match=f"tame_cache_dir.*{path} exists and is not a"):
        metric.compute(predictions=["x"], references=["x"], sources=["a"])


def test_the_core_makes_the_errors_the_package_raises() -> None:
    import pickle

    import tame_mt_core as _core

    import tame_mt_metric.errors as errors

    for name in (
        "TameError",
        "InvalidOptionError",
        "MisalignedInputError",
        "InputTextError",
        "EmptyCorpusError",
        "IndexFileError",
    ):
        made = getattr(_core, name)
        assert getattr(errors, name) is made
        assert made.__module__ == "tame_mt_metric.errors"  # where users import it from
        raised = pickle.loads(pickle.dumps(made("message")))
        assert type(raised) is made and str(raised) == "message"
    assert issubclass(errors.CoreImportError, _core.TameError)
    assert issubclass(errors.MissingModelError, _core.TameError)


def test_the_core_raises_no_untyped_value_error() -> None:
    import tame_mt_core as _core

    with pytest.raises(InvalidOptionError, match='block_digests: not a block digest: "xyz"'):
        _core.CorpusFingerprint.combine(["xyz"])
    strided = memoryview(bytearray(16))[::2]
    with pytest.raises(InvalidOptionError, match=r"arrays\[\"postings\"\]: the buffer is not"):
        _core.TrainingIndex.from_arrays({"postings": (strided, 0)}, 1, _core.GramSettings([3]))
