"""Adapter over imagecodecs' ``jpeg8`` codec (libjpeg-turbo, patched to 65535)."""

from __future__ import annotations

import imagecodecs
import numpy as np

from ..core.stream import DecodePlan
from .base import BackendAdapter, DecodeMode, Factor, writes_into

#: jpeg8_encode accepts only these (h, v) luma factors (backends.md §2).
_NATIVE = frozenset({(1, 1), (2, 1), (1, 2), (2, 2), (4, 1)})
_SPACE = {"grayscale": "GRAY", "ycbcr": "YCbCr", "rgb": "RGB"}


class ImagecodecsAdapter(BackendAdapter):
    name = "imagecodecs"
    native_factors: frozenset[Factor] = _NATIVE
    native_rgb = True
    native_ycbcr_input = True
    raw_ycbcr_output = True
    forces_color_space = True
    max_dimension = 65535
    backend_errors = (imagecodecs.Jpeg8Error,)
    # jpeg8_decode has no strict option: its error manager leaves libjpeg's default
    # emit_message counting warnings that nothing reads, and its output_message prints
    # nothing, so corrupt entropy-coded data decodes to whatever libjpeg made of it.
    strict = False

    def versions(self) -> dict[str, str]:
        return {"imagecodecs": imagecodecs.__version__, "libjpeg": imagecodecs.jpeg8_version()}

    def _encode_gray(self, plane: np.ndarray, quality: int) -> bytes:
        return bytes(imagecodecs.jpeg8_encode(plane, level=quality, colorspace="GRAY", outcolorspace="GRAY"))

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: Factor, *, ycbcr_input: bool) -> bytes:
        return bytes(
            imagecodecs.jpeg8_encode(
                image,
                level=quality,
                colorspace="YCbCr" if ycbcr_input else "RGB",
                outcolorspace="YCbCr",
                subsampling=luma,
            )
        )

    def _encode_rgb(self, image: np.ndarray, quality: int) -> bytes:
        return bytes(imagecodecs.jpeg8_encode(image, level=quality, colorspace="RGB", outcolorspace="RGB"))

    def _encode_plane(self, plane: np.ndarray, quality: int, table: np.ndarray) -> bytes:
        # jpeg8_encode takes no quantization table: its own luma table for `quality` it is.
        return self._encode_gray(plane, quality)

    @writes_into
    def _decode_pixels(self, data: bytes, plan: DecodePlan, mode: DecodeMode, out: np.ndarray | None = None) -> np.ndarray:
        # Naming the stored color space makes libjpeg follow the spec's rule (APP14 wins
        # over JFIF) instead of its own.
        stored = _SPACE[plan.stored]
        # jpeg8_decode writes its scanlines into out, of the shape it would return or that with one more axis of 1.
        return imagecodecs.jpeg8_decode(data, colorspace=stored, outcolorspace=stored if mode != "convert" else "RGB", out=out)


