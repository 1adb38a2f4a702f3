"""Meta-tests for core.markers: real encoder output, hand-built colour-marker variants, and garbage."""

from __future__ import annotations

import io
import struct
import time
from typing import Any

import imagecodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from zarr_jpeg_conformance.core import markers
from zarr_jpeg_conformance.core.markers import MAX_PROBLEMS, Component, StreamInfo, inspect, inspect_headers
from zarr_jpeg_conformance.corpus.streams import stream_cases

H, W = 40, 56  # deliberately not multiples of 16, so partial MCUs are exercised


# ----------------------------------------------------------------------------- stream makers


def _image(channels: int = 3, seed: int = 0) -> np.ndarray:
    """A smooth gradient plus noise: compresses like a photo, deterministic."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:H, 0:W]
    base = np.stack([(xx * 4) % 256, (yy * 6) % 256, ((xx + yy) * 3) % 256], axis=-1)
    noisy = np.clip(base + rng.integers(-20, 21, base.shape), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(noisy[..., 0]) if channels == 1 else noisy


def _pillow(a: np.ndarray, mode: str | None = None, **kwargs: object) -> bytes:
    img = Image.fromarray(a)
    if mode is not None:
        img = img.convert(mode)
    out = io.BytesIO()
    img.save(out, "JPEG", **kwargs)
    return out.getvalue()


def _seg(marker: int, payload: bytes) -> bytes:
    return bytes((0xFF, marker)) + struct.pack(">H", len(payload) + 2) + payload


def _sof(ids: tuple[int, ...], marker: int = 0xC0, precision: int = 8, factors: int = 0x11) -> bytes:
    body = bytes((precision,)) + struct.pack(">HHB", H, W, len(ids))
    body += b"".join(bytes((cid, factors, 0)) for cid in ids)
    return _seg(marker, body)


def _sos(ids: tuple[int, ...]) -> bytes:
    return _seg(0xDA, bytes((len(ids),)) + b"".join(bytes((cid, 0x00)) for cid in ids) + b"\x00\x3f\x00")


JFIF = _seg(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
# Entropy bytes with a stuffed FF00 and an RST in them: the walk must pass over both.
ENTROPY = b"\x12\x34\xff\x00\x56\xff\xd0\x78"


def _adobe(transform: int) -> bytes:
    return _seg(0xEE, b"Adobe\x00\x64\x00\x00\x00\x00" + bytes((transform,)))


def _synthetic(ids: tuple[int, ...], *apps: bytes, sof: bytes | None = None) -> bytes:
    """A marker-level stream (no real tables) with the given APPn segments and component ids."""
    return b"\xff\xd8" + b"".join(apps) + (sof or _sof(ids)) + _sos(ids) + ENTROPY + b"\xff\xd9"


@pytest.fixture(scope="module")
def gray_stream() -> bytes:
    return imagecodecs.jpeg8_encode(_image(1), level=90)


@pytest.fixture(scope="module")
def small_stream() -> bytes:
    """A complete stream small enough to cut at every offset."""
    return imagecodecs.jpeg8_encode(_image(1)[:8, :8].copy(), level=50)


# ----------------------------------------------------------------------------- valid streams

LUMA_CHROMA_TABLES = ((0, 0), (1, 0), (0, 1), (1, 1))


def _assert_clean(info: StreamInfo, data: bytes) -> None:
    assert info.problems == ()
    assert info.ok
    assert info.length == len(data)
    assert info.soi and info.eoi
    assert info.trailing_bytes == 0
    assert (info.height, info.width) == (H, W)


def test_grayscale_stream_every_field(gray_stream: bytes) -> None:
    info = inspect(gray_stream)
    _assert_clean(info, gray_stream)
    assert info == StreamInfo(
        length=len(gray_stream),
        soi=True,
        sof=0xC0,
        precision=8,
        height=H,
        width=W,
        components=(Component(id=1, h=1, v=1, tq=0),),
        jfif=True,
        adobe_transform=None,
        dqt_precisions=(0,),
        huffman_tables=((0, 0), (1, 0)),
        scans=((1,),),
        restart_interval=0,
        app_segments=(0xE0,),
        comments=0,
        eoi=True,
        trailing_bytes=0,
        problems=(),
        entropy_start=gray_stream.index(b"\xff\xda") + 10,
        scan_parameters=((0, 63, 0, 0),),
        markers=6,  # APP0, DQT, SOF0, DHT, DHT, SOS
    )
    assert info.baseline
    assert info.stored_color_space == info.libjpeg_color_space == "grayscale"


@pytest.mark.parametrize(
    ("subsampling", "luma"),
    [("444", (1, 1)), ("422", (2, 1)), ("440", (1, 2)), ("420", (2, 2)), ("411", (4, 1))],
)
def test_ycbcr_subsampling_factors(subsampling: str, luma: tuple[int, int]) -> None:
    data = imagecodecs.jpeg8_encode(_image(), level=90, subsampling=subsampling)
    info = inspect(data)
    _assert_clean(info, data)
    assert info.sof == 0xC0 and info.precision == 8 and info.baseline
    assert info.components == (
        Component(id=1, h=luma[0], v=luma[1], tq=0),
        Component(id=2, h=1, v=1, tq=1),
        Component(id=3, h=1, v=1, tq=1),
    )
    assert info.jfif and info.adobe_transform is None
    assert info.dqt_precisions == (0, 0)
    assert info.huffman_tables == LUMA_CHROMA_TABLES
    assert info.scans == ((1, 2, 3),)
    assert info.app_segments == (0xE0,)
    assert info.stored_color_space == info.libjpeg_color_space == "ycbcr"


def test_rgb_mode_writes_adobe_transform_0_and_rgb_ids() -> None:
    data = imagecodecs.jpeg8_encode(_image(), level=90, colorspace="RGB", outcolorspace="RGB")
    info = inspect(data)
    _assert_clean(info, data)
    assert info.components == tuple(Component(id=c, h=1, v=1, tq=0) for c in (82, 71, 66))
    assert not info.jfif
    assert info.adobe_transform == 0
    assert info.app_segments == (0xEE,)
    assert info.scans == ((82, 71, 66),)
    assert info.stored_color_space == info.libjpeg_color_space == "rgb"


def test_pillow_progressive() -> None:
    data = _pillow(_image(), progressive=True)
    info = inspect(data)
    _assert_clean(info, data)
    assert info.sof == 0xC2 and not info.baseline
    assert len(info.scans) > 1
    assert info.scans[0] == (1, 2, 3)  # the interleaved DC scan comes first
    assert all(len(scan) == 1 for scan in info.scans if scan != (1, 2, 3))  # AC scans: one component
    assert {cid for scan in info.scans for cid in scan} == {1, 2, 3}
    assert len(info.huffman_tables) >= 4  # progressive writes tables per scan


def test_pillow_optimize_has_same_structure_as_default() -> None:
    plain, optimized = inspect(_pillow(_image())), inspect(_pillow(_image(), optimize=True))
    _assert_clean(optimized, _pillow(_image(), optimize=True))
    assert optimized.length < plain.length
    assert optimized.huffman_tables == plain.huffman_tables == LUMA_CHROMA_TABLES
    for name in ("sof", "components", "dqt_precisions", "scans", "app_segments"):
        assert getattr(optimized, name) == getattr(plain, name)


@pytest.mark.parametrize("blocks", [1, 2, 7])
def test_pillow_restart_interval(blocks: int) -> None:
    data = _pillow(_image(), restart_marker_blocks=blocks)
    assert b"\xff\xd0" in data  # RST markers really are inside the entropy-coded data
    info = inspect(data)
    _assert_clean(info, data)
    assert info.restart_interval == blocks
    assert info.scans == ((1, 2, 3),)


def test_large_streams_find_markers_vectorized_exactly_as_the_regex_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """From ``_VECTOR_MIN`` bytes on, marker candidates in entropy data are found with numpy: same walk, same result.

    The stream has what the vectorized search must step over (stuffed FF00, RST0-7, fill
    bytes before a marker) and what it must stop at: EOI after the fill, and in the
    variants an SOI and an SOF15 (FFD8 and FFCF, the codes next to RST0-7) and a COM
    (FFFE, next to the fill byte).
    """
    noisy = np.random.default_rng(7).integers(0, 256, (128, 128, 3), dtype=np.uint8)
    plain = _pillow(noisy, quality=95, restart_marker_blocks=1)
    data = plain[:-2] + b"\xff\xff\xff" + plain[-2:]
    assert len(data) > markers._VECTOR_MIN
    assert b"\xff\x00" in data and all(bytes((0xFF, 0xD0 + n)) in data for n in range(8))
    variants = [data, data[:-2] + b"\xff\xd8" + data[-2:],
                data[:-2] + _seg(0xCF, b"\x08\x00\x01\x00\x01\x01\x01\x11\x00") + data[-2:],
                plain[:-2] + _seg(0xFE, b"a comment") + plain[-2:]]
    vectorized = [inspect(v) for v in variants]
    monkeypatch.setattr(markers, "_VECTOR_MIN", len(data) * 3)
    assert [inspect(v) for v in variants] == vectorized
    assert vectorized[0].ok and vectorized[0].problems == () and vectorized[0].length == len(data)
    assert vectorized[0].restart_interval == 1 and vectorized[0].trailing_bytes == 0
    assert any("SOI" in p for p in vectorized[1].problems), vectorized[1].problems
    assert any("SOF" in p for p in vectorized[2].problems), vectorized[2].problems
    assert vectorized[3].comments == 1 and vectorized[3].ok


@pytest.mark.parametrize("quality", [1, 5, 23])
def test_low_quality_stays_8_bit_baseline(quality: int) -> None:
    info = inspect(_pillow(_image(), quality=quality))
    assert info.ok
    assert info.dqt_precisions == (0, 0)
    assert info.baseline


def test_comment_and_exif_segments_in_order() -> None:
    data = _pillow(_image(), comment=b"hello", exif=Image.Exif())
    info = inspect(data)
    _assert_clean(info, data)
    assert info.app_segments == (0xE0, 0xE1)
    assert info.comments == 1


def test_pillow_cmyk() -> None:
    data = _pillow(_image(), mode="CMYK")
    info = inspect(data)
    _assert_clean(info, data)
    assert [c.id for c in info.components] == [ord(ch) for ch in "CMYK"]
    assert info.adobe_transform == 0
    assert info.stored_color_space == info.libjpeg_color_space == "cmyk"


def test_12_bit_is_sof1_and_not_baseline() -> None:
    data = imagecodecs.jpeg8_encode(_image(1).astype(np.uint16) * 16, level=90, bitspersample=12)
    info = inspect(data)
    _assert_clean(info, data)
    assert (info.sof, info.precision) == (0xC1, 12)
    assert not info.baseline


def test_lossless_is_sof3_without_quantization_tables() -> None:
    data = imagecodecs.jpeg8_encode(_image(1), lossless=True)
    info = inspect(data)
    _assert_clean(info, data)
    assert info.sof == 0xC3 and info.dqt_precisions == ()
    assert not info.baseline


def test_16_bit_quantization_table_is_not_baseline() -> None:
    dqt16 = _seg(0xDB, b"\x10" + b"\x00\x01" * 64)
    dqt8 = _seg(0xDB, b"\x01" + b"\x01" * 64)
    info = inspect(b"\xff\xd8" + dqt8 + dqt16 + _sof((1,)) + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert info.ok
    assert info.dqt_precisions == (0, 1)
    assert info.sof == 0xC0 and not info.baseline


def test_one_dqt_segment_may_hold_several_tables() -> None:
    two = _seg(0xDB, b"\x00" + b"\x01" * 64 + b"\x11" + b"\x00\x02" * 64)
    info = inspect(b"\xff\xd8" + two + _sof((1,)) + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert info.ok and info.dqt_precisions == (0, 1)


def test_fill_bytes_before_markers_are_allowed(gray_stream: bytes) -> None:
    padded = gray_stream.replace(b"\xff\xdb", b"\xff\xff\xff\xdb", 1)
    padded = padded[:-2] + b"\xff\xff\xff\xd9"  # fill inside the entropy-coded data, before EOI
    info = inspect(padded)
    assert info.ok, info.problems
    assert info.dqt_precisions == (0,)


def test_tem_is_a_standalone_marker() -> None:
    info = inspect(b"\xff\xd8\xff\x01" + _sof((1,)) + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert info.ok, info.problems


# ----------------------------------------------------------------------------- colour rules

RGB_IDS, NUMBERED = (82, 71, 66), (1, 2, 3)


@pytest.mark.parametrize(
    ("ids", "apps", "stored", "libjpeg"),
    [
        pytest.param(NUMBERED, (JFIF,), "ycbcr", "ycbcr", id="jfif"),
        pytest.param(NUMBERED, (), "ycbcr", "ycbcr", id="no-markers-123"),
        pytest.param(RGB_IDS, (), "rgb", "rgb", id="no-markers-RGB-ids"),
        pytest.param((7, 8, 9), (), "ycbcr", "ycbcr", id="no-markers-odd-ids"),
        pytest.param(RGB_IDS, (_adobe(0),), "rgb", "rgb", id="app14-0-RGB-ids"),
        pytest.param(NUMBERED, (_adobe(0),), "rgb", "rgb", id="app14-0-123"),
        pytest.param(RGB_IDS, (_adobe(1),), "ycbcr", "ycbcr", id="app14-1-RGB-ids"),
        # The ambiguity of research §11.4: libjpeg lets JFIF win, the Zarr spec lets APP14 win.
        pytest.param(RGB_IDS, (JFIF, _adobe(0)), "rgb", "ycbcr", id="jfif+app14-0"),
        pytest.param(NUMBERED, (_adobe(0), JFIF), "rgb", "ycbcr", id="app14-0+jfif"),
        pytest.param(NUMBERED, (_adobe(5),), None, "ycbcr", id="app14-unknown-transform"),
        pytest.param(NUMBERED, (_adobe(1), _adobe(0)), "rgb", "rgb", id="last-app14-wins"),
        pytest.param((1,), (_adobe(0),), "grayscale", "grayscale", id="gray-with-app14"),
        pytest.param((1, 2, 3, 4), (), "cmyk", "cmyk", id="4-comp-no-app14"),
        pytest.param((1, 2, 3, 4), (_adobe(0),), "cmyk", "cmyk", id="4-comp-app14-0"),
        pytest.param((1, 2, 3, 4), (_adobe(2),), "ycck", "ycck", id="4-comp-app14-2"),
        pytest.param((1, 2, 3, 4), (_adobe(1),), None, "ycck", id="4-comp-app14-1"),
        pytest.param((1, 2), (), None, None, id="2-comp"),
    ],
)
def test_color_space_rules(ids: tuple[int, ...], apps: tuple[bytes, ...], stored: str, libjpeg: str) -> None:
    info = inspect(_synthetic(ids, *apps))
    assert info.ok, info.problems
    assert info.stored_color_space == stored
    assert info.libjpeg_color_space == libjpeg


def test_short_jfif_and_adobe_segments_are_ignored_like_libjpeg() -> None:
    info = inspect(_synthetic(RGB_IDS, _seg(0xE0, b"JFIF\x00"), _seg(0xEE, b"Adobe\x00")))
    assert not info.jfif and info.adobe_transform is None
    assert info.libjpeg_color_space == "rgb"  # falls through to the component ids
    assert len(info.problems) == 2 and not info.ok


def test_jfif_and_adobe_segments_at_libjpegs_minimum_lengths() -> None:
    """One byte short of libjpeg's minimum (13-byte JFIF, 11-byte Adobe) is ignored, never read past its end.

    A minimum relaxed by one byte (APP14_DATA_LEN is 12) reads the transform flag past
    the payload: ``inspect``, which promises never to raise, raised IndexError.
    """
    jfif, adobe = JFIF[4:], _adobe(0)[4:]
    short = inspect(_synthetic(RGB_IDS, _seg(0xE0, jfif[:13]), _seg(0xEE, adobe[:11])))
    assert not short.jfif and short.adobe_transform is None
    assert sum("too short" in p for p in short.problems) == 2, short.problems
    exact = inspect(_synthetic(RGB_IDS, _seg(0xE0, jfif), _seg(0xEE, adobe)))
    assert len(jfif) == 14 and len(adobe) == 12
    assert exact.jfif and exact.adobe_transform == 0
    assert not any("too short" in p for p in exact.problems), exact.problems


def test_jfif_spliced_into_real_rgb_stream() -> None:
    data = imagecodecs.jpeg8_encode(_image(), level=90, colorspace="RGB", outcolorspace="RGB")
    info = inspect(data[:2] + JFIF + data[2:])
    assert info.ok and info.jfif and info.adobe_transform == 0
    assert (info.stored_color_space, info.libjpeg_color_space) == ("rgb", "ycbcr")


# ----------------------------------------------------------------------------- malformed input


def test_empty() -> None:
    info = inspect(b"")
    assert info.length == 0 and not info.soi and not info.ok
    assert info.problems == ("no SOI",)
    assert info.sof is None and info.components == () and info.scans == ()


def test_soi_only() -> None:
    info = inspect(b"\xff\xd8")
    assert info.soi and not info.eoi and not info.ok
    assert "no EOI" in info.problems
    assert "no frame header (SOF)" in info.problems


def test_random_bytes() -> None:
    data = np.random.default_rng(1234).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    info = inspect(data)
    assert isinstance(info, StreamInfo) and not info.ok and info.problems
    assert info.length == 4096


def test_random_bytes_after_soi() -> None:
    data = b"\xff\xd8" + np.random.default_rng(99).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    info = inspect(data)
    assert info.soi and not info.ok and info.problems


def test_every_truncation_point(small_stream: bytes) -> None:
    assert inspect(small_stream).ok
    for cut in range(len(small_stream)):
        info = inspect(small_stream[:cut])
        assert not info.ok, cut
        assert info.problems, cut
        assert info.length == cut


def test_truncated_segment_reports_offset(gray_stream: bytes) -> None:
    dqt_at = gray_stream.index(b"\xff\xdb")
    info = inspect(gray_stream[: dqt_at + 10])
    assert f"segment FFDB at offset {dqt_at} runs past the end of the data" in info.problems
    assert "no EOI" in info.problems


def test_missing_eoi(gray_stream: bytes) -> None:
    info = inspect(gray_stream[:-2])
    assert not info.eoi and not info.ok
    assert "entropy-coded data runs to the end without a marker" in info.problems
    assert "no EOI" in info.problems
    assert info.scans == ((1,),)  # everything before the cut is still reported


def test_forged_sof_component_count(gray_stream: bytes) -> None:
    sof_at = gray_stream.index(b"\xff\xc0")
    forged = bytearray(gray_stream)
    forged[sof_at + 9] = 3  # Nf: 1 -> 3 without growing the segment
    info = inspect(bytes(forged))
    assert "SOF declares 3 components but its length holds 1" in info.problems
    assert info.components == (Component(1, 1, 1, 0),)
    assert not info.ok


def test_forged_sof_length_past_end(gray_stream: bytes) -> None:
    sof_at = gray_stream.index(b"\xff\xc0")
    forged = bytearray(gray_stream)
    forged[sof_at + 2 : sof_at + 4] = b"\xff\xf0"
    info = inspect(bytes(forged))
    assert f"segment FFC0 at offset {sof_at} runs past the end of the data" in info.problems
    assert info.height == H and info.width == W
    assert not info.ok


@pytest.mark.parametrize("length", [0, 1])
def test_segment_length_below_two(gray_stream: bytes, length: int) -> None:
    dqt_at = gray_stream.index(b"\xff\xdb")
    forged = bytearray(gray_stream)
    forged[dqt_at + 2 : dqt_at + 4] = struct.pack(">H", length)
    info = inspect(bytes(forged))
    assert f"segment FFDB at offset {dqt_at} has invalid length {length}" in info.problems
    assert not info.ok


def test_bytes_after_eoi(gray_stream: bytes) -> None:
    info = inspect(gray_stream + b"junk")
    assert info.eoi and info.trailing_bytes == 4 and not info.ok
    assert "4 bytes after EOI" in info.problems
    assert info.components == inspect(gray_stream).components


def test_two_streams_concatenated(gray_stream: bytes) -> None:
    second = imagecodecs.jpeg8_encode(_image(), level=90)
    info = inspect(gray_stream + second)
    assert info.trailing_bytes == len(second)
    assert info.components == inspect(gray_stream).components  # the first stream is what counts
    assert not info.ok


def test_data_before_soi(gray_stream: bytes) -> None:
    info = inspect(b"\x00\x01" + gray_stream)
    assert not info.soi and not info.ok
    assert "data before SOI (2 bytes)" in info.problems
    assert info.sof == 0xC0 and info.eoi  # the stream after the junk is still described


@pytest.mark.parametrize("marker", [0x02, 0xBF])  # the ends of the reserved range FF02-FFBF
def test_unknown_marker(marker: int) -> None:
    info = inspect(b"\xff\xd8\xff" + bytes((marker,)) + _sof((1,)) + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert f"unknown marker FF{marker:02X} at offset 2" in info.problems
    assert info.sof == 0xC0 and info.eoi  # resynchronised on the next marker


def test_a_segment_cut_after_its_length_field_runs_past_the_end() -> None:
    """Both length bytes are there: the segment, not its length field, is cut off."""
    assert inspect(b"\xff\xd8\xff\xe1\x00\x10").problems[:1] == ("segment FFE1 at offset 2 runs past the end of the data",)
    assert inspect(b"\xff\xd8\xff\xe1\x00").problems[:1] == ("segment FFE1 at offset 2 is cut off in its length field",)


def test_a_segment_ending_with_the_data_does_not_run_past_it() -> None:
    info = inspect(b"\xff\xd8" + _seg(0xE1, b"\x00\x00"))
    assert info.problems == ("no EOI", "no frame header (SOF)", "no scan (SOS)")


def test_every_app_segment_is_listed() -> None:
    """APP0 to APP15, in stream order."""
    apps = [_seg(m, b"\x00\x00") for m in (0xEF, 0xE0, 0xE7)]
    assert inspect(_synthetic((1,), *apps)).app_segments == (0xEF, 0xE0, 0xE7)


def test_a_one_byte_frame_header_still_gives_its_precision() -> None:
    info = inspect(b"\xff\xd8" + _seg(0xC0, b"\x0c") + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert info.precision == 12
    assert "SOF at offset 2 is 1 bytes long, too short for its fixed fields" in info.problems


def test_a_frame_of_no_components() -> None:
    info = inspect(_synthetic((), sof=_sof(())))
    assert "SOF declares 0 components" in info.problems and not info.ok


@pytest.mark.parametrize("body", [b"\x01", b"\x01\x01\x00", b"\x01\x01\x00\x00\x3f"])
def test_a_scan_header_too_short_for_its_component(body: bytes) -> None:
    info = inspect(b"\xff\xd8" + _sof((1,)) + _seg(0xDA, body) + ENTROPY + b"\xff\xd9")
    assert "SOS declares 1 components but its length holds 0" in info.problems
    assert info.scans == ((),)


def test_garbage_between_segments() -> None:
    info = inspect(b"\xff\xd8\x00\x11" + _sof((1,)) + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert "expected a marker at offset 2, found byte 00" in info.problems
    assert info.sof == 0xC0 and info.eoi


def test_second_sof_is_a_problem() -> None:
    info = inspect(b"\xff\xd8" + _sof((1,)) + _sof((1, 2, 3), marker=0xC2) + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert info.sof == 0xC0 and len(info.components) == 1
    assert any("second frame header" in p for p in info.problems)


def test_scan_references_unknown_component() -> None:
    info = inspect(b"\xff\xd8" + _sof((1,)) + _sos((4,)) + ENTROPY + b"\xff\xd9")
    assert "scan references component 4 not in the frame" in info.problems
    assert "component 1 appears in no scan" in info.problems


def test_sos_before_sof() -> None:
    info = inspect(b"\xff\xd8" + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert any("before any frame header" in p for p in info.problems)
    assert not info.ok


@pytest.mark.parametrize("n", range(8))
def test_rst_outside_entropy_data(n: int) -> None:
    """Each of RST0-RST7 (FFD0-FFD7), the last one included, is a standalone marker there."""
    info = inspect(b"\xff\xd8\xff" + bytes([0xD0 + n]) + _sof((1,)) + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert f"RST{n} at offset 2 outside entropy-coded data" in info.problems


@pytest.mark.parametrize(
    ("sof", "needle"),
    [
        (_sof((1,), precision=12), "declares sample precision 12"),
        (_sof((1,), factors=0x51), "sampling factors 5x1"),
        (_sof((1,), factors=0x10), "sampling factors 1x0"),
        (_sof((1, 1)), "repeats a component id"),
        (_seg(0xC0, b"\x08\x00"), "too short for its fixed fields"),
    ],
)
def test_bad_frame_headers(sof: bytes, needle: str) -> None:
    info = inspect(b"\xff\xd8" + sof + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert any(needle in p for p in info.problems), info.problems
    assert not info.ok


@pytest.mark.parametrize(("marker", "precision", "allowed"), [
    (0xC0, 8, True), (0xC0, 12, False), (0xC1, 12, True), (0xC1, 16, False),
    (0xC3, 2, True), (0xC3, 16, True), (0xC3, 1, False), (0xC3, 17, False), (0xCF, 2, True),
    # every lossless process (SOF3, 7, 11, 15) and no other: SOF10 is arithmetic progressive, a DCT process
    (0xC7, 16, True), (0xCB, 16, True), (0xCF, 16, True), (0xCA, 16, False), (0xCE, 16, False),
])
def test_sample_precision_per_process(marker: int, precision: int, allowed: bool) -> None:
    """T.81 Table B.2: baseline 8 bits, the other DCT processes 8 or 12, lossless 2 to 16."""
    info = inspect(b"\xff\xd8" + _sof((1,), marker=marker, precision=precision) + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert any("sample precision" in p for p in info.problems) is not allowed, info.problems


@pytest.mark.parametrize(
    ("segment", "needle"),
    [
        (_seg(0xDB, b"\x00" + b"\x01" * 10), "is cut off"),
        (_seg(0xDB, b"\x20" + b"\x01" * 64), "precision Pq=2"),
        (_seg(0xC4, b"\x00" + b"\x01" * 5), "cut off in its code counts"),
        (_seg(0xC4, b"\x00" + b"\x00" * 15 + b"\x05" + b"\x00\x01"), "cut off in its symbols"),
        (_seg(0xC4, b"\x25" + b"\x00" * 16), "table class 2 id 5"),
        (_seg(0xDD, b"\x00"), "DRI at offset"),
        (_seg(0xF7, b"\x00\x00"), "unsupported marker FFF7"),
    ],
)
def test_bad_table_segments(segment: bytes, needle: str) -> None:
    info = inspect(b"\xff\xd8" + segment + _sof((1,)) + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert any(needle in p for p in info.problems), info.problems
    assert info.eoi and not info.ok


def _huffman_table(symbols: int) -> bytes:
    counts = bytes((min(symbols, 255), max(symbols - 255, 0))) + bytes(14)
    return _seg(0xC4, b"\x00" + counts + bytes(symbols))


@pytest.mark.parametrize(("symbols", "problems"), [(256, []), (257, ["DHT at offset 2: table (0, 0) has 257 symbols (> 256)"])])
def test_huffman_table_holds_at_most_256_symbols(symbols: int, problems: list[str]) -> None:
    """T.81 B.2.4.2: 256 symbols is the most a table can hold; one more is a problem, named."""
    info = inspect(b"\xff\xd8" + _huffman_table(symbols) + _sof((1,)) + _sos((1,)) + ENTROPY + b"\xff\xd9")
    assert info.huffman_tables == ((0, 0),)
    assert [p for p in info.problems if "DHT" in p] == problems


def test_problem_list_is_capped() -> None:
    info = inspect(b"\xff\xd8" + b"\xff\x02" * 10_000)
    assert len(info.problems) == MAX_PROBLEMS + 1
    assert info.problems[-1].startswith("... and ")


# ----------------------------------------------------------------------------- input types


def test_bytes_like_inputs_agree(gray_stream: bytes) -> None:
    expected = inspect(gray_stream)
    assert inspect(bytearray(gray_stream)) == expected
    assert inspect(memoryview(gray_stream)) == expected
    assert inspect(memoryview(b"xx" + gray_stream)[2:]) == expected


def test_memoryview_of_other_item_format() -> None:
    words = np.arange(64, dtype=np.uint16).reshape(8, 8)
    info = inspect(memoryview(words))
    assert info.length == 128 and not info.ok


@pytest.mark.parametrize("bad", ["\xff\xd8", None, 42, [0xFF, 0xD8], np.zeros(4, np.uint8)])
def test_non_bytes_raise_type_error(bad: object) -> None:
    with pytest.raises(TypeError):
        inspect(bad)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- speed (not timed)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(np.random.default_rng(7).integers(0, 256, 1 << 20, dtype=np.uint8).tobytes(), id="random"),
        pytest.param(b"\xff" * (1 << 20), id="all-ff"),
        pytest.param(b"\xff\xd8" + b"\xff\xd0" * (1 << 19), id="rst-run"),
        pytest.param(b"\xff\xd8" + _sof((1,)) + _sos((1,)) + b"\xff\x00" * (1 << 19), id="stuffed-run"),
    ],
)
def test_one_megabyte_inputs_complete(data: bytes) -> None:
    start = time.perf_counter()
    info = inspect(data)
    elapsed = time.perf_counter() - start
    # Reported for the curious (pytest -s), deliberately not asserted: CI machines vary.
    print(f"inspect({len(data)} bytes): {elapsed * 1000:.1f} ms, {len(info.problems)} problems")
    assert isinstance(info, StreamInfo) and not info.ok


# ----------------------------------------------------------------------------- property tests

_BASES = [
    imagecodecs.jpeg8_encode(_image(1)[:16, :16].copy(), level=75),
    imagecodecs.jpeg8_encode(_image()[:16, :24].copy(), level=75, subsampling="420"),
    _pillow(_image()[:16, :16].copy(), progressive=True, restart_marker_blocks=1),
    _synthetic(RGB_IDS, JFIF, _adobe(0)),
]

_mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 1 << 16), st.integers(1, 255)),
    st.tuples(st.just("cut"), st.integers(0, 1 << 16), st.just(0)),
    st.tuples(st.just("insert"), st.integers(0, 1 << 16), st.integers(0, 255)),
    st.tuples(st.just("marker"), st.integers(0, 1 << 16), st.integers(0, 255)),
)


def _mutate(data: bytes, mutations: list[tuple[str, int, int]]) -> bytes:
    out = bytearray(data)
    for kind, where, value in mutations:
        at = where % (len(out) + 1)
        if kind == "flip" and at < len(out):
            out[at] ^= value
        elif kind == "cut":
            del out[at:]
        elif kind == "insert":
            out[at:at] = bytes((value,))
        elif kind == "marker":  # markers are where parsers break, so plant them on purpose
            out[at:at] = bytes((0xFF, value))
    return bytes(out)


def _check_invariants(info: StreamInfo, data: bytes) -> None:
    assert isinstance(info, StreamInfo)
    assert info.length == len(data)
    assert 0 <= info.trailing_bytes <= len(data)
    assert len(info.problems) <= MAX_PROBLEMS + 1
    if info.ok:
        assert info.eoi and info.soi and not info.problems
    # The derived properties must not raise either.
    _ = (info.baseline, info.stored_color_space, info.libjpeg_color_space)


_HYPOTHESIS = settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@_HYPOTHESIS
@given(base=st.sampled_from(_BASES), mutations=st.lists(_mutation, min_size=1, max_size=6))
def test_mutated_streams_never_raise(base: bytes, mutations: list[tuple[str, int, int]]) -> None:
    data = _mutate(base, mutations)
    _check_invariants(inspect(data), data)


@_HYPOTHESIS
@given(tail=st.binary(max_size=600), prefix=st.sampled_from([b"", b"\xff\xd8", b"\xff\xd8\xff\xc0", b"\xff\xd8\xff\xda"]))
def test_arbitrary_bytes_never_raise(prefix: bytes, tail: bytes) -> None:
    data = prefix + tail
    _check_invariants(inspect(data), data)


# ----------------------------------------------------------------------------- header cache


def _cached_twice(data: bytes) -> tuple[StreamInfo, StreamInfo]:
    markers._HEADERS.clear()
    return inspect_headers(data), inspect_headers(data)


@pytest.mark.parametrize("case", stream_cases(), ids=lambda case: case.id)
def test_header_cache_agrees_on_the_stream_corpus(case: object) -> None:
    data = case.data()  # type: ignore[attr-defined]
    expected = inspect(data, entropy=False)
    miss, hit = _cached_twice(data)
    assert miss == expected and hit == expected


def test_header_cache_is_used_and_keeps_each_streams_length(gray_stream: bytes) -> None:
    markers._HEADERS.clear()
    inspect_headers(gray_stream)
    assert len(markers._HEADERS) == 1
    longer = gray_stream[:-2] + b"\x00\x00\xff\xd9"  # same headers, other entropy-coded data
    info = inspect_headers(longer)
    assert len(markers._HEADERS) == 1  # answered from the cache ...
    assert info == inspect(longer, entropy=False) and info.length == len(gray_stream) + 2  # ... with its own length


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(lambda s: s[:-2], id="no-eoi"),
        pytest.param(lambda s: s[:2] + b"\xff" + s[2:], id="fill-byte"),
        pytest.param(lambda s: s + b"junk", id="trailing"),
        pytest.param(lambda s: b"\x00" + s, id="before-soi"),
        # FFBF and FFD9 sit just outside the segment codes of the plain path (C0-CF, DA-FE).
        pytest.param(lambda s: s[:2] + _seg(0xBF, b"\x00\x00") + s[2:], id="code-bf"),
        pytest.param(lambda s: s[:2] + b"\xff\xd9\x00\x02" + s[2:], id="eoi-first"),
    ],
)
def test_header_cache_leaves_unusual_streams_to_inspect(gray_stream: bytes, data: Any) -> None:
    stream = data(gray_stream)
    markers._HEADERS.clear()
    assert inspect_headers(stream) == inspect(stream, entropy=False)
    assert not markers._HEADERS


@_HYPOTHESIS
@given(base=st.sampled_from(_BASES), mutations=st.lists(_mutation, min_size=1, max_size=6), in_entropy=st.booleans())
def test_header_cache_agrees_on_mutated_streams(base: bytes, mutations: list[tuple[str, int, int]], in_entropy: bool) -> None:
    # Seed the cache with the base's headers, so that mutations after them are cache hits.
    markers._HEADERS.clear()
    inspect_headers(base)
    if in_entropy:
        head = markers._plain_header_end(base) or 0
        data = base[:head] + _mutate(base[head:], mutations)
    else:
        data = _mutate(base, mutations)
    assert inspect_headers(data) == inspect(data, entropy=False)


@pytest.mark.parametrize("marker", [0xC8, 0xDE, 0xDF, 0xF0, 0xFD])
def test_segments_libjpeg_does_not_know_are_problems(marker: int) -> None:
    """JPG, DHP, EXP and JPGn carry a length yet mean nothing to a DCT decoder: libjpeg refuses them (checked here)."""
    plain = _pillow(_image(1))
    data = plain[:2] + _seg(marker, b"\x00\x00") + plain[2:]
    with pytest.raises(Exception, match=f"(?i)(marker type|SOF type) 0x{marker:02x}"):
        imagecodecs.jpeg8_decode(data)
    assert inspect(data).problems == (f"unsupported marker FF{marker:02X} at offset 2",)
    assert not inspect(plain[:2] + _seg(0xE0, b"\x00\x00") + plain[2:]).problems  # an APPn is no such marker


def test_inspect_names_what_it_needs() -> None:
    for data in ("text", None, [0xFF, 0xD8]):
        with pytest.raises(TypeError, match=f"inspect\\(\\) needs bytes, bytearray or memoryview, not {type(data).__name__}"):
            inspect(data)  # type: ignore[arg-type]


@pytest.mark.parametrize("declared", [0, 5])
def test_a_scan_of_no_or_five_components(declared: int) -> None:
    body = bytes((declared,)) + b"".join(bytes((cid, 0)) for cid in range(1, declared + 1)) + b"\x00\x3f\x00"
    info = inspect(b"\xff\xd8" + _sof((1, 2, 3, 4, 5)) + _seg(0xDA, body) + ENTROPY + b"\xff\xd9")
    assert f"SOS at offset {info.entropy_start - len(body) - 4} declares {declared} components (allowed 1-4)" in info.problems


def test_table_ids_zero_to_three_and_no_more() -> None:
    """DQT Tq and DHT Th are 0-3 and DHT Tc is 0-1 (T.81 B.2.4.1, B.2.4.2)."""
    dqt = _seg(0xDB, b"\x03" + bytes(64) + b"\x05" + bytes(64))
    dht = [_seg(0xC4, bytes((tc_th,)) + b"\x01" + bytes(15) + b"\x00") for tc_th in (0x13, 0x20, 0x04)]
    info = inspect(b"\xff\xd8" + dqt + b"".join(dht) + _sof((1,)) + _sos((1,)) + ENTROPY + b"\xff\xd9")
    offsets = [2 + len(dqt) + sum(map(len, dht[:k])) for k in range(3)]
    assert [p for p in info.problems if "table" in p] == [
        "DQT at offset 2 defines table 5 (> 3)",
        f"DHT at offset {offsets[1]} defines table class 2 id 0 (allowed 0-1, 0-3)",
        f"DHT at offset {offsets[2]} defines table class 0 id 4 (allowed 0-1, 0-3)",
    ]
    assert info.huffman_tables == ((1, 3), (2, 0), (0, 4))
