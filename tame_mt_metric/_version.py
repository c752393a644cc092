"""The package's version (one place), and the check that the compiled core
installed beside it (the ``tame-mt-core`` distribution) is the one it needs."""

from __future__ import annotations

from pathlib import Path

from tame_mt_metric.errors import CoreImportError

__version__ = "0.1.0"

CORE_DISTRIBUTION = "tame-mt-core"


def _install_command() -> str:
    """The command that installs the right core (and, in a checkout, the one
    that builds it from the checkout's ``core/`` instead)."""
    command = f"pip install {CORE_DISTRIBUTION}=={__version__}"
    checkout = Path(__file__).resolve().parent.parent / "core"
    if (checkout / "pyproject.toml").is_file() and (checkout / "Cargo.toml").is_file():
        command += f" (or, from this checkout, compiling Rust: pip install {checkout})"
    return command


def check_core() -> None:
    """Import the compiled core; raise ``CoreImportError`` naming the distribution,
    both versions and the fix when it is missing or of another version."""
    try:
        import tame_mt_core
    except ImportError as exc:
        raise CoreImportError(
            f"tame-mt-metric {__version__} needs its compiled core {CORE_DISTRIBUTION} "
            f"{__version__}, which is not installed (importing tame_mt_core failed: {exc}); "
            f"install it with: {_install_command()}"
        ) from None
    installed = getattr(tame_mt_core, "__version__", "of unknown version")
    if installed != __version__:
        where = getattr(tame_mt_core, "__file__", None) or "an unknown place"
        raise CoreImportError(
            f"tame-mt-metric {__version__} needs its compiled core {CORE_DISTRIBUTION} "
            f"{__version__}, but {CORE_DISTRIBUTION} {installed} is installed (at {where}); "
            f"install the matching one with: {_install_command()}"
        )
