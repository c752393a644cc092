"""``doctor`` (what is installed and where things are) and ``demo`` (the
bundled real example)."""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

import sacrebleu
import tame_mt_core as _core

from tame_mt_metric._version import __version__
from tame_mt_metric.cache.entries import cache_root, list_entries
from tame_mt_metric.errors import MissingModelError
from tame_mt_metric.report.spbleu import MODEL_ENV, OFFICIAL_MODELS, find_model
from tame_mt_metric.retrieval.config import RetrievalConfig

__all__ = ["register"]


def _doctor(args: argparse.Namespace) -> int:
    threads = RetrievalConfig().worker_threads()
    entries = list_entries()
    core_folder = Path(_core.__file__).parent
    print(f"tame-mt-metric {__version__}, core {_core.__version__} (tame-mt-core, {core_folder})")
    print(f"python {platform.python_version()}, sacrebleu {sacrebleu.__version__}")
    print(f"index format {_core.INDEX_FORMAT_VERSION}; threads {threads}")
    print(
        f"cache {cache_root()}: {len(entries)} entries, "
        f"{sum(e.nbytes for e in entries) / 2**20:,.1f} MiB"
    )
    for kind in OFFICIAL_MODELS:
        try:
            model = find_model(kind)
            print(f"spBLEU {kind}: {model.path} ({model.signature()})")
        except MissingModelError:
            print(
                f"spBLEU {kind}: no model (place it at the sacrebleu cache path or set {MODEL_ENV})"
            )
    return 0


def _demo(args: argparse.Namespace) -> int:
    from tame_mt_metric.demo import main

    main([])
    return 0


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    doctor = sub.add_parser(
        "doctor", parents=[common], help="versions, core, threads, cache, models"
    )
    doctor.set_defaults(run=_doctor)
    demo = sub.add_parser("demo", parents=[common], help="the bundled real example")
    demo.set_defaults(run=_demo)
