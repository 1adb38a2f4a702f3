"""Round trip: shape and dtype survive exactly, fidelity stays above measured floors, quality is monotonic."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.modes import MODE, MODES, Mode
from zarr_jpeg_conformance.judging.checks import level_mark, parsed_or_verdict, succeed
from zarr_jpeg_conformance.judging.tolerances import PSNR_FLOORS, SHAPE_MIN_SIDE, SHAPE_PSNR_FLOOR, SWEEP_QUALITIES

pytestmark = pytest.mark.roles("encode", "decode")

#: Aligned and unaligned to every MCU size (8, 16, 32), square and not, tiny and not.
SIZES = [(1, 1), (7, 13), (16, 48), (48, 16), (33, 65), (64, 64)]


def _mode_params(modes: list[Mode]) -> list[object]:
    return [pytest.param(m, id=m.id, marks=level_mark(m.level)) for m in modes]


def _roundtrip(judge, impl, mode: Mode, quality: int, chunk: np.ndarray) -> tuple[np.ndarray, bytes]:
    for r in mode.requirements:
        judge.cite(r)
    parsed = parsed_or_verdict(judge, impl, mode.codec(quality))
    data = bytes(succeed(judge, f"encode of a valid {chunk.dtype}{list(chunk.shape)} chunk", impl.encode, parsed, chunk))
    out = succeed(judge, "decode of its own stream", impl.decode, parsed, data, chunk.shape)
    return np.asarray(out), data


def _shape_params() -> list[object]:
    """Every mode x size, grayscale both as (H, W) and (H, W, 1)."""
    params: list[object] = []
    for mode in MODES:
        mark = level_mark(mode.level)
        for h, w in SIZES:
            shapes = [(h, w), (h, w, 1)] if mode.channels == 1 else [(h, w, 3)]
            for shape in shapes:
                params.append(pytest.param(mode, shape, id=f"{mode.id}-{'x'.join(map(str, shape))}", marks=mark))
    return params


@pytest.mark.parametrize(("mode", "shape"), _shape_params())
def test_shape_roundtrip(impl, mode, shape, judge) -> None:
    """Decoding returns exactly the chunk's shape and dtype, and content that is not scrambled."""
    size = shape[:2]
    chunk = make_image("axes", size[0], size[1], channels=mode.channels).reshape(shape)
    judge.cite("JPEG-MCU-01")
    judge.cite("JPEG-DIM-03")
    out, data = _roundtrip(judge, impl, mode, 90, chunk)
    judge.require(out.shape == chunk.shape, "JPEG-MCU-01", f"decoded shape {out.shape} != chunk shape {chunk.shape}")
    judge.require(out.dtype == np.uint8, "JPEG-DT-01", f"decoded dtype {out.dtype} != uint8")
    value = psnr(chunk, out)
    judge.metrics.update(psnr=round(value, 3), bytes=len(data))
    if min(size) >= SHAPE_MIN_SIDE:
        # See tolerances.SHAPE_PSNR_FLOOR: wrong axes or channels score far below it.
        judge.require(value >= SHAPE_PSNR_FLOOR, "JPEG-SHP-07", f"PSNR {value:.2f} dB < {SHAPE_PSNR_FLOOR} dB: axes or channels mixed up?")


def _fidelity_params() -> list[object]:
    params: list[object] = []
    for (mode_id, kind, quality), floor in PSNR_FLOORS.items():
        mode = MODE[mode_id]
        mark = level_mark(mode.level)
        params.append(pytest.param(mode, kind, quality, floor, id=f"{mode_id}-{kind}-q{quality}", marks=mark))
    return params


@pytest.mark.parametrize(("mode", "kind", "quality", "floor"), _fidelity_params())
def test_fidelity(impl, mode, kind, quality, floor, judge) -> None:
    """PSNR of the round trip is at least the measured floor for its mode, image and quality band."""
    chunk = make_image(kind, 64, 96, channels=mode.channels)
    out, data = _roundtrip(judge, impl, mode, quality, chunk)
    value = psnr(chunk, out.reshape(chunk.shape))
    judge.metrics.update(psnr=round(value, 3), bytes=len(data), bpp=round(8 * len(data) / (64 * 96), 4), quality=quality)
    requirement = "JPEG-DCS-03" if mode.encoded != "grayscale" else "JPEG-ECS-03"
    judge.require(value >= floor, requirement, f"PSNR {value:.2f} dB at quality {quality} on '{kind}' is below the floor {floor} dB")


@pytest.mark.parametrize("mode", _mode_params([m for m in MODES if m.level == "MUST"] + [MODE["rgb"]]))
def test_quality_sweep(impl, mode, judge) -> None:
    """A higher quality never gives a lower PSNR or a smaller stream (JPEG-Q-02)."""
    judge.cite("JPEG-Q-02")
    chunk = make_image("natural", 64, 96, channels=mode.channels)
    points = []
    for q in SWEEP_QUALITIES:
        out, data = _roundtrip(judge, impl, mode, q, chunk)
        points.append((q, psnr(chunk, out.reshape(chunk.shape)), len(data)))
    judge.metrics["sweep"] = ";".join(f"{q}:{p:.2f}:{n}" for q, p, n in points)
    for (q0, p0, n0), (q1, p1, n1) in pairwise(points):
        judge.require(p1 >= p0, "JPEG-Q-02", f"quality {q1} gives PSNR {p1:.2f} dB < {p0:.2f} dB at quality {q0}")
        judge.require(n1 >= n0, "JPEG-Q-02", f"quality {q1} gives {n1} bytes < {n0} bytes at quality {q0}")
    (q_lo, p_lo, n_lo), (q_hi, p_hi, n_hi) = points[0], points[-1]
    judge.require(p_hi > p_lo and n_hi > n_lo, "JPEG-Q-02",
                  f"quality {q_hi} ({p_hi:.2f} dB, {n_hi} bytes) is no better than quality {q_lo} ({p_lo:.2f} dB, {n_lo} bytes): quality ignored?")
