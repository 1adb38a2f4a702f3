"""bench_protocol runs end to end with tiny settings and prints every ratio it promises (numbers not asserted)."""

from __future__ import annotations

import subprocess
import sys


def test_bench_protocol_prints_every_measurement_and_ratio() -> None:
    cmd = [sys.executable, "-m", "zarr_jpeg_conformance.tools.bench_protocol",
           "--rounds", "1", "--batch", "1", "--size", "64", "--sizes", "1", "2", "--reply-rounds", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    needles = ["json lines: the harness chose json", "binary: the harness chose binary",
               "binary framing / in process: encode", "(target >= 0.8x)", "time per MiB of the 2 MiB reply: json lines"]
    if "not available" in done.stdout:  # no imagecodecs here: the reply-reading half still runs
        needles = needles[-1:]
    for needle in needles:
        assert needle in done.stdout, f"{needle!r} missing from:\n{done.stdout}"
