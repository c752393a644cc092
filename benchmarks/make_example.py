"""Build the bundled real example from the CC0 Bible corpus in ../shared/data.

Training pairs: Swahili -> Zulu verses of Matthew, Mark, John and Acts.
Test items: the first 400 aligned verses of Luke, whose synoptic parallels in
Matthew and Mark make some of them close to training data and others far.

    python benchmarks/make_example.py [--data ../shared/data/bible]
"""

from __future__ import annotations

import argparse
import gzip
import html
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEG = re.compile(r'<seg id="b\.([A-Z0-9]+)\.(\d+)\.(\d+)"[^>]*>\s*(.*?)\s*</seg>', re.S)
TRAIN_BOOKS = ("MAT", "MAR", "JOH", "ACT")
TEST_BOOK = "LUK"
TEST_ITEMS = 400


def verses(path: Path) -> dict[tuple[str, int, int], str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        text = f.read()
    found = {}
    for book, chapter, verse, body in SEG.findall(text):
        body = " ".join(html.unescape(body).split())  # the XML escapes &quot; and &amp;
        if body:
            found[(book, int(chapter), int(verse))] = body
    return found


def write(path: Path, lines: list[str]) -> None:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "bible")
    args = parser.parse_args()
    sw = verses(args.data / "Swahili-NT.xml.gz")
    zu = verses(args.data / "Zulu-NT.xml.gz")
    keys = [k for k in sw if k in zu]
    train = [k for k in keys if k[0] in TRAIN_BOOKS]
    test = [k for k in keys if k[0] == TEST_BOOK][:TEST_ITEMS]
    out = ROOT / "tame_mt_metric" / "data" / "bible_sw_zu"
    out.mkdir(parents=True, exist_ok=True)
    write(out / "train.sw.gz", [sw[k] for k in train])
    write(out / "train.zu.gz", [zu[k] for k in train])
    write(out / "test.sw", [sw[k] for k in test])
    write(out / "test.zu", [zu[k] for k in test])
    print(f"{len(train)} training pairs, {len(test)} test items -> {out}")


if __name__ == "__main__":
    main()
