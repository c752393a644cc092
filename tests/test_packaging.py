"""The two distributions fit together: one version everywhere (the package, its
pin of the core, the core's crate, the Space's requirements), requirements.txt
installs what the package and the Space need, and a missing or mismatched core
is one clear ``CoreImportError`` at import."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import tame_mt_core

import tame_mt_metric
from tame_mt_metric import CoreImportError, TameError
from tame_mt_metric._version import CORE_DISTRIBUTION

REPO = Path(__file__).resolve().parent.parent
PACKAGE = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
CORE = tomllib.loads((REPO / "core" / "pyproject.toml").read_text(encoding="utf-8"))
CRATE = tomllib.loads((REPO / "core" / "Cargo.toml").read_text(encoding="utf-8"))


def _requirements() -> list[str]:
    lines = (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_one_version_everywhere() -> None:
    version = PACKAGE["project"]["version"]
    assert tame_mt_metric.__version__ == version
    assert CRATE["package"]["version"] == version  # the core's version (dynamic in maturin)
    assert "version" in CORE["project"]["dynamic"]
    assert tame_mt_core.__version__ == version
    pin = f"{CORE_DISTRIBUTION}=={version}"
    assert pin in PACKAGE["project"]["dependencies"]
    assert pin in _requirements()


def test_the_package_is_pure_python_and_the_core_is_abi3() -> None:
    assert PACKAGE["build-system"]["build-backend"] == "hatchling.build"
    assert CORE["build-system"]["build-backend"] == "maturin"
    assert CORE["tool"]["maturin"]["module-name"] == "tame_mt_core"
    assert "abi3-py311" in CRATE["dependencies"]["pyo3"]["features"]
    assert CORE["project"]["requires-python"] == PACKAGE["project"]["requires-python"]


def test_requirements_install_the_package_dependencies_and_gradio() -> None:
    gradio = [d for d in PACKAGE["dependency-groups"]["dev"] if str(d).startswith("gradio")]
    assert sorted(_requirements()) == sorted([*PACKAGE["project"]["dependencies"], *gradio])


def test_the_space_front_matter_names_python_3_11_or_later() -> None:
    front = (REPO / "README.md").read_text(encoding="utf-8").split("---")[1]
    found = re.search(r'^python_version: "?3\.(\d+)"?$', front, re.M)
    assert found is not None and int(found.group(1)) >= 11
    assert re.search(r"^app_file: app\.py$", front, re.M)


def _import_with(core_module: str) -> subprocess.CompletedProcess[str]:
    """Import the package in a new interpreter where ``tame_mt_core`` is
    ``core_module`` (Python source run first: ``None`` hides the module)."""
    code = f"import sys, types\n{core_module}\nimport tame_mt_metric\n"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )


def test_a_missing_core_is_one_clear_error() -> None:
    done = _import_with("sys.modules['tame_mt_core'] = None")
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("tame_mt_metric.errors.CoreImportError: ")
    version = tame_mt_metric.__version__
    assert f"tame-mt-metric {version} needs its compiled core tame-mt-core {version}" in last
    assert "not installed" in last
    assert f"pip install tame-mt-core=={version}" in last
    assert "circular import" not in done.stderr


def test_a_core_of_another_version_is_one_clear_error() -> None:
    done = _import_with(
        "fake = types.ModuleType('tame_mt_core'); fake.__version__ = '0.0.1'\n"
        "sys.modules['tame_mt_core'] = fake"
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    version = tame_mt_metric.__version__
    assert last.startswith("tame_mt_metric.errors.CoreImportError: ")
    assert f"needs its compiled core tame-mt-core {version}" in last
    assert "but tame-mt-core 0.0.1 is installed" in last
    assert f"pip install tame-mt-core=={version}" in last


def test_the_error_is_an_import_error_of_the_project() -> None:
    assert issubclass(CoreImportError, ImportError) and issubclass(CoreImportError, TameError)


@pytest.mark.parametrize("name", ["StreamingAudit", "TrainingIndex", "CorpusFingerprint"])
def test_core_classes_live_in_the_core_module(name: str) -> None:
    assert getattr(tame_mt_core, name).__module__ == "tame_mt_core"


@pytest.mark.parametrize(
    "core_module",
    [
        "sys.modules['tame_mt_core'] = None",
        "fake = types.ModuleType('tame_mt_core'); fake.__version__ = '0.0.1'\n"
        "sys.modules['tame_mt_core'] = fake",
    ],
)
def test_without_a_usable_core_the_errors_stand_in_for_its_classes(core_module: str) -> None:
    """The core makes the root of the errors; where it cannot (missing, or a build
    without them), errors.py stands in for its classes so that the one error left
    to raise, CoreImportError, is still a TameError and an ImportError."""
    check = (
        "try:\n    import tame_mt_metric\nexcept ImportError as exc:\n    caught = exc\n"
        "errors = sys.modules['tame_mt_metric.errors']\n"
        "assert type(caught) is errors.CoreImportError\n"
        "assert isinstance(caught, errors.TameError) and isinstance(caught, ImportError)\n"
        "for name in ('InvalidOptionError', 'MisalignedInputError', 'InputTextError',\n"
        "             'EmptyCorpusError', 'IndexFileError', 'InputTooLargeError'):\n"
        "    leaf = getattr(errors, name)\n"
        "    assert issubclass(leaf, errors.TameError) and issubclass(leaf, ValueError)\n"
        "print('stood in')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", f"import sys, types\n{core_module}\n{check}"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "stood in"
