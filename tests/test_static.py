"""Static checks: ruff and mypy, configured in pyproject.toml, report nothing.

Both run in subprocesses from the repository root, as a developer would run them, so a
finding fails here with the tool's own output. mypy needs the package under its import
name, but the repository root is the package and the editable install resolves it
through a meta-path finder mypy does not follow; so mypy runs from a temporary directory
holding a symlink named ``zarr_jpeg_conformance`` to the root. ``tests/`` is excluded
from mypy (see ``[tool.mypy]``): tests hand implementations ill-typed values on purpose.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "zarr_jpeg_conformance"
#: Each tool takes a few seconds (mypy 17 s without a cache on a slow hour); this only stops a hang.
TIMEOUT = 120


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)


def _report(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


def test_ruff_is_clean() -> None:
    # --no-cache: a test run leaves nothing behind in the working tree.
    done = _run(["ruff", "check", "--no-cache", "--output-format", "concise", "."], ROOT)
    assert done.returncode == 0, _report(done)


def _mypy_cache() -> Path:
    """mypy's cache, kept between runs beside the project's other build caches: its checks of the standard library's
    and numpy's stubs are most of its time (17 s without it, 0.5 s with it). mypy compares each source file with its
    cached hash, so a clone whose files changed is checked again; the cache is one per Python and mypy version."""
    from importlib.metadata import version

    from zarr_jpeg_conformance.harnesses import cache_folder

    return cache_folder() / "mypy" / f"python{sys.version_info[0]}.{sys.version_info[1]}-mypy{version('mypy')}"


def test_mypy_is_clean(tmp_path: Path) -> None:
    os.symlink(ROOT, tmp_path / PACKAGE, target_is_directory=True)
    done = _run(
        ["mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(_mypy_cache()), "-p", PACKAGE],
        tmp_path,
    )
    assert done.returncode == 0, _report(done)
    # Every module of the package was checked, not a copy found elsewhere nor a part of it.
    found = re.search(r"no issues found in (\d+) source files", done.stdout)
    assert found and int(found[1]) >= len(_package_modules()), _report(done)


def _package_modules() -> list[Path]:
    """The .py files of the package as pyproject.toml lists it: the root and its subpackages."""
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    subpackages = [p.removeprefix(PACKAGE).lstrip(".") for p in packages]
    return [p for sub in subpackages for p in (ROOT / sub.replace(".", "/")).glob("*.py")]
