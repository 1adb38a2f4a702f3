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


@pytest.mark.parametrize(("shape", "words"), [
    ((8, 8, 3), r"stream has 1 component\(s\) but the chunk shape \(8, 8, 3\) has 3 \[JPEG-DIM-03\]"),
    ((4, 8), r"stream is 8x8 \(HxW\) but the chunk shape \(4, 8\) needs 4x8 \[JPEG-DIM-03\]"),
    ((4, 16), r"stream is 8x8 \(HxW\), a different factorization of the chunk's 4x16 \[JPEG-X-08\]"),
])
def test_a_stream_that_is_not_the_chunks_is_refused_by_rule(shape: tuple[int, ...], words: str) -> None:
    with pytest.raises(StreamError, match=words):
        plan_decode(GRAY, _stream(8), shape)


C444 = parse_codec({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr",
                                                      "subsampling": [[1, 1], [1, 1], [1, 1]]}})


def _color_stream(adobe_transform: int) -> bytes:
    adobe = _seg(0xEE, b"Adobe\x00\x64\x00\x00\x00\x00" + bytes((adobe_transform,)))
    frame = _seg(0xC0, bytes((8,)) + struct.pack(">HHB", 8, 8, 3) + b"".join(bytes((i, 0x11, 0)) for i in (1, 2, 3)))
    return b"\xff\xd8" + adobe + frame + _seg(0xDA, bytes((3, 1, 0, 2, 0, 3, 0, 0, 0x3F, 0))) + b"\x12\x34\xff\xd9"


def test_a_colour_transform_no_color_space_names_is_refused() -> None:
    assert plan_decode(C444, _color_stream(1), (8, 8, 3)).stored == "ycbcr"
    with pytest.raises(StreamError, match=r"APP14 transform 2\) \[JPEG-ECS-12\]"):
        plan_decode(C444, _color_stream(2), (8, 8, 3))


def test_a_grayscale_stream_under_a_colour_configuration_is_refused() -> None:
    with pytest.raises(StreamError, match=r"stream stores grayscale but decoded_color_space is 'rgb' \[JPEG-DIM-03\]"):
        plan_decode(C444, _stream(8), (8, 8))


def test_a_problem_after_the_first_scan_is_found_before_decoding() -> None:
    """A progressive frame's later scans are walked: an unknown segment between them is a malformed stream."""
    from zarr_jpeg_conformance.fixturegen.flat import progressive_flat

    data = progressive_flat(64, 64, [(1, 63)])
    plan_decode(GRAY, data, (64, 64))
    second = data.index(b"\xff\xda", data.index(b"\xff\xda") + 2)
    bad = data[:second] + _seg(0xDF, b"\x00\x00") + data[second:]
    with pytest.raises(StreamError, match=r"malformed stream: unsupported marker FFDF at offset \d+ \[JPEG-DEC-01\]"):
        plan_decode(GRAY, bad, (64, 64))
