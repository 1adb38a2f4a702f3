"""generate_fixtures.py: the committed stream corpus checks out, and the generator never clobbers it.

Runs the generator in subprocesses, as a user would: ``--check`` on the committed corpus
(also without cjpeg on the PATH), ``--check`` on a tampered copy, refusal to overwrite,
and, where cjpeg is installed, byte-identical regeneration.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "generate_fixtures.py"
STREAMS = ROOT / "fixtures" / "streams"


def _generate(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300, check=False)


def _case_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.glob("*/*")) if p.is_file()}


def test_committed_corpus_checks_out() -> None:
    """--check verifies the manifest, the expected decodes and the rebuilt streams of the committed corpus."""
    done = _generate("--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "corpus OK" in done.stdout


def test_check_needs_no_cjpeg(tmp_path: Path) -> None:
    """--check runs on pip packages alone: streams made with cjpeg are re-decoded, not rebuilt."""
    done = _generate("--check", path=str(tmp_path))  # an empty PATH: no cjpeg, no djpeg
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not rebuilt (needs cjpeg)" in done.stdout


def test_check_finds_a_changed_file(tmp_path: Path) -> None:
    """A changed expected decode breaks the manifest and the re-decode, and --check says which case."""
    shutil.copytree(ROOT / "fixtures", tmp_path / "fixtures", ignore=shutil.ignore_patterns("__pycache__"))
    folder = tmp_path / "fixtures" / "streams" / "reference"
    victim = next(p for p in sorted(folder.glob("*.npy")) if not p.name.endswith(".alt.npy"))
    second = next(p for p in sorted(folder.glob("*.alt.npy")) if not p.name.startswith(victim.name.removesuffix(".npy")))
    for path in (victim, second):
        raw = bytearray(path.read_bytes())
        raw[-1] ^= 0x40
        path.write_bytes(bytes(raw))
    done = _generate("--check", "--out", str(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{victim.stem}.npy: sha256 differs" in done.stderr
    assert f"{victim.stem}: installed libjpeg-turbo decodes the committed stream differently" in done.stderr
    # The independent decode cannot be made again here (it needs Go), but it must be what its sidecar says.
    case = second.name.removesuffix(".alt.npy")
    assert f"{case}: {second.name} lies" in done.stderr and "the sidecar records" in done.stderr


def test_refuses_to_overwrite(tmp_path: Path) -> None:
    """An existing file among the outputs stops the generator before it writes anything."""
    target = tmp_path / "fixtures" / "streams" / "malformed" / "stream.malformed.empty.jpg"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"keep me")
    done = _generate("--out", str(tmp_path), "--skip-stores")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "refusing to overwrite" in done.stderr
    assert target.read_bytes() == b"keep me"
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [target]


def _same_libraries() -> bool:
    from zarr_jpeg_conformance.generate_fixtures import versions

    recorded = json.loads((STREAMS / "manifest.json").read_text(encoding="utf-8"))["versions"]
    return all(recorded.get(k) == v for k, v in versions().items() if k != "python")


@pytest.mark.skipif(shutil.which("cjpeg") is None, reason="generation needs cjpeg (Debian: libjpeg-turbo-progs)")
def test_generation_is_deterministic(tmp_path: Path) -> None:
    """Generating afresh with the libraries that made the corpus gives its case files, byte for byte."""
    if not _same_libraries():
        pytest.skip("the installed encoders differ from the manifest's; --check compares decoded pixels instead")
    done = _generate("--out", str(tmp_path), "--skip-stores")
    assert done.returncode == 0, done.stdout + done.stderr
    fresh, committed = _case_files(tmp_path / "fixtures" / "streams"), _case_files(STREAMS)
    assert sorted(fresh) == sorted(committed)
    differing = [name for name in committed if fresh[name] != committed[name]]
    assert not differing, f"{len(differing)} files differ, e.g. {differing[:5]} (other library versions than the manifest's?)"
