"""bench_protocol runs end to end with tiny settings and prints every ratio it promises (numbers not asserted)."""

from __future__ import annotations

import subprocess
import sys


def test_bench_protocol_prints_every_measurement_and_ratio() -> None:
    # The Go harness starts in milliseconds; the JVM's start would double this test's time. jpeg-js only
    # decodes: measured on decode alone.
    cmd = [sys.executable, "-m", "zarr_jpeg_conformance.tools.bench_protocol", "--harness", "go-image-jpeg", "node-jpeg-js",
           "--rounds", "1", "--batch", "2", "--batch-seconds", "0", "--warmup", "0", "--size", "64", "--sizes", "1", "2", "--reply-rounds", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    needles = ["load average", "time per MiB of the 2 MiB reply: json lines"]
    if "imagecodecs not available" not in out:
        needles += ["json lines: the harness chose json", "binary: the harness chose binary", "shared: the harness chose shared",
                    "decode  binary pipelined", "decode  shared pipelined", "decode  in harness",
                    "imagecodecs (harnesses.server): the faster pipelined path / in process: encode", "(target >= 0.8x wall: ",
                    "imagecodecs (harnesses.server): the same path / in harness (the library's own speed in the harness "
                    "process, not the verdict's reference): encode"]
    if "go-image-jpeg not available" not in out:
        # The Go kit does not speak shared framing: offered it, it chooses binary, and is measured in that.
        needles += ["encode  in harness", "go-image-jpeg, shared: the harness chose binary framing", "encode  in harness, busy",
                    "go-image-jpeg: the library beside a busy CPU / in harness: encode",
                    "go-image-jpeg: the faster pipelined path / in harness: encode"]
    if "node-jpeg-js not available" not in out:
        needles += ["node-jpeg-js: the faster pipelined path / in harness: decode"]
        assert "node-jpeg-js: the faster pipelined path / in harness: encode" not in out
    # A shipped harness's reference is in harness already: no second line.
    assert "go-image-jpeg: the same path / in harness" not in out
    for needle in needles:
        assert needle in out, f"{needle!r} missing from:\n{out}"


def test_a_miss_where_the_library_alone_missed_too_says_so() -> None:
    """The library beside a busy CPU is the machine's ceiling in that run: a miss under it is no verdict on a harness."""
    from zarr_jpeg_conformance.tools.bench_protocol import _verdict

    assert _verdict({"encode": 0.81, "decode": 0.8}, {"encode": 0.7}) == "met"
    assert _verdict({"encode": 0.75, "decode": 0.9}, {"encode": 0.85, "decode": 0.7}) == "missed"
    assert _verdict({"encode": 0.75}, {}) == "missed"
    assert _verdict({"encode": 0.75, "decode": 0.79}, {"encode": 0.77, "decode": 0.9}) == (
        "missed; the library alone beside a busy CPU ran below it too in this run (encode 0.77x): repeat the run to judge encode")
