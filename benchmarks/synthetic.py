"""Deterministic synthetic parallel corpus for retrieval benchmarks.

The source language has a Zipf-Mandelbrot word distribution over a generated
vocabulary (frequent words are short), sentence lengths drawn from a log-normal
distribution clipped to 5-40 words, a capitalised first word and a final full stop.
The target language is a deterministic word-level transform of the source (a
one-to-one lexicon into a different spelling system, some word-order swaps and
inserted particles) plus noise (dropped and substituted words).

The test set mixes near-duplicates of training pairs (one to three word edits),
medium items built from phrases of two or three training sentences and fresh
words, and far items (fresh sentences).

    python benchmarks/synthetic.py --train 100000 --test 2000 --out DIR

writes DIR/train.src, DIR/train.tgt, DIR/test.src, DIR/test.ref and DIR/test.kind
(near / medium / far, one per line). The same seed gives byte-identical files;
the training rows of a smaller corpus are a prefix of a larger one.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

CHUNK = 100_000
Ids = npt.NDArray[np.int64]
# Syllable inventories (space-separated); a coda is empty five times in twelve.
SRC_ONSETS = "b c d f g h j k l m n p r s t v w y z br ch st th tr pl sh"
SRC_NUCLEI = "a e i o u a e i o ea ou ai"
SRC_CODAS = "n r s t l ng st"
TGT_ONSETS = "b d f g h k l m n p r s t v w z sch kr ß ts pf gl ž č"
TGT_NUCLEI = "a e i o u ä ö ü ie ei au aa"
TGT_CODAS = "n r k t m ch ss"
PARTICLE = "ku"


@dataclass(frozen=True)
class Forms:
    """Every word in three spellings (sentence-initial, medial, final), as one byte buffer."""

    buffer: npt.NDArray[np.uint8]
    offsets: npt.NDArray[np.int64]  # one per form
    lengths: npt.NDArray[np.int64]  # one per form
    size: int  # vocabulary size V; form id = word id + V * position kind


@dataclass(frozen=True)
class Language:
    src_forms: Forms
    tgt_forms: Forms
    lexicon: npt.NDArray[np.int64]  # source word id -> target word id
    cdf: npt.NDArray[np.float64]  # Zipf-Mandelbrot cumulative distribution over word ids
    particle: int  # target word id inserted after some source words


def _make_words(
    rng: np.random.Generator, size: int, onsets: str, nuclei: str, codas: str
) -> list[str]:
    onset, nucleus, coda = onsets.split(), nuclei.split(), codas.split() + [""] * 5
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        rank = len(words)
        syllables = 1 + min(3, int(np.log10(rank + 2) * 0.4 + rng.random() * 1.1))
        word = "".join(
            onset[rng.integers(len(onset))]
            + nucleus[rng.integers(len(nucleus))]
            + coda[rng.integers(len(coda))]
            for _ in range(syllables)
        )
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def _make_forms(words: list[str]) -> Forms:
    spellings = (
        [w[0].upper() + w[1:] + " " for w in words]
        + [w + " " for w in words]
        + [w + ".\n" for w in words]
    )
    encoded = [s.encode("utf-8") for s in spellings]
    lengths = np.array([len(e) for e in encoded], dtype=np.int64)
    offsets = np.zeros(len(encoded), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    buffer = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return Forms(buffer, offsets, lengths, len(words))


def make_language(seed: int, vocab_size: int) -> Language:
    rng = np.random.default_rng([seed, 0xC0DE])
    src_words = _make_words(rng, vocab_size, SRC_ONSETS, SRC_NUCLEI, SRC_CODAS)
    tgt_words = _make_words(rng, vocab_size + 1, TGT_ONSETS, TGT_NUCLEI, TGT_CODAS)
    tgt_words = [*[w for w in tgt_words if w != PARTICLE][:vocab_size], PARTICLE]
    # Rank r maps near rank r, so target frequencies stay Zipfian.
    lexicon = np.arange(vocab_size, dtype=np.int64)
    for start in range(0, vocab_size, 8):
        block = lexicon[start : start + 8]
        lexicon[start : start + 8] = rng.permutation(block)
    weights = 1.0 / (np.arange(vocab_size) + 2.7) ** 1.05
    cdf = np.cumsum(weights / weights.sum())
    return Language(_make_forms(src_words), _make_forms(tgt_words), lexicon, cdf, vocab_size)


def _sample_words(lang: Language, rng: np.random.Generator, n: int) -> Ids:
    idx = np.searchsorted(lang.cdf, rng.random(n), side="right")
    return np.minimum(idx, len(lang.cdf) - 1)


def _sample_lengths(rng: np.random.Generator, n: int) -> Ids:
    lengths = np.rint(rng.lognormal(np.log(14.0), 0.45, n))
    return np.clip(lengths, 5, 40).astype(np.int64)


def _render(tokens: Ids, sentence: Ids, forms: Forms) -> bytes:
    """Spell out token ids as text lines; `sentence` holds each token's (sorted) line id."""
    if tokens.size == 0:
        return b""
    first = np.ones(tokens.size, dtype=bool)
    first[1:] = sentence[1:] != sentence[:-1]
    last = np.ones(tokens.size, dtype=bool)
    last[:-1] = sentence[1:] != sentence[:-1]
    kind = np.where(last, 2, np.where(first, 0, 1))
    form = tokens + forms.size * kind
    lengths = forms.lengths[form]
    out_start = np.cumsum(lengths) - lengths
    gather = np.repeat(forms.offsets[form] - out_start, lengths)
    gather += np.arange(gather.size, dtype=np.int64)
    spelled: npt.NDArray[np.uint8] = forms.buffer[gather]
    return spelled.tobytes()


def _translate(
    lang: Language, tokens: Ids, sentence: Ids, rng: np.random.Generator
) -> tuple[Ids, Ids]:
    """Word-level transform plus noise; returns target token ids and their line ids."""
    n = tokens.size
    boundary_first = np.ones(n, dtype=bool)
    boundary_first[1:] = sentence[1:] != sentence[:-1]
    boundary_last = np.ones(n, dtype=bool)
    boundary_last[:-1] = sentence[1:] != sentence[:-1]
    target = lang.lexicon[tokens]
    # Deterministic grammar: words of one class swap with the next word (no chains).
    flag = (tokens % 5 == 1) & ~boundary_last
    flag[1:] &= ~flag[:-1]
    swap = np.flatnonzero(flag)
    target[swap], target[swap + 1] = target[swap + 1], target[swap].copy()
    # Noise: substitutions anywhere, drops anywhere but the first and last word.
    substitute = rng.random(n) < 0.03
    target[substitute] = lang.lexicon[_sample_words(lang, rng, int(substitute.sum()))]
    keep = ~((rng.random(n) < 0.03) & ~boundary_first & ~boundary_last)
    # Another class of words is followed by a particle.
    repeat = np.where(tokens % 13 == 3, 2, 1) * keep
    out_tokens = np.repeat(target, repeat)
    out_sentence = np.repeat(sentence, repeat)
    inserted = np.zeros(out_tokens.size, dtype=bool)
    ends = np.cumsum(repeat)
    inserted[ends[repeat == 2] - 1] = True
    out_tokens[inserted] = lang.particle
    return out_tokens, out_sentence


def _fresh_sentences(lang: Language, rng: np.random.Generator, count: int) -> tuple[Ids, Ids]:
    lengths = _sample_lengths(rng, count)
    sentence = np.repeat(np.arange(count, dtype=np.int64), lengths)
    return _sample_words(lang, rng, int(lengths.sum())), sentence


def _edit(lang: Language, rng: np.random.Generator, words: list[int]) -> list[int]:
    words = list(words)
    for _ in range(int(rng.integers(1, 4))):
        op = int(rng.integers(3))
        pos = int(rng.integers(len(words)))
        fresh = int(_sample_words(lang, rng, 1)[0])
        if op == 0:
            words[pos] = fresh
        elif op == 1 and len(words) > 5:
            del words[pos]
        else:
            words.insert(pos, fresh)
    return words


def _medium(lang: Language, rng: np.random.Generator, donors: list[list[int]]) -> list[int]:
    """About half of the first donor, a phrase of each other donor, and fresh words."""
    pieces: list[list[int]] = []
    for k, donor in enumerate(donors):
        span = max(3, round(len(donor) * rng.uniform(0.4, 0.8))) if k == 0 else rng.integers(3, 7)
        start = int(rng.integers(max(1, len(donor) - int(span) + 1)))
        pieces.append(donor[start : start + int(span)])
    pieces.append([int(w) for w in _sample_words(lang, rng, int(rng.integers(1, 6)))])
    order = rng.permutation(len(pieces))
    return [w for i in order for w in pieces[i]]


def generate(
    out: Path,
    n_train: int,
    n_test: int,
    seed: int = 13,
    vocab_size: int = 60_000,
    near: float = 0.2,
    medium: float = 0.3,
) -> None:
    """Write train.src, train.tgt, test.src, test.ref and test.kind under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    lang = make_language(seed, vocab_size)
    plan = np.random.default_rng([seed, 0x7E57])
    n_near = round(n_test * near)
    n_medium = round(n_test * medium)
    kinds = ["near"] * n_near + ["medium"] * n_medium + ["far"] * (n_test - n_near - n_medium)
    donors_needed = plan.integers(2, 4, n_medium)
    chosen = plan.integers(0, n_train, n_near + int(donors_needed.sum()))
    wanted = set(chosen.tolist())
    captured: dict[int, list[int]] = {}
    with open(out / "train.src", "wb") as src, open(out / "train.tgt", "wb") as tgt:
        for chunk_start in range(0, n_train, CHUNK):
            count = min(CHUNK, n_train - chunk_start)
            rng = np.random.default_rng([seed, chunk_start // CHUNK])
            tokens, sentence = _fresh_sentences(lang, rng, CHUNK)
            rows = sentence < count
            tokens, sentence = tokens[rows], sentence[rows]
            src.write(_render(tokens, sentence, lang.src_forms))
            tgt.write(_render(*_translate(lang, tokens, sentence, rng), lang.tgt_forms))
            starts = np.searchsorted(sentence, np.arange(count + 1))
            for row in wanted:
                if chunk_start <= row < chunk_start + count:
                    local = row - chunk_start
                    captured[row] = tokens[starts[local] : starts[local + 1]].tolist()

    test_rng = np.random.default_rng([seed, 0x7E57, 1])
    items: list[list[int]] = [_edit(lang, test_rng, captured[int(r)]) for r in chosen[:n_near]]
    cursor = n_near
    for k in donors_needed:
        donors = [captured[int(r)] for r in chosen[cursor : cursor + int(k)]]
        cursor += int(k)
        items.append(_medium(lang, test_rng, donors))
    fresh, fresh_sentence = _fresh_sentences(lang, test_rng, n_test - len(items))
    starts = np.searchsorted(fresh_sentence, np.arange(n_test - len(items) + 1))
    items.extend(fresh[starts[i] : starts[i + 1]].tolist() for i in range(len(starts) - 1))

    order = test_rng.permutation(n_test)
    items = [items[i] for i in order]
    kinds = [kinds[i] for i in order]
    tokens = np.array([w for item in items for w in item], dtype=np.int64)
    sentence = np.repeat(np.arange(n_test, dtype=np.int64), [len(item) for item in items])
    (out / "test.src").write_bytes(_render(tokens, sentence, lang.src_forms))
    (out / "test.ref").write_bytes(
        _render(*_translate(lang, tokens, sentence, test_rng), lang.tgt_forms)
    )
    (out / "test.kind").write_text("".join(k + "\n" for k in kinds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=100_000, help="training pairs")
    parser.add_argument("--test", type=int, default=2_000, help="test pairs")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--vocab", type=int, default=60_000, help="source vocabulary size")
    parser.add_argument("--near", type=float, default=0.2, help="share of near-duplicate items")
    parser.add_argument("--medium", type=float, default=0.3, help="share of medium items")
    args = parser.parse_args()
    started = time.perf_counter()
    generate(args.out, args.train, args.test, args.seed, args.vocab, args.near, args.medium)
    print(
        f"wrote {args.train} train / {args.test} test pairs to {args.out} "
        f"in {time.perf_counter() - started:.1f}s"
    )


if __name__ == "__main__":
    main()
