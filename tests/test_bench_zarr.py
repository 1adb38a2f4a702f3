"""bench_zarr runs end to end on a small grid and prints every ratio it promises (numbers not asserted)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("zarr")


def test_bench_zarr_prints_every_measurement_and_ratio() -> None:
    cmd = [sys.executable, "-m", "zarr_jpeg_conformance.tools.bench_zarr", "--grid", "2", "3", "--rounds", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    needles = ["library, assembled", "threaded 2 workers", "zarr 1 worker", "threaded, no decode",
               "threaded 1 worker / library:", "(target >= 0.8x)", "threaded write 2 workers", "(target >= 1.6x)",
               "6 chunks (256, 256, 3)"]
    from zarr_jpeg_conformance.tools.bench_zarr import has_fused_pipeline

    if has_fused_pipeline():  # zarr >= 3.3: its opt-in pipeline side by side with the others
        needles += ["fused 2 workers", "fused write 2 workers", "fused, no decode", "zarr fused pipeline, 1 worker / library:",
                    "threaded / fused, 1 worker:", "fused 2 workers, bare library", "(the pipeline's own ceiling)"]
    for needle in needles:
        assert needle in done.stdout, f"{needle!r} missing from:\n{done.stdout}"
