"""The proof every artifact carries: one digest over its fields (as sorted
JSON) and its content (lines of text), written beside the content and
compared before a number is read from it. An audit file, an index manifest
and a segment file's sidecar all use it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from tame_mt_metric.digest import digest

__all__ = ["PROOF", "proof", "proved"]

PROOF = "proof"  # the field that holds the proof, left out of what it proves


def proof(fields: Mapping[str, Any], content: Iterable[str] = ()) -> str:
    """The digest of ``fields`` (all but ``PROOF``) and of the ``content`` lines."""
    own = {k: v for k, v in fields.items() if k != PROOF}
    return digest(json.dumps(own, sort_keys=True, ensure_ascii=False), content)


def proved(fields: Mapping[str, Any], content: Iterable[str] = ()) -> bool:
    """``fields`` carry the proof of themselves and of ``content``."""
    return fields.get(PROOF) == proof(fields, content)
