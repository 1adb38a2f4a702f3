"""Checks on a stream before any pixel is decoded.

Backends differ in what they do with a bad stream (backends.md §6): some return
truncated data silently, one decodes a forged 65535x65535 header into 4.3 GB, most
ignore the spec's rule that APP14 decides the stored color space. These checks run on
the marker structure alone, so a backend only ever decodes a stream that fits the chunk,
is long enough for its frame and costs no more work than core.limits allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .chunk import image_shape
from .config import ColorSpace, JpegConfig, is_color_space
from .errors import StreamError
from .limits import MAX_MARKERS, MIN_BITS_PER_BLOCK, blocks, entropy_floor, limit_problem, scan_problem
from .markers import StreamInfo, inspect_headers, inspect_rest

#: SOF markers of 8-bit DCT processes a decoder may read (JPEG-X-09): baseline,
#: extended sequential, progressive, and their arithmetic-coded variants.
DCT_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC9, 0xCA})
SEQUENTIAL_SOF = frozenset({0xC0, 0xC1, 0xC9})


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
    # Headers and the end of the stream are what most checks need; the scans after the
    # first are walked only when there are any (see _check_work).
    info = inspect_headers(data, max_markers=MAX_MARKERS)
    if info.markers > MAX_MARKERS:
        raise StreamError("JPEG-X-15", f"stream has more than {MAX_MARKERS} markers; rejected before decoding")
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
    info = _check_work(info, data)
    stored = info.stored_color_space
    if not is_color_space(stored):
        raise StreamError("JPEG-ECS-12", f"stream color transform cannot be honored (APP14 transform {info.adobe_transform})")
    if (stored == "grayscale") != (config.decoded_color_space == "grayscale"):
        raise StreamError(
            "JPEG-DIM-03", f"stream stores {stored} but decoded_color_space is {config.decoded_color_space!r}"
        )
    return DecodePlan(info, height, width, n, stored, config.decoded_color_space)


def _check_work(info: StreamInfo, data: bytes) -> StreamInfo:
    """Reject a stream too short for its frame, or with scans or markers beyond the bounds of
    core.limits, before the decoder allocates or decodes anything; return the stream's
    structure, its later scans walked where they matter."""
    height, width = info.height or 0, info.width or 0
    floor = entropy_floor(info.sof or 0, height, width, info.components)
    # Everything after the first scan header but the final EOI: at least the entropy-coded
    # data itself, so the comparison can only err towards accepting.
    room = len(data) - (info.entropy_start or len(data)) - 2
    if room < floor:
        raise StreamError(
            "JPEG-X-07",
            f"stream is truncated: a {height}x{width} frame with these components has "
            f"{sum(blocks(height, width, info.components))} blocks, whose entropy-coded data takes at least {floor} bytes "
            f"(T.81: at least {MIN_BITS_PER_BLOCK[info.sof or 0]} bit(s) a block), but only {room} bytes "
            "follow the first scan header; rejected before decoding (JPEG-X-13)",
        )
    if info.sof in SEQUENTIAL_SOF and not set(info.component_ids) - set(info.scans[0]):
        # One scan holds every component, the way encoders write: libjpeg then stops with an
        # error at any further scan ("Didn't expect more than one scan"), so nothing after it can
        # cost work, and the entropy-coded data need not be walked.
        return info
    info = inspect_rest(data, info, max_markers=MAX_MARKERS)
    # The scans walked say the most, even when the walk stopped at MAX_MARKERS: a stream of
    # repeated scans breaks the rules at its second repeat.
    problem = scan_problem(info)
    if problem:
        raise StreamError("JPEG-X-14", f"{problem}; rejected before decoding")
    if info.markers > MAX_MARKERS:
        raise StreamError("JPEG-X-15", f"stream has more than {MAX_MARKERS} markers; rejected before decoding")
    if info.problems:
        raise StreamError("JPEG-DEC-01", "malformed stream: " + "; ".join(info.problems))
    problem = limit_problem(info)
    if problem:
        raise StreamError("JPEG-X-15", f"{problem}; rejected before decoding")
    return info
