"""Meta-tests for core.stream: what ``plan_decode`` refuses before a decoder ever sees the stream."""

from __future__ import annotations

import struct

import pytest

from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.core.errors import StreamError
from zarr_jpeg_conformance.core.stream import plan_decode

GRAY = parse_codec({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}})


def _seg(marker: int, payload: bytes) -> bytes:
    return bytes((0xFF, marker)) + struct.pack(">H", len(payload) + 2) + payload


def _stream(precision: int, sof: int = 0xC1) -> bytes:
    """An 8x8 one-component extended-sequential stream at ``precision`` bits (headers only, as plan_decode reads them)."""
    frame = _seg(sof, bytes((precision,)) + struct.pack(">HHB", 8, 8, 1) + bytes((1, 0x11, 0)))
    return b"\xff\xd8" + frame + _seg(0xDA, bytes((1, 1, 0, 0, 0x3F, 0))) + b"\x12\x34\xff\xd9"


def test_12_bit_samples_do_not_fit_a_uint8_chunk() -> None:
    """SOF1 may carry 12-bit samples (T.81 Table B.2); a uint8 chunk cannot hold them (JPEG-X-10)."""
    assert plan_decode(GRAY, _stream(8), (8, 8)).height == 8
    with pytest.raises(StreamError, match=r"sample precision is 12 bits, not 8 \[JPEG-X-10\]"):
        plan_decode(GRAY, _stream(12), (8, 8))
