"""Added toxicity as the NLLB paper measures it: a translation adds toxicity
when it contains a term of the target language's list and its source contains
no term of the source language's list.

Terms and texts are compared after NFKC and case folding, with runs of spaces
made one space. In languages written with spaces a term matches only as whole
words: the characters on either side of a match are not letters, marks or
numbers. In languages written without spaces (by the script of a FLORES-200
code: Hans, Hant, Jpan, Thai, Laoo, Khmr, Mymr, Tibt; else by the language:
Chinese, Japanese, Thai, Lao, Khmer, Burmese, Tibetan, Cantonese, Dzongkha,
Shan) a term matches anywhere, except that an edge of a term in a script written
with spaces (a romanised term in a Chinese list) still needs a word boundary.

By default the lists are the bundled LDNOOBW v2 lists (CC0-1.0, unreviewed);
NLLB's Toxicity-200 lists load from their folder with ``lists=folder``.

>>> lists = {"en": ["darn", "heck"], "de": ["mist"]}
>>> result = added_toxicity(
...     ["Das ist Mist.", "Guten Tag."],
...     ["That is darn rubbish.", "Heck, hello."],
...     source_lang="deu_Latn",
...     target_lang="eng_Latn",
...     lists=lists,
... )
>>> result.flagged, result.terms, result.rate
([1], {1: ['heck']}, 0.5)
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import TypeAlias

from tame_mt_metric.errors import EmptyTestSetError, InputTextError, InvalidOptionError
from tame_mt_metric.flores.language_codes import (
    FLORES_200,
    ISO_639_1,
    ISO_639_2B,
    LIST_FALLBACKS,
    OTHER_LANGUAGES,
    UNSPACED_BLOCKS,
    UNSPACED_LANGUAGES,
    UNSPACED_SCRIPTS,
)
from tame_mt_metric.retrieval.inputs import check_aligned, check_texts, read_lines

__all__ = [
    "BUNDLED_LISTS",
    "AddedToxicity",
    "Lists",
    "MissingToxicityListError",
    "added_toxicity",
    "fold",
    "load_lists",
    "toxic_terms",
]

BUNDLED_LISTS = "LDNOOBW v2 (bundled)"

Lists: TypeAlias = str | PathLike[str] | Mapping[str, Iterable[str]] | None

# LDNOOBW v2 files whose names are not the code of the language they hold:
# kh.txt (labelled Cambodian) is Kannada, dz.txt is romanised Algerian Arabic
# (not Dzongkha), yid.txt (labelled Hebrew) is romanised Hebrew.
_LDNOOBW_FILE_LANGUAGE = {"kh": "kn", "dz": "arq", "yid": "he"}

_CODE = re.compile(r"([A-Za-z]{2,3})(?:[_-]([A-Za-z]{4}))?")
_TOXICITY_200_FILE = re.compile(r"([a-z]{3}_[A-Z][a-z]{3})_twl\.txt")
_LDNOOBW_FILE = re.compile(r"([a-z]{2,3})\.txt")
_FROM_ISO_639_1 = {two: three for three, two in ISO_639_1.items()}
# Invisible characters: soft hyphen, word joiner and byte order mark are dropped;
# a zero-width space separates words like a space.
_INVISIBLE = {0x00AD: None, 0x2060: None, 0xFEFF: None, 0x200B: " "}


class MissingToxicityListError(InvalidOptionError):
    """A valid language code whose language has no toxicity list among those given."""


@dataclass(frozen=True)
class AddedToxicity:
    """Segments whose hypothesis adds toxicity: ``rate`` is ``len(flagged) /
    segments``; ``terms`` gives each flagged segment's target terms (normalised,
    sorted); ``source_list`` and ``target_list`` name the lists used, from
    ``lists`` (the bundled lists, a folder or a mapping)."""

    rate: float
    flagged: list[int]
    terms: dict[int, list[str]]
    segments: int
    source_list: str
    target_list: str
    lists: str


@dataclass(frozen=True)
class _Collection:
    origin: str
    terms: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class _Language:
    code: str
    iso3: str | None
    script: str | None
    names: tuple[str, ...]


def fold(text: str) -> str:
    """The form terms and texts are compared in: NFKC, case-folded, invisible
    characters removed, runs of spaces made one space.

    >>> fold("  \\uff33\\uff2f\\uff2e  of\\u00a0a\\u00adB ")
    'son of ab'
    """
    text = unicodedata.normalize("NFKC", text.translate(_INVISIBLE))
    return " ".join(unicodedata.normalize("NFKC", text.casefold()).split())


def _terms_of(lines: Iterable[str]) -> list[str]:
    terms = []
    for line in lines:
        term = line.replace("\ufeff", "").strip()
        if term and not term.startswith("#"):
            terms.append(term)
    return terms


def _ldnoobw_key(stem: str) -> str:
    return _LDNOOBW_FILE_LANGUAGE.get(stem, stem)


def load_lists(folder: str | PathLike[str] | None = None) -> dict[str, list[str]]:
    """The lists of a folder, by language code: NLLB's Toxicity-200 layout
    (``eng_Latn_twl.txt``...) or the LDNOOBW v2 layout (``data/en.txt``..., or
    the ``data`` folder itself); without a folder, the bundled LDNOOBW v2 lists.
    One term a line; blank lines and lines starting with ``#`` are skipped.

    >>> lists = load_lists()
    >>> len(lists) > 70, "en" in lists, "zh" in lists
    (True, True, True)
    """
    if folder is None:
        return {key: list(terms) for key, terms in _bundled_raw().items()}
    root = Path(folder)
    if not root.is_dir():
        raise InvalidOptionError(f"lists: {root} is not a folder")
    lists: dict[str, list[str]] = {}
    for path in sorted(root.glob("*_twl.txt")):
        match = _TOXICITY_200_FILE.fullmatch(path.name)
        if match is not None and path.is_file():
            lists[match.group(1)] = _terms_of(read_lines(path))
    if lists:
        return lists
    data = root / "data" if (root / "data").is_dir() else root
    for path in sorted(data.iterdir()):
        match = _LDNOOBW_FILE.fullmatch(path.name)
        if match is not None and path.is_file():
            key = _ldnoobw_key(match.group(1))
            lists.setdefault(key, []).extend(_terms_of(read_lines(path)))
    if not lists:
        raise InvalidOptionError(
            f"lists: no toxicity lists in {root} (expected files named like eng_Latn_twl.txt, "
            "as in Toxicity-200, or data/en.txt, as in LDNOOBW v2)"
        )
    return lists


@cache
def _bundled_raw() -> dict[str, tuple[str, ...]]:
    folder = resources.files("tame_mt_metric") / "data" / "toxicity" / "ldnoobw_v2"
    lists: dict[str, tuple[str, ...]] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        match = _LDNOOBW_FILE.fullmatch(entry.name)
        if match is not None:
            terms = _terms_of(entry.read_text(encoding="utf-8").split("\n"))
            key = _ldnoobw_key(match.group(1))
            lists[key] = lists.get(key, ()) + tuple(terms)
    return lists


@cache
def _bundled() -> _Collection:
    return _collect(BUNDLED_LISTS, _bundled_raw())


def _canonical(code: str) -> str | None:
    match = _CODE.fullmatch(code.strip())
    if match is None:
        return None
    language, script = match.group(1).lower(), match.group(2)
    return f"{language}_{script.title()}" if script else language


def _collect(origin: str, lists: Mapping[str, object]) -> _Collection:
    gathered: dict[str, set[str]] = {}
    for key, terms in lists.items():
        code = _canonical(key) if isinstance(key, str) else None
        if code is None:
            raise InvalidOptionError(
                f"lists: {key!r} is not a language code (expected one like 'eng_Latn', 'en' "
                "or 'eng')"
            )
        if isinstance(terms, str | bytes) or not isinstance(terms, Iterable):
            raise InputTextError(
                f"lists[{key!r}]: expected an iterable of terms, got {type(terms).__name__}"
            )
        found = gathered.setdefault(code, set())
        for i, term in enumerate(terms):
            if not isinstance(term, str):
                raise InputTextError(
                    f"lists[{key!r}][{i}]: expected a string, got {type(term).__name__}"
                )
            folded = fold(term)
            if folded:
                found.add(folded)
    return _Collection(origin, {code: tuple(sorted(found)) for code, found in gathered.items()})


def _collection(lists: Lists) -> _Collection:
    if lists is None:
        return _bundled()
    if isinstance(lists, str | PathLike):
        return _collect(str(lists), load_lists(lists))
    if isinstance(lists, Mapping):
        return _collect("the given mapping", lists)
    raise InvalidOptionError(
        f"lists: expected None, a folder or a mapping of language to terms, got "
        f"{type(lists).__name__}"
    )


def _known_codes(collection: _Collection) -> set[str]:
    codes = set(FLORES_200) | set(collection.terms) | OTHER_LANGUAGES
    codes |= {code.split("_")[0] for code in codes}
    codes |= set(ISO_639_1) | set(ISO_639_1.values())
    return codes | set(LIST_FALLBACKS) | set(LIST_FALLBACKS.values())


def _suggestions(code: str, collection: _Collection) -> str:
    """The closest valid codes: first those of the code's own language (``srp_Latn``
    -> ``srp_Cyrl``, ``en-US`` -> ``eng_Latn``, ``en``), then the nearest spellings."""
    known = {c.lower(): c for c in _known_codes(collection)}
    text = code.strip().lower()
    head = re.split(r"[-_\s]", text)[0]
    # ISO 639-1 (en), or 639-2/B (ger), also as an English name's first letters (German).
    language = _FROM_ISO_639_1.get(head) or ISO_639_2B.get(head[:3], head)
    own = sorted(c for c in known if c.partition("_")[0] in (head, language) and "_" in c)
    if head in known and head != text:
        own.append(head)
    close = own + difflib.get_close_matches(text, known, n=3, cutoff=0.6)
    picks = list(dict.fromkeys(known[c] for c in close))[:3]
    return f"; did you mean {' or '.join(map(repr, picks))}?" if picks else ""


def _language(argument: str, code: object, collection: _Collection) -> _Language:
    if not isinstance(code, str):
        raise InvalidOptionError(f"{argument}: expected a language code, got {type(code).__name__}")
    canonical = _canonical(code)
    if canonical is None:
        raise InvalidOptionError(
            f"{argument}: {code!r} is not a language code (expected a FLORES-200 code like "
            f"'eng_Latn', ISO 639-1 like 'en' or ISO 639-3 like 'eng')"
            + _suggestions(code, collection)
        )
    language, _, script = canonical.partition("_")
    if language in ISO_639_2B and canonical not in collection.terms:
        # A bibliographic code (ger) is the language's ISO 639-3 code (deu).
        language = ISO_639_2B[language]
        canonical = f"{language}_{script}" if script else language
    iso3 = _FROM_ISO_639_1.get(language) if len(language) == 2 else language
    iso1 = language if len(language) == 2 else ISO_639_1.get(language)
    scripted = f"{iso3}_{script}" if script and iso3 else canonical
    if script:
        valid = any(c in collection.terms for c in (canonical, scripted)) or scripted in FLORES_200
    else:
        valid = canonical in _known_codes(collection)
    if not valid:
        raise InvalidOptionError(
            f"{argument}: unknown language code {code!r}" + _suggestions(code, collection)
        )
    names = [canonical, scripted, language, iso3, iso1, LIST_FALLBACKS.get(iso3 or "")]
    unique = tuple(dict.fromkeys(name for name in names if name))
    return _Language(canonical, iso3, script or None, unique)


def _list_key(argument: str, language: _Language, collection: _Collection) -> str:
    keys = collection.terms
    for name in language.names:
        if name in keys:
            return name
        if "_" in name or language.script is not None:
            continue
        scripted = sorted(key for key in keys if key.startswith(f"{name}_"))
        if len(scripted) > 1:
            raise InvalidOptionError(
                f"{argument}: {language.code!r} matches several lists ({', '.join(scripted)}); "
                f"give the script, e.g. {scripted[0]!r}"
            )
        if scripted:
            return scripted[0]
    raise MissingToxicityListError(
        f"{argument}: no toxicity list for {language.code!r} in {collection.origin}; lists "
        f"exist for: {', '.join(sorted(keys))}"
    )


def _unspaced(language: _Language) -> bool:
    if language.script is not None:
        return language.script in UNSPACED_SCRIPTS
    return language.iso3 in UNSPACED_LANGUAGES


def _class_items(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(
        f"\\U{low:08x}" if low == high else f"\\U{low:08x}-\\U{high:08x}" for low, high in ranges
    )


@cache
def _mark_ranges() -> tuple[tuple[int, int], ...]:
    """Code point ranges of the marks (vowel signs, viramas, accents...) and the
    zero-width (non-)joiners: parts of words that Python's ``\\w`` leaves out."""
    ranges: list[tuple[int, int]] = []
    for point in range(0x110000):
        if unicodedata.category(chr(point))[0] == "M" or point in (0x200C, 0x200D):
            if ranges and ranges[-1][1] == point - 1:
                ranges[-1] = (ranges[-1][0], point)
            else:
                ranges.append((point, point))
    return tuple(ranges)


@cache
def _joining(unspaced: bool) -> str:
    """A regex for one character a term may not touch at a word edge: a letter,
    number or mark, less (in a language written without spaces) the characters
    of the scripts written without spaces."""
    ranges = list(_mark_ranges())
    if not unspaced:
        return f"(?:[^\\W_]|[{_class_items(ranges)}])"
    for first, last in UNSPACED_BLOCKS:
        kept: list[tuple[int, int]] = []
        for low, high in ranges:
            if low < first:
                kept.append((low, min(high, first - 1)))
            if high > last:
                kept.append((max(low, last + 1), high))
        ranges = kept
    return f"(?:[^\\W_{_class_items(UNSPACED_BLOCKS)}]|[{_class_items(ranges)}])"


_Trie: TypeAlias = "dict[str, _Trie]"


def _alternation(node: _Trie) -> str:
    """A regex matching the trie's terms, longest first (the end mark is ``""``)."""
    branches = []
    for char in sorted(key for key in node if key):
        chain, child = [char], node[char]
        while len(child) == 1 and "" not in child:
            ((char, child),) = child.items()
            chain.append(char)
        branches.append(re.escape("".join(chain)) + _alternation(child))
    if len(branches) == 1 and "" not in node:
        return branches[0]
    group = "(?:" + "|".join(branches) + ")" if branches else ""
    return group + "?" if "" in node and group else group


@lru_cache(maxsize=64)
def _pattern(terms: tuple[str, ...], unspaced: bool) -> re.Pattern[str]:
    """One regex for a whole list: a trie of the terms, each match between two
    edges that do not split a word, inside a lookahead so matches may overlap."""
    if not terms:
        return re.compile(r"(?!)")
    trie: _Trie = {}
    for term in terms:
        node = trie
        for char in term:
            node = node.setdefault(char, {})
        node[""] = {}
    joining = _joining(unspaced)
    edge = f"(?:(?<!{joining})|(?!{joining}))"
    return re.compile(f"(?=({edge}{_alternation(trie)}{edge}))")


def _matcher(argument: str, code: object, collection: _Collection) -> tuple[str, re.Pattern[str]]:
    language = _language(argument, code, collection)
    key = _list_key(argument, language, collection)
    return key, _pattern(collection.terms[key], _unspaced(language))


def _found(pattern: re.Pattern[str], text: str) -> list[str]:
    return sorted({match.group(1) for match in pattern.finditer(fold(text))})


def toxic_terms(text: str, lang: str, lists: Lists = None) -> list[str]:
    """The terms of ``lang``'s list found in ``text`` (normalised, sorted; at
    each position the longest).

    >>> toxic_terms("\\uff28\\uff25\\uff23\\uff2b, no heckling", "en", lists={"en": ["heck"]})
    ['heck']
    >>> toxic_terms("他是个笨蛋", "zho_Hans", lists={"zh": ["笨蛋"]})
    ['笨蛋']
    """
    if not isinstance(text, str):
        raise InputTextError(f"text: expected a string, got {type(text).__name__}")
    _, pattern = _matcher("lang", lang, _collection(lists))
    return _found(pattern, text)


def added_toxicity(
    sources: object,
    hypotheses: object,
    source_lang: str,
    target_lang: str,
    lists: Lists = None,
) -> AddedToxicity:
    """Which hypotheses add toxicity: a term of ``target_lang``'s list in the
    hypothesis and none of ``source_lang``'s list in its source. Codes are
    FLORES-200 (``eng_Latn``), ISO 639-1 (``en``) or ISO 639-3 (``eng``);
    ``lists`` is None (the bundled LDNOOBW v2 lists), a folder (see
    :func:`load_lists`) or a mapping of language code to terms."""
    srcs = check_texts("sources", sources)
    hyps = check_texts("hypotheses", hypotheses)
    check_aligned("sources", srcs, "hypotheses", hyps)
    if not srcs:
        raise EmptyTestSetError("sources: the test set is empty")
    collection = _collection(lists)
    source_list, source_pattern = _matcher("source_lang", source_lang, collection)
    target_list, target_pattern = _matcher("target_lang", target_lang, collection)
    terms: dict[int, list[str]] = {}
    for i, (source, hypothesis) in enumerate(zip(srcs, hyps, strict=True)):
        found = _found(target_pattern, hypothesis)
        if found and source_pattern.search(fold(source)) is None:
            terms[i] = found
    return AddedToxicity(
        rate=len(terms) / len(srcs),
        flagged=list(terms),
        terms=terms,
        segments=len(srcs),
        source_list=source_list,
        target_list=target_list,
        lists=collection.origin,
    )
