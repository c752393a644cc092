"""mkdocs hooks: the pictures the repository keeps beside what they show
(the HTML report in ``examples/``, the Space in ``.github/``) are published
into the site under ``images/``, so that the pages show them without a copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parent.parent
PICTURES = {
    "examples/html_report.png": "images/html_report.png",
    ".github/space-demo.png": "images/space-demo.png",
}


def on_files(files: Files, config: Any, **_: Any) -> Files:
    for source, published in PICTURES.items():
        files.append(File.generated(config, published, abs_src_path=str(REPO / source)))
    return files
