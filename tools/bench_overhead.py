"""Benchmark: what the shared core adds to each built-in adapter's backend call.

Times ``adapter.encode``/``adapter.decode`` against the bare library call that the
adapter makes underneath, for a 1024x1024 RGB image (4:2:0) and a grayscale one at
quality 90 (``--size 256``: bench_zarr's chunk size, where fixed costs weigh more),
alternating the two in every round so machine noise hits both alike, and prints the
ratio of the medians (target: 1.05 or less). Run:
``python -m zarr_jpeg_conformance.tools.bench_overhead [--rounds N] [--size PIXELS] [--impl NAME ...]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from ..adapters import AdapterLoadError, load_adapter
from ..backends.base import BackendAdapter
from ..corpus.images import make_image

if TYPE_CHECKING:
    from ..core.stream import DecodePlan

CASES = {
    "rgb-420": ({"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}, 3),
    "gray": ({"quality": 90, "encoded_color_space": "grayscale"}, 1),
}


def _raw_calls(adapter: BackendAdapter, mode: str, image: np.ndarray) -> tuple[Callable[[], bytes], Callable[[bytes], object]]:
    """The bare library calls the adapter wraps (its own hooks, without the core around them)."""
    if mode == "gray":
        plane = np.ascontiguousarray(image[:, :, 0])
        return (lambda: adapter._encode_gray(plane, 90)), (lambda d: adapter._decode_pixels(d, _plan(adapter, d, plane.shape, mode), "gray"))
    return (lambda: adapter._encode_ycbcr(image, 90, (2, 2), ycbcr_input=False)), (
        lambda d: adapter._decode_pixels(d, _plan(adapter, d, image.shape, mode), "convert")
    )


_PLANS: dict[tuple[str, str], DecodePlan] = {}


def _plan(adapter: BackendAdapter, data: bytes, shape: tuple[int, ...], mode: str) -> DecodePlan:
    # The raw decode hook takes a plan; build it once, outside the timed region's repeats.
    key = (adapter.name, mode)
    if key not in _PLANS:
        from ..core.stream import plan_decode

        _PLANS[key] = plan_decode(adapter.parse({"name": "jpeg", "configuration": CASES[mode][0]}), data, shape)
    return _PLANS[key]


def _median_pair(first: Callable[[], object], second: Callable[[], object], rounds: int) -> tuple[float, float]:
    a: list[float] = []
    b: list[float] = []
    for i in range(rounds):
        for fn, acc in ((first, a), (second, b)) if i % 2 == 0 else ((second, b), (first, a)):
            t0 = time.perf_counter()
            fn()
            acc.append(time.perf_counter() - t0)
    return statistics.median(a), statistics.median(b)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--size", type=int, default=1024, help="image height and width (default 1024)")
    parser.add_argument("--impl", action="append", default=None, help="built-in adapter (default: all that load)")
    args = parser.parse_args(argv)
    names = args.impl or ["turbojpeg", "imagecodecs", "pillow"]
    print(f"{'adapter':12} {'mode':8} {'op':6} {'raw ms':>8} {'adapter ms':>10} {'ratio':>6}")
    for name in names:
        try:
            adapter = load_adapter(name)
        except AdapterLoadError as exc:
            print(f"{name:12} not available: {exc}")
            continue
        assert isinstance(adapter, BackendAdapter)
        for mode, (cfg, channels) in CASES.items():
            image = make_image("natural", args.size, args.size, channels=3)
            chunk = image if channels == 3 else np.ascontiguousarray(image[:, :, 0])
            parsed = adapter.parse({"name": "jpeg", "configuration": cfg})
            raw_encode, raw_decode = _raw_calls(adapter, mode, image)
            data = adapter.encode(parsed, chunk)
            enc_raw, enc_adapter = _median_pair(raw_encode, partial(adapter.encode, parsed, chunk), args.rounds)
            dec_raw, dec_adapter = _median_pair(partial(raw_decode, data), partial(adapter.decode, parsed, data, chunk.shape), args.rounds)
            for op, raw, wrapped in (("encode", enc_raw, enc_adapter), ("decode", dec_raw, dec_adapter)):
                print(f"{name:12} {mode:8} {op:6} {raw * 1e3:8.2f} {wrapped * 1e3:10.2f} {wrapped / raw:6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
