"""The streaming strategy's exact merge of shards, its input order, and Ctrl-C."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tame_mt_metric import (
    EmptyCorpusError,
    InvalidOptionError,
    MisalignedInputError,
    RetrievalConfig,
    StreamingAudit,
    find_exposures,
)


def _corpus(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    words = ["the", "house", "tree", "river", "a", "old", "small", "runs", "sees", "of"]
    rows = []
    for _ in range(n):
        sentence = " ".join(rng.choices(words, k=rng.randint(0, 6)))
        rows.append((sentence, sentence.upper()))
    return rows


def test_shards_merge_into_the_single_pass_answer() -> None:
    train = _corpus(300, seed=1)
    test = [s for s, _ in _corpus(40, seed=2)]
    refs = [[s.upper()] for s in test]
    src, tgt = [s for s, _ in train], [t for _, t in train]
    whole = find_exposures(src, tgt, test, refs, RetrievalConfig(top_k=3, strategy="indexed"))

    shards = []
    for lo, hi in ((200, 300), (0, 120), (120, 200)):
        audit = StreamingAudit(test, refs, RetrievalConfig(top_k=3, block_rows=32))
        audit.feed(src[lo:hi], tgt[lo:hi], lo)
        shards.append(audit)
    merged = shards[0]
    merged.merge(shards[1])
    merged.merge(shards[2])
    result = merged.result()
    assert result.items == whole.items
    assert result.num_train == 300


def test_rows_must_arrive_in_order_and_shards_must_match() -> None:
    audit = StreamingAudit(["a b c"], [["x"]])
    with pytest.raises(EmptyCorpusError):
        audit.result()
    audit.feed(["a b c"], ["x"], 10)
    with pytest.raises(InvalidOptionError, match="rows must arrive in order"):
        audit.feed(["a b c"], ["x"], 5)
    with pytest.raises(MisalignedInputError, match="train_sources has 2 items"):
        audit.feed(["a", "b"], ["x"], 20)
    other = StreamingAudit(["different"], [["x"]])
    with pytest.raises(InvalidOptionError, match="different test sets"):
        audit.merge(other)


def test_ctrl_c_interrupts_a_long_audit() -> None:
    # One call into the core over 20M rows: the interrupt must come from inside it.
    script = textwrap.dedent(
        """
        from tame_mt_core import GramSettings, StreamingAudit
        settings = GramSettings([3, 4, 5])
        audit = StreamingAudit(["row 5 of a long corpus"], [], settings, block_rows=1000)
        train = ["row 7 of a long corpus", "another row of text"] * 10_000_000
        print("started", flush=True)
        audit.feed(train, train, 0)
        print("finished", flush=True)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "started"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in err
    assert "finished" not in out
