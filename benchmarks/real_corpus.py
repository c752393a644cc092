"""Assemble a real multilingual parallel corpus of a million pairs or more.

Sources (read from ../shared/data relative to the repository root by default):

- FLORES-200 dev + devtest: English (eng_Latn) to each of the other 203 languages,
  about 408k pairs (CC-BY-SA-4.0).
- The New Testament in 14 languages (CC0): verses aligned by id, every ordered
  language pair, about 1.4M pairs.

The 2,000-item test set is held out reproducibly:

- 1,500 FLORES devtest sentences, English to four languages (375 each). Only that
  direction's pair is removed from training, so the English source stays in the
  training set (paired with other languages) and the reference's siblings in
  related languages stay too: these items are exposed.
- 500 Bible verses in four language pairs (125 each). These verse ids are removed
  from every language pair, so their neighbours are other verses.

With --test-set flores, nothing is held out: the test set is FLORES-200 dev +
devtest, English to French in full (2,009 items, each set named in test.kind),
and every FLORES pair stays in training, so the test items leak into it word
for word (the corpus to decontaminate).

The training pairs are then sampled down to --max-train (order kept). Output:
DIR/train.src, DIR/train.tgt, DIR/test.src, DIR/test.ref, DIR/test.kind (the
direction of each test item). Nothing is written inside the repository.

    python benchmarks/real_corpus.py --out /tmp/tame-bench/real1m
"""

from __future__ import annotations

import argparse
import gzip
import random
import tarfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FLORES_PIVOT = "eng_Latn"
FLORES_TEST_LANGS = ("fra_Latn", "swh_Latn", "zul_Latn", "ukr_Cyrl")
FLORES_HELD_PER_LANG = 375
FLORES_LEAK_LANG = "fra_Latn"
BIBLE_HELD_PER_PAIR = 125
BIBLE_TEST_PAIRS = (
    ("Swahili", "Zulu"),
    ("Basque", "Latvian"),
    ("Ukranian", "Kabyle"),
    ("Ewe", "Wolof"),
)

Pair = tuple[str, str]


def clean(text: str) -> str:
    """One line of text: every run of whitespace (line breaks included) becomes one space."""
    return " ".join(text.split())


def read_flores(archive: Path) -> dict[tuple[str, str], list[str]]:
    """(split, language) -> line-aligned sentences."""
    sentences: dict[tuple[str, str], list[str]] = {}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            parts = member.name.split("/")
            if not member.isfile() or len(parts) != 3 or parts[1] not in ("dev", "devtest"):
                continue
            lang = parts[2].rsplit(".", 1)[0]
            handle = tar.extractfile(member)
            assert handle is not None
            lines = handle.read().decode("utf-8").split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            sentences[(parts[1], lang)] = [clean(line) for line in lines]
    return sentences


def read_bible(folder: Path) -> dict[str, dict[str, str]]:
    """language -> verse id -> verse (empty verses left out)."""
    verses: dict[str, dict[str, str]] = {}
    for path in sorted(folder.glob("*-NT.xml.gz")):
        lang = path.name.split("-")[0]
        table: dict[str, str] = {}
        with gzip.open(path, "rb") as handle:
            for _, element in ET.iterparse(handle):
                if element.tag == "seg" and element.get("id"):
                    text = clean("".join(element.itertext()))
                    if text:
                        table[element.get("id", "")] = text
                    element.clear()
        verses[lang] = table
    return verses


def split_flores(
    flores: dict[tuple[str, str], list[str]], rng: random.Random, per_lang: int
) -> tuple[list[Pair], list[Pair], list[str]]:
    """Training pairs, test pairs and test labels from FLORES (``per_lang``
    devtest items held out per test language)."""
    size = len(flores[("devtest", FLORES_PIVOT)])
    held: set[tuple[str, int]] = set()
    test: list[Pair] = []
    kinds: list[str] = []
    for lang in FLORES_TEST_LANGS:
        for i in sorted(rng.sample(range(size), per_lang)):
            held.add((lang, i))
            test.append((flores[("devtest", FLORES_PIVOT)][i], flores[("devtest", lang)][i]))
            kinds.append(f"flores:{FLORES_PIVOT}-{lang}")
    train: list[Pair] = []
    langs = sorted({lang for _, lang in flores if lang != FLORES_PIVOT})
    for split in ("dev", "devtest"):
        pivot = flores[(split, FLORES_PIVOT)]
        for lang in langs:
            for i, (src, tgt) in enumerate(zip(pivot, flores[(split, lang)], strict=True)):
                if split == "devtest" and (lang, i) in held:
                    continue
                if src and tgt:
                    train.append((src, tgt))
    return train, test, kinds


def split_bible(
    bible: dict[str, dict[str, str]], rng: random.Random, per_pair: int
) -> tuple[list[Pair], list[Pair], list[str]]:
    """Training pairs, test pairs and test labels from the Bible verses
    (``per_pair`` verses held out per test pair)."""
    held: set[str] = set()
    test: list[Pair] = []
    kinds: list[str] = []
    for src_lang, tgt_lang in BIBLE_TEST_PAIRS:
        shared = sorted(set(bible[src_lang]) & set(bible[tgt_lang]) - held)
        for verse in sorted(rng.sample(shared, per_pair)):
            held.add(verse)
            test.append((bible[src_lang][verse], bible[tgt_lang][verse]))
            kinds.append(f"bible:{src_lang}-{tgt_lang}")
    train: list[Pair] = []
    langs = sorted(bible)
    for src_lang in langs:
        for tgt_lang in langs:
            if src_lang == tgt_lang:
                continue
            source, target = bible[src_lang], bible[tgt_lang]
            for verse in source:
                if verse in target and verse not in held:
                    train.append((source[verse], target[verse]))
    return train, test, kinds


def _write_lines(path: Path, lines: Iterator[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(line + "\n" for line in lines)


def flores_leaks(flores: dict[tuple[str, str], list[str]]) -> tuple[list[Pair], list[str]]:
    """FLORES dev + devtest, English to French, in full, with each item's set."""
    test: list[Pair] = []
    kinds: list[str] = []
    for split in ("dev", "devtest"):
        pivot, target = flores[(split, FLORES_PIVOT)], flores[(split, FLORES_LEAK_LANG)]
        test.extend(zip(pivot, target, strict=True))
        kinds.extend([f"flores-{split}:{FLORES_PIVOT}-{FLORES_LEAK_LANG}"] * len(pivot))
    return test, kinds


def build(
    out: Path,
    data: Path = DATA,
    max_train: int = 1_000_000,
    seed: int = 13,
    test_set: str = "held-out",
) -> tuple[int, int]:
    """Write the corpus under `out`; returns the numbers of training pairs and
    test items."""
    rng = random.Random(seed)
    held_out = test_set == "held-out"
    flores = read_flores(data / "flores200_dataset.tar.gz")
    flores_train, flores_test, flores_kinds = split_flores(
        flores, rng, FLORES_HELD_PER_LANG if held_out else 0
    )
    bible_train, bible_test, bible_kinds = split_bible(
        read_bible(data / "bible"), rng, BIBLE_HELD_PER_PAIR if held_out else 0
    )
    train = flores_train + bible_train
    if 0 < max_train < len(train):
        keep = sorted(rng.sample(range(len(train)), max_train))
        train = [train[i] for i in keep]
    if held_out:
        test, kinds = flores_test + bible_test, flores_kinds + bible_kinds
    else:
        test, kinds = flores_leaks(flores)
    order = list(range(len(test)))
    rng.shuffle(order)
    out.mkdir(parents=True, exist_ok=True)
    _write_lines(out / "train.src", (src for src, _ in train))
    _write_lines(out / "train.tgt", (tgt for _, tgt in train))
    _write_lines(out / "test.src", (test[i][0] for i in order))
    _write_lines(out / "test.ref", (test[i][1] for i in order))
    _write_lines(out / "test.kind", (kinds[i] for i in order))
    return len(train), len(test)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--data", type=Path, default=DATA, help="shared data folder")
    parser.add_argument(
        "--max-train",
        type=int,
        default=1_000_000,
        help="sample the training pairs down to this many (0: keep all)",
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--test-set",
        choices=("held-out", "flores"),
        default="held-out",
        help="held-out: 2,000 items held out of training; flores: FLORES dev + devtest "
        "English to French, left in training",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    n_train, n_test = build(args.out, args.data, args.max_train, args.seed, args.test_set)
    print(
        f"wrote {n_train} train / {n_test} test pairs to {args.out} "
        f"in {time.perf_counter() - started:.1f}s"
    )


if __name__ == "__main__":
    main()
