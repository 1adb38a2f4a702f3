"""Wrong adapters whose fault is the layout of the chunk's bytes, as real codecs have it (issue 46).

Each breaks one rule and nothing else, like tests/wrong_adapters.py's, and is named by the cause the
diagnoses give it (tests/test_attribution.py: CAUSES).
"""

from __future__ import annotations

import numpy as np

from zarr_jpeg_conformance.backends.imagecodecs import ImagecodecsAdapter


def _passthrough(adapter: ImagecodecsAdapter, parsed: object) -> bool:
    return adapter._config(parsed).decoded_color_space == "ycbcr"


class ReturnsPlanes(ImagecodecsAdapter):
    """A pass-through decode handed over as its three planes one after the other, as if interleaved (zarrs_jpeg 0.2.0's
    libjpeg-turbo backend returns tjDecompressToYUV's buffer)."""

    name = "wrong-returns-planes"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        out = super().decode(parsed, data, chunk_shape)
        if _passthrough(self, parsed) and out.ndim == 3 and out.shape[2] == 3:
            return np.ascontiguousarray(np.moveaxis(out, -1, 0)).reshape(out.shape)
        return out


class ReadsPlanes(ImagecodecsAdapter):
    """A pass-through chunk's bytes read as three planes (channel-outermost), as a planar YUV encoder reads its input
    (zarrs_jpeg 0.2.0's libjpeg-turbo backend hands the interleaved chunk to tjCompressFromYUV)."""

    name = "wrong-reads-planes"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if _passthrough(self, parsed) and isinstance(chunk, np.ndarray) and chunk.ndim == 3 and chunk.shape[2] == 3:
            height, width = chunk.shape[:2]
            planes = np.empty_like(chunk)  # fresh, with the strides of its shape (a transposed view of 1-sample axes has not)
            planes[...] = np.ascontiguousarray(chunk).reshape(3, height, width).transpose(1, 2, 0)
            chunk = planes
        return super().encode(parsed, chunk)


class SqueezesAxes(ImagecodecsAdapter):
    """Every length-1 axis of a chunk dropped before encoding, what is left made at least 2-D (imagecodecs-zarr's
    ``_squeeze_shape``)."""

    name = "wrong-squeezes-axes"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if not isinstance(chunk, np.ndarray):
            return super().encode(parsed, chunk)
        shape = chunk.shape
        left = [n for n in shape if n != 1]
        if not left:
            left = [1, 1]
        elif len(left) == 1:
            left = [left[0], 1] if len(shape) > 1 and shape[-1] == 1 else [1, left[0]]
        return super().encode(parsed, np.ascontiguousarray(chunk).reshape(left))
