"""Content digests of texts, for cache keys."""

from __future__ import annotations

from collections.abc import Iterable

import xxhash

__all__ = ["digest"]


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
