"""The FLORES-200 runner and contamination audit on the bundled slice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu

from tame_mt_metric import TameConfig, TrainingCorpus
from tame_mt_metric.errors import InputTextError, InvalidOptionError, MisalignedInputError
from tame_mt_metric.flores.protocol import (
    LANGUAGES,
    FloresData,
    check_language,
    contamination,
    score_directions,
)

SLICE = Path(__file__).resolve().parent.parent / "tame_mt_metric" / "data" / "flores200_slice"


def _drop_last_word(line: str) -> str:
    return line.rsplit(" ", 1)[0] if " " in line else line[:-2]


@pytest.fixture()
def outputs(tmp_path: Path) -> Path:
    data = FloresData.locate(SLICE)
    for source, target in [
        ("eng_Latn", "swh_Latn"),
        ("swh_Latn", "eng_Latn"),
        ("fra_Latn", "zul_Latn"),
    ]:
        hyps = [_drop_last_word(s) for s in data.sentences(target)]
        (tmp_path / f"{source}-{target}.devtest.hyp").write_text(
            "\n".join(hyps) + "\n", encoding="utf-8"
        )
    return tmp_path


def test_languages_and_codes() -> None:
    assert len(LANGUAGES) == 204 and "eng_Latn" in LANGUAGES and "zho_Hant" in LANGUAGES
    assert check_language("swh_Latn") == "swh_Latn"
    with pytest.raises(InvalidOptionError, match="did you mean swh_Latn"):
        check_language("swh_latn")
    with pytest.raises(InvalidOptionError, match="'xx' is not a FLORES-200 code"):
        check_language("xx")
    # The language of an ISO 639-2/B (ger), ISO 639-1 (de) or English name (German) first.
    for code in ("ger", "de", "German", "ger_Latn"):
        with pytest.raises(InvalidOptionError, match=f"'{code}' .*; did you mean deu_Latn"):
            check_language(code)


def test_metadata_rows_align_with_sentences() -> None:
    data = FloresData.locate(SLICE)
    rows = data.metadata("devtest")
    assert len(rows) == len(data.sentences("eng_Latn")) == 100
    assert set(rows[0]) == {"URL", "domain", "topic", "has_image", "has_hyperlink"}
    assert rows[0]["domain"] in {"wikinews", "wikijunior", "wikivoyage"}


def test_every_direction_is_scored_like_sacrebleu(outputs: Path) -> None:
    config = TameConfig(metrics=("chrf++", "chrf++_avg", "bleu"))
    scores = score_directions(SLICE, outputs, config=config)
    assert sorted(scores.directions) == [
        "eng_Latn-swh_Latn",
        "fra_Latn-zul_Latn",
        "swh_Latn-eng_Latn",
    ]
    data = FloresData.locate(SLICE)
    row = scores.directions["fra_Latn-zul_Latn"]
    refs = data.sentences("zul_Latn")
    hyps = (outputs / "fra_Latn-zul_Latn.devtest.hyp").read_text(encoding="utf-8").splitlines()
    assert row["chrf++"] == sacrebleu.corpus_chrf(hyps, [refs], word_order=2).score
    assert row["bleu"] == sacrebleu.corpus_bleu(hyps, [refs]).score
    assert row["group"] == "non_english_centric"
    averages = scores.averages()
    assert averages["out_of_english"]["directions"] == 1
    assert averages["all"]["chrf++"] == pytest.approx(
        sum(r["chrf++"] for r in scores.directions.values()) / 3
    )
    assert json.loads(scores.to_json())["averages"]["into_english"]["directions"] == 1
    table = scores.markdown()
    assert "| swh_Latn-eng_Latn | into_english |" in table and "| all | 3 |" in table


def test_tame_fields_for_directions_with_a_training_corpus(outputs: Path) -> None:
    data = FloresData.locate(SLICE)
    train = {
        "eng_Latn-swh_Latn": TrainingCorpus(
            data.sentences("eng_Latn", "dev"), data.sentences("swh_Latn", "dev")
        )
    }
    scores = score_directions(SLICE, outputs, config=TameConfig(metrics=("chrf++",)), train=train)
    assert "tm_chrf++" in scores.directions["eng_Latn-swh_Latn"]
    assert "tm_chrf++" not in scores.directions["swh_Latn-eng_Latn"]


def test_bad_outputs_are_named(outputs: Path, tmp_path: Path) -> None:
    bad = outputs / "eng_Latn-zul_Latn.devtest.hyp"
    bad.write_text("one line\n", encoding="utf-8")
    with pytest.raises(
        MisalignedInputError,
        match=r"eng_Latn-zul_Latn\.devtest\.hyp: 1 lines, the FLORES devtest of zul_Latn has 100",
    ):
        score_directions(SLICE, outputs, config=TameConfig(metrics=("chrf++",)))
    bad.unlink()
    (outputs / "eng_Latn-zul_Lat.devtest.hyp").write_text("x\n", encoding="utf-8")
    with pytest.raises(InvalidOptionError, match="did you mean zul_Latn"):
        score_directions(SLICE, outputs, config=TameConfig(metrics=("chrf++",)))
    with pytest.raises(InputTextError, match="not a FLORES-200 folder"):
        FloresData.locate(tmp_path / "nothing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputTextError, match="no system outputs"):
        score_directions(SLICE, empty)


def test_contamination_finds_exact_and_near_copies(tmp_path: Path) -> None:
    data = FloresData.locate(SLICE)
    dev = data.sentences("eng_Latn", "dev")
    devtest = data.sentences("eng_Latn", "devtest")
    corpus = tmp_path / "web.en"
    lines = [
        "An unrelated line about cooking rice.",
        *devtest[:10],
        *(s + " Indeed." for s in dev[:5]),
    ]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = contamination({"eng_Latn": corpus, "swh_Latn": ["Habari ya asubuhi."]}, SLICE)
    english = report["eng_Latn"]
    assert english["items"] == 200 and english["training_lines"] == 16
    assert english["exact_rate"] == 10 / 200
    assert english["at_threshold"]["0.70"] >= 15 / 200  # the five extended dev sentences are near
    assert report["swh_Latn"]["exact_rate"] == 0.0
    with pytest.raises(InvalidOptionError, match="did you mean"):
        contamination({"english": corpus}, SLICE)
