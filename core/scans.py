"""Build baseline multi-component JPEG streams from single-component (grayscale) ones.

Why this exists
---------------
The ``jpeg`` codec allows sampling factors that many backends cannot write (backends.md §2,
§11.2, §11.3, §11.17):

* Pillow writes only 4:4:4, 4:2:2 and 4:2:0 (no 4:4:0);
* PyTurboJPEG 1.x cannot write ``rgb`` (no colour transform + APP14 Adobe transform 0);
* no Python API writes factors whose interleaved MCU would exceed the 10 blocks T.81 B.2.3
  allows for a scan with Ns > 1 (``[[4,4],[1,1],[1,1]]``, 3x3, 4x3 and 3x4 need h*v + 2 > 10).

Every backend can write a baseline grayscale JPEG, and that is enough. A sequential (SOF0) frame
may code its components in several scans (T.81 B.2.1); a scan with one component is
*non-interleaved* (T.81 B.2.3 note, A.2.2): its MCU is one 8x8 block, and the blocks are coded in
raster order over that component's own block grid, whose size follows from the component's
dimensions

    x_i = ceil(W * h_i / h_max),   y_i = ceil(H * v_i / v_max)          (T.81 A.1.1)

exactly as in a grayscale image of (y_i, x_i) samples (the sampling factors play no part in a
non-interleaved scan, and no MCU padding beyond the 8x8 block is needed, T.81 A.2.4). The DC
predictor starts at 0 at the start of every scan (T.81 F.2.1.3.1, E.2), as it does at the start of
a grayscale image. So the entropy-coded segment of a grayscale JPEG of component i's plane *is*
component i's scan, bit for bit, provided the scan header points at the same quantisation and
Huffman tables. The assembled stream is ordinary baseline (SOF0, 8-bit, Huffman, sequential);
only its scan structure, one scan per component as ``cjpeg -scans`` writes, differs from what
most encoders emit. Non-interleaved scans have no blocks-per-MCU limit, which is what makes 4x4
etc. writable at all.

Tables: baseline allows 4 quantisation table slots but only 2 DC and 2 AC Huffman slots (T.81
Table B.2, B.2.4). A quantisation table must not change until every scan using it is done, so
each component gets its own slot (Tq = i, all in one DQT before the frame header). Huffman tables
may be (re)defined by a DHT before any scan header (T.81 B.2.1), so each scan's tables are loaded
into DC 0 / AC 0 right before it.

Encoders MAY differ (spec, "quality"), so bytes produced here need not equal any library's. In
particular :func:`downsample` is a plain box average rounded half up, whereas libjpeg's own
2x1 and 2x2 downsamplers (jcsample.c) add a bias that alternates between output columns, so those
chroma samples can differ by one level from libjpeg's (other integer ratios, 4:4:0 included, use
libjpeg's generic path, which rounds like this one).

This module deliberately depends on nothing else in the project: it parses the few marker
segments it needs itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "LUMA_BASE",
    "CHROMA_BASE",
    "component_size",
    "downsample",
    "quant_tables",
    "assemble",
    "encode_planar",
]

# T.81 Annex K, Table K.1 (luminance) and Table K.2 (chrominance), natural (row-major) order.
LUMA_BASE = np.array(
    [
        [16, 11, 10, 16, 24, 40, 51, 61],
        [12, 12, 14, 19, 26, 58, 60, 55],
        [14, 13, 16, 24, 40, 57, 69, 56],
        [14, 17, 22, 29, 51, 87, 80, 62],
        [18, 22, 37, 56, 68, 109, 103, 77],
        [24, 35, 55, 64, 81, 104, 113, 92],
        [49, 64, 78, 87, 103, 121, 120, 101],
        [72, 92, 95, 98, 112, 100, 103, 99],
    ],
    dtype=np.uint16,
)
CHROMA_BASE = np.array(
    [
        [17, 18, 24, 47, 99, 99, 99, 99],
        [18, 21, 26, 66, 99, 99, 99, 99],
        [24, 26, 56, 99, 99, 99, 99, 99],
        [47, 66, 99, 99, 99, 99, 99, 99],
        [99, 99, 99, 99, 99, 99, 99, 99],
        [99, 99, 99, 99, 99, 99, 99, 99],
        [99, 99, 99, 99, 99, 99, 99, 99],
        [99, 99, 99, 99, 99, 99, 99, 99],
    ],
    dtype=np.uint16,
)
LUMA_BASE.setflags(write=False)
CHROMA_BASE.setflags(write=False)

# Marker codes (T.81 Table B.1).
_SOI, _EOI, _SOS, _DQT, _DHT, _DRI, _DNL = 0xD8, 0xD9, 0xDA, 0xDB, 0xC4, 0xDD, 0xDC
_SOF0 = 0xC0
# SOFn other than SOF0 (C4 = DHT, C8 = JPG and CC = DAC are not frame headers).
_OTHER_SOF = frozenset({0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
_RST = range(0xD0, 0xD8)


# --------------------------------------------------------------------------------------------
# Geometry and pixels


def component_size(height: int, width: int, h: int, v: int, h_max: int, v_max: int) -> tuple[int, int]:
    """(y_i, x_i) of a component with factors (h, v) in an H x W image (T.81 A.1.1)."""
    return -(-height * v // v_max), -(-width * h // h_max)


def downsample(plane: np.ndarray, fh: int, fv: int) -> np.ndarray:
    """Box-average a uint8 (H, W) plane by integer factors ``fh`` (across) and ``fv`` (down).

    The result has shape (ceil(H / fv), ceil(W / fh)). Partial boxes at the right and bottom edges
    are filled by replicating the last column / row, as libjpeg does before downsampling, so an
    edge sample is the mean of real samples only and the decoder's edge upsampling sees no dark
    band. Means are rounded half up. For 2x1 and 2x2 boxes libjpeg instead adds a bias alternating
    between columns (0, 1 and 1, 2 before dividing by 2 and 4) to keep rounding from drifting one
    way, so results can differ from libjpeg's by 1; the spec leaves such encoder choices free.
    """
    a = np.asarray(plane)
    if a.ndim != 2 or a.dtype != np.uint8:
        raise ValueError(f"downsample needs a 2-D uint8 plane, got {a.ndim}-D {a.dtype}")
    fh, fv = int(fh), int(fv)
    if fh < 1 or fv < 1:
        raise ValueError(f"downsampling factors must be >= 1, got fh={fh}, fv={fv}")
    if fh == 1 and fv == 1:
        return a.copy()
    height, width = a.shape
    out_h, out_w = -(-height // fv), -(-width // fh)
    padded = np.pad(a, ((0, out_h * fv - height), (0, out_w * fh - width)), mode="edge")
    sums = padded.reshape(out_h, fv, out_w, fh).sum(axis=(1, 3), dtype=np.uint32)
    n = fh * fv
    return ((sums + n // 2) // n).astype(np.uint8)


def quant_tables(quality: int) -> tuple[np.ndarray, np.ndarray]:
    """IJG-scaled Annex K (luma, chroma) quantisation tables for ``quality`` 1-100.

    Same scaling as IJG libjpeg's ``jpeg_set_quality(..., force_baseline=TRUE)``, which is what
    Pillow, imagecodecs and TurboJPEG use, so tables written through a grayscale encoder fed with
    these match what those libraries write for the same quality. Entries are clamped to 1..255
    because a baseline DQT holds 8-bit values only (T.81 B.2.4.1, Pq = 0 in baseline).
    Returns two 8x8 uint16 arrays in natural (row-major) order, not zigzag.
    """
    if isinstance(quality, bool) or not isinstance(quality, (int, np.integer)):
        raise ValueError(f"quality must be an integer, got {quality!r}")
    q = int(quality)
    if not 1 <= q <= 100:
        raise ValueError(f"quality must be in 1..100, got {q}")
    scale = 5000 // q if q < 50 else 200 - 2 * q
    tables = []
    for base in (LUMA_BASE, CHROMA_BASE):
        t = (base.astype(np.int64) * scale + 50) // 100
        tables.append(np.clip(t, 1, 255).astype(np.uint16))
    return tables[0], tables[1]


# --------------------------------------------------------------------------------------------
# Parsing single-component inputs


@dataclass(frozen=True)
class _GrayScan:
    """What :func:`assemble` needs from one single-component baseline stream."""

    height: int
    width: int
    dqt: bytes  # 64 bytes, zigzag order as stored (copied verbatim, so no reordering needed)
    dc_table: bytes  # 16 code-length counts + symbols (the DHT body after Tc/Th)
    ac_table: bytes
    entropy: bytes  # the entropy-coded segment between the SOS header and EOI


def _u16(data: bytes, pos: int) -> int:
    return (data[pos] << 8) | data[pos + 1]


def _parse_gray(stream: bytes, index: int) -> _GrayScan:
    """Parse a 1-component SOF0 8-bit stream without restarts, or raise ValueError."""

    def fail(msg: str) -> ValueError:
        return ValueError(f"scan {index}: {msg}")

    data = bytes(stream)
    n = len(data)
    if n < 4 or data[0] != 0xFF or data[1] != _SOI:
        raise fail("not a JPEG stream (no SOI marker)")
    qtables: dict[int, bytes] = {}
    htables: dict[tuple[int, int], bytes] = {}
    frame: tuple[int, int, int, int] | None = None  # height, width, component id, Tq
    pos = 2
    while True:
        # Any number of 0xFF fill bytes may precede a marker (T.81 B.1.1.2).
        if pos >= n or data[pos] != 0xFF:
            raise fail(f"expected a marker at offset {pos}")
        while pos < n and data[pos] == 0xFF:
            pos += 1
        if pos >= n:
            raise fail("stream ends inside a marker")
        marker = data[pos]
        pos += 1
        if marker in (_SOI, _EOI) or marker in _RST or marker == 0x00:
            raise fail(f"unexpected marker 0xFF{marker:02X} before the scan")
        if pos + 2 > n:
            raise fail(f"truncated length of segment 0xFF{marker:02X}")
        length = _u16(data, pos)
        if length < 2 or pos + length > n:
            raise fail(f"segment 0xFF{marker:02X} at offset {pos - 2} has a bad length {length}")
        body = data[pos + 2 : pos + length]
        pos += length

        if marker in _OTHER_SOF:
            raise fail(f"frame is SOF{marker - 0xC0} (0xFF{marker:02X}), only baseline SOF0 is accepted")
        if marker == _SOF0:
            if frame is not None:
                raise fail("more than one SOF segment")
            if len(body) < 6:
                raise fail("SOF0 segment too short")
            precision, height, width, ncomp = body[0], _u16(body, 1), _u16(body, 3), body[5]
            if precision != 8:
                raise fail(f"sample precision is {precision}, baseline needs 8")
            if ncomp != 1:
                raise fail(f"stream has {ncomp} components, a single-component (grayscale) stream is needed")
            if len(body) != 9:
                raise fail("SOF0 segment length does not match one component")
            if height == 0:
                raise fail("height 0 (DNL-defined height) is not supported")
            if width == 0:
                raise fail("width is 0")
            frame = (height, width, body[6], body[8])
        elif marker == _DQT:
            j = 0
            while j < len(body):
                pq, tq = body[j] >> 4, body[j] & 15
                if pq != 0:
                    raise fail("16-bit quantisation table (Pq=1), baseline needs 8-bit tables")
                if tq > 3:
                    raise fail(f"quantisation table id {tq} > 3")
                if j + 65 > len(body):
                    raise fail("truncated DQT segment")
                qtables[tq] = body[j + 1 : j + 65]
                j += 65
        elif marker == _DHT:
            j = 0
            while j < len(body):
                tc, th = body[j] >> 4, body[j] & 15
                if tc > 1 or th > 1:
                    raise fail(f"Huffman table class {tc} id {th} is not baseline")
                if j + 17 > len(body):
                    raise fail("truncated DHT segment")
                count = sum(body[j + 1 : j + 17])
                if count > 256 or j + 17 + count > len(body):
                    raise fail("truncated or oversized DHT table")
                htables[(tc, th)] = body[j + 1 : j + 17 + count]
                j += 17 + count
        elif marker == _DRI:
            if len(body) != 2:
                raise fail("bad DRI segment")
            if _u16(body, 0) != 0:
                # Restart markers inside the copied entropy data would be numbered for this scan
                # alone; simpler to require none.
                raise fail("stream uses a restart interval (DRI), which is not supported")
        elif marker == _DNL:
            raise fail("DNL marker is not supported")
        elif marker == _SOS:
            break
        # APPn, COM and anything else are irrelevant to the scan and dropped.

    if frame is None:
        raise fail("SOS before any SOF0 frame header")
    height, width, comp_id, tq = frame
    if len(body) != 6 or body[0] != 1:
        raise fail("scan header must name exactly one component")
    if body[1] != comp_id:
        raise fail(f"scan names component {body[1]}, frame has component {comp_id}")
    td, ta = body[2] >> 4, body[2] & 15
    if (body[3], body[4], body[5]) != (0, 63, 0):
        raise fail("scan is not sequential (Ss=0, Se=63, Ah=Al=0 expected)")
    if tq not in qtables:
        raise fail(f"quantisation table {tq} used by the frame is not defined")
    if (0, td) not in htables or (1, ta) not in htables:
        raise fail(f"Huffman tables DC{td}/AC{ta} used by the scan are not defined")

    # The entropy-coded segment ends at the first marker that is neither a stuffed 0xFF00 nor
    # fill; with no DRI there must be no RSTn, and a 1-component sequential image has one scan,
    # so that marker must be EOI.
    start = pos
    while True:
        k = data.find(b"\xff", pos)
        if k < 0 or k + 1 >= n:
            raise fail("truncated entropy-coded data (no EOI)")
        if data[k + 1] == 0x00:  # stuffed 0xFF data byte (T.81 F.1.2.3)
            pos = k + 2
            continue
        end = k
        while k < n and data[k] == 0xFF:  # fill bytes before the marker
            k += 1
        if k >= n:
            raise fail("truncated entropy-coded data (no EOI)")
        nxt = data[k]
        break
    if nxt != _EOI:
        raise fail(f"entropy-coded data ends with marker 0xFF{nxt:02X}, expected EOI")
    if end == start:
        raise fail("empty entropy-coded segment")
    return _GrayScan(height, width, qtables[tq], htables[(0, td)], htables[(1, ta)], data[start:end])


# --------------------------------------------------------------------------------------------
# Writing


def _segment(marker: int, body: bytes) -> bytes:
    if len(body) + 2 > 0xFFFF:
        raise ValueError(f"segment 0xFF{marker:02X} too long ({len(body)} bytes)")
    return bytes((0xFF, marker)) + (len(body) + 2).to_bytes(2, "big") + body


def _check_factors(factors: Sequence[Sequence[int]], count: int) -> list[tuple[int, int]]:
    out = []
    for f in factors:
        h, v = (int(x) for x in f)
        if not (1 <= h <= 4 and 1 <= v <= 4):
            raise ValueError(f"sampling factors must be in 1..4, got {(h, v)}")
        out.append((h, v))
    if len(out) != count:
        raise ValueError(f"{len(out)} sampling factor pairs for {count} components")
    return out


def assemble(
    scans: Sequence[bytes],
    *,
    height: int,
    width: int,
    factors: Sequence[tuple[int, int]],
    component_ids: Sequence[int],
    adobe_transform: int | None,
    jfif: bool,
) -> bytes:
    """Combine single-component baseline streams into one baseline multi-component SOF0 stream.

    ``scans[i]`` must be a 1-component, 8-bit SOF0 stream without restart interval whose image is
    exactly component i's plane, (y_i, x_i) = ``component_size(height, width, *factors[i], h_max,
    v_max)``. ``factors`` are (h, v) pairs, 1..4. Each component keeps its stream's quantisation
    table (as Tq = i) and Huffman tables (as DC 0 / AC 0, redefined before its scan), and its
    entropy-coded data is copied verbatim into a non-interleaved scan. ``jfif`` writes a JFIF
    APP0; ``adobe_transform`` (0 = none/RGB, 1 = YCbCr) writes an APP14 Adobe segment.

    Raises ValueError for inconsistent arguments or unusable inputs.
    """
    count = len(scans)
    if not 1 <= count <= 4:
        # Tq = i, and baseline has 4 quantisation table slots (T.81 B.2.4.1).
        raise ValueError(f"need 1 to 4 component streams, got {count}")
    height, width = int(height), int(width)
    if not (1 <= height <= 0xFFFF and 1 <= width <= 0xFFFF):
        raise ValueError(f"image size {height}x{width} is outside 1..65535")
    fac = _check_factors(factors, count)
    ids = [int(c) for c in component_ids]
    if len(ids) != count:
        raise ValueError(f"{len(ids)} component ids for {count} components")
    if any(not 0 <= c <= 255 for c in ids) or len(set(ids)) != count:
        raise ValueError(f"component ids must be distinct bytes, got {ids}")
    if adobe_transform is not None and adobe_transform not in (0, 1, 2):
        raise ValueError(f"APP14 Adobe transform must be 0, 1 or 2, got {adobe_transform}")
    h_max = max(h for h, _ in fac)
    v_max = max(v for _, v in fac)

    parsed = []
    for i, scan in enumerate(scans):
        if not isinstance(scan, (bytes, bytearray, memoryview)):
            raise ValueError(f"scan {i}: expected bytes, got {type(scan).__name__}")
        p = _parse_gray(bytes(scan), i)
        want = component_size(height, width, *fac[i], h_max, v_max)
        if (p.height, p.width) != want:
            raise ValueError(
                f"scan {i}: image is {p.height}x{p.width} (HxW) but component {i} with factors "
                f"{fac[i]} of a {height}x{width} image with maxima ({h_max}, {v_max}) must be "
                f"{want[0]}x{want[1]}"
            )
        parsed.append(p)

    out = bytearray(b"\xff\xd8")
    if jfif:
        # JFIF 1.01, no units, 1:1 aspect ratio, no thumbnail (T.871 10.1).
        out += _segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    if adobe_transform is not None:
        # 'Adobe', DCTEncodeVersion 100, flags0 0, flags1 0, ColorTransform.
        out += _segment(0xEE, b"Adobe" + (100).to_bytes(2, "big") + bytes(4) + bytes((adobe_transform,)))
    out += _segment(_DQT, b"".join(bytes((i,)) + p.dqt for i, p in enumerate(parsed)))
    sof = bytearray((8,)) + height.to_bytes(2, "big") + width.to_bytes(2, "big") + bytes((count,))
    for i, ((h, v), cid) in enumerate(zip(fac, ids, strict=True)):
        sof += bytes((cid, (h << 4) | v, i))
    out += _segment(_SOF0, bytes(sof))
    for cid, p in zip(ids, parsed, strict=True):
        out += _segment(_DHT, b"\x00" + p.dc_table + b"\x10" + p.ac_table)
        out += _segment(_SOS, bytes((1, cid, 0x00, 0, 63, 0)))
        out += p.entropy
    out += b"\xff\xd9"
    return bytes(out)


def encode_planar(
    image: np.ndarray,
    *,
    factors: Sequence[tuple[int, int]],
    component_ids: Sequence[int],
    adobe_transform: int | None,
    jfif: bool,
    tables: Sequence[np.ndarray],
    encode_gray: Callable[[np.ndarray, np.ndarray], bytes],
) -> bytes:
    """Encode an (H, W, C) or (H, W) uint8 image as a baseline JPEG with one scan per component.

    ``image`` is already in the colour space to store (no conversion here). Component i is
    downsampled by (h_max / h_i, v_max / v_i), which must be integers (libjpeg decoders reject
    fractional ratios anyway; in the Zarr spec chroma is always [1, 1], so this always holds
    there), and encoded with ``encode_gray(plane, tables[i])``. ``tables[i]`` is the 8x8
    natural-order quantisation table for component i, so the caller decides which component uses
    which table (e.g. ``luma, chroma = quant_tables(q)``; ``tables=[luma, chroma, chroma]`` for
    YCbCr, ``[luma] * 3`` or any choice for ``rgb``). ``encode_gray`` must return a baseline
    single-component stream of the plane; the tables actually stored are whatever it wrote.
    """
    a = np.asarray(image)
    if a.dtype != np.uint8:
        raise ValueError(f"image must be uint8, got {a.dtype}")
    if a.ndim == 2:
        a = a[:, :, None]
    if a.ndim != 3:
        raise ValueError(f"image must be (H, W) or (H, W, C), got shape {a.shape}")
    height, width, count = a.shape
    fac = _check_factors(factors, count)
    if len(tables) != count:
        raise ValueError(f"{len(tables)} quantisation tables for {count} components")
    h_max = max(h for h, _ in fac)
    v_max = max(v for _, v in fac)
    streams = []
    for i, (h, v) in enumerate(fac):
        if h_max % h or v_max % v:
            raise ValueError(
                f"component {i} factors {(h, v)} do not divide the maxima ({h_max}, {v_max}): "
                "fractional downsampling is not supported"
            )
        table = np.asarray(tables[i])
        if table.shape not in ((8, 8), (64,)):
            raise ValueError(f"table {i} must be 8x8 or 64 entries, got shape {table.shape}")
        plane = downsample(np.ascontiguousarray(a[:, :, i]), h_max // h, v_max // v)
        streams.append(bytes(encode_gray(plane, table.reshape(8, 8))))
    return assemble(
        streams,
        height=height,
        width=width,
        factors=fac,
        component_ids=component_ids,
        adobe_transform=adobe_transform,
        jfif=jfif,
    )
