"""Edges of core/ and protocol/ that the other tests leave open: each test sits exactly on a bound or on one branch.

A stream walk accepts a component with sampling factors 1x4 and gives an empty scan header
parameters of zero; the grayscale scan parser refuses a DQT table one byte short, a Huffman
table id 2 and a scan that names another component; plan_decode charges a stream without SOI to
JPEG-DEC-01 and accepts a planar stream of exactly MAX_MARKERS markers; 4:2:2 is a required
scheme; a frame reader takes a message of exactly 256 MiB and refuses one byte more.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Callable

import numpy as np
import pytest

from zarr_jpeg_conformance.core import limits
from zarr_jpeg_conformance.core.config import JpegConfig, parse_codec
from zarr_jpeg_conformance.core.errors import StreamError
from zarr_jpeg_conformance.core.markers import inspect
from zarr_jpeg_conformance.core.scans import assemble
from zarr_jpeg_conformance.core.stream import plan_decode
from zarr_jpeg_conformance.fixturegen.flat import sequential_flat
from zarr_jpeg_conformance.protocol.framing import SHARED, FrameError, FrameReader, MessageTooLarge

Image = pytest.importorskip("PIL.Image")


def _config(configuration: dict[str, object]) -> JpegConfig:
    return parse_codec({"name": "jpeg", "configuration": {"quality": 90, **configuration}})


GRAY = _config({"encoded_color_space": "grayscale"})
C444 = _config({"encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]})

# ----------------------------------------------------------------------------- marker-level streams


def _seg(marker: int, payload: bytes) -> bytes:
    return bytes((0xFF, marker)) + struct.pack(">H", len(payload) + 2) + payload


def _sof(factors: int) -> bytes:
    return _seg(0xC0, bytes((8,)) + struct.pack(">HHB", 32, 8, 1) + bytes((1, factors, 0)))


def _sos() -> bytes:
    return _seg(0xDA, bytes((1, 1, 0x00, 0x00, 0x3F, 0x00)))


ENTROPY = b"\x12\x34\xff\x00\x56"


def test_a_component_with_sampling_factors_1x4_is_within_the_limits() -> None:
    """T.81 B.2.2: H and V are 1-4 each, 4 included; 5 is outside."""
    for factors in (0x14, 0x41, 0x44):
        info = inspect(b"\xff\xd8" + _sof(factors) + _sos() + ENTROPY + b"\xff\xd9")
        (component,) = info.components
        assert (component.h, component.v) == (factors >> 4, factors & 0x0F)
        assert not any("sampling factors" in p for p in info.problems), info.problems
    info = inspect(b"\xff\xd8" + _sof(0x15) + _sos() + ENTROPY + b"\xff\xd9")
    assert any("sampling factors 1x5 outside 1-4" in p for p in info.problems), info.problems


def test_an_empty_scan_header_has_all_its_scan_parameters_zero() -> None:
    """An SOS segment of length 2 has no Ss, Se, Ah, Al: the walk says it is empty and gives them as 0."""
    info = inspect(b"\xff\xd8" + _sof(0x11) + b"\xff\xda\x00\x02" + ENTROPY + b"\xff\xd9")
    assert info.scans == ((),)
    assert info.scan_parameters == ((0, 0, 0, 0),)
    assert any("is empty" in p for p in info.problems), info.problems


# ----------------------------------------------------------------------------- core.scans: one grayscale scan


def _gray(h: int = 16, w: int = 16) -> bytes:
    yy, xx = np.mgrid[0:h, 0:w]
    plane = ((xx * 9 + yy * 5) % 256).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(plane, "L").save(buf, "JPEG", quality=90)
    return buf.getvalue()


def _segment(stream: bytes, marker: int) -> tuple[int, int]:
    """Where the first ``marker`` segment among the headers (before any entropy-coded data) starts, and its length field."""
    i = 2
    while stream[i + 1] != marker:
        i += 2 + int.from_bytes(stream[i + 2 : i + 4], "big")
    return i, int.from_bytes(stream[i + 2 : i + 4], "big")


def _body(stream: bytes, marker: int) -> bytes:
    i, length = _segment(stream, marker)
    return stream[i + 4 : i + 2 + length]


def _edited(stream: bytes, marker: int, edit: Callable[[bytes], bytes]) -> bytes:
    """``stream`` with the body of its first ``marker`` segment replaced by ``edit(body)``."""
    i, length = _segment(stream, marker)
    body = edit(stream[i + 4 : i + 2 + length])
    return stream[:i] + bytes((0xFF, marker)) + (len(body) + 2).to_bytes(2, "big") + body + stream[i + 2 + length :]


def _one_gray(stream: bytes) -> bytes:
    """``stream`` (a 16x16 grayscale JPEG) assembled as the one component of a 16x16 frame."""
    return assemble([stream], height=16, width=16, factors=[(1, 1)], component_ids=[1], adobe_transform=None, jfif=True)


def test_a_dqt_table_is_65_bytes_and_one_byte_fewer_is_truncated() -> None:
    gray = _gray()
    dqt = _body(gray, 0xDB)
    assert len(dqt) == 65  # one 8-bit table: Pq/Tq, then 64 values
    assert inspect(_one_gray(gray)).ok  # exactly 65 bytes is a whole table
    with pytest.raises(ValueError, match="truncated DQT segment"):
        _one_gray(_edited(gray, 0xDB, lambda body: body[:64]))


def test_a_huffman_table_id_2_is_not_baseline() -> None:
    """Baseline has Huffman tables 0 and 1 of each class (T.81 B.2.4.2, Table B.5)."""
    edited = _edited(_gray(), 0xC4, lambda body: bytes([body[0] & 0xF0 | 2]) + body[1:])
    with pytest.raises(ValueError, match=r"Huffman table class \d id 2 is not baseline"):
        _one_gray(edited)


def test_a_scan_naming_another_component_than_the_frames_is_refused() -> None:
    gray = _gray()
    sos = _body(gray, 0xDA)
    other = (sos[1] + 1) % 256
    edited = _edited(gray, 0xDA, lambda body: body[:1] + bytes((other,)) + body[2:])
    with pytest.raises(ValueError, match=f"scan names component {other}, frame has component {sos[1]}"):
        _one_gray(edited)


# ----------------------------------------------------------------------------- core.stream


def test_a_stream_without_soi_is_charged_to_dec_01() -> None:
    for data in (b"not a jpeg stream at all", b"\x00\x00" + _gray()):
        with pytest.raises(StreamError) as exc:
            plan_decode(GRAY, data, (16, 16))
        assert exc.value.requirement == "JPEG-DEC-01", str(exc.value)


def test_a_planar_stream_of_exactly_max_markers_markers_is_decoded() -> None:
    """Its later scans are walked (one scan does not hold every component); 1024 markers in all is the limit, not past it."""
    planar = sequential_flat(16, 16, [1, 2, 3])
    room = limits.MAX_MARKERS - inspect(planar).markers
    cut = planar.rindex(b"\xff\xda")
    at_limit = planar[:cut] + b"\xff\xfe\x00\x02" * room + planar[cut:]
    assert inspect(at_limit).markers == limits.MAX_MARKERS
    plan = plan_decode(C444, at_limit, (16, 16, 3))
    assert plan.info.markers == limits.MAX_MARKERS and len(plan.info.scans) == 3
    over = planar[:cut] + b"\xff\xfe\x00\x02" * (room + 1) + planar[cut:]
    with pytest.raises(StreamError) as exc:
        plan_decode(C444, over, (16, 16, 3))
    assert exc.value.requirement == "JPEG-X-15"


# ----------------------------------------------------------------------------- core.config


def test_4_2_2_is_a_required_scheme() -> None:
    """JPEG-SUB-08: 4:4:4, 4:2:2, 4:4:0 and 4:2:0 must be supported; 4:1:1 is optional."""
    for luma in ([1, 1], [2, 1], [1, 2], [2, 2]):
        config = _config({"encoded_color_space": "ycbcr", "subsampling": [luma, [1, 1], [1, 1]]})
        assert config.is_required_scheme, luma
        assert config.optional_feature is None, luma
    assert not _config({"encoded_color_space": "ycbcr", "subsampling": [[4, 1], [1, 1], [1, 1]]}).is_required_scheme


# ----------------------------------------------------------------------------- protocol.framing


def test_a_frame_reader_takes_a_message_of_exactly_256_mib_by_default() -> None:
    """MAX_MESSAGE is 256 MiB (the header line and its payload): a header declaring exactly that is read on; one byte
    more is refused before the payload is read. Shared framing, with no region: nothing is allocated either way."""
    cap = 256 << 20
    size = cap - len(json.dumps({"seq": 1, "payload": cap, "at": 0}))
    assert len(json.dumps({"seq": 1, "payload": size, "at": 0})) + size == cap  # as many digits as cap
    reader = FrameReader(SHARED)
    reader.feed(json.dumps({"seq": 1, "payload": size, "at": 0}).encode() + b"\n")
    with pytest.raises(FrameError, match="outside no shared region") as exc:
        reader.pop()
    assert not isinstance(exc.value, MessageTooLarge)
    reader = FrameReader(SHARED)
    reader.feed(json.dumps({"seq": 1, "payload": size + 1, "at": 0}).encode() + b"\n")
    with pytest.raises(MessageTooLarge):
        reader.pop()
