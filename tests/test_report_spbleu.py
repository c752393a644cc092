"""spBLEU offline with a SentencePiece model trained here on FLORES text (never
the network), chrF++ corpus and sentence-average, and the missing-model error."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu
import sentencepiece

from tame_mt_metric import TameConfig, TrainingCorpus, score_tame
from tame_mt_metric.errors import MissingModelError
from tame_mt_metric.report.scores import Scorers
from tame_mt_metric.report.spbleu import MODEL_ENV, find_model

SLICE = Path(__file__).resolve().parent.parent / "tame_mt_metric" / "data" / "flores200_slice"
LANGS = ("eng_Latn", "fra_Latn", "swh_Latn", "zul_Latn", "zho_Hans")


def _lines(lang: str, split: str = "devtest") -> list[str]:
    return (SLICE / split / f"{lang}.{split}").read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = [line for lang in LANGS for line in _lines(lang, "dev")]
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(text),
        model_writer=model,
        vocab_size=2000,
        character_coverage=0.9995,
        minloglevel=2,
    )
    path = tmp_path_factory.mktemp("spm") / "flores200sacrebleuspm"
    path.write_bytes(model.getvalue())
    return path


def _system(lang: str) -> tuple[list[str], list[str]]:
    refs = _lines(lang)
    return [" ".join(r.split()[:-2]) if " " in r else r[:-3] for r in refs], refs


def test_spbleu_equals_sacrebleus_flores200_with_the_same_model(
    model_file: Path, tmp_path: Path
) -> None:
    """sacrebleu finds the model in its cache folder (SACREBLEU), in a fresh process."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "flores200sacrebleuspm").write_bytes(model_file.read_bytes())
    for lang in ("swh_Latn", "zho_Hans"):
        hyps, refs = _system(lang)
        ours = Scorers(
            TameConfig(metrics=("spbleu",), spm_model=str(model_file)), [[r] for r in refs]
        )
        script = (
            "import json, sys, sacrebleu\n"
            "h, r = json.load(sys.stdin)\n"
            "print(repr(sacrebleu.corpus_bleu(h, [r], tokenize='flores200').score))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script],
            input=__import__("json").dumps([hyps, refs]),
            env={**os.environ, "SACREBLEU": str(tmp_path)},
            capture_output=True,
            text=True,
            check=True,
        )
        assert ours.statistics(hyps).score()["spbleu"] == float(done.stdout)


def test_chrf_plus_plus_corpus_and_sentence_average() -> None:
    hyps, refs = _system("fra_Latn")
    config = TameConfig(metrics=("chrf++", "chrf++_avg"))
    scores = Scorers(config, [[r] for r in refs]).statistics(hyps).score()
    corpus = sacrebleu.corpus_chrf(hyps, [refs], word_order=2).score
    sentences = [
        sacrebleu.sentence_chrf(h, [r], word_order=2).score for h, r in zip(hyps, refs, strict=True)
    ]
    assert scores["chrf++"] == corpus
    assert scores["chrf++_avg"] == pytest.approx(sum(sentences) / len(sentences), abs=1e-12)
    assert scores["chrf++"] != scores["chrf++_avg"]  # the card's warning: they differ


def test_the_signature_names_the_model(model_file: Path) -> None:
    model = find_model("flores200", model_file)
    assert model.official is False
    assert model.signature().startswith("flores200_sha256-") and model.signature().endswith(
        "_custom"
    )
    hyps, refs = _system("swh_Latn")
    train = TrainingCorpus(_lines("swh_Latn", "dev"), _lines("eng_Latn", "dev"))
    config = TameConfig(metrics=("spbleu", "chrf++", "chrf++_avg"), spm_model=str(model_file))
    fields = score_tame(train, hyps, refs, _lines("eng_Latn"), config).report.fields()
    assert f"|spbleu:{model.signature()}" in str(fields["signature"])
    assert {"spbleu", "tm_spbleu", "bin/far/chrf++_avg", "gen_gap_chrf++"} <= set(fields)


def test_a_missing_model_says_which_file_to_place_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MODEL_ENV, raising=False)
    with pytest.raises(MissingModelError, match=r"does not exist \(given by spm_model\)") as err:
        TameConfig(metrics=("spbleu",), spm_model=str(tmp_path / "nope.model"))
    message = str(err.value)
    assert "flores200sacrebleuspm (4,852,054 bytes, sha256 14bb8dfb35c0" in message
    assert "models/flores200sacrebleuspm" in message and MODEL_ENV in message
    assert isinstance(err.value, FileNotFoundError)
    monkeypatch.setenv(MODEL_ENV, str(tmp_path / "also-missing"))
    with pytest.raises(MissingModelError, match=f"given by {MODEL_ENV}"):
        find_model("flores200")
    with pytest.raises(ValueError, match="spbleu_tokenize"):
        find_model("flores300")
