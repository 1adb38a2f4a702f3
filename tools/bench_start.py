"""Benchmark: how long a shipped harness takes to start, and how much memory it holds.

Starts ``python -m zarr_jpeg_conformance.harnesses NAME`` as ``--impl exec:`` does (under
the client's default address-space limit) several times and prints the median wall time
from process start to the ``start`` reply, then its address space (VmPeak) and resident
memory (VmHWM) after one encode and decode of a 256x256x3 chunk at 4:2:0 (Linux only).
Run: ``python -m zarr_jpeg_conformance.tools.bench_start [--rounds N] NAME ...``.
"""

from __future__ import annotations

import argparse
import base64
import json
import resource
import statistics
import subprocess
import sys
import time
from typing import IO, Any

from ..adapters.process import DEFAULT_MEMORY_LIMIT
from ..corpus.images import make_image

CODEC = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (DEFAULT_MEMORY_LIMIT, DEFAULT_MEMORY_LIMIT))


def _call(stdin: IO[bytes], stdout: IO[bytes], message: dict[str, Any]) -> dict[str, Any]:
    stdin.write(json.dumps(message).encode() + b"\n")
    stdin.flush()
    line = stdout.readline()
    if not line:
        raise RuntimeError(f"the harness ended before replying to {message['op']}")
    reply: dict[str, Any] = json.loads(line)
    return reply


def measure(name: str) -> tuple[float, dict[str, int]]:
    """(seconds to the start reply, {VmPeak, VmHWM} in KiB after one encode and decode)."""
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "zarr_jpeg_conformance.harnesses", name],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=_limit)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        hello = _call(proc.stdin, proc.stdout, {"seq": 1, "op": "start", "protocol": 1})
        seconds = time.perf_counter() - began
        if hello.get("status") != "ok":
            raise RuntimeError(f"{name} did not start: {hello}")
        memory: dict[str, int] = {}
        if "encode" in hello["roles"] and "decode" in hello["roles"]:
            handle = _call(proc.stdin, proc.stdout, {"seq": 2, "op": "parse", "codec": CODEC})["handle"]
            chunk = make_image("natural", 256, 256, channels=3)
            wire = {"shape": list(chunk.shape), "dtype": "uint8", "data": base64.b64encode(chunk.tobytes()).decode()}
            data = _call(proc.stdin, proc.stdout, {"seq": 3, "op": "encode", "handle": handle, "chunk": wire})["data"]
            _call(proc.stdin, proc.stdout, {"seq": 4, "op": "decode", "handle": handle, "data": data, "chunk_shape": list(chunk.shape)})
            try:
                with open(f"/proc/{proc.pid}/status") as status:
                    for line in status:
                        key, _, value = line.partition(":")
                        if key in ("VmPeak", "VmHWM"):
                            memory[key] = int(value.split()[0])
            except OSError:
                pass
        _call(proc.stdin, proc.stdout, {"seq": 5, "op": "stop"})
        proc.wait(30)
        return seconds, memory
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+", metavar="NAME", help="shipped harnesses (python -m zarr_jpeg_conformance.harnesses list)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"address-space limit {DEFAULT_MEMORY_LIMIT >> 20} MiB, {args.rounds} starts each")
    for name in args.names:
        runs = [measure(name) for _ in range(args.rounds)]
        starts = sorted(seconds for seconds, _ in runs)
        memory = runs[-1][1]
        footprint = ", ".join(f"{key} {value >> 10} MiB" for key, value in memory.items()) or "footprint not measured"
        print(f"{name}: start {statistics.median(starts) * 1000:.0f} ms median "
              f"(min {starts[0] * 1000:.0f}, max {starts[-1] * 1000:.0f}); {footprint}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
