"""Type stubs of the compiled core (checked against it by mypy.stubtest)."""

from collections.abc import Callable, Sequence
from typing import Any, final

__all__ = [
    "FINGERPRINT_BLOCK_ROWS",
    "INDEX_FORMAT_VERSION",
    "ArrowTexts",
    "CorpusFingerprint",
    "StreamingAudit",
    "TrainingIndex",
    "__version__",
    "count_grams",
    "grams",
    "normalize",
]

__version__: str
INDEX_FORMAT_VERSION: int
FINGERPRINT_BLOCK_ROWS: int

def normalize(
    text: str,
    lowercase: bool = False,
    strip_diacritics: bool = False,
    normalize_punctuation: bool = False,
) -> str: ...
def grams(
    text: str,
    orders: list[int],
    lowercase: bool = False,
    strip_diacritics: bool = False,
    normalize_punctuation: bool = False,
) -> list[str]: ...
def count_grams(
    texts: list[str],
    orders: list[int],
    lowercase: bool = False,
    strip_diacritics: bool = False,
    normalize_punctuation: bool = False,
    threads: int = 0,
) -> int: ...

@final
class ArrowTexts:
    def __new__(
        cls,
        chunks: list[tuple[Any, Any, int, int, bool]],
        argument: str = "texts",
        start: int = 0,
    ) -> ArrowTexts: ...
    def __len__(self) -> int: ...
    def __getitem__(self, key: int, /) -> str: ...
    @property
    def data_bytes(self) -> int: ...

_Texts = Sequence[str] | ArrowTexts

@final
class StreamingAudit:
    def __new__(
        cls,
        sources: list[str],
        references: list[list[str]],
        orders: list[int],
        lowercase: bool = False,
        strip_diacritics: bool = False,
        normalize_punctuation: bool = False,
        top_k: int = 1,
        block_rows: int = 65536,
        threads: int = 0,
    ) -> StreamingAudit: ...
    def feed(self, sources: _Texts, targets: _Texts, row_base: int) -> None: ...
    def best_source_rows(self) -> list[int]: ...
    def merge(self, other: StreamingAudit) -> None: ...
    @property
    def next_row(self) -> int: ...
    @property
    def rows_fed(self) -> int: ...
    @property
    def blocks(self) -> tuple[int, int]: ...
    def result(self) -> dict[str, Any]: ...

@final
class TrainingIndex:
    def __new__(
        cls,
        sources: _Texts,
        targets: _Texts,
        orders: list[int],
        lowercase: bool = False,
        strip_diacritics: bool = False,
        normalize_punctuation: bool = False,
        threads: int = 0,
        progress: Callable[[int], object] | None = None,
    ) -> TrainingIndex: ...
    def expose(
        self, sources: list[str], references: list[list[str]], top_k: int = 1
    ) -> dict[str, Any]: ...
    def search_volume(self, sources: list[str], references: list[list[str]]) -> tuple[int, int]: ...
    @property
    def rows(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    def array_info(self) -> list[tuple[str, int, int, int]]: ...
    def array_address(self, name: str) -> tuple[int, int]: ...
    @staticmethod
    def from_arrays(
        arrays: dict[str, tuple[Any, int]],
        rows: int,
        orders: list[int],
        lowercase: bool = False,
        strip_diacritics: bool = False,
        normalize_punctuation: bool = False,
        threads: int = 0,
        full: bool = False,
    ) -> TrainingIndex: ...

@final
class CorpusFingerprint:
    def __new__(cls) -> CorpusFingerprint: ...
    def update(self, sources: _Texts, targets: _Texts) -> None: ...
    @property
    def rows(self) -> int: ...
    def hexdigest(self) -> str: ...
    def block_digests(self) -> list[str]: ...
    @staticmethod
    def combine(block_digests: list[str]) -> str: ...
