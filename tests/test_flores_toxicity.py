"""Added toxicity: list folders in both layouts, word edges in every script,
normalisation, language codes and their errors, the bundled LDNOOBW v2 lists."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest

from tame_mt_metric.errors import (
    EmptyTestSetError,
    InputTextError,
    InvalidOptionError,
    MisalignedInputError,
    TameError,
)
from tame_mt_metric.flores.language_codes import (
    FLORES_200,
    ISO_639_1,
    ISO_639_2B,
    LIST_FALLBACKS,
)
from tame_mt_metric.flores.toxicity import (
    BUNDLED_LISTS,
    MissingToxicityListError,
    added_toxicity,
    fold,
    load_lists,
    toxic_terms,
)

LISTS = {
    "en": ["heck", "darn", "big deal", "cat"],
    "de": ["mist", "straße"],
    "zh": ["笨蛋", "bi"],
    "th": ["แมว"],
    "ko": ["바보"],
    "hi": ["कम", "काम"],
    "ru": ["дурак"],
    "ar": ["كلب"],
}


def write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_toxicity_200_layout(tmp_path: Path) -> None:
    write(tmp_path / "eng_Latn_twl.txt", ["# a comment", "", "heck", "  darn  "])
    write(tmp_path / "zho_Hans_twl.txt", ["笨蛋"])
    write(tmp_path / "zho_Hant_twl.txt", ["笨蛋"])
    write(tmp_path / "README.txt", ["not a list"])
    assert load_lists(tmp_path) == {
        "eng_Latn": ["heck", "darn"],
        "zho_Hans": ["笨蛋"],
        "zho_Hant": ["笨蛋"],
    }
    result = added_toxicity(["你好", "笨蛋"], ["Heck!", "Heck!"], "zho_Hans", "en", lists=tmp_path)
    assert (result.flagged, result.source_list, result.target_list) == ([0], "zho_Hans", "eng_Latn")
    assert result.lists == str(tmp_path)
    with pytest.raises(InvalidOptionError, match=r"several lists .*zho_Hans, zho_Hant.*script"):
        toxic_terms("笨蛋", "zh", lists=tmp_path)


def test_ldnoobw_layout(tmp_path: Path) -> None:
    write(tmp_path / "data" / "en.txt", ["heck", "# comment", ""])
    write(tmp_path / "data" / "de.txt", ["mist"])
    write(tmp_path / "data" / "kh.txt", ["ಮಂಗ"])  # LDNOOBW's kh.txt holds Kannada
    write(tmp_path / "README.md", ["# lists"])
    expected = {"de": ["mist"], "en": ["heck"], "kn": ["ಮಂಗ"]}
    assert load_lists(tmp_path) == expected
    assert load_lists(tmp_path / "data") == expected
    result = added_toxicity(["Guten Tag", "So ein Mist"], ["Heck", "Heck"], "de", "eng", tmp_path)
    assert (result.flagged, result.terms, result.rate, result.segments) == (
        [0],
        {0: ["heck"]},
        0.5,
        2,
    )
    assert toxic_terms("ಮಂಗ", "kan_Knda", lists=tmp_path) == ["ಮಂಗ"]


def test_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError, match="is not a folder"):
        load_lists(tmp_path / "missing")
    write(tmp_path / "notes.md", ["nothing here"])
    with pytest.raises(InvalidOptionError, match=r"no toxicity lists in .*eng_Latn_twl\.txt"):
        load_lists(tmp_path)
    (tmp_path / "en.txt").write_bytes(b"heck\n\xff\n")
    with pytest.raises(InputTextError, match=r"en\.txt:2: not valid UTF-8"):
        load_lists(tmp_path)


def test_whole_words_in_latin_cyrillic_arabic() -> None:
    assert toxic_terms("The cat sat; cats, category, bobcat, tomcat_", "en", LISTS) == ["cat"]
    assert toxic_terms("category cat2 2cat catś", "en", LISTS) == []
    assert toxic_terms("Ты дурак! дураки", "ru", LISTS) == ["дурак"]
    assert toxic_terms("дураки", "ru", LISTS) == []
    assert toxic_terms("الكلب", "ar", LISTS) == []
    assert toxic_terms("هذا كلب.", "ar", LISTS) == ["كلب"]


def test_whole_words_in_devanagari_with_vowel_signs() -> None:
    # The vowel signs (matras) are marks, which Python's \w leaves out.
    assert re.search(r"(?<!\w)कम(?!\w)", "कमा") is not None
    assert toxic_terms("कमा कामना", "hin_Deva", LISTS) == []
    assert toxic_terms("बहुत कम काम", "hi", LISTS) == ["कम", "काम"]


def test_substrings_in_languages_written_without_spaces() -> None:
    assert toxic_terms("他是个笨蛋吗", "zho_Hans", LISTS) == ["笨蛋"]
    assert toxic_terms("他是個笨蛋嗎", "zho_Hant", LISTS) == ["笨蛋"]
    assert toxic_terms("แมวดำตัวนี้", "tha_Thai", LISTS) == ["แมว"]
    assert toxic_terms("แมวดำตัวนี้", "th", LISTS) == ["แมว"]
    # A romanised term still needs word edges where it meets Latin letters.
    assert toxic_terms("bingo Obama 笨蛋", "zh", LISTS) == ["笨蛋"]
    assert toxic_terms("看bi吗", "zh", LISTS) == ["bi"]
    # Korean is written with spaces: whole words only.
    assert toxic_terms("바보야", "kor_Hang", LISTS) == []
    assert toxic_terms("이 바보", "ko", LISTS) == ["바보"]


def test_case_folding_and_nfkc() -> None:
    assert toxic_terms("\uff28\uff25\uff23\uff2b!", "en", LISTS) == ["heck"]  # full-width
    assert toxic_terms("DARN it", "en", LISTS) == ["darn"]
    assert toxic_terms("Die STRASSE", "de", LISTS) == ["strasse"]
    assert toxic_terms("da\u00adrn", "en", LISTS) == ["darn"]  # soft hyphen dropped
    assert fold("  \uff21\u00a0\ufb01ne  day ") == "a fine day"
    assert toxic_terms("\u0915\u093c", "hi", {"hi": ["\u0958"]}) == ["\u0915\u093c"]


def test_multi_word_terms_and_overlaps() -> None:
    assert toxic_terms("a BIG   deal", "en", LISTS) == ["big deal"]
    assert toxic_terms("a big\ndeal", "en", LISTS) == ["big deal"]
    assert toxic_terms("a bigdeal", "en", LISTS) == []
    overlapping = {"en": ["big", "big deal", "deal"]}
    assert toxic_terms("a big deal", "en", overlapping) == ["big deal", "deal"]
    assert toxic_terms("a big deal", "en", {"en": ["💩"]}) == []
    assert toxic_terms("x💩x", "en", {"en": ["💩"]}) == ["💩"]


def test_a_toxic_source_means_no_added_toxicity() -> None:
    result = added_toxicity(
        ["So ein Mist!", "Guten Tag.", "Hallo."],
        ["What the heck!", "What the heck!", "Hello."],
        source_lang="deu_Latn",
        target_lang="eng_Latn",
        lists=LISTS,
    )
    assert result.flagged == [1]
    assert result.terms == {1: ["heck"]}
    assert result.rate == pytest.approx(1 / 3)
    assert (result.source_list, result.target_list, result.lists) == (
        "de",
        "en",
        "the given mapping",
    )


@pytest.mark.parametrize(
    ("code", "error", "message"),
    [
        (
            "eng_Latm",
            InvalidOptionError,
            r"unknown language code 'eng_Latm'; did you mean 'eng_Latn'",
        ),
        ("en-US", InvalidOptionError, r"'en-US' is not a language code .*did you mean 'eng_Latn'"),
        ("srp_Latn", InvalidOptionError, r"did you mean 'srp_Cyrl'"),
        ("zz", InvalidOptionError, r"unknown language code 'zz'$"),
        ("swh_Latn", MissingToxicityListError, r"no toxicity list for 'swh_Latn'.* ar, de, en,"),
        ("sw", MissingToxicityListError, r"no toxicity list for 'sw'"),
        (3, InvalidOptionError, r"expected a language code, got int"),
    ],
)
def test_bad_language_codes(code: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message) as caught:
        added_toxicity(["a"], ["b"], "en", code, lists=LISTS)  # type: ignore[arg-type]
    assert str(caught.value).startswith("target_lang: ")
    assert isinstance(caught.value, TameError) and isinstance(caught.value, ValueError)


def test_codes_in_every_form_find_the_same_list() -> None:
    for code in ("en", "eng", "eng_Latn", "ENG-latn", "EN"):
        assert toxic_terms("heck", code, LISTS) == ["heck"]
    for code, key in [("arz_Arab", "ar"), ("arb_Arab", "ar"), ("zho_Hant", "zh"), ("tha", "th")]:
        assert added_toxicity(["x"], ["y"], "en", code, LISTS).target_list == key


def test_bibliographic_codes_are_their_languages() -> None:
    # ISO 639-2/B, as catalogues write them: ger is deu, chi is zho, per is (Western) Persian.
    for bibliographic, key in [("ger", "de"), ("chi", "zh"), ("GER", "de")]:
        assert added_toxicity(["x"], ["y"], "en", bibliographic, LISTS).target_list == key
    assert toxic_terms("so ein Mist", "ger", LISTS) == ["mist"]
    assert added_toxicity(["x"], ["y"], "ger", "en", LISTS).source_list == "de"
    for flores in ISO_639_2B.values():
        assert flores in ISO_639_1 and any(c.startswith(f"{flores}_") for c in FLORES_200)
    # An English name is no code, but its first letters point at one.
    with pytest.raises(InvalidOptionError, match=r"'German' is not a language code.*'deu_Latn'"):
        added_toxicity(["x"], ["y"], "en", "German", LISTS)


def test_misaligned_and_bad_inputs() -> None:
    with pytest.raises(MisalignedInputError, match="sources has 2 items but hypotheses has 1"):
        added_toxicity(["a", "b"], ["a"], "de", "en", LISTS)
    with pytest.raises(InputTextError, match=r"hypotheses\[1\]: expected a string, got NoneType"):
        added_toxicity(["a", "b"], ["a", None], "de", "en", LISTS)
    with pytest.raises(InputTextError, match="sources: expected a list of strings, got str"):
        added_toxicity("a", ["a"], "de", "en", LISTS)
    with pytest.raises(EmptyTestSetError):
        added_toxicity([], [], "de", "en", LISTS)
    with pytest.raises(InputTextError, match="text: expected a string"):
        toxic_terms(b"heck", "en", LISTS)  # type: ignore[arg-type]


def test_bad_mappings() -> None:
    with pytest.raises(InputTextError, match=r"lists\['en'\]: expected an iterable of terms"):
        toxic_terms("heck", "en", {"en": "heck"})
    with pytest.raises(InputTextError, match=r"lists\['en'\]\[1\]: expected a string, got int"):
        toxic_terms("heck", "en", {"en": ["heck", 1]})  # type: ignore[list-item]
    with pytest.raises(InvalidOptionError, match="lists: 'english!' is not a language code"):
        toxic_terms("heck", "en", {"english!": ["heck"]})
    with pytest.raises(InvalidOptionError, match="lists: expected None, a folder or a mapping"):
        toxic_terms("heck", "en", 3)  # type: ignore[arg-type]
    assert toxic_terms("heck", "en", {"en": ["", "  "]}) == []


def test_language_tables() -> None:
    assert len(FLORES_200) == 204
    flores_languages = {code.partition("_")[0] for code in FLORES_200}
    assert set(ISO_639_1) - flores_languages == {"lat", "ton"}
    assert len(set(ISO_639_1.values())) == len(ISO_639_1)  # reads backwards
    assert set(LIST_FALLBACKS) - flores_languages == {"arq"}


def test_bundled_lists() -> None:
    folder = resources.files("tame_mt_metric") / "data" / "toxicity" / "ldnoobw_v2"
    licence = (folder / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("Creative Commons Legal Code\n\nCC0 1.0 Universal")
    assert "CC0-1.0" in (folder / "ATTRIBUTION.md").read_text(encoding="utf-8")
    lists = load_lists()
    assert len(lists) == 75 and len(lists["en"]) > 10_000
    assert {"kn", "arq", "he"} <= set(lists) and not {"kh", "dz", "yid"} & set(lists)
    for code in lists:  # every bundled list is reachable by its code
        assert toxic_terms("", code) == []
    result = added_toxicity(
        ["Guten Tag.", "Du Idiot!", "Guten Tag."],
        ["Hello, you idiot.", "You idiot!", "Good day."],
        source_lang="deu_Latn",
        target_lang="eng_Latn",
    )
    assert (result.flagged, result.terms) == ([0], {0: ["idiot"]})
    assert (result.source_list, result.target_list, result.lists) == ("de", "en", BUNDLED_LISTS)
    assert added_toxicity(["x"], ["y"], "nob_Latn", "tgl_Latn").source_list == "no"
    assert added_toxicity(["x"], ["y"], "nob_Latn", "tgl_Latn").target_list == "fil"
