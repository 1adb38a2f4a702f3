"""Make the venv in which a Python adapter runs under another Python than this one.

    python -m zarr_jpeg_conformance.harnesses.pyvenv PYTHON FOLDER

imagecodecs-zarr (``imagecodecs_jpeg``) needs Python >= 3.12, and this package supports 3.11.
``harnesses install`` runs this with the newest Python >= 3.12 it finds: ``FOLDER/venv`` gets
the packages the adapter needs, at the versions this package's metadata pins (numpy, zarr,
imagecodecs-zarr), and ``FOLDER/site`` holds a link to this package, so that
``PYTHONPATH=FOLDER/site FOLDER/venv/bin/python -m zarr_jpeg_conformance.harnesses.server
imagecodecs_jpeg`` serves the adapter of this very source tree over the harness protocol.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path

#: The distributions the served adapter imports (harnesses.server, adapters.imagecodecs_zarr).
NEEDED = ("numpy", "zarr", "imagecodecs-zarr")
#: Used when this package is not installed (a bare source tree): the same floors as pyproject.toml.
FLOORS = {"numpy": "numpy>=1.26", "zarr": "zarr>=3.1", "imagecodecs-zarr": "imagecodecs-zarr>=2026.10.10"}
PACKAGE = Path(__file__).resolve().parent.parent


def requirements() -> list[str]:
    """NEEDED with this package's version specifiers, without their markers (the venv's Python is >= 3.12)."""
    from packaging.requirements import Requirement

    try:
        declared = [Requirement(r) for r in requires("zarr-jpeg-conformance") or []]
    except PackageNotFoundError:
        declared = []
    pinned = {r.name.lower(): f"{r.name}{r.specifier}" for r in declared}
    return [pinned.get(name, FLOORS[name]) for name in NEEDED]


def make(python: str, folder: Path) -> int:
    venv, site = folder / "venv", folder / "site"
    steps = [[str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements()]]
    if not (venv / "bin" / "python").exists():  # made once; pip keeps it up to date with the pins
        steps.insert(0, [python, "-m", "venv", str(venv)])
    for argv in steps:
        print(f"harnesses/{folder.name}: {' '.join(argv)}", file=sys.stderr)
        code = subprocess.run(argv, check=False).returncode
        if code != 0:
            return code
    site.mkdir(parents=True, exist_ok=True)
    link = site / "zarr_jpeg_conformance"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(PACKAGE, target_is_directory=True)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return make(argv[0], Path(argv[1]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
