"""The Rust harnesses' own unit tests (their kit, the crate zarr-jpeg-conformance-harness: the spec's parse rules, the chunk
table, both framings of the protocol), run from pytest so that the project's one test command
runs them too. Skipped without cargo; the first run after ``harnesses install`` compiles only
the test binary (a few seconds)."""

from __future__ import annotations

import re
import subprocess

import pytest

from zarr_jpeg_conformance.harnesses import BUILDS, CARGO, Unavailable


def test_the_shared_crate_passes_its_unit_tests() -> None:
    try:
        cargo = CARGO.executable()
    except Unavailable as exc:
        pytest.skip(str(exc))
    done = subprocess.run([cargo, "test", "--locked", "--release", "--quiet", "-p", "zarr-jpeg-conformance-harness"],
                          cwd=BUILDS["rust"].path, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"cargo test failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert re.search(r"test result: ok\. [1-9]\d* passed", done.stdout), f"no unit test ran:\n{done.stdout[-2000:]}"
