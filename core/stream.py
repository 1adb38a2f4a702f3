"""Checks on a stream before any pixel is decoded.

Backends differ in what they do with a bad stream (backends.md §6): some return
truncated data silently, one decodes a forged 65535x65535 header into 4.3 GB, most
ignore the spec's rule that APP14 decides the stored color space. These checks run on
the marker structure alone, so a backend only ever decodes a stream that fits the chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .chunk import image_shape
from .config import ColorSpace, JpegConfig, is_color_space
from .errors import StreamError
from .markers import StreamInfo, inspect_headers

#: SOF markers of 8-bit DCT processes a decoder may read (JPEG-X-09): baseline,
#: extended sequential, progressive, and their arithmetic-coded variants.
DCT_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC9, 0xCA})


@dataclass(frozen=True)
class DecodePlan:
    """What to decode and how: the stream's structure checked against the chunk."""

    info: StreamInfo
    height: int
    width: int
    components: int
    #: Color space of the stored samples, by the spec's rule (APP14 wins when present).
    stored: ColorSpace
    #: Color space to return (the configuration's decoded_color_space).
    output: ColorSpace

    @property
    def backend_disagrees(self) -> bool:
        """True when libjpeg's rule (JFIF wins over APP14) reads the stream differently."""
        return self.info.libjpeg_color_space != self.stored


def plan_decode(config: JpegConfig, data: bytes, chunk_shape: Sequence[int]) -> DecodePlan:
    """Inspect ``data`` and check it fits ``chunk_shape`` under ``config``; raise StreamError if not."""
    height, width, components = image_shape(chunk_shape)
    # Headers and the end of the stream are what the checks need; walking the entropy-
    # coded data too would cost up to 10% of a decode (tools/bench_overhead.py), and what it
    # could add (a corrupt byte that looks like a marker) the decoder sees as well.
    info = inspect_headers(data)
    if not info.soi:
        raise StreamError("JPEG-DEC-01", f"not a JPEG stream: it does not start with SOI ({len(data)} bytes)")
    if info.sof is None or not info.scans:
        raise StreamError("JPEG-DEC-01", "stream has no frame header or no scan: " + "; ".join(info.problems))
    if not info.eoi:
        raise StreamError("JPEG-X-07", "stream is truncated (no EOI marker): " + "; ".join(info.problems))
    if info.problems:
        raise StreamError("JPEG-DEC-01", "malformed stream: " + "; ".join(info.problems))
    if info.sof not in DCT_SOF:
        raise StreamError("JPEG-X-09", f"SOF marker 0x{info.sof:02X} is not an 8-bit DCT process")
    if info.precision != 8:
        raise StreamError("JPEG-X-10", f"sample precision is {info.precision} bits, not 8")
    n = len(info.components)
    if n not in (1, 3):
        raise StreamError("JPEG-X-10", f"stream has {n} components; only 1 or 3 fit a chunk")
    if n != components:
        raise StreamError("JPEG-DIM-03", f"stream has {n} component(s) but the chunk shape {tuple(chunk_shape)} has {components}")
    sh, sw = info.height or 0, info.width or 0
    if sh * sw != height * width:
        raise StreamError(
            "JPEG-DIM-03", f"stream is {sh}x{sw} (HxW) but the chunk shape {tuple(chunk_shape)} needs {height}x{width}"
        )
    if (sh, sw) != (height, width):
        raise StreamError(
            "JPEG-X-08", f"stream is {sh}x{sw} (HxW), a different factorization of the chunk's {height}x{width}"
        )
    stored = info.stored_color_space
    if not is_color_space(stored):
        raise StreamError("JPEG-ECS-12", f"stream color transform cannot be honored (APP14 transform {info.adobe_transform})")
    if (stored == "grayscale") != (config.decoded_color_space == "grayscale"):
        raise StreamError(
            "JPEG-DIM-03", f"stream stores {stored} but decoded_color_space is {config.decoded_color_space!r}"
        )
    return DecodePlan(info, height, width, n, stored, config.decoded_color_space)
