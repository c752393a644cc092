"""What a user gets from the two wheels, run inside the fresh virtual environment
that holds only them and their dependencies (no Rust, offline, from a folder
outside the repository): ``evaluate.load("tame_mt")`` and ``compute()`` on the
bundled example, the CLI's ``score`` on the same files giving the same numbers,
and the demo. Exits non-zero on the first difference."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import evaluate
import tame_mt_core

import tame_mt_metric
from tame_mt_metric.retrieval.inputs import read_lines
from tame_mt_metric.space import simulated_system

for tool in ("cargo", "rustc"):
    assert shutil.which(tool) is None, f"{tool} is on PATH: this is not a Rust-free install"
for variable in ("HF_HUB_OFFLINE", "HF_EVALUATE_OFFLINE", "HF_DATASETS_OFFLINE"):
    assert os.environ.get(variable) == "1", f"{variable}=1 is not set"
site = Path(tame_mt_core.__file__).resolve().parent.parent
for module in (tame_mt_core, tame_mt_metric):
    where = Path(module.__file__ or "").resolve()
    assert where.is_relative_to(site), f"{module.__name__} comes from {where}, not the wheels"
print(f"tame-mt-metric {tame_mt_metric.__version__} and tame-mt-core {tame_mt_core.__version__}")
print(f"  from {site}")

data = Path(tame_mt_metric.__file__).parent / "data" / "bible_sw_zu"
sources = (data / "test.sw").read_text(encoding="utf-8").splitlines()
references = (data / "test.zu").read_text(encoding="utf-8").splitlines()
predictions = simulated_system(references)

with tempfile.TemporaryDirectory() as folder:
    work = Path(folder)
    hyp = work / "hyp.zu"
    hyp.write_text("".join(f"{p}\n" for p in predictions), encoding="utf-8")
    cli_report = work / "report.json"
    subprocess.run(
        [
            "tame-mt-metric",
            "score",
            "--train-src",
            str(data / "train.sw.gz"),
            "--train-tgt",
            str(data / "train.zu.gz"),
            "--test-src",
            str(data / "test.sw"),
            "--ref",
            str(data / "test.zu"),
            "--hyp",
            str(hyp),
            "--json-out",
            str(cli_report),
            "--quiet",
        ],
        check=True,
        cwd=work,
    )
    report = json.loads(cli_report.read_text(encoding="utf-8"))

    metric = evaluate.load(
        "tame_mt",
        train={
            "source": read_lines(data / "train.sw.gz"),
            "target": read_lines(data / "train.zu.gz"),
        },
    )
    out = metric.compute(predictions=predictions, references=references, sources=sources)
    print(
        f"compute() and the CLI's score: BLEU {out['bleu']:.2f}, TM-BLEU {out['tm_bleu']:.2f}, "
        f"far bin {out['bin/far/count']} items"
    )
    assert out["signature"] == report["signature"], (out["signature"], report["signature"])
    assert out["bleu"] == report["quality"]["system"]["bleu"], report["quality"]
    assert out["tm_bleu"] == report["quality"]["tm"]["bleu"], report["quality"]

    demo = subprocess.run(
        [sys.executable, "-m", "tame_mt_metric.demo"],
        check=True,
        cwd=work,
        capture_output=True,
        text=True,
    ).stdout
    print(demo)
    assert "TM-BLEU" in demo and "signature:" in demo, demo
print("the wheels work for a user")
