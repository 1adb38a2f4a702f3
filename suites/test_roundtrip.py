"""Round trip: shape and dtype survive exactly, each side keeps what its part allows, quality orders fidelity.

Each party is judged by what it produced. Every stream written here is checked for what
every stream must be (``judging.written``) and read back by the reference decoders: the
encoder must lose no more than its own tables allow (``judging.read_back``). The
implementation's decode of its own stream is then judged against that stream's expected
decodes (``judging.decode_tolerances.check_decode``), not against the chunk: no PSNR floor
per quality, since the spec leaves quality -> tables to the encoder (JPEG-Q-03). What quality
does is judged by the sweep alone, on the reference decodes (JPEG-Q-02 the ends, JPEG-X-16
each step). Every refusal is judged by the capability model (``judging.checks``): an optional
feature refused at parse or at encode is 'unsupported'.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.modes import MODE, MODES, Mode
from zarr_jpeg_conformance.judging import roots
from zarr_jpeg_conformance.judging.checks import Calls, level_mark
from zarr_jpeg_conformance.judging.decode_tolerances import check_decode
from zarr_jpeg_conformance.judging.legal_decoders import libjpeg_turbo_decode
from zarr_jpeg_conformance.judging.tolerances import FIDELITY_CASES, SHAPE_MIN_SIDE, SWEEP_QUALITIES

pytestmark = pytest.mark.roles("encode", "decode")

#: Aligned and unaligned to every MCU size (8, 16, 32), square and not, tiny and not, one row
#: and one column (a writer that swaps axes for a one-column chunk shows in the frame header).
SIZES = [(1, 1), (7, 13), (1, 37), (29, 1), (16, 48), (48, 16), (33, 65), (64, 64)]


def _mode_params(modes: list[Mode]) -> list[object]:
    return [pytest.param(m, id=m.id, marks=level_mark(m.level)) for m in modes]


def _roundtrip(judge, impl, mode: Mode, quality: int, chunk: np.ndarray) -> tuple[np.ndarray, bytes]:
    """The implementation's decode of its own stream of ``chunk``: the stream read back, the decode judged by it."""
    for r in mode.requirements:
        judge.cite(r)
    calls = Calls(judge, impl, mode.codec(quality), chunk.shape)
    data = calls.encode(chunk, f"encode at quality {quality}")
    out = calls.decode(data, chunk.shape, "decode of its own stream")
    check_decode(judge, out, data, calls.config, f"{impl.name}'s decode of its own {mode.id} stream (quality {quality})",
                 defaults=lambda: roots.decoded_with_defaults(impl, calls.codec, data, chunk.shape))
    return out, data


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
    """Decoding returns exactly the chunk's shape and dtype, and content that is not scrambled, at every size."""
    size = shape[:2]
    small = min(size) < SHAPE_MIN_SIDE
    kind = ("luma" if mode.decoded == "ycbcr" else "offsets") if small else "axes"
    chunk = make_image(kind, size[0], size[1], channels=mode.channels).reshape(shape)
    judge.cite("JPEG-MCU-01")
    judge.cite("JPEG-DIM-03")
    out, data = _roundtrip(judge, impl, mode, 90, chunk)
    worst = int(np.abs(out.astype(np.int16) - chunk.astype(np.int16)).max())
    judge.metrics.update(psnr=round(psnr(chunk, out), 3), max_abs=worst, bytes=len(data))


def _layouts(chunk: np.ndarray) -> dict[str, np.ndarray]:
    """The same logical chunk in other memory layouts (JPEG-ENC-02: read in C order, whatever the layout)."""
    fortran = np.asfortranarray(chunk)
    wide = np.zeros((chunk.shape[0], chunk.shape[1] * 2, *chunk.shape[2:]), np.uint8)
    wide[:, ::2] = chunk
    flipped = np.ascontiguousarray(chunk[::-1, ::-1])[::-1, ::-1]
    readonly = chunk.copy()
    readonly.flags.writeable = False
    return {"fortran": fortran, "every-other-column": wide[:, ::2], "negative-strides": flipped, "read-only": readonly}


@pytest.mark.parametrize("mode", _mode_params([MODE["gray"], MODE["ycbcr-420"], MODE["rgb"]]))
def test_memory_layout(impl, mode, judge) -> None:
    """A chunk in Fortran order, a strided view, negative strides or read-only decodes as its C-order copy does."""
    judge.cite("JPEG-ENC-02")
    chunk = make_image("natural", 40, 56, channels=mode.channels)
    if mode.channels == 1:
        chunk = chunk[:, :, 0]
    calls = Calls(judge, impl, mode.codec(90), chunk.shape)
    expected = calls.decode(calls.encode(chunk), chunk.shape, "decode of the C-order chunk's stream")
    for name, view in _layouts(chunk).items():
        assert np.array_equal(view, chunk)  # the suite's own construction
        out = calls.decode(calls.encode(view, f"encode of the {name} chunk"), chunk.shape, f"decode of the {name} chunk's stream")
        diff = int(np.abs(out.astype(np.int16) - expected.astype(np.int16)).max())
        judge.require(diff == 0, "JPEG-ENC-02",
                      f"the {name} layout of the same chunk decodes up to {diff} levels away from its C-order copy: "
                      "the samples were not read in C order")


def _fidelity_params() -> list[object]:
    params: list[object] = []
    for mode_id, kind, quality in FIDELITY_CASES:
        mode = MODE[mode_id]
        mark = level_mark(mode.level)
        params.append(pytest.param(mode, kind, quality, id=f"{mode_id}-{kind}-q{quality}", marks=mark))
    return params


@pytest.mark.parametrize(("mode", "kind", "quality"), _fidelity_params())
def test_fidelity(impl, mode, kind, quality, judge) -> None:
    """The stream keeps what its own tables allow of the image; the decode is the stream's (rate and PSNR recorded)."""
    judge.cite(mode.fidelity_requirement)
    chunk = make_image(kind, 64, 96, channels=mode.channels)
    out, data = _roundtrip(judge, impl, mode, quality, chunk)
    judge.metrics.update(psnr=round(psnr(chunk, out), 3), bytes=len(data), bpp=round(8 * len(data) / (64 * 96), 4),
                         quality=quality)


@pytest.mark.parametrize(("mode", "quality"), [pytest.param(m, q, id=f"{m.id}-q{q}", marks=level_mark(m.level))
                                               for m in MODES for q in (75, 100)])
def test_gamut_corners(impl, mode, quality, judge) -> None:
    """Black, white, the primaries, the secondaries and saturated blends: a conversion that wraps at 256, clamps
    wrong or uses another matrix than T.871's shows, in the stream's coefficients and in the decode."""
    judge.cite(mode.fidelity_requirement)
    chunk = make_image("gamut", 48, 64, channels=mode.channels)
    out, data = _roundtrip(judge, impl, mode, quality, chunk)
    judge.metrics.update(psnr=round(psnr(chunk, out), 3), bytes=len(data), quality=quality)


@pytest.mark.parametrize("mode", _mode_params([m for m in MODES if m.level == "MUST"] + [MODE["rgb"]]))
def test_quality_sweep(impl, mode, judge) -> None:
    """The highest quality preserves more than the lowest (JPEG-Q-02); each step up does not lose (JPEG-X-16)."""
    judge.cite("JPEG-Q-02")
    chunk = make_image("natural", 64, 96, channels=mode.channels)
    points = []
    for q in SWEEP_QUALITIES:
        # The encoder's part, judged by its streams: read back by libjpeg-turbo, never by its own decoder.
        calls = Calls(judge, impl, mode.codec(q), chunk.shape)
        data = calls.encode(chunk, f"encode at quality {q}")
        points.append((q, psnr(chunk, libjpeg_turbo_decode(data, calls.config, chunk.shape)), len(data)))
    judge.metrics["sweep"] = ";".join(f"{q}:{p:.2f}:{n}" for q, p, n in points)
    (q_lo, p_lo, n_lo), (q_hi, p_hi, n_hi) = points[0], points[-1]
    judge.require(p_hi > p_lo and n_hi > n_lo, "JPEG-Q-02",
                  f"quality {q_hi} ({p_hi:.2f} dB, {n_hi} bytes) is no better than quality {q_lo} ({p_lo:.2f} dB, {n_lo} bytes): "
                  "quality ignored?")
    for (q0, p0, n0), (q1, p1, n1) in pairwise(points):
        judge.require(p1 >= p0 and n1 >= n0, "JPEG-X-16",
                      f"quality {q1} gives {p1:.2f} dB and {n1} bytes, quality {q0} {p0:.2f} dB and {n0} bytes")
