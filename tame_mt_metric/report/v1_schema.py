"""The compatibility output ``tame-mt-v1``: the JSON report and the segment rows
in the shape of the TAME-MT reference implementation's published v1 schemas,
for the dashboards and scripts built on them. Both are made from this
package's own outputs (``ReportDocument.as_json``, ``source_side_report_json``,
``segment_rows``) and the exposures they were made of; the schemas they
validate against ship in ``tame_mt_metric/schemas/``.

What v1 holds beyond this package's report: the exposure distribution of each
side (median and the 5th, 25th, 75th and 95th percentiles, by linear
interpolation between order statistics, NumPy's default; the maximum), the
retrieval's modes (every side exact here, so no threshold can miss an item),
each bin's ``percentage`` (of the test items, 0-100) and ``performance``
(stage timings, threads, peak memory). Each v1 segment row names the TM's
source (``tm_source_index``, ``tm_source_similarity``: the source's nearest
neighbour and its exposure) and keeps raw text only where it was asked for.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.retrieval.exposure import Exposures

__all__ = [
    "OUTPUT_SCHEMAS",
    "V1",
    "V1_SEGMENT_KEYS",
    "v1_report",
    "v1_segment_rows",
]

V1 = "tame-mt-v1"
# The values of --output-schema: this package's own outputs, or v1's.
OUTPUT_SCHEMAS = ("tame-mt-metric", V1)
V1_SCHEMA_VERSION = "1.0"

# The keys every v1 segment row has, in order; the optional ones follow them.
V1_SEGMENT_KEYS = (
    "index",
    "source_exposure",
    "source_nn_index",
    "source_exact",
    "target_exposure",
    "target_nn_index",
    "target_ref_index",
    "target_exact",
    "pair_exposure",
    "pair_nn_index",
    "pair_ref_index",
    "pair_exact",
    "bin",
    "tm_source_index",
    "tm_source_similarity",
)
# A v1 name for each of this package's raw-text fields of a segment row.
_NEIGHBOUR_TEXT = {
    "source_nn_text": "neighbor_source_text",
    "target_nn_text": "neighbor_target_text",
}


def _percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of sorted values, interpolated linearly
    between the order statistics around rank ``q/100 * (n - 1)``."""
    rank = q / 100 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _distribution(values: Sequence[Fraction]) -> dict[str, float | None]:
    ordered = sorted(float(v) for v in values)
    if not ordered:
        return dict.fromkeys(("median", "p05", "p25", "p75", "p95", "max"))
    return {
        "median": _percentile(ordered, 50),
        "p05": _percentile(ordered, 5),
        "p25": _percentile(ordered, 25),
        "p75": _percentile(ordered, 75),
        "p95": _percentile(ordered, 95),
        "max": ordered[-1],
    }


def _side(ours: Mapping[str, Any] | None, values: Sequence[Fraction]) -> dict[str, Any] | None:
    if ours is None:
        return None
    return {
        "mean": ours["mean"],
        **_distribution(values),
        "exact_overlap": ours["exact_overlap"],
        "at_threshold": ours["at_threshold"],
    }


def _peak_memory() -> dict[str, int | None]:
    """The process's peak resident memory, where the platform tells it."""
    try:
        import resource
    except ImportError:  # Windows
        return {"peak_rss_bytes": None}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"peak_rss_bytes": int(peak if sys.platform == "darwin" else peak * 1024)}


def v1_report(
    document: Mapping[str, Any],
    config: TameConfig,
    exposures: Exposures,
    timings: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The v1 report of one of this package's reports (``document``, as
    ``ReportDocument.as_json`` or ``source_side_report_json`` made it) and the exposures
    it was made of; ``timings``: seconds by stage."""
    exposure = document["exposure"]
    backend = document["backend"]
    quality = document["quality"]
    items = document["data"]["num_test"]
    thresholds = sorted(
        {float(config.far_threshold), float(config.near_threshold)}
        | {float(t) for t in config.leak_thresholds}
    )
    return {
        "schema_version": V1_SCHEMA_VERSION,
        "tame_version": document["tame_version"],
        "signature": document["signature"],
        "data": {key: document["data"][key] for key in ("num_train", "num_test", "num_refs")},
        "config": document["config"],
        "retrieval": {
            "mode": "exact",
            "source_exposure_mode": "exact",
            "target_exposure_mode": "exact" if exposure["target"] is not None else None,
            "pair_exposure_mode": "exact" if exposure["pair"] is not None else None,
            "tm_retrieval_exact": True,
            # Exact retrieval misses no item at any threshold.
            "false_negative_safe_thresholds": thresholds,
            "approximate": False,
        },
        "backend": backend,
        "quality": None
        if quality is None
        else {key: quality[key] for key in ("system", "tm", "delta_tm")},
        "exposure": {
            "source": _side(exposure["source"], [e.source[0].fraction for e in exposures]),
            "target": _side(
                exposure["target"], [e.target[0].fraction for e in exposures if e.target]
            ),
            "pair": _side(exposure["pair"], [e.pair.fraction for e in exposures if e.pair]),
        },
        "bins": [
            {
                "name": b["name"],
                "count": b["count"],
                "percentage": 100 * b["count"] / items,
                "mean_source_exposure": b["mean_source_exposure"],
                "system": b["system"],
                "tm": b["tm"],
                "delta_tm": b["delta_tm"],
            }
            for b in document["bins"]
        ],
        "generalization_gap": document["generalization_gap"],
        "approx_validation": None,  # every run is exact
        "performance": {
            "backend": backend["name"],
            "threads": config.retrieval.worker_threads(),
            "index_reused": backend["index_reused"],
            "timings_sec": dict(timings or {}),
            "memory": _peak_memory(),
        },
        "warnings": document["warnings"],
    }


def v1_segment_rows(
    rows: Sequence[Mapping[str, Any]],
    sources: Sequence[str] | None = None,
    references: Sequence[Sequence[str]] | None = None,
    hypotheses: Sequence[str] | None = None,
    tm_hypotheses: bool = False,
) -> list[dict[str, Any]]:
    """v1 rows of this package's segment rows (``segment_rows``; a source-side
    audit's rows lack the target and pair, null here). Raw text only from what
    is given: the test sources, references (``reference_text`` the first,
    ``reference_texts`` all), hypotheses, the TM hypothesis with
    ``tm_hypotheses``, and the neighbours' text the rows carry."""
    out = []
    for i, row in enumerate(rows):
        v1: dict[str, Any] = {key: row.get(key) for key in V1_SEGMENT_KEYS[:13]}
        v1["tm_source_index"] = row["source_nn_index"]
        v1["tm_source_similarity"] = row["source_exposure"]
        if tm_hypotheses and "tm_hyp" in row:
            v1["tm_hyp"] = row["tm_hyp"]
        if sources is not None:
            v1["source_text"] = sources[i]
        if references is not None:
            v1["reference_text"] = references[i][0]
            v1["reference_texts"] = list(references[i])
        if hypotheses is not None:
            v1["hyp_text"] = hypotheses[i]
        for ours, theirs in _NEIGHBOUR_TEXT.items():
            if ours in row:
                v1[theirs] = row[ours]
        out.append(v1)
    return out
