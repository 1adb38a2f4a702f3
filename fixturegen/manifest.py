"""The corpus's sha256 manifest (fixtures/streams/manifest.json) and the library versions it records."""

from __future__ import annotations

import hashlib
import json
import platform
from pathlib import Path

import numpy as np

from .. import __version__
from .encoders import cjpeg_version, imagecodecs_version, pillow_version
from .independent import go_version

#: Path of the manifest under fixtures/.
MANIFEST = ("streams", "manifest.json")


def versions() -> dict[str, str]:
    """The libraries that generation would use here, as the manifest records them."""
    return {
        "zarr-jpeg-conformance": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "imagecodecs": imagecodecs_version(),
        "Pillow": pillow_version(),
        "cjpeg": cjpeg_version(),
        # The independent decoder of fixturegen.independent: its version is in every sidecar.
        "go": go_version() or "not built",
    }


def corpus_files(root: Path) -> dict[str, str]:
    """sha256 of every file under streams/ and stores/, by path relative to ``root``."""
    skip = root.joinpath(*MANIFEST)
    files = {}
    for sub in ("streams", "stores"):
        for path in sorted((root / sub).rglob("*")) if (root / sub).is_dir() else []:
            if path.is_file() and path != skip and "__pycache__" not in path.parts:
                files[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def write_manifest(root: Path, library_versions: dict[str, str]) -> None:
    doc = {"format_version": 1, "generator": "generate_fixtures.py", "versions": library_versions, "files": corpus_files(root)}
    root.joinpath(*MANIFEST).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def update_manifest(root: Path) -> int:
    """--update-manifest: rehash the files, keeping the recorded library versions."""
    path = root.joinpath(*MANIFEST)
    old = json.loads(path.read_text(encoding="utf-8")).get("versions") if path.is_file() else None
    # The versions describe the libraries that generated the corpus, not this environment.
    write_manifest(root, old or versions())
    print(f"manifest rewritten: {len(corpus_files(root))} files")
    return 0
