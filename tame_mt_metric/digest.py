"""Content digests of texts, for cache keys, and the proof every artifact
carries: one digest over its fields (as sorted JSON) and its content (lines of
text), written beside the content and compared before a number is read from
it. Audit files, partial audits of shards, index manifests and segment
sidecars all use it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import xxhash

__all__ = ["PROOF", "digest", "proof", "proved"]

PROOF = "proof"  # the field that holds the proof, left out of what it proves


def digest(*parts: str | Iterable[str]) -> str:
    """XXH3-64 of texts, each prefixed by its UTF-8 length (16 hexadecimal digits).

    >>> digest("ab", "c") != digest("a", "bc")
    True
    """
    h = xxhash.xxh3_64()
    for part in parts:
        for text in [part] if isinstance(part, str) else part:
            data = text.encode("utf-8")
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
    return h.hexdigest()


def proof(fields: Mapping[str, Any], content: Iterable[str] = ()) -> str:
    """The digest of ``fields`` (all but ``PROOF``) and of the ``content`` lines."""
    own = {k: v for k, v in fields.items() if k != PROOF}
    return digest(json.dumps(own, sort_keys=True, ensure_ascii=False), content)


def proved(fields: Mapping[str, Any], content: Iterable[str] = ()) -> bool:
    """``fields`` carry the proof of themselves and of ``content``."""
    return fields.get(PROOF) == proof(fields, content)
