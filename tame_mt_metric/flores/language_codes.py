"""Language codes for the toxicity lists: the FLORES-200 codes, ISO 639-3 to
ISO 639-1, ISO 639-2/B to ISO 639-3, the fallbacks from a variety to its broader language, and the
scripts and languages written without spaces between words."""

from __future__ import annotations

from tame_mt_metric.flores.languages import LANGUAGES

__all__ = [
    "FLORES_200",
    "ISO_639_1",
    "ISO_639_2B",
    "LIST_FALLBACKS",
    "OTHER_LANGUAGES",
    "UNSPACED_BLOCKS",
    "UNSPACED_LANGUAGES",
    "UNSPACED_SCRIPTS",
]

# The 204 language-script codes of FLORES-200 (ISO 639-3 language, ISO 15924 script).
FLORES_200: frozenset[str] = frozenset(LANGUAGES)

# ISO 639-3 (the language part of a FLORES-200 code) -> ISO 639-1, for every
# FLORES-200 language that has a two-letter code, and for the two languages of
# the bundled lists outside FLORES-200 that have one (Latin, Tongan). Where
# FLORES-200 names an individual language of a macrolanguage (arb, pes, zsm...),
# the two-letter code is the macrolanguage's, as is usual. Each two-letter code
# appears once, so it also reads backwards.
ISO_639_1: dict[str, str] = {
    "afr": "af",
    "aka": "ak",
    "als": "sq",  # Tosk Albanian; sq is Albanian
    "amh": "am",
    "arb": "ar",  # Modern Standard Arabic; ar is Arabic
    "asm": "as",
    "ayr": "ay",  # Central Aymara
    "azj": "az",  # North Azerbaijani
    "bak": "ba",
    "bam": "bm",
    "bel": "be",
    "ben": "bn",
    "bod": "bo",
    "bos": "bs",
    "bul": "bg",
    "cat": "ca",
    "ces": "cs",
    "cym": "cy",
    "dan": "da",
    "deu": "de",
    "dzo": "dz",
    "ell": "el",
    "eng": "en",
    "epo": "eo",
    "est": "et",
    "eus": "eu",
    "ewe": "ee",
    "fao": "fo",
    "fij": "fj",
    "fin": "fi",
    "fra": "fr",
    "fuv": "ff",  # Nigerian Fulfulde; ff is Fulah
    "gaz": "om",  # West Central Oromo
    "gla": "gd",
    "gle": "ga",
    "glg": "gl",
    "grn": "gn",
    "guj": "gu",
    "hat": "ht",
    "hau": "ha",
    "heb": "he",
    "hin": "hi",
    "hrv": "hr",
    "hun": "hu",
    "hye": "hy",
    "ibo": "ig",
    "ind": "id",
    "isl": "is",
    "ita": "it",
    "jav": "jv",
    "jpn": "ja",
    "kan": "kn",
    "kas": "ks",
    "kat": "ka",
    "kaz": "kk",
    "khk": "mn",  # Halh Mongolian
    "khm": "km",
    "kik": "ki",
    "kin": "rw",
    "kir": "ky",
    "kmr": "ku",  # Northern Kurdish (Kurmanji)
    "knc": "kr",  # Central Kanuri
    "kon": "kg",
    "kor": "ko",
    "lao": "lo",
    "lat": "la",
    "lim": "li",
    "lin": "ln",
    "lit": "lt",
    "ltz": "lb",
    "lug": "lg",
    "lvs": "lv",  # Standard Latvian
    "mal": "ml",
    "mar": "mr",
    "mkd": "mk",
    "mlt": "mt",
    "mri": "mi",
    "mya": "my",
    "nld": "nl",
    "nno": "nn",
    "nob": "nb",
    "npi": "ne",  # Nepali (individual language)
    "nya": "ny",
    "oci": "oc",
    "ory": "or",  # Odia (individual language)
    "pan": "pa",
    "pbt": "ps",  # Southern Pashto
    "pes": "fa",  # Western Persian
    "plt": "mg",  # Plateau Malagasy
    "pol": "pl",
    "por": "pt",
    "quy": "qu",  # Ayacucho Quechua
    "ron": "ro",
    "run": "rn",
    "rus": "ru",
    "sag": "sg",
    "san": "sa",
    "sin": "si",
    "slk": "sk",
    "slv": "sl",
    "smo": "sm",
    "sna": "sn",
    "snd": "sd",
    "som": "so",
    "sot": "st",
    "spa": "es",
    "srd": "sc",
    "srp": "sr",
    "ssw": "ss",
    "sun": "su",
    "swe": "sv",
    "swh": "sw",  # Swahili (individual language)
    "tam": "ta",
    "tat": "tt",
    "tel": "te",
    "tgk": "tg",
    "tgl": "tl",
    "tha": "th",
    "tir": "ti",
    "ton": "to",
    "tsn": "tn",
    "tso": "ts",
    "tuk": "tk",
    "tur": "tr",
    "twi": "tw",
    "uig": "ug",
    "ukr": "uk",
    "urd": "ur",
    "uzn": "uz",  # Northern Uzbek
    "vie": "vi",
    "wol": "wo",
    "xho": "xh",
    "ydd": "yi",  # Eastern Yiddish
    "yor": "yo",
    "zho": "zh",
    "zsm": "ms",  # Standard Malay
    "zul": "zu",
}

# The twenty ISO 639-2/B (bibliographic) codes that differ from the ISO 639-3
# ones of FLORES-200, as library catalogues and older tools write them (ger for
# German) -> the FLORES-200 language. For a macrolanguage (Persian, Malay,
# Albanian) that is the individual language FLORES-200 holds, as in ISO_639_1.
ISO_639_2B: dict[str, str] = {
    "alb": "als",  # Albanian (sqi); FLORES-200 holds Tosk Albanian
    "arm": "hye",  # Armenian
    "baq": "eus",  # Basque
    "bur": "mya",  # Burmese
    "chi": "zho",  # Chinese
    "cze": "ces",  # Czech
    "dut": "nld",  # Dutch
    "fre": "fra",  # French
    "geo": "kat",  # Georgian
    "ger": "deu",  # German
    "gre": "ell",  # Modern Greek
    "ice": "isl",  # Icelandic
    "mac": "mkd",  # Macedonian
    "mao": "mri",  # Maori
    "may": "zsm",  # Malay (msa); FLORES-200 holds Standard Malay
    "per": "pes",  # Persian (fas); FLORES-200 holds Western Persian
    "rum": "ron",  # Romanian
    "slo": "slk",  # Slovak
    "tib": "bod",  # Tibetan
    "wel": "cym",  # Welsh
}

# A language with no list of its own falls back on the list of the broader
# language it belongs to (a macrolanguage's two-letter code, or Filipino for
# Tagalog).
LIST_FALLBACKS: dict[str, str] = {
    "acm": "ar",  # Mesopotamian Arabic
    "acq": "ar",  # Ta'izzi-Adeni Arabic
    "aeb": "ar",  # Tunisian Arabic
    "ajp": "ar",  # South Levantine Arabic
    "apc": "ar",  # North Levantine Arabic
    "arq": "ar",  # Algerian Arabic
    "ars": "ar",  # Najdi Arabic
    "ary": "ar",  # Moroccan Arabic
    "arz": "ar",  # Egyptian Arabic
    "azb": "az",  # South Azerbaijani
    "ckb": "ku",  # Central Kurdish (Sorani)
    "nno": "no",  # Norwegian Nynorsk
    "nob": "no",  # Norwegian Bokmal
    "prs": "fa",  # Dari
    "tgl": "fil",  # Tagalog -> Filipino
    "yue": "zh",  # Cantonese
}

# ISO 639-3 codes of the bundled lists' languages outside FLORES-200 without a
# two-letter code: Algerian Arabic, Filipino, Norfolk-Pitcairn, Piya-Kwonci,
# Australian Kriol, Tetum, Klingon.
OTHER_LANGUAGES: frozenset[str] = frozenset({"arq", "fil", "pih", "piy", "rop", "tet", "tlh"})

# ISO 15924 scripts written without spaces between words.
UNSPACED_SCRIPTS: frozenset[str] = frozenset(
    {"Hans", "Hant", "Hani", "Jpan", "Hira", "Kana", "Thai", "Laoo", "Khmr", "Mymr", "Tibt"}
)

# Languages (ISO 639-3) written without spaces, for codes without a script:
# Chinese, Cantonese, Japanese, Thai, Lao, Khmer, Burmese, Shan, Tibetan, Dzongkha.
UNSPACED_LANGUAGES: frozenset[str] = frozenset(
    {"zho", "yue", "jpn", "tha", "lao", "khm", "mya", "shn", "bod", "dzo"}
)

# Unicode blocks (first, last code point) of those scripts: Thai, Lao, Tibetan,
# Myanmar (and its extensions), Khmer (and its symbols), CJK radicals and
# symbols, kana and Bopomofo (not the Hangul jamo between them), the CJK
# ideographs and their compatibility forms, half-width kana, the kana supplements.
UNSPACED_BLOCKS: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0E7F),
    (0x0E80, 0x0EFF),
    (0x0F00, 0x0FFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
    (0x19E0, 0x19FF),
    (0x2E80, 0x2FDF),
    (0x3000, 0x312F),
    (0x3190, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA9E0, 0xA9FF),
    (0xAA60, 0xAA7F),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x1AFF0, 0x1B16F),
    (0x20000, 0x3FFFF),
)
