"""Decoders, legal and wrong, built from libjpeg-turbo's planes: what the decode tolerances are measured against.

A tolerance is only as good as the decoders on either side of it: legal ones must fall
inside, wrong ones outside. Each function here decodes a stream the way one decoder does,
by taking libjpeg-turbo's stored planes (PyTurboJPEG, so only the five common factor sets)
and upsampling and converting them itself:

legal
    ``repeat``: chroma samples repeated over the samples they cover (Go, the JavaScript decoders);
    ``bicubic``: chroma interpolated by Catmull-Rom, sited as JFIF sites it (a sharper upsampler than libjpeg's);
    ``triangle``: libjpeg's "fancy" filter, 3/4 of the nearest chroma sample and 1/4 of the
    next one, edges repeated (what libjpeg-turbo's own decode does, within rounding);
    ``float_idct``: djpeg's floating-point IDCT with triangle upsampling (djpeg, if installed);
    ``truncates``: chroma repeated, T.871's equations with each result truncated, not rounded (jpeg-js).
wrong
    ``fast_idct``: libjpeg-turbo's fast integer IDCT (documented as less accurate);
    ``limited_range``: the samples read as studio-range YCbCr (BT.601 16-235), not JFIF's full range;
    ``shifted_chroma``: chroma one sample too far right and down;
    ``wrong_phase``: the triangle filter with its neighbours on the wrong side;
    ``edge_rule``: the last chroma sample of each row and column replaced by the one before;
    ``bt709``: YCbCr converted to RGB by the BT.709 matrix; ``wraps``: converted modulo 256, not clamped;
    ``swapped_chroma``: Cb read as Cr and Cr as Cb; ``plus_one``: every sample one level too bright.

Each takes (data, config, chunk_shape) and returns the decode, or raises LookupError where it
cannot decode the stream. ``python -m zarr_jpeg_conformance.generate_fixtures --measure``
prints how far each lies outside the expected decodes of every corpus case.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from ..core import color
from ..core.config import JpegConfig
from ..core.markers import inspect

Decode = Callable[[bytes, JpegConfig, tuple[int, ...]], np.ndarray]


@cache
def _tj() -> Any:
    import turbojpeg as tj

    return tj


def _planes(data: bytes, flags: int = 0) -> list[np.ndarray]:
    try:
        tj = _tj()
        return [np.asarray(p) for p in tj.TurboJPEG().decode_to_yuv_planes(data, flags=flags)]
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        raise LookupError(f"no planes of this stream: {exc}") from exc


def _upsample(plane: np.ndarray, fy: int, fx: int, height: int, width: int, kind: str) -> np.ndarray:
    """A chroma plane at full resolution: repeated, triangle-filtered, or triangle-filtered the wrong way."""
    p = plane.astype(np.float64)
    for axis, f in ((0, fy), (1, fx)):
        if f == 1:
            continue
        if kind == "bicubic" and f == 2:
            p = _bicubic(p, axis)
            continue
        if kind == "repeat" or f != 2:
            p = np.repeat(p, f, axis=axis)
            continue
        before = np.concatenate([np.take(p, [0], axis=axis), np.take(p, range(p.shape[axis] - 1), axis=axis)], axis=axis)
        after = np.concatenate([np.take(p, range(1, p.shape[axis]), axis=axis), np.take(p, [-1], axis=axis)], axis=axis)
        near, far = (before, after) if kind == "triangle" else (after, before)
        even, odd = 0.75 * p + 0.25 * near, 0.75 * p + 0.25 * far
        p = np.stack([even, odd], axis=axis + 1).reshape(*p.shape[:axis], -1, *p.shape[axis + 1 :])
    return p[:height, :width]


def _bicubic(p: np.ndarray, axis: int) -> np.ndarray:
    """Twice as many samples along ``axis`` by Catmull-Rom interpolation, sited as JFIF sites chroma (each output at
    +-1/4 of a chroma sample from its centre), edges repeated."""
    n = p.shape[axis]
    at = lambda offset: np.take(p, np.clip(np.arange(n) + offset, 0, n - 1), axis=axis)  # noqa: E731
    # Catmull-Rom weights at a quarter of a sample: (-3/128, 111/128, 29/128, -9/128) from the far side to the near one.
    near = (-9 * at(-2) + 111 * at(0) + 29 * at(-1) - 3 * at(1)) / 128
    far = (-9 * at(2) + 111 * at(0) + 29 * at(1) - 3 * at(-1)) / 128
    return np.stack([near, far], axis=axis + 1).reshape(*p.shape[:axis], -1, *p.shape[axis + 1:])


def _from_planes(data: bytes, config: JpegConfig, shape: tuple[int, ...], kind: str, *, flags: int = 0,
                 chroma: Callable[[np.ndarray], np.ndarray] | None = None,
                 convert: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    height, width = shape[0], shape[1]
    if config.components == 1:
        tj = _tj()
        try:
            gray = tj.TurboJPEG().decode(data, pixel_format=tj.TJPF_GRAY, flags=flags)
        except (OSError, ValueError) as exc:
            raise LookupError(f"TurboJPEG cannot decode this stream: {exc}") from exc
        return np.asarray(gray).reshape(shape)
    if inspect(data).stored_color_space != "ycbcr":
        raise LookupError("the stream does not store YCbCr: nothing to upsample or convert")
    planes = _planes(data, flags)
    luma = planes[0][:height, :width].astype(np.float64)
    full = [luma]
    for plane in planes[1:]:
        fy, fx = -(-planes[0].shape[0] // plane.shape[0]), -(-planes[0].shape[1] // plane.shape[1])
        plane = chroma(plane) if chroma else plane
        full.append(_upsample(plane, fy, fx, height, width, kind))
    ycc = np.clip(np.rint(np.stack(full, axis=-1)), 0, 255).astype(np.uint8)
    if convert is not None and config.decoded_color_space != "ycbcr":
        return convert(ycc).reshape(shape)
    return (ycc if config.decoded_color_space == "ycbcr" else color.ycbcr_to_rgb(ycc)).reshape(shape)


def _colour(config: JpegConfig) -> None:
    if config.components != 3 or config.encoded_color_space == "rgb":
        raise LookupError("no chroma to upsample")


def repeat(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    return _from_planes(data, config, shape, "repeat")


def triangle(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    return _from_planes(data, config, shape, "triangle")


def fast_idct(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    return _from_planes(data, config, shape, "triangle", flags=_tj().TJFLAG_FASTDCT)


def float_idct(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    exe = shutil.which("djpeg")
    if exe is None or config.decoded_color_space == "ycbcr":
        raise LookupError("djpeg is not installed (libjpeg-turbo-progs), or the output is YCbCr")
    done = subprocess.run([exe, "-dct", "float", "-pnm"], input=data, capture_output=True, check=False)
    if done.returncode != 0:
        raise LookupError(f"djpeg refused the stream: {done.stderr[-200:]!r}")
    out = done.stdout
    header_end = 0
    for _ in range(4):  # magic, width, height, maxval: each ends with one whitespace byte
        while out[header_end : header_end + 1].isspace():
            header_end += 1
        while not out[header_end : header_end + 1].isspace():
            header_end += 1
    return np.frombuffer(out[header_end + 1 :], np.uint8).reshape(shape)


def limited_range(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    _colour(config)
    ycc_config = JpegConfig(config.quality, config.encoded_color_space, "ycbcr", config.subsampling)
    ycc = triangle(data, ycc_config, (shape[0], shape[1], 3)).astype(np.float64)
    # Read as studio range: Y 16-235 and Cb, Cr 16-240 stretched to the full 0-255.
    full = np.stack([(ycc[..., 0] - 16) * 255 / 219, *((ycc[..., i] - 128) * 255 / 224 + 128 for i in (1, 2))], axis=-1)
    full = np.clip(np.rint(full), 0, 255).astype(np.uint8)
    return (full if config.decoded_color_space == "ycbcr" else color.ycbcr_to_rgb(full)).reshape(shape)


def shifted_chroma(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    _colour(config)
    return _from_planes(data, config, shape, "triangle",
                        chroma=lambda p: np.concatenate([p[:1], p[:-1]], 0)[:, np.r_[0, 0 : p.shape[1] - 1]])


def wrong_phase(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    _colour(config)
    if config.luma_factors == (1, 1):
        raise LookupError("nothing is upsampled at 4:4:4")
    return _from_planes(data, config, shape, "wrong")


def edge_rule(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    _colour(config)
    if config.luma_factors == (1, 1):
        raise LookupError("nothing is upsampled at 4:4:4")

    def previous_at_edges(p: np.ndarray) -> np.ndarray:
        p = p.copy()
        if p.shape[1] > 1:
            p[:, -1] = p[:, -2]
        if p.shape[0] > 1:
            p[-1, :] = p[-2, :]
        return p

    return _from_planes(data, config, shape, "triangle", chroma=previous_at_edges)


def bicubic(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    return _from_planes(data, config, shape, "bicubic")


def _converted(matrix: tuple[float, float], wrap: bool = False,
               integer: Callable[[np.ndarray], np.ndarray] = np.rint) -> Callable[[np.ndarray], np.ndarray]:
    """YCbCr -> RGB by the inverse of the matrix with luma weights (kr, kb); ``wrap``: modulo 256 instead of clamping;
    ``integer``: how each result becomes an integer."""
    kr, kb = matrix

    def convert(ycc: np.ndarray) -> np.ndarray:
        y, cb, cr = (ycc[..., i].astype(np.float64) for i in range(3))
        r = y + (2 - 2 * kr) * (cr - 128)
        b = y + (2 - 2 * kb) * (cb - 128)
        g = (y - kr * r - kb * b) / (1 - kr - kb)
        rgb = integer(np.stack([r, g, b], axis=-1))
        return (rgb.astype(np.int64) % 256 if wrap else np.clip(rgb, 0, 255)).astype(np.uint8)

    return convert


def truncates(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    """T.871 gives the conversion in real numbers: a decoder that truncates its results lies below rounding by
    half a level on average, every sample within a level of the exact conversion."""
    return _from_planes(data, config, shape, "repeat", convert=_converted((0.299, 0.114), integer=np.floor))


def bt709(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    _colour(config)
    return _from_planes(data, config, shape, "triangle", convert=_converted((0.2126, 0.0722)))


def wraps(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    _colour(config)
    return _from_planes(data, config, shape, "triangle", convert=_converted((0.299, 0.114), wrap=True))


def swapped_chroma(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    _colour(config)
    return _from_planes(data, config, shape, "triangle", convert=lambda ycc: color.ycbcr_to_rgb(ycc[..., [0, 2, 1]]))


def plus_one(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    """Every sample one level too bright: a level shift of 127 in the decoder."""
    out = triangle(data, config, shape) if config.components == 3 else repeat(data, config, shape)
    return np.minimum(out.astype(np.int16) + 1, 255).astype(np.uint8)


LEGAL: dict[str, Decode] = {"repeat": repeat, "triangle": triangle, "float_idct": float_idct, "bicubic": bicubic,
                           "truncates": truncates}
WRONG: dict[str, Decode] = {
    "fast_idct": fast_idct,
    "limited_range": limited_range,
    "shifted_chroma": shifted_chroma,
    "wrong_phase": wrong_phase,
    "edge_rule": edge_rule,
    "bt709": bt709,
    "wraps": wraps,
    "swapped_chroma": swapped_chroma,
    "plus_one": plus_one,
}

__all__ = ["LEGAL", "WRONG", "Decode", "bicubic", "bt709", "edge_rule", "fast_idct", "float_idct", "limited_range",
           "plus_one", "repeat", "shifted_chroma", "swapped_chroma", "triangle", "truncates", "wraps", "wrong_phase"]
