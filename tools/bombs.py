"""Benchmark: streams that cost far more than their size, before and after the checks of core.limits.

For each bomb and backend, two runs in fresh processes (peak memory is per process):

* ``library``: the backend's own decode call on the stream, which is what the adapters
  reached before core.limits existed (the pre-decode checks let all of these through);
* ``adapter``: the backend adapter's decode, pre-decode checks first.

Each prints seconds, the process's peak resident memory (a bare process with the library
loaded takes about 30-40 MB) and the outcome. Run:
``python -m zarr_jpeg_conformance.tools.bombs [--impl NAME ...] [--bomb NAME ...] [--timeout S]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from ..backends import BACKENDS, load_backend
from ..core.markers import inspect
from ..core.stream import DecodePlan
from ..corpus.images import make_image
from ..corpus.modes import codec
from ..fixturegen.edits import SOF, patched
from ..fixturegen.flat import progressive_repeats, sequential_repeats

YCC420 = codec(90, "ycbcr", None, [(2, 2), (1, 1), (1, 1)])
YCC444 = codec(90, "ycbcr", None, [(1, 1), (1, 1), (1, 1)])
GRAY = codec(90, "grayscale")


def _forged() -> bytes:
    import imagecodecs

    small = bytes(imagecodecs.jpeg8_encode(make_image("natural", 16, 16, 3, 0), level=90, subsampling=(2, 2)))
    return patched(SOF, 5, (16000).to_bytes(2, "big") * 2)(small)


def _segments() -> bytes:
    import imagecodecs

    small = bytes(imagecodecs.jpeg8_encode(make_image("natural", 64, 64, 3, 0), level=90, subsampling=(2, 2)))
    return small[:2] + b"\xff\xfe\x00\x02" * 200_000 + small[2:]


#: name -> (what it is, how to build it, codec object, chunk shape).
BOMBS: dict[str, tuple[str, Callable[[], bytes], dict[str, Any], tuple[int, ...]]] = {
    "forged-16000x16000": ("713 bytes whose frame header says 16000x16000x3 (4:2:0)", _forged, YCC420, (16000, 16000, 3)),
    "progressive-10000-scans": ("progressive 2048x2048 gray, 10001 identical AC scans",
                                lambda: progressive_repeats(2048, 2048, 10_000), GRAY, (2048, 2048)),
    "sequential-1000-scans": ("baseline 1024x1024x3, component 1's scan repeated 1000 times",
                              lambda: sequential_repeats(1024, 1024, 1000), YCC444, (1024, 1024, 3)),
    "200000-segments": ("a 64x64x3 stream after 200000 empty COM segments", _segments, YCC420, (64, 64, 3)),
}  # fmt: skip


def _library_decode(name: str, data: bytes, shape: tuple[int, ...]) -> Callable[[], object]:
    """The backend's own decode call, with the plan the old pre-decode checks made for these streams."""
    backend = load_backend(name)
    info = inspect(data, entropy=False)  # made here, outside the timed call: it is not the library's work
    gray = len(shape) == 2
    plan = DecodePlan(info, shape[0], shape[1], 1 if gray else 3, "grayscale" if gray else "ycbcr", "grayscale" if gray else "rgb")
    return lambda: backend._decode_pixels(data, plan, "gray" if gray else "convert")


def child(bomb: str, backend_name: str, how: str) -> dict[str, Any]:
    """One measurement in this process: seconds, peak memory, outcome."""
    _, build, codec_obj, shape = BOMBS[bomb]
    data = build()
    backend = load_backend(backend_name)
    parsed = backend.parse(codec_obj)
    run = _library_decode(backend_name, data, shape) if how == "library" else (lambda: backend.decode(parsed, data, shape))
    t0 = time.perf_counter()
    try:
        run()
        outcome = "decoded"
    except Exception as exc:  # noqa: BLE001 - the outcome is what is measured, whatever it is
        outcome = f"{type(exc).__name__}: {str(exc)[:110]}"
    seconds = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"bytes": len(data), "seconds": seconds, "peak_mb": peak_mb, "outcome": outcome}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", action="append", default=None, help="backend (default: all)")
    parser.add_argument("--bomb", action="append", default=None, choices=sorted(BOMBS))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a run may take (default 300)")
    parser.add_argument("--child", nargs=3, metavar=("BOMB", "BACKEND", "HOW"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    print(f"{'bomb':26} {'backend':12} {'run':8} {'seconds':>8} {'peak MB':>8}  outcome")
    for bomb in args.bomb or list(BOMBS):
        print(f"# {bomb}: {BOMBS[bomb][0]}")
        for name in args.impl or list(BACKENDS):
            for how in ("library", "adapter"):
                cmd = [sys.executable, "-m", "zarr_jpeg_conformance.tools.bombs", "--child", bomb, name, how]
                try:
                    done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, check=False)
                    row = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
                except subprocess.TimeoutExpired:
                    print(f"{bomb:26} {name:12} {how:8} {'>' + str(args.timeout):>8} {'':>8}  timed out")
                    continue
                if row is None:
                    print(f"{bomb:26} {name:12} {how:8} {'':>8} {'':>8}  failed: {done.stderr.strip()[-200:]}")
                    continue
                print(f"{bomb:26} {name:12} {how:8} {row['seconds']:8.3f} {row['peak_mb']:8.0f}  {row['outcome']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
