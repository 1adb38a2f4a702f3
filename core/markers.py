"""A JPEG marker inspector that reports structure and never crashes on garbage.

Adapters and suites use :func:`inspect` to learn what a stream *declares* (frame size,
components, sampling factors, colour markers, tables, scans) before, or instead of,
handing it to a decoder. Several decoders return silently on truncated, forged or
mislabelled streams (see research/backends.md §6 and §11), so the checks that matter
for conformance have to be made on the bytes themselves.

The walk follows ITU-T T.81 Annex B: marker segments from SOI, optional 0xFF fill
bytes before any marker, standalone markers without a length, and entropy-coded data
after each SOS that ends at the first marker other than a stuffed ``FF00`` or an RSTn.
Everything malformed becomes a human-readable entry in :attr:`StreamInfo.problems`;
the only exception :func:`inspect` raises is ``TypeError`` for non-bytes input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Component", "StreamInfo", "inspect", "inspect_headers", "inspect_rest"]

SOI, EOI, SOS, DQT, DHT, DAC, DRI, DNL, COM = 0xD8, 0xD9, 0xDA, 0xDB, 0xC4, 0xCC, 0xDD, 0xDC, 0xFE
APP0, APP14 = 0xE0, 0xEE
TEM = 0x01
#: SOFn: every C0-CF except DHT (C4), JPG (C8) and DAC (CC).
SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {DHT, 0xC8, DAC}
LOSSLESS_SOF = frozenset({0xC3, 0xC7, 0xCB, 0xCF})
#: Markers that carry a length but mean nothing to a baseline/progressive decoder
#: (JPG, DHP, EXP, JPGn); libjpeg rejects them as unknown, so they are problems here too.
UNSUPPORTED_SEGMENTS = frozenset({0xC8, 0xDE, 0xDF, *range(0xF0, 0xFE)})

# libjpeg only trusts these markers at or above these payload lengths (APP0_DATA_LEN and
# APP14_DATA_LEN in jdmarker.c); shorter ones are ignored by it, so they are ignored here.
JFIF_MIN_PAYLOAD = 14
ADOBE_MIN_PAYLOAD = 12

#: Garbage can hold a problem every two bytes; listing them all would cost memory and time
#: without telling a reader anything more than the first ones do.
MAX_PROBLEMS = 100

# A marker is 0xFF followed by anything except 0x00 (byte stuffing), 0xFF (fill) and,
# inside entropy-coded data, RST0-7. A fixed two-byte pattern keeps the search linear even
# for long runs of 0xFF, where a pattern like ``\xff+X`` would backtrack quadratically.
_MARKER_IN_ENTROPY = re.compile(rb"\xff[\x01-\xcf\xd8-\xfe]")
_NOT_FILL = re.compile(rb"[^\xff]")
#: Below this size a regex search is cheaper than building the vectorized index.
_VECTOR_MIN = 16384


@dataclass(frozen=True)
class Component:
    """One frame component as declared in the SOF header."""

    id: int
    h: int
    v: int
    tq: int


@dataclass(frozen=True)
class StreamInfo:
    """What a JPEG stream declares, plus every structural problem found while walking it."""

    length: int
    soi: bool
    sof: int | None
    precision: int | None
    height: int | None
    width: int | None
    components: tuple[Component, ...]
    jfif: bool
    adobe_transform: int | None
    dqt_precisions: tuple[int, ...]
    huffman_tables: tuple[tuple[int, int], ...]
    scans: tuple[tuple[int, ...], ...]
    restart_interval: int
    app_segments: tuple[int, ...]
    comments: int
    eoi: bool
    trailing_bytes: int
    problems: tuple[str, ...]
    #: False when inspect(entropy=False) stopped after the first scan header of a stream
    #: ending in EOI: later scans, and markers inside entropy-coded data, were not read.
    walked_entropy: bool = True
    #: Offset of the first scan's entropy-coded data (just past its SOS segment), if any.
    entropy_start: int | None = None
    #: (Ss, Se, Ah, Al) of each scan in :attr:`scans`: spectral band and successive approximation.
    scan_parameters: tuple[tuple[int, int, int, int], ...] = ()
    #: Markers walked after SOI: every marker segment (SOS included) and standalone marker,
    #: not the RSTn inside entropy-coded data.
    markers: int = 0

    @property
    def baseline(self) -> bool:
        """Baseline sequential DCT: SOF0, 8-bit samples, only 8-bit quantization tables."""
        return self.sof == 0xC0 and self.precision == 8 and all(pq == 0 for pq in self.dqt_precisions)

    @property
    def component_ids(self) -> tuple[int, ...]:
        return tuple(c.id for c in self.components)

    @property
    def stored_color_space(self) -> str | None:
        """The stored colour space under the Zarr spec's rule: APP14, when present, decides."""
        n = len(self.components)
        if n == 1:
            return "grayscale"
        if n == 3:
            if self.adobe_transform is not None:
                return {0: "rgb", 1: "ycbcr"}.get(self.adobe_transform)
            if self.jfif:
                return "ycbcr"
            return "rgb" if self.component_ids == (82, 71, 66) else "ycbcr"
        if n == 4:
            return _four_component_space(self.adobe_transform)
        return None

    @property
    def libjpeg_color_space(self) -> str | None:
        """The colour space libjpeg(-turbo) assumes (jdapimin.c): JFIF beats APP14 for 3 components."""
        n = len(self.components)
        if n == 1:
            return "grayscale"
        if n == 3:
            if self.jfif:
                return "ycbcr"
            if self.adobe_transform is not None:
                # libjpeg warns about an unknown transform and assumes YCbCr.
                return "rgb" if self.adobe_transform == 0 else "ycbcr"
            return "rgb" if self.component_ids == (82, 71, 66) else "ycbcr"
        if n == 4:
            # libjpeg assumes YCCK for an unknown transform, where the spec rule gives no answer.
            return "cmyk" if self.adobe_transform in (None, 0) else "ycck"
        return None

    @property
    def ok(self) -> bool:
        """A complete, structurally clean stream: SOI, a frame, at least one scan, EOI, no problems."""
        return self.soi and self.sof is not None and bool(self.scans) and self.eoi and not self.problems


def _four_component_space(transform: int | None) -> str | None:
    if transform in (None, 0):
        return "cmyk"
    return "ycck" if transform == 2 else None


@dataclass
class _Walk:
    """Mutable accumulator for one inspection; frozen into a StreamInfo at the end."""

    data: bytes
    soi: bool = False
    sof: int | None = None
    precision: int | None = None
    height: int | None = None
    width: int | None = None
    components: list[Component] = field(default_factory=list)
    jfif: bool = False
    adobe_transform: int | None = None
    dqt_precisions: list[int] = field(default_factory=list)
    huffman_tables: list[tuple[int, int]] = field(default_factory=list)
    scans: list[tuple[int, ...]] = field(default_factory=list)
    restart_interval: int = 0
    app_segments: list[int] = field(default_factory=list)
    comments: int = 0
    eoi: bool = False
    trailing_bytes: int = 0
    problems: list[str] = field(default_factory=list)
    unlisted: int = 0
    entropy: bool = True
    walked_entropy: bool = True
    entropy_start: int | None = None
    scan_parameters: list[tuple[int, int, int, int]] = field(default_factory=list)
    markers: int = 0
    max_markers: int | None = None
    _marker_offsets: np.ndarray | None = None

    def next_marker(self, pos: int) -> int | None:
        """Offset of the first 0xFF at or after ``pos`` that starts a marker inside entropy data.

        Entropy-coded data holds 0xFF only as FF00 (stuffing), RSTn or fill; a large stream
        has thousands of stuffed bytes, so the candidates are found once, vectorized,
        instead of one regex match each (this runs before every decode).
        """
        if len(self.data) < _VECTOR_MIN:
            found = _MARKER_IN_ENTROPY.search(self.data, pos)
            return None if found is None else found.start()
        if self._marker_offsets is None:
            arr = np.frombuffer(self.data, dtype=np.uint8)
            ff = np.flatnonzero(arr[:-1] == 0xFF)
            nxt = arr[ff + 1]
            keep = (nxt != 0x00) & (nxt != 0xFF) & ((nxt < 0xD0) | (nxt > 0xD7))
            self._marker_offsets = ff[keep]
        i = int(np.searchsorted(self._marker_offsets, pos))
        return int(self._marker_offsets[i]) if i < len(self._marker_offsets) else None

    def problem(self, text: str, *args: object) -> None:
        """Record a problem; ``text % args`` is only formatted while there is room to list it."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text % args if args else text)
        else:
            self.unlisted += 1

    def freeze(self) -> StreamInfo:
        return StreamInfo(
            length=len(self.data),
            soi=self.soi,
            sof=self.sof,
            precision=self.precision,
            height=self.height,
            width=self.width,
            components=tuple(self.components),
            jfif=self.jfif,
            adobe_transform=self.adobe_transform,
            dqt_precisions=tuple(self.dqt_precisions),
            huffman_tables=tuple(self.huffman_tables),
            scans=tuple(self.scans),
            restart_interval=self.restart_interval,
            app_segments=tuple(self.app_segments),
            comments=self.comments,
            eoi=self.eoi,
            trailing_bytes=self.trailing_bytes,
            problems=tuple(self.problems) + ((f"... and {self.unlisted} more problems",) if self.unlisted else ()),
            walked_entropy=self.walked_entropy,
            entropy_start=self.entropy_start,
            scan_parameters=tuple(self.scan_parameters),
            markers=self.markers,
        )


def inspect(data: bytes | bytearray | memoryview, *, entropy: bool = True, max_markers: int | None = None) -> StreamInfo:
    """Walk the marker structure of ``data`` and report what it declares.

    Never raises for any bytes-like input, however malformed; raises ``TypeError`` only
    when ``data`` is not ``bytes``, ``bytearray`` or ``memoryview``. With ``max_markers``,
    the walk stops after that many markers and reports one more than it allows, so that
    a stream of millions of tiny segments costs no more than the limit to look at.
    """
    walk = _Walk(_as_bytes(data), entropy=entropy, max_markers=max_markers)
    start = _find_soi(walk)
    if start is not None:
        _walk_segments(walk, start)
        _check_completeness(walk)
    return walk.freeze()


#: Results of inspect(entropy=False) by header bytes (SOI to the end of the first SOS segment).
_HEADERS: dict[bytes, StreamInfo] = {}
_HEADERS_MAX = 64
#: A header longer than this many segments is inspected in full, not cached.
_HEADER_SEGMENTS_MAX = 64


def inspect_headers(data: bytes, *, max_markers: int | None = None) -> StreamInfo:
    """``inspect(data, entropy=False, max_markers=...)``, answered from a cache when the same headers were seen.

    The chunks of one array come from one encoder and one configuration, so their headers
    are byte-identical, and parsing them is most of the cost of the checks made before each
    decode. With ``entropy=False`` and a stream ending in EOI, the result depends only on the
    header bytes and the stream's length, which is what the cache relies on. Only a plain
    chain of segments is cached (no fill bytes, no standalone marker, nothing cut off, EOI
    last); any other stream is inspected in full.
    """
    end = _plain_header_end(data) if isinstance(data, bytes) else None
    if end is None:
        return inspect(data, entropy=False, max_markers=max_markers)
    # A plain header has at most _HEADER_SEGMENTS_MAX segments, under any useful limit.
    key = data[:end]
    info = _HEADERS.get(key)
    if info is None:
        info = inspect(data, entropy=False, max_markers=max_markers)
        if len(_HEADERS) >= _HEADERS_MAX:
            _HEADERS.clear()  # arrays with this many distinct headers get no help from a cache
        _HEADERS[key] = info
    if info.length == len(data):
        return info
    # dataclasses.replace re-runs __init__ on 19 fields, which costs as much as the parse saved.
    copy = object.__new__(StreamInfo)
    copy.__dict__.update(info.__dict__)
    object.__setattr__(copy, "length", len(data))
    return copy


def inspect_rest(data: bytes, headers: StreamInfo, *, max_markers: int | None = None) -> StreamInfo:
    """``inspect(data, max_markers=...)``, given ``headers = inspect_headers(data)``: only what follows the
    first scan header is walked (the headers are the cached part, the rest differs per chunk)."""
    if headers.walked_entropy or headers.entropy_start is None:
        return headers
    if headers.problems:
        # Some problems are only known at the end of a walk; carrying them on would list them twice.
        return inspect(data, max_markers=max_markers)
    walk = _Walk(data, max_markers=max_markers)
    for name in _RESUMED:
        value = getattr(headers, name)
        setattr(walk, name, list(value) if isinstance(value, tuple) else value)
    pos = _skip_entropy(walk, headers.entropy_start)
    _walk_segments(walk, pos)
    _check_completeness(walk)
    return walk.freeze()


#: What a header walk knows that the walk after the first scan header carries on from.
_RESUMED = (
    "soi", "sof", "precision", "height", "width", "components", "jfif", "adobe_transform", "dqt_precisions",
    "huffman_tables", "scans", "restart_interval", "app_segments", "comments", "entropy_start",
    "scan_parameters", "markers",
)  # fmt: skip


def _plain_header_end(data: bytes) -> int | None:
    """End of the first SOS segment when the walk there takes inspect's plain path, else None.

    Plain: SOI first; every marker a length-bearing segment (C0-CF, DA-FE) whose code
    follows its 0xFF directly; every segment ending before the data does; and the data
    ending with EOI, so that inspect(entropy=False) stops at the SOS segment.
    """
    n = len(data)
    if data[:2] != b"\xff\xd8" or not data.endswith(b"\xff\xd9"):
        return None
    pos = 2
    for _ in range(_HEADER_SEGMENTS_MAX):
        if pos + 4 > n or data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if not (0xC0 <= marker <= 0xCF or 0xDA <= marker <= 0xFE):
            return None
        length = (data[pos + 2] << 8) | data[pos + 3]
        end = pos + 2 + length
        if length < 2 or end >= n:
            return None
        if marker == SOS:
            return end
        pos = end
    return None


def _as_bytes(data: object) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, bytearray):
        return bytes(data)
    if isinstance(data, memoryview):
        # tobytes() flattens any shape, stride or item format into raw bytes.
        return data.tobytes()
    raise TypeError(f"inspect() needs bytes, bytearray or memoryview, not {type(data).__name__}")


def _find_soi(walk: _Walk) -> int | None:
    """Offset just past the SOI to walk from, or None when there is no SOI at all."""
    data = walk.data
    if data[:2] == b"\xff\xd8":
        walk.soi = True
        return 2
    found = data.find(b"\xff\xd8")
    if found < 0:
        walk.problem("no SOI")
        return None
    # Decoders reject this, but the rest of the stream is still worth describing.
    walk.problem(f"data before SOI ({found} bytes)")
    return found + 2


def _walk_segments(walk: _Walk, pos: int) -> None:
    """Walk markers from ``pos`` until EOI or the end of the data; linear, no recursion."""
    data, n = walk.data, len(walk.data)
    while not walk.eoi:
        if pos >= n:
            walk.problem("no EOI")
            return
        if data[pos] != 0xFF:
            pos = _resync(walk, pos, "expected a marker at offset %d, found byte %02X", pos, data[pos])
            continue
        code_at = _skip_fill(data, pos)
        if code_at is None:
            walk.problem(f"only fill bytes from offset {pos} to the end")
            walk.problem("no EOI")
            return
        offset, marker = code_at - 1, data[code_at]
        pos = code_at + 1
        if marker == EOI:
            walk.eoi = True
            walk.trailing_bytes = n - pos
            if walk.trailing_bytes:
                walk.problem(f"{walk.trailing_bytes} bytes after EOI")
            return
        walk.markers += 1
        if walk.max_markers is not None and walk.markers > walk.max_markers:
            walk.problem(f"more than {walk.max_markers} markers: the rest (from offset {offset}) was not walked")
            return
        pos = _dispatch(walk, marker, offset, pos)


def _dispatch(walk: _Walk, marker: int, offset: int, pos: int) -> int:
    """Handle one marker whose code byte ends just before ``pos``; return where to continue."""
    if marker == TEM:
        return pos
    if marker == SOI:
        walk.problem("unexpected SOI at offset %d", offset)
        return pos
    if 0xD0 <= marker <= 0xD7:
        walk.problem("RST%d at offset %d outside entropy-coded data", marker - 0xD0, offset)
        return pos
    if marker == 0x00 or 0x02 <= marker <= 0xBF:
        return _resync(walk, pos, "unknown marker FF%02X at offset %d", marker, offset)
    return _segment(walk, marker, offset, pos)


def _segment(walk: _Walk, marker: int, offset: int, pos: int) -> int:
    """Parse a length-bearing segment starting at its length field ``pos``."""
    data, n = walk.data, len(walk.data)
    if pos + 2 > n:
        walk.problem(f"segment FF{marker:02X} at offset {offset} is cut off in its length field")
        return n
    length = (data[pos] << 8) | data[pos + 1]
    if length < 2:
        return _resync(walk, pos + 2, "segment FF%02X at offset %d has invalid length %d", marker, offset, length)
    end = pos + length
    if end > n:
        walk.problem(f"segment FF{marker:02X} at offset {offset} runs past the end of the data")
    payload = data[pos + 2 : min(end, n)]
    _parse_payload(walk, marker, offset, payload)
    if end >= n:
        return n
    if marker == SOS:
        if walk.entropy_start is None:
            walk.entropy_start = end
        if not walk.entropy and data.endswith(b"\xff\xd9"):
            # Headers are all read; the stream ends with EOI. Leave the entropy-coded
            # data (and any later scan headers) to the decoder.
            walk.eoi, walk.walked_entropy = True, False
            return n
        return _skip_entropy(walk, end)
    return end


def _parse_payload(walk: _Walk, marker: int, offset: int, p: bytes) -> None:
    if marker in SOF_MARKERS:
        _parse_sof(walk, marker, offset, p)
    elif marker == SOS:
        _parse_sos(walk, offset, p)
    elif marker == DQT:
        _parse_dqt(walk, offset, p)
    elif marker == DHT:
        _parse_dht(walk, offset, p)
    elif marker == DRI:
        _parse_dri(walk, offset, p)
    elif 0xE0 <= marker <= 0xEF:
        _parse_app(walk, marker, offset, p)
    elif marker == COM:
        walk.comments += 1
    elif marker in UNSUPPORTED_SEGMENTS:
        walk.problem(f"unsupported marker FF{marker:02X} at offset {offset}")
    # DAC and DNL carry nothing this inspector reports.


def _resync(walk: _Walk, pos: int, reason: str, *args: object) -> int:
    """Record ``reason % args`` and skip garbage to the next marker, as libjpeg's next_marker does."""
    walk.problem(reason, *args)
    found = walk.next_marker(pos)
    return len(walk.data) if found is None else found


def _skip_fill(data: bytes, pos: int) -> int | None:
    """Offset of the marker code byte after the 0xFF at ``pos`` and any fill bytes."""
    if pos + 1 < len(data) and data[pos + 1] != 0xFF:
        return pos + 1  # the usual case, without a regex call
    found = _NOT_FILL.search(data, pos)
    return None if found is None else found.start()


def _skip_entropy(walk: _Walk, pos: int) -> int:
    """Offset of the marker that ends the entropy-coded data starting at ``pos``."""
    found = walk.next_marker(pos)
    if found is None:
        walk.problem("entropy-coded data runs to the end without a marker")
        return len(walk.data)
    return found


def _be16(p: bytes, i: int) -> int | None:
    return (p[i] << 8) | p[i + 1] if i + 2 <= len(p) else None


def _parse_sof(walk: _Walk, marker: int, offset: int, p: bytes) -> None:
    if walk.sof is not None:
        walk.problem(f"second frame header SOF FF{marker:02X} at offset {offset} (only the first counts)")
        return
    walk.sof = marker
    if len(p) < 6:
        walk.problem(f"SOF at offset {offset} is {len(p)} bytes long, too short for its fixed fields")
    walk.precision = p[0] if len(p) >= 1 else None
    walk.height = _be16(p, 1)
    walk.width = _be16(p, 3)
    if len(p) < 6:
        return
    declared, room = p[5], (len(p) - 6) // 3
    if declared > room:
        walk.problem(f"SOF declares {declared} components but its length holds {room}")
    elif len(p) != 6 + 3 * declared:
        walk.problem(f"SOF declares {declared} components but is {len(p) - 6 - 3 * declared} bytes longer")
    walk.components = [
        Component(id=p[6 + 3 * k], h=p[7 + 3 * k] >> 4, v=p[7 + 3 * k] & 0x0F, tq=p[8 + 3 * k])
        for k in range(min(declared, room))
    ]
    _check_frame(walk, marker, declared)


def _check_frame(walk: _Walk, marker: int, declared: int) -> None:
    if declared == 0:
        walk.problem("SOF declares 0 components")
    if walk.height == 0:
        walk.problem("SOF declares height 0 (a DNL-defined height; libjpeg does not support it)")
    if walk.width == 0:
        walk.problem("SOF declares width 0")
    _check_precision(walk, marker)
    ids = [c.id for c in walk.components]
    if len(set(ids)) != len(ids):
        walk.problem(f"SOF repeats a component id: {ids}")
    for c in walk.components:
        if not (1 <= c.h <= 4 and 1 <= c.v <= 4):
            walk.problem(f"component {c.id} has sampling factors {c.h}x{c.v} outside 1-4")
        if c.tq > 3:
            walk.problem(f"component {c.id} selects quantization table {c.tq} (> 3)")


def _check_precision(walk: _Walk, marker: int) -> None:
    # T.81 Table B.2: baseline is 8-bit only, other DCT processes 8 or 12, lossless 2-16.
    p = walk.precision
    if p is None:
        return
    if marker == 0xC0:
        allowed: range | tuple[int, ...] = (8,)
    elif marker in LOSSLESS_SOF:
        allowed = range(2, 17)
    else:
        allowed = (8, 12)
    if p not in allowed:
        walk.problem(f"SOF FF{marker:02X} declares sample precision {p}")


def _parse_sos(walk: _Walk, offset: int, p: bytes) -> None:
    if walk.sof is None:
        walk.problem(f"SOS at offset {offset} before any frame header")
    if not p:
        walk.problem(f"SOS at offset {offset} is empty")
        walk.scans.append(())
        walk.scan_parameters.append((0, 0, 0, 0))
        return
    declared, room = p[0], max(0, (len(p) - 4) // 2)
    if not 1 <= declared <= 4:
        walk.problem(f"SOS at offset {offset} declares {declared} components (allowed 1-4)")
    if declared > room:
        walk.problem(f"SOS declares {declared} components but its length holds {room}")
    elif len(p) != 4 + 2 * declared:
        walk.problem(f"SOS at offset {offset} has {len(p) - 4 - 2 * declared} unexpected extra bytes")
    ids = tuple(p[1 + 2 * k] for k in range(min(declared, room)))
    walk.scans.append(ids)
    band = p[1 + 2 * len(ids) : 4 + 2 * len(ids)].ljust(3, b"\x00")
    walk.scan_parameters.append((band[0], band[1], band[2] >> 4, band[2] & 0x0F))
    _check_scan_ids(walk, ids)


def _check_scan_ids(walk: _Walk, ids: tuple[int, ...]) -> None:
    if len(set(ids)) != len(ids):
        walk.problem(f"scan repeats a component: {list(ids)}")
    if walk.sof is None:
        return
    frame_ids = {c.id for c in walk.components}
    for cid in ids:
        if cid not in frame_ids:
            walk.problem(f"scan references component {cid} not in the frame")


def _parse_dqt(walk: _Walk, offset: int, p: bytes) -> None:
    j = 0
    while j < len(p):
        pq, tq = p[j] >> 4, p[j] & 0x0F
        if pq > 1:
            walk.problem(f"DQT at offset {offset} defines a table with precision Pq={pq}")
            return
        size = 1 + 64 * (pq + 1)
        if j + size > len(p):
            walk.problem(f"DQT at offset {offset}: table {tq} is cut off")
            return
        if tq > 3:
            walk.problem(f"DQT at offset {offset} defines table {tq} (> 3)")
        walk.dqt_precisions.append(pq)
        j += size


def _parse_dht(walk: _Walk, offset: int, p: bytes) -> None:
    j = 0
    while j < len(p):
        tc, th = p[j] >> 4, p[j] & 0x0F
        if j + 17 > len(p):
            walk.problem(f"DHT at offset {offset}: table ({tc}, {th}) is cut off in its code counts")
            return
        symbols = sum(p[j + 1 : j + 17])
        if j + 17 + symbols > len(p):
            walk.problem(f"DHT at offset {offset}: table ({tc}, {th}) is cut off in its symbols")
            return
        if tc > 1 or th > 3:
            walk.problem(f"DHT at offset {offset} defines table class {tc} id {th} (allowed 0-1, 0-3)")
        if symbols > 256:
            walk.problem(f"DHT at offset {offset}: table ({tc}, {th}) has {symbols} symbols (> 256)")
        walk.huffman_tables.append((tc, th))
        j += 17 + symbols


def _parse_dri(walk: _Walk, offset: int, p: bytes) -> None:
    if len(p) != 2:
        walk.problem(f"DRI at offset {offset} has a {len(p)}-byte payload instead of 2")
    value = _be16(p, 0)
    if value is not None:
        walk.restart_interval = value


def _parse_app(walk: _Walk, marker: int, offset: int, p: bytes) -> None:
    walk.app_segments.append(marker)
    if marker == APP0 and p[:5] == b"JFIF\x00":
        if len(p) >= JFIF_MIN_PAYLOAD:
            walk.jfif = True
        else:
            walk.problem(f"JFIF APP0 at offset {offset} is {len(p)} bytes, too short (libjpeg ignores it)")
    elif marker == APP14 and p[:5] == b"Adobe":
        if len(p) >= ADOBE_MIN_PAYLOAD:
            # libjpeg keeps the last Adobe segment's transform, so do the same.
            walk.adobe_transform = p[11]
        else:
            walk.problem(f"Adobe APP14 at offset {offset} is {len(p)} bytes, too short (libjpeg ignores it)")


def _check_completeness(walk: _Walk) -> None:
    """Problems that only show once the whole stream has been walked."""
    if walk.sof is None:
        walk.problem("no frame header (SOF)")
    if not walk.scans:
        walk.problem("no scan (SOS)")
        return
    if not walk.walked_entropy:
        return  # later scans were not read
    scanned = {cid for scan in walk.scans for cid in scan}
    for c in walk.components:
        if c.id not in scanned:
            walk.problem(f"component {c.id} appears in no scan")
