"""Tests for core/scans.py: baseline multi-component streams assembled from grayscale ones.

Pillow is the grayscale encoder; imagecodecs (libjpeg-turbo) and Pillow (libjpeg-turbo) decode.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

Image = pytest.importorskip("PIL.Image")
imagecodecs = pytest.importorskip("imagecodecs")

from zarr_jpeg_conformance.core.markers import inspect  # noqa: E402
from zarr_jpeg_conformance.core.scans import (  # noqa: E402
    CHROMA_BASE,
    LUMA_BASE,
    assemble,
    component_size,
    downsample,
    encode_planar,
    quant_tables,
)

# ---------------------------------------------------------------------------------------------
# helpers


def _zigzag() -> list[int]:
    """Natural (row-major) index of each zigzag position, walking the anti-diagonals (T.81 A.3.6)."""
    order = []
    for s in range(15):
        cells = [(r, s - r) for r in range(8) if 0 <= s - r < 8]
        if s % 2 == 0:  # even diagonals run bottom-left to top-right
            cells.reverse()
        order.extend(r * 8 + c for r, c in cells)
    return order


ZIGZAG = _zigzag()


def segments(data: bytes) -> list[tuple[int, bytes]]:
    """(marker, body) up to EOI; an SOS body is followed by a pseudo-segment (0, entropy bytes)."""
    assert data[:2] == b"\xff\xd8"
    out: list[tuple[int, bytes]] = [(0xD8, b"")]
    i = 2
    while True:
        assert data[i] == 0xFF
        while data[i] == 0xFF:
            i += 1
        m = data[i]
        i += 1
        if m == 0xD9:
            out.append((m, b""))
            return out
        ln = int.from_bytes(data[i : i + 2], "big")
        out.append((m, data[i + 2 : i + ln]))
        i += ln
        if m == 0xDA:
            j = i
            while not (data[j] == 0xFF and data[j + 1] != 0 and not 0xD0 <= data[j + 1] <= 0xD7):
                j += 1
            out.append((0, data[i:j]))
            i = j


def sof_components(data: bytes) -> list[tuple[int, int, int, int]]:
    """(id, h, v, Tq) per component of the SOF0 frame."""
    (body,) = [b for m, b in segments(data) if m == 0xC0]
    comps = [body[6 + 3 * k : 9 + 3 * k] for k in range(body[5])]
    return [(c[0], c[1] >> 4, c[1] & 15, c[2]) for c in comps]


def dqt_tables(data: bytes) -> dict[int, np.ndarray]:
    """Tq -> 8x8 table in natural order (DQT stores zigzag order, T.81 B.2.4.1)."""
    tables = {}
    for m, body in segments(data):
        if m != 0xDB:
            continue
        j = 0
        while j < len(body):
            assert body[j] >> 4 == 0, "16-bit table"
            nat = np.zeros(64, np.uint16)
            nat[ZIGZAG] = np.frombuffer(body[j + 1 : j + 65], np.uint8)
            tables[body[j] & 15] = nat.reshape(8, 8)
            j += 65
    return tables


def pillow_gray(plane: np.ndarray, table: np.ndarray) -> bytes:
    """Encode a grayscale plane with Pillow using exactly ``table``.

    Pillow's ``qtables`` entries are in natural (row-major) order, not zigzag: Pillow converts
    its own DQT reads to natural order (``JpegImagePlugin.zigzag_index``) and hands ``qtables`` to
    libjpeg's ``jpeg_add_quant_table``, which takes natural order
    (test_pillow_qtables_are_natural_order checks this). ``quality`` must NOT be passed with
    ``qtables``: Pillow then scales the given table by the IJG quality formula again
    (quality=90 turns 64 into 13); leaving it out means scale 100 %, i.e. the table as given.
    """
    buf = io.BytesIO()
    Image.fromarray(plane, "L").save(buf, "JPEG", qtables=[[int(x) for x in np.asarray(table).ravel()]])
    return buf.getvalue()


def pillow_gray_q(quality: int):
    """An encode_gray that ignores the table and lets Pillow pick (still a valid input)."""

    def enc(plane: np.ndarray, table: np.ndarray) -> bytes:
        buf = io.BytesIO()
        Image.fromarray(plane, "L").save(buf, "JPEG", quality=quality)
        return buf.getvalue()

    return enc


def smooth_rgb(h: int, w: int) -> np.ndarray:
    """A deterministic smooth RGB test image (no noise: PSNR then reflects coding, not texture)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 128 + 90 * np.sin(x / 11 + y / 17)
    g = 128 + 80 * np.cos(y / 9 - x / 23)
    b = 40 + 1.5 * x + 1.0 * y + 20 * np.sin((x + y) / 7)
    return np.clip(np.stack([r, g, b], axis=-1), 0, 255).round().astype(np.uint8)


def to_ycbcr(rgb: np.ndarray) -> np.ndarray:
    return np.asarray(Image.fromarray(rgb, "RGB").convert("YCbCr"))


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


def decode_imagecodecs(buf: bytes) -> np.ndarray:
    return imagecodecs.jpeg8_decode(buf)


def decode_pillow(buf: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(buf)) as im:
        im.load()
        return np.asarray(im)


def decode_raw(buf: bytes) -> np.ndarray:
    """The stored components without colour conversion (libjpeg's upsampling still applies)."""
    return imagecodecs.jpeg8_decode(buf, colorspace="YCbCr", outcolorspace="YCbCr")


YCC_IDS = (1, 2, 3)
RGB_IDS = (82, 71, 66)  # 'R', 'G', 'B', as every rgb encoder writes them (backends.md §2)
ADOBE_T0 = bytes.fromhex("41646f626500640000000000")


def ycbcr_stream(rgb: np.ndarray, factors, quality: int) -> bytes:
    luma, chroma = quant_tables(quality)
    return encode_planar(
        to_ycbcr(rgb),
        factors=factors,
        component_ids=YCC_IDS,
        adobe_transform=None,
        jfif=True,
        tables=[luma, chroma, chroma],
        encode_gray=pillow_gray,
    )


def rgb_stream(rgb: np.ndarray, quality: int, *, jfif: bool = False) -> bytes:
    luma, _ = quant_tables(quality)
    return encode_planar(
        rgb,
        factors=[(1, 1)] * 3,
        component_ids=RGB_IDS,
        adobe_transform=0,
        jfif=jfif,
        tables=[luma] * 3,
        encode_gray=pillow_gray,
    )


# ---------------------------------------------------------------------------------------------
# quantisation tables


def pillow_tables(quality: int) -> dict[int, np.ndarray]:
    buf = io.BytesIO()
    Image.fromarray(smooth_rgb(16, 16), "RGB").save(buf, "JPEG", quality=quality)
    return dqt_tables(buf.getvalue())


def test_quant_tables_match_pillow_at_every_quality() -> None:
    """Every quality, not a sample: IJG's scaling (5000 / q under 50, 200 - 2q from 50) shows an
    off-by-one in its constants at a few qualities only (5001 // 3 != 5000 // 3)."""
    for quality in range(1, 101):
        luma, chroma = quant_tables(quality)
        written = pillow_tables(quality)
        assert luma.shape == chroma.shape == (8, 8) and luma.dtype == np.uint16
        assert np.array_equal(luma, written[0]) and np.array_equal(chroma, written[1]), quality


def test_quant_tables_values() -> None:
    np.testing.assert_array_equal(quant_tables(50)[0], LUMA_BASE)
    np.testing.assert_array_equal(quant_tables(50)[1], CHROMA_BASE)
    assert (quant_tables(100)[0] == 1).all()
    assert quant_tables(1)[0].max() == 255  # baseline clamps, 16*5000/100 = 800 would need Pq=1
    assert quant_tables(75)[0][0, 0] == 8 and quant_tables(90)[0][0, 0] == 3


@pytest.mark.parametrize("quality", [0, 101, -1, 1.5, True, "90"])
def test_quant_tables_reject(quality) -> None:
    with pytest.raises(ValueError):
        quant_tables(quality)


def test_pillow_qtables_are_natural_order() -> None:
    table = np.arange(1, 65, dtype=np.uint16).reshape(8, 8)  # asymmetric, so transposition shows
    data = pillow_gray(np.zeros((8, 8), np.uint8), table)
    (body,) = [b for m, b in segments(data) if m == 0xDB]
    assert list(body[1:65]) == [int(table.ravel()[k]) for k in ZIGZAG]
    np.testing.assert_array_equal(dqt_tables(data)[0], table)


# ---------------------------------------------------------------------------------------------
# downsample


def test_downsample_box_average_and_edges() -> None:
    plane = np.array([[0, 1, 2], [3, 4, 250], [10, 20, 30]], np.uint8)
    out = downsample(plane, 2, 2)
    # boxes: [[0,1],[3,4]] -> 2 (2.0); [[2,2],[250,250]] (last column replicated) -> 126;
    # [[10,20],[10,20]] (last row replicated) -> 15; [[30,30],[30,30]] -> 30
    np.testing.assert_array_equal(out, [[2, 126], [15, 30]])
    assert downsample(np.array([[1, 2]], np.uint8), 2, 1)[0, 0] == 2  # 1.5 rounds half up
    assert downsample(np.zeros((37, 53), np.uint8), 4, 3).shape == (13, 14)
    plane = smooth_rgb(5, 7)[:, :, 0]
    out = downsample(plane, 1, 1)
    np.testing.assert_array_equal(out, plane)
    assert out is not plane


def test_downsample_rejects() -> None:
    with pytest.raises(ValueError):
        downsample(np.zeros((4, 4), np.uint16), 2, 2)
    with pytest.raises(ValueError):
        downsample(np.zeros((4, 4, 3), np.uint8), 2, 2)
    with pytest.raises(ValueError):
        downsample(np.zeros((4, 4), np.uint8), 0, 2)


def test_component_size() -> None:
    assert component_size(37, 53, 1, 1, 4, 4) == (10, 14)
    assert component_size(37, 53, 4, 4, 4, 4) == (37, 53)
    assert component_size(48, 80, 1, 1, 1, 2) == (24, 80)


# ---------------------------------------------------------------------------------------------
# 4:4:0


def test_440_ycbcr() -> None:
    src = smooth_rgb(48, 80)
    buf = ycbcr_stream(src, [(1, 2), (1, 1), (1, 1)], 90)
    assert sof_components(buf) == [(1, 1, 2, 0), (2, 1, 1, 1), (3, 1, 1, 2)]
    kinds = [m for m, _ in segments(buf)]
    # SOI APP0 DQT SOF0 then (DHT SOS data) per component, EOI
    assert kinds == [0xD8, 0xE0, 0xDB, 0xC0] + [0xC4, 0xDA, 0] * 3 + [0xD9]
    a, p = decode_imagecodecs(buf), decode_pillow(buf)
    assert a.shape == p.shape == src.shape
    np.testing.assert_array_equal(a, p)
    # measured: 43.81 dB for both decoders
    assert psnr(a, src) > 30


def test_440_luma_scan_is_the_grayscale_scan() -> None:
    # Y is not subsampled, so the raw Y component must equal a plain decode of the Y plane's
    # grayscale stream bit for bit: the scan really is copied with its own tables.
    ycc = to_ycbcr(smooth_rgb(48, 80))
    luma, _ = quant_tables(90)
    y_stream = pillow_gray(ycc[:, :, 0], luma)
    buf = ycbcr_stream(smooth_rgb(48, 80), [(1, 2), (1, 1), (1, 1)], 90)
    np.testing.assert_array_equal(decode_raw(buf)[:, :, 0], decode_imagecodecs(y_stream))


@pytest.mark.parametrize(
    ("factor", "tolerance"),
    # 4:4:4 and 4:4:0 use libjpeg's generic downsampler, which rounds like downsample(); 2x1 and
    # 2x2 use its alternating-bias ones: chroma inputs differ by <= 1, measured output diff 3 and 2.
    [((1, 1), 0), ((1, 2), 0), ((2, 1), 4), ((2, 2), 4)],
    ids=["444", "440", "422", "420"],
)
def test_same_components_as_libjpeg_interleaved(factor: tuple[int, int], tolerance: int) -> None:
    # imagecodecs writes the usual single interleaved scan with the same tables (quality 90,
    # IJG scaling); the decoded components must match ours.
    src = smooth_rgb(48, 80)
    ours = ycbcr_stream(src, [factor, (1, 1), (1, 1)], 90)
    ref = imagecodecs.jpeg8_encode(
        to_ycbcr(src), level=90, colorspace="YCbCr", outcolorspace="YCbCr", subsampling=factor
    )
    assert sum(m == 0xDA for m, _ in segments(ref)) == 1
    assert sof_components(ref)[0][1:3] == factor
    diff = np.abs(decode_raw(ours).astype(int) - decode_raw(ref).astype(int))
    assert diff.max() <= tolerance


# ---------------------------------------------------------------------------------------------
# rgb


def test_rgb_raw_components() -> None:
    src = smooth_rgb(48, 80)
    buf = rgb_stream(src, 95)
    segs = segments(buf)
    assert [m for m, _ in segs][:4] == [0xD8, 0xEE, 0xDB, 0xC0]  # no JFIF APP0
    assert segs[1][1] == ADOBE_T0
    assert sof_components(buf) == [(82, 1, 1, 0), (71, 1, 1, 1), (66, 1, 1, 2)]
    a, p = decode_imagecodecs(buf), decode_pillow(buf)
    np.testing.assert_array_equal(a, p)
    # measured: 54.82 dB for both decoders
    assert psnr(a, src) > 35
    # 4:4:4 without conversion: each output channel is exactly its grayscale stream decoded
    luma, _ = quant_tables(95)
    for i in range(3):
        np.testing.assert_array_equal(a[:, :, i], decode_imagecodecs(pillow_gray(src[:, :, i], luma)))


def test_rgb_with_jfif_is_converted_by_libjpeg() -> None:
    # JFIF implies YCbCr (T.871) and libjpeg lets it win over APP14 transform 0, so the same
    # components come back "converted" from YCbCr: this is why rgb must not carry JFIF.
    src = smooth_rgb(48, 80)
    buf = rgb_stream(src, 95, jfif=True)
    assert [m for m, _ in segments(buf)][:3] == [0xD8, 0xE0, 0xEE]
    a, p = decode_imagecodecs(buf), decode_pillow(buf)
    np.testing.assert_array_equal(a, p)
    # measured: 9.40 dB
    assert psnr(a, src) < 15
    np.testing.assert_array_equal(decode_raw(buf), decode_imagecodecs(rgb_stream(src, 95)))


# ---------------------------------------------------------------------------------------------
# factors no interleaved scan can carry, and other unusual ones

BIG_FACTORS = [(4, 4), (3, 3), (4, 3), (3, 4), (4, 1), (1, 4), (4, 2)]
# measured PSNR at q90, 37x53, both decoders (identical output):
# 4x4 31.69, 3x3 34.02, 4x3 32.95, 3x4 32.53, 4x1 35.47, 1x4 34.18, 4x2 34.28 dB


@pytest.mark.parametrize("factor", BIG_FACTORS, ids=lambda f: f"{f[0]}x{f[1]}")
def test_large_factors(factor: tuple[int, int]) -> None:
    src = smooth_rgb(37, 53)
    buf = ycbcr_stream(src, [factor, (1, 1), (1, 1)], 90)
    assert sof_components(buf) == [(1, *factor, 0), (2, 1, 1, 1), (3, 1, 1, 2)]
    assert sum(m == 0xDA for m, _ in segments(buf)) == 3
    a, p = decode_imagecodecs(buf), decode_pillow(buf)
    assert a.shape == p.shape == src.shape
    np.testing.assert_array_equal(a, p)
    assert psnr(a, src) > 28
    luma, _ = quant_tables(90)
    y_stream = pillow_gray(to_ycbcr(src)[:, :, 0], luma)
    np.testing.assert_array_equal(decode_raw(buf)[:, :, 0], decode_imagecodecs(y_stream))


@pytest.mark.parametrize("shape", [(1, 1), (7, 13), (33, 65), (2, 3)])
@pytest.mark.parametrize("factor", [(4, 4), (2, 2), (1, 2)], ids=lambda f: f"{f[0]}x{f[1]}")
def test_odd_sizes_color(shape: tuple[int, int], factor: tuple[int, int]) -> None:
    src = smooth_rgb(*shape)
    buf = ycbcr_stream(src, [factor, (1, 1), (1, 1)], 90)
    a, p = decode_imagecodecs(buf), decode_pillow(buf)
    assert a.shape == p.shape == src.shape
    np.testing.assert_array_equal(a, p)
    if shape != (1, 1):  # a single pixel is too few samples for a meaningful PSNR bound
        assert psnr(a, src) > 25


# ---------------------------------------------------------------------------------------------
# grayscale passthrough


@pytest.mark.parametrize("shape", [(1, 1), (7, 13), (33, 65), (48, 80)])
def test_grayscale_passthrough(shape: tuple[int, int]) -> None:
    plane = smooth_rgb(*shape)[:, :, 1]
    luma, _ = quant_tables(90)
    gray = pillow_gray(plane, luma)
    buf = encode_planar(
        plane,
        factors=[(1, 1)],
        component_ids=[1],
        adobe_transform=None,
        jfif=True,
        tables=[luma],
        encode_gray=pillow_gray,
    )
    src_entropy = [b for m, b in segments(gray) if m == 0]
    assert [b for m, b in segments(buf) if m == 0] == src_entropy
    a, p = decode_imagecodecs(buf), decode_pillow(buf)
    assert a.shape == p.shape == shape
    np.testing.assert_array_equal(a, decode_imagecodecs(gray))
    np.testing.assert_array_equal(p, a)


def test_tables_go_to_the_right_components() -> None:
    seen = []

    def recording(plane: np.ndarray, table: np.ndarray) -> bytes:
        seen.append((plane.shape, int(table[0, 0])))
        return pillow_gray(plane, table)

    luma, chroma = quant_tables(75)
    buf = encode_planar(
        to_ycbcr(smooth_rgb(37, 53)),
        factors=[(2, 2), (1, 1), (1, 1)],
        component_ids=YCC_IDS,
        adobe_transform=None,
        jfif=True,
        tables=[luma, chroma, chroma],
        encode_gray=recording,
    )
    assert seen == [((37, 53), 8), ((19, 27), 9), ((19, 27), 9)]
    tables = dqt_tables(buf)
    np.testing.assert_array_equal(tables[0], luma)
    np.testing.assert_array_equal(tables[1], chroma)
    np.testing.assert_array_equal(tables[2], chroma)


def test_encoder_choosing_its_own_tables() -> None:
    # The stored tables are whatever each grayscale stream carried.
    src = smooth_rgb(24, 40)
    luma, chroma = quant_tables(80)
    buf = encode_planar(
        to_ycbcr(src),
        factors=[(2, 1), (1, 1), (1, 1)],
        component_ids=YCC_IDS,
        adobe_transform=None,
        jfif=True,
        tables=[luma, chroma, chroma],
        encode_gray=pillow_gray_q(80),
    )
    tables = dqt_tables(buf)
    assert all(np.array_equal(tables[i], luma) for i in range(3))  # Pillow's L mode uses luma
    assert psnr(decode_imagecodecs(buf), src) > 30


# ---------------------------------------------------------------------------------------------
# bad input


def _gray(h: int, w: int, **kw) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(smooth_rgb(h, w)[:, :, 0], "L").save(buf, "JPEG", **kw)
    return buf.getvalue()


def _rgb_pillow(h: int, w: int) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(smooth_rgb(h, w), "RGB").save(buf, "JPEG", quality=90)
    return buf.getvalue()


GOOD = dict(height=16, width=16, factors=[(1, 1)], component_ids=[1], adobe_transform=None, jfif=True)


def test_assemble_good_baseline() -> None:
    assert decode_imagecodecs(assemble([_gray(16, 16)], **GOOD)).shape == (16, 16)


BAD_STREAMS = {
    "3-component": (lambda: _rgb_pillow(16, 16), "3 components"),
    "wrong-width": (lambda: _gray(16, 17), "must be 16x16"),
    "wrong-size": (lambda: _gray(8, 8), "must be 16x16"),
    "garbage": (lambda: b"not a jpeg at all", "no SOI"),
    "empty": (lambda: b"", "no SOI"),
    "random-bytes": (lambda: bytes(range(256)), "no SOI"),
    "soi-eoi": (lambda: b"\xff\xd8\xff\xd9", "unexpected marker"),
    "truncated-entropy": (lambda: _gray(16, 16)[:-3], "truncated entropy"),
    "truncated-header": (lambda: _gray(16, 16)[:100], "bad length"),
    "truncated-length": (lambda: b"\xff\xd8\xff\xdb\x00", "truncated length"),  # a marker, then one byte of its length
    "progressive": (lambda: _gray(16, 16, progressive=True), "SOF2"),
    "restart-interval": (lambda: _gray(16, 16, restart_marker_blocks=1), "restart"),
    # Pillow passes qtables with force_baseline off, so 300 gives a 16-bit DQT under SOF1
    "16-bit-dqt": (lambda: _gray(16, 16, qtables=[[300] * 64]), "SOF1|16-bit"),
    # The two length bytes are there, the segment they announce is not: its length is bad, not truncated.
    "length-past-the-end": (lambda: b"\xff\xd8\xff\xdb\x00\x43", "bad length"),
    "truncated-dqt": (lambda: _edited(_gray(16, 16), 0xDB, lambda body: body[:30]), "truncated DQT"),
    "huffman-class-2": (lambda: _edited(_gray(16, 16), 0xC4, lambda body: bytes([0x20 | body[0] & 15]) + body[1:]), "not baseline"),
    # Entropy-coded data, then fill bytes up to the very end: no marker follows them.
    "fill-to-the-end": (lambda: _gray(16, 16)[:-2] + b"\xff\xff", "no EOI"),
    "ends-after-a-segment": (lambda: _rebuilt(segments(_gray(16, 16))[:2]), "expected a marker at offset"),
    "restart-marker-in-headers": (lambda: _gray(16, 16)[:2] + b"\xff\xd0" + _gray(16, 16)[2:], "unexpected marker 0xFFD0"),
    "dqt-table-4": (lambda: _edited(_gray(16, 16), 0xDB, lambda body: b"\x04" + body[1:]), "quantisation table id 4 > 3"),
    "height-0": (lambda: _edited(_gray(16, 16), 0xC0, lambda body: body[:1] + b"\x00\x00" + body[3:]), "height 0"),
}


def _rebuilt(parts: list[tuple[int, bytes]]) -> bytes:
    """The stream of ``segments`` output (the inverse of that helper)."""
    out = b""
    for marker, body in parts:
        if marker == 0:
            out += body
        elif marker in (0xD8, 0xD9):
            out += bytes((0xFF, marker))
        else:
            out += bytes((0xFF, marker)) + (len(body) + 2).to_bytes(2, "big") + body
    return out


def _edited(stream: bytes, marker: int, edit) -> bytes:
    """``stream`` with the body of its first ``marker`` segment replaced by ``edit(body)``."""
    parts = segments(stream)
    k = next(i for i, (m, _) in enumerate(parts) if m == marker)
    parts[k] = (marker, edit(parts[k][1]))
    return _rebuilt(parts)


def test_a_scan_may_use_any_baseline_table_ids() -> None:
    """Quantisation table 3, Huffman tables DC 1 / AC 1 (Pillow writes 0 / 0 / 0): every selector is read in full.

    An empty COM segment (length 2) rides along: a segment may have no body."""
    gray = _gray(16, 16)
    parts = segments(gray)
    renamed = [(0xD8, b""), (0xFE, b"")]
    for marker, body in parts[1:]:
        if marker == 0xDB:
            assert len(body) == 65 and body[0] == 0x00
            body = b"\x03" + body[1:]
        elif marker == 0xC0:
            assert body[5] == 1 and body[8] == 0
            body = body[:8] + b"\x03"
        elif marker == 0xC4:  # every table of the segment gets id 1: Tc/Th is the first byte of each table
            tables, j = b"", 0
            while j < len(body):
                size = 17 + sum(body[j + 1 : j + 17])
                tables += bytes([body[j] & 0xF0 | 1]) + body[j + 1 : j + size]
                j += size
            body = tables
        elif marker == 0xDA:
            assert body[2] == 0x00
            body = body[:2] + b"\x11" + body[3:]
        renamed.append((marker, body))
    stream = _rebuilt(renamed)
    np.testing.assert_array_equal(decode_imagecodecs(stream), decode_imagecodecs(gray))  # the edit is a legal stream
    np.testing.assert_array_equal(decode_imagecodecs(assemble([stream], **GOOD)), decode_imagecodecs(gray))


def test_a_segment_holds_at_most_65533_bytes() -> None:
    """A segment's length field counts itself: 65535 in all, one byte more is refused."""
    from zarr_jpeg_conformance.core.scans import _segment

    assert _segment(0xFE, bytes(65533))[2:4] == b"\xff\xff"
    with pytest.raises(ValueError, match="too long"):
        _segment(0xFE, bytes(65534))


@pytest.mark.parametrize("case", BAD_STREAMS)
def test_assemble_rejects_bad_streams(case: str) -> None:
    make, match = BAD_STREAMS[case]
    with pytest.raises(ValueError, match=match):
        assemble([make()], **GOOD)


def test_assemble_rejects_bad_arguments() -> None:
    g = _gray(16, 16)
    with pytest.raises(ValueError):
        assemble([g, g], **GOOD)  # 2 streams, 1 factor pair
    with pytest.raises(ValueError, match="2 component ids for 1 components"):
        assemble([g], **{**GOOD, "component_ids": [1, 2]})
    with pytest.raises(ValueError):
        assemble([g] * 2, **{**GOOD, "factors": [(1, 1)] * 2, "component_ids": [1, 1]})  # duplicate ids
    with pytest.raises(ValueError):
        assemble([g] * 5, **{**GOOD, "factors": [(1, 1)] * 5, "component_ids": range(5)})  # > 4 Tq slots
    with pytest.raises(ValueError, match="need 1 to 4 component streams, got 0"):
        assemble([], **{**GOOD, "factors": [], "component_ids": []})
    with pytest.raises(ValueError):
        assemble([g], **{**GOOD, "factors": [(5, 1)]})
    with pytest.raises(ValueError):
        assemble([g], **{**GOOD, "factors": [(0, 1)]})
    with pytest.raises(ValueError):
        assemble([g], **{**GOOD, "adobe_transform": 3})
    with pytest.raises(ValueError):
        assemble([g], **{**GOOD, "height": 0})
    with pytest.raises(ValueError):
        assemble(["not bytes"], **GOOD)


def test_assemble_limits_are_inclusive() -> None:
    """Component ids are bytes (0-255, T.81 B.2.2) and dimensions 1-65535: each end is written, one past it refused."""
    g = _gray(16, 16)
    for cid in (0, 255):
        assert inspect(assemble([g], **{**GOOD, "component_ids": [cid]})).component_ids == (cid,)
    for cid in (-1, 256):
        with pytest.raises(ValueError, match="distinct bytes"):
            assemble([g], **{**GOOD, "component_ids": [cid]})
    for size in (0, 0x10000):
        with pytest.raises(ValueError, match=r"outside 1\.\.65535"):
            assemble([g], **{**GOOD, "width": size})


def test_encode_planar_rejects() -> None:
    luma, chroma = quant_tables(90)
    ycc = to_ycbcr(smooth_rgb(16, 16))
    kw = dict(component_ids=YCC_IDS, adobe_transform=None, jfif=True, encode_gray=pillow_gray)
    with pytest.raises(ValueError, match="fractional"):
        encode_planar(ycc, factors=[(3, 2), (2, 1), (1, 1)], tables=[luma, chroma, chroma], **kw)
    with pytest.raises(ValueError):
        encode_planar(ycc, factors=[(2, 2), (1, 1), (1, 1)], tables=[luma, chroma], **kw)
    with pytest.raises(ValueError):
        encode_planar(ycc, factors=[(2, 2), (1, 1)], tables=[luma, chroma, chroma], **kw)
    with pytest.raises(ValueError):
        encode_planar(ycc.astype(np.uint16), factors=[(1, 1)] * 3, tables=[luma] * 3, **kw)
    with pytest.raises(ValueError):
        encode_planar(ycc, factors=[(1, 1)] * 3, tables=[luma[:4]] * 3, **kw)


def test_the_base_tables_are_read_only() -> None:
    """Shared by every caller: a caller scaling them in place would change every later stream."""
    assert not LUMA_BASE.flags.writeable and not CHROMA_BASE.flags.writeable


def test_a_dqt_segment_may_hold_two_tables() -> None:
    """Tables 0 and 1 in one segment, as many encoders write them: each is its own 64 bytes."""
    gray = _gray(16, 16)
    other = bytes(range(1, 65))
    stream = _edited(gray, 0xDB, lambda body: body + b"\x01" + other)
    np.testing.assert_array_equal(decode_imagecodecs(stream), decode_imagecodecs(gray))
    np.testing.assert_array_equal(decode_imagecodecs(assemble([stream], **GOOD)), decode_imagecodecs(gray))


def test_tables_may_be_flat_or_8x8() -> None:
    luma, chroma = quant_tables(90)
    ycc = to_ycbcr(smooth_rgb(16, 16))
    kw = dict(factors=[(1, 1)] * 3, component_ids=YCC_IDS, adobe_transform=None, jfif=True, encode_gray=pillow_gray)
    flat = encode_planar(ycc, tables=[luma.ravel(), chroma.ravel(), chroma.ravel()], **kw)
    assert flat == encode_planar(ycc, tables=[luma, chroma, chroma], **kw)
