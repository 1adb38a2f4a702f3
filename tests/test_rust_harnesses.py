"""The Rust harnesses' own unit tests (their kit, the crate zarr-jpeg-conformance-harness: the spec's parse rules, the chunk
table, both framings of the protocol), run from pytest so that the project's one test command
runs them too. Skipped without cargo; the first run after ``harnesses install`` compiles only
the test binary (a few seconds)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from zarr_jpeg_conformance.harnesses import BUILDS, CARGO, Unavailable


def test_the_shared_crate_passes_its_unit_tests() -> None:
    try:
        cargo = CARGO.executable()
    except Unavailable as exc:
        pytest.skip(str(exc))
    done = subprocess.run([cargo, "test", "--locked", "--release", "--quiet", "-p", "zarr-jpeg-conformance-harness"],
                          cwd=BUILDS["rust"].path, env=BUILDS["rust"].environment(), capture_output=True, text=True, timeout=900,
                          check=False)
    assert done.returncode == 0, f"cargo test failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert re.search(r"test result: ok\. [1-9]\d* passed", done.stdout), f"no unit test ran:\n{done.stdout[-2000:]}"


def test_a_build_with_a_shared_output_folder_builds_there_once_for_every_checkout_and_copies_its_products_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cargo workspace builds into this project's cache (CARGO_TARGET_DIR), so that a fresh clone does not build
    libjpeg-turbo again; each checkout gets the binaries copied into its own target/, where its harnesses run them."""
    from zarr_jpeg_conformance import harnesses

    # The fake build: "compiles" once per output folder (a stamp there), writes the binary, counts its runs.
    script = ("import os, pathlib; out = pathlib.Path(os.environ['FAKE_TARGET_DIR']); (out / 'release').mkdir(parents=True, "
              "exist_ok=True); stamp = out / 'compiled'; stamp.write_text(stamp.read_text() + 'x' if stamp.exists() else 'x'); "
              "(out / 'release' / 'harness').write_text(pathlib.Path.cwd().name)")
    build = harnesses.Build("fake", (), lambda t: [sys.executable, "-c", script], ("target/release/harness",),
                            shared_output="FAKE_TARGET_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FAKE_TARGET_DIR", raising=False)
    shared = tmp_path / "cache" / "zarr-jpeg-conformance" / "fake-target"
    for checkout in ("one", "two"):
        (tmp_path / checkout / "fake").mkdir(parents=True)
        monkeypatch.setattr(harnesses, "HERE", tmp_path / checkout)
        assert build.shared_folder() == shared and build.run() == 0
        assert (tmp_path / checkout / "fake" / "target" / "release" / "harness").read_text() == "fake"
        build.check_built()
    assert (shared / "compiled").read_text() == "xx"  # both builds ran in the one shared folder
    # A folder the user chose is the build's own: nothing shared, nothing copied.
    monkeypatch.setenv("FAKE_TARGET_DIR", str(tmp_path / "mine"))
    (tmp_path / "three" / "fake").mkdir(parents=True)
    monkeypatch.setattr(harnesses, "HERE", tmp_path / "three")
    assert build.shared_folder() is None and build.environment() is None and build.run() == 0
    assert (tmp_path / "mine" / "release" / "harness").is_file()
    assert not (tmp_path / "three" / "fake" / "target").exists()


def test_a_failed_build_copies_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zarr_jpeg_conformance import harnesses

    script = "import os, pathlib, sys; p = pathlib.Path(os.environ['FAKE_TARGET_DIR'], 'release'); p.mkdir(parents=True); " \
             "(p / 'harness').write_text('half'); sys.exit(3)"
    build = harnesses.Build("fake", (), lambda t: [sys.executable, "-c", script], ("target/release/harness",),
                            shared_output="FAKE_TARGET_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FAKE_TARGET_DIR", raising=False)
    (tmp_path / "fake").mkdir()
    monkeypatch.setattr(harnesses, "HERE", tmp_path)
    assert build.run() == 3
    assert not (tmp_path / "fake" / "target").exists()
    with pytest.raises(harnesses.Unavailable, match="not built"):
        build.check_built()


def test_a_cache_that_cannot_be_written_builds_in_the_folder_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from zarr_jpeg_conformance import harnesses

    script = "import os, pathlib; p = pathlib.Path('target', 'release'); p.mkdir(parents=True); (p / 'harness').write_text(" \
             "str('FAKE_TARGET_DIR' in os.environ))"
    build = harnesses.Build("fake", (), lambda t: [sys.executable, "-c", script], ("target/release/harness",),
                            shared_output="FAKE_TARGET_DIR")
    (tmp_path / "cache").write_text("a file where the cache folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FAKE_TARGET_DIR", raising=False)
    (tmp_path / "fake").mkdir()
    monkeypatch.setattr(harnesses, "HERE", tmp_path)
    assert build.run() == 0
    assert (tmp_path / "fake" / "target" / "release" / "harness").read_text() == "False"
    assert "cannot use the shared build folder" in capsys.readouterr().err
