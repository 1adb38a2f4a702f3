"""Adapter over Pillow's JPEG plugin (bundled libjpeg-turbo)."""

from __future__ import annotations

import io

import numpy as np
import PIL
from PIL import Image, features

from ..core.stream import DecodePlan
from .base import BackendAdapter, DecodeMode, Factor

#: Pillow's `subsampling` option: 4:4:4, 4:2:2, 4:2:0 only (no 4:4:0, and unknown values
#: silently become 4:2:0, backends.md §11.17), so anything else goes the planar way.
_NATIVE = {(1, 1): 0, (2, 1): 1, (2, 2): 2}


def _save(image: Image.Image, **options: object) -> bytes:
    buf = io.BytesIO()
    image.save(buf, "JPEG", **options)
    return buf.getvalue()


class PillowAdapter(BackendAdapter):
    name = "pillow"
    native_factors: frozenset[Factor] = frozenset(_NATIVE)
    native_rgb = True
    native_ycbcr_input = True
    raw_ycbcr_output = True
    backend_errors = (OSError, Image.DecompressionBombError, SyntaxError)
    # Pillow's JPEG decoder (libImaging/JpegDecode.c) silences libjpeg's messages and does not
    # look at its warning count (the check is commented out), and no option changes that:
    # corrupt entropy-coded data decodes silently. Truncation it reports ("image file is truncated").
    strict = False

    def versions(self) -> dict[str, str]:
        return {"pillow": PIL.__version__, "libjpeg-turbo": str(features.version("libjpeg_turbo") or features.version("jpg"))}

    def _encode_gray(self, plane: np.ndarray, quality: int) -> bytes:
        return _save(Image.fromarray(plane, "L"), quality=quality)

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: Factor, *, ycbcr_input: bool) -> bytes:
        mode = "YCbCr" if ycbcr_input else "RGB"
        return _save(Image.fromarray(image, mode), quality=quality, subsampling=_NATIVE[luma])

    def _encode_rgb(self, image: np.ndarray, quality: int) -> bytes:
        return _save(Image.fromarray(image, "RGB"), quality=quality, keep_rgb=True, subsampling=0)

    def _encode_plane(self, plane: np.ndarray, quality: int, table: np.ndarray) -> bytes:
        # Pillow takes tables in natural (row-major) order and zigzags them itself.
        return _save(Image.fromarray(plane, "L"), qtables=[[int(x) for x in np.ravel(table)]])

    def _decode_pixels(self, data: bytes, plan: DecodePlan, mode: DecodeMode) -> np.ndarray:
        with Image.open(io.BytesIO(data), formats=["JPEG"]) as im:
            if mode == "raw" and plan.stored == "ycbcr":
                im.draft("YCbCr", im.size)  # libjpeg returns the stored samples unconverted
            im.load()
            return np.asarray(im)
