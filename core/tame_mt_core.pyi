"""Type stubs of the compiled core (checked against it by mypy.stubtest)."""

from collections.abc import Callable, Sequence
from typing import Any, final

__all__ = [
    "FINGERPRINT_BLOCK_ROWS",
    "INDEX_FORMAT_VERSION",
    "ArrowTexts",
    "CorpusFingerprint",
    "Decontaminator",
    "EmptyCorpusError",
    "GramSettings",
    "IndexFileError",
    "InputTextError",
    "InvalidOptionError",
    "MisalignedInputError",
    "StreamingAudit",
    "TameError",
    "TrainingIndex",
    "__version__",
    "count_grams",
    "grams",
    "normalize",
]

__version__: str
INDEX_FORMAT_VERSION: int
FINGERPRINT_BLOCK_ROWS: int

class TameError(Exception): ...
class InvalidOptionError(TameError, ValueError): ...
class MisalignedInputError(TameError, ValueError): ...
class InputTextError(TameError, ValueError): ...
class EmptyCorpusError(TameError, ValueError): ...
class IndexFileError(TameError, ValueError): ...

@final
class GramSettings:
    def __new__(
        cls,
        orders: Sequence[int],
        lowercase: bool = False,
        strip_diacritics: bool = False,
        normalize_punctuation: bool = False,
    ) -> GramSettings: ...
    @property
    def orders(self) -> tuple[int, ...]: ...
    @property
    def lowercase(self) -> bool: ...
    @property
    def strip_diacritics(self) -> bool: ...
    @property
    def normalize_punctuation(self) -> bool: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[GramSettings], tuple[list[int], bool, bool, bool]]: ...

def normalize(text: str, settings: GramSettings) -> str: ...
def grams(text: str, settings: GramSettings) -> list[str]: ...
def count_grams(texts: list[str], settings: GramSettings, threads: int = 0) -> int: ...

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
        settings: GramSettings,
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
class Decontaminator:
    def __new__(
        cls,
        sources: list[str],
        references: list[list[str]],
        settings: GramSettings,
        threshold_numerator: int,
        threshold_denominator: int,
        threads: int = 0,
    ) -> Decontaminator: ...
    def feed(self, sources: _Texts, targets: _Texts, row_base: int) -> dict[str, list[int]]: ...
    @property
    def items(self) -> int: ...

@final
class TrainingIndex:
    def __new__(
        cls,
        sources: _Texts,
        targets: _Texts,
        settings: GramSettings,
        threads: int = 0,
        progress: Callable[[int], object] | None = None,
    ) -> TrainingIndex: ...
    def expose(
        self, sources: list[str], references: list[list[str]], top_k: int = 1
    ) -> dict[str, Any]: ...
    def decontaminate(
        self,
        sources: list[str],
        references: list[list[str]],
        threshold_numerator: int,
        threshold_denominator: int,
    ) -> dict[str, list[int]]: ...
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
        settings: GramSettings,
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
