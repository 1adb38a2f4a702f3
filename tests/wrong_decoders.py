"""Deliberately wrong decode-only adapters, each with one fault real decoders have.

tests/test_decode_suites_bite.py runs suites/test_decode_streams.py against each of them
and requires the fault to be caught, citing the requirement it breaks. They build on the
imagecodecs adapter (libjpeg-turbo, with the shared core's checks), so that everything
except the one fault is right.
"""

from __future__ import annotations

import time
from typing import Any

import imagecodecs
import numpy as np

from zarr_jpeg_conformance.backends.imagecodecs import ImagecodecsAdapter
from zarr_jpeg_conformance.core.markers import inspect


class _DecodeOnly(ImagecodecsAdapter):
    roles = frozenset({"decode"})


class IgnoresApp14(_DecodeOnly):
    """Applies the inverse YCbCr transform to every 3-component stream (jpeg-js, neuroglancer's jpgjs)."""

    name = "wrong-ignores-app14"

    def _decode_pixels(self, data: bytes, plan: Any, mode: Any) -> np.ndarray:
        if plan.components == 3:
            return imagecodecs.jpeg8_decode(data, colorspace="YCbCr", outcolorspace="RGB")
        return super()._decode_pixels(data, plan, mode)


class ReturnsTruncated(_DecodeOnly):
    """Returns what it could decode of a stream cut short, the rest grey (imagecodecs, PyTurboJPEG)."""

    name = "wrong-returns-truncated"
    _received = b""

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        # The checks see a complete stream; the library gets the stream as received.
        self._received = bytes(data)
        return super().decode(parsed, data if data.endswith(b"\xff\xd9") else data + b"\xff\xd9", chunk_shape)

    def _decode_pixels(self, data: bytes, plan: Any, mode: Any) -> np.ndarray:
        return super()._decode_pixels(self._received, plan, mode)


class Transposes(_DecodeOnly):
    """Hands back the decoded image with its axes swapped (a writer's (W, H) read as (H, W))."""

    name = "wrong-transposes"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        out = super().decode(parsed, data, chunk_shape)
        return np.ascontiguousarray(np.swapaxes(out, 0, 1)).reshape(chunk_shape)


class SizesFromHeader(_DecodeOnly):
    """Allocates the frame the header declares, decodes into it, then crops or pads it to the chunk."""

    name = "wrong-sizes-from-header"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        info = inspect(data)
        if info.height is None or info.width is None or not info.components:
            raise ValueError("no frame header")
        frame_shape = (info.height, info.width, len(info.components))
        frame = np.zeros(frame_shape, np.uint8)  # trusted: 4.3 GB for a forged 65535x65535 header
        if frame.size <= 1 << 22:
            frame[...] = np.asarray(imagecodecs.jpeg8_decode(data)).reshape(frame_shape)
        out = np.zeros(chunk_shape, np.uint8).reshape(chunk_shape[0], chunk_shape[1], -1)
        h, w, c = (min(a, b) for a, b in zip(out.shape, frame_shape, strict=True))
        out[:h, :w, :c] = frame[:h, :w, :c]
        return out.reshape(chunk_shape)


class AnyFactorization(_DecodeOnly):
    """Reshapes the raster to the chunk whenever the sample counts agree (neuroglancer precomputed)."""

    name = "wrong-any-factorization"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        info = inspect(data)
        if info.height and info.width and info.height * info.width == chunk_shape[0] * chunk_shape[1]:
            stream_shape = (info.height, info.width, *chunk_shape[2:])
            return super().decode(parsed, data, stream_shape).reshape(chunk_shape)
        return super().decode(parsed, data, chunk_shape)


class RejectsBaselineVariants(_DecodeOnly):
    """Accepts only the simplest baseline layout: no restarts, one scan, no COM or extra APPn."""

    name = "wrong-rejects-baseline-variants"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        info = inspect(data)
        if info.restart_interval or len(info.scans) > 1 or info.comments or set(info.app_segments) - {0xE0, 0xEE}:
            raise ValueError("only single-scan streams without restarts, COM or other APPn are supported")
        return super().decode(parsed, data, chunk_shape)


class HangsOnGarbage(_DecodeOnly):
    """Loops (here: sleeps) on input that does not start with SOI."""

    name = "wrong-hangs"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        if not data.startswith(b"\xff\xd8"):
            time.sleep(30)
        return super().decode(parsed, data, chunk_shape)


class SpinsOnGarbage(_DecodeOnly):
    """Works for seconds (a busy loop holding the GIL now and then) on input that does not start with SOI."""

    name = "wrong-spins"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        if not data.startswith(b"\xff\xd8"):
            end = time.process_time() + 3.0
            while time.process_time() < end:
                pass
        return super().decode(parsed, data, chunk_shape)


class CrashesOnGarbage(_DecodeOnly):
    """Raises IndexError, not a rejection, on input that does not start with SOI."""

    name = "wrong-crashes-on-garbage"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        if not data.startswith(b"\xff\xd8"):
            raise IndexError("marker table lookup out of range")
        return super().decode(parsed, data, chunk_shape)
