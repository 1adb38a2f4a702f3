"""The interchange format of T.81 Annex B, read strictly: every marker, segment and header field.

:func:`read` walks a stream from SOI to EOI and returns what it declares (:class:`Stream`)
with every offence against T.81's syntax (:class:`Offence`: byte offset, clause, words).
It never raises on any bytes. Offences against T.81 itself cite JPEG-FMT-01 ("a standard
JFIF/JPEG bitstream ... as defined by [ITU-T81]"); a stream that is valid T.81 but not of
the baseline process (SOF1-SOF15, 12-bit samples, 16-bit tables, Huffman table ids 2-3)
cites JPEG-GEN-01 ("a baseline (sequential DCT, Huffman-coded) JPEG image").

The entropy-coded data is located here (its segments between restart markers) and decoded
by :mod:`.entropy`, which adds the offences only decoding shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

FMT, GEN = "JPEG-FMT-01", "JPEG-GEN-01"
SOI, EOI, SOS, DQT, DHT, DAC, DRI, DNL, COM = 0xD8, 0xD9, 0xDA, 0xDB, 0xC4, 0xCC, 0xDD, 0xDC, 0xFE
APP0, APP14 = 0xE0, 0xEE
RST = range(0xD0, 0xD8)
SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {DHT, 0xC8, DAC}
#: Frames whose scans this package decodes: baseline and extended sequential, Huffman-coded.
SEQUENTIAL_HUFFMAN = frozenset({0xC0, 0xC1})
#: A stream with more offences than this is garbage: listing more tells a reader nothing.
MAX_OFFENCES = 50

#: Zigzag position k -> natural (row-major) index of the 8x8 block (T.81 Figure A.6).
ZIGZAG = np.array([
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21,
    28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61,
    54, 47, 55, 62, 63,
], dtype=np.intp)

# A marker inside entropy-coded data: a run of 0xFF (the last one the marker's, the others fill,
# B.1.1.2) and a byte other than 0xFF. A class after the run keeps the search linear.
_FF_RUN = re.compile(rb"\xff+([\x00-\xfe])")


@dataclass(frozen=True)
class Offence:
    """One departure from T.81: where, which clause, what; and the rule of the spec it breaks."""

    offset: int
    clause: str
    text: str
    requirement: str = FMT
    #: "process" for the frame's process, sample precision and table precision: what the spec's own rules on the
    #: frame (JPEG-GEN-01, JPEG-ENC-04) judge already, so a check that asks those first leaves these out.
    about: str = ""

    def __str__(self) -> str:
        return f"at byte {self.offset}: {self.text} (T.81 {self.clause})"


@dataclass(frozen=True)
class FrameComponent:
    id: int
    h: int
    v: int
    tq: int


@dataclass(frozen=True)
class Frame:
    marker: int
    offset: int
    precision: int
    height: int
    width: int
    components: tuple[FrameComponent, ...]

    @property
    def h_max(self) -> int:
        return max(c.h for c in self.components)

    @property
    def v_max(self) -> int:
        return max(c.v for c in self.components)

    @property
    def mcus(self) -> tuple[int, int]:
        """(rows, columns) of MCUs of an interleaved scan (A.2.3)."""
        return -(-self.height // (8 * self.v_max)), -(-self.width // (8 * self.h_max))

    def component_size(self, index: int) -> tuple[int, int]:
        """(height, width) in samples of a component (A.1.1)."""
        c = self.components[index]
        return -(-self.height * c.v // self.v_max), -(-self.width * c.h // self.h_max)

    def blocks(self, index: int) -> tuple[int, int]:
        """(rows, columns) of the component's blocks that hold samples: a non-interleaved scan codes these (A.2.2)."""
        height, width = self.component_size(index)
        return -(-height // 8), -(-width // 8)


@dataclass(frozen=True)
class HuffmanTable:
    """A table as DHT defines it: code counts by length (1-16) and symbols in code order."""

    counts: tuple[int, ...]
    symbols: bytes


@dataclass
class Scan:
    offset: int
    #: Indices into the frame's components, in the scan's order.
    components: tuple[int, ...]
    dc: tuple[int, ...]
    ac: tuple[int, ...]
    ss: int
    se: int
    ah: int
    al: int
    restart_interval: int
    #: The tables in effect when the scan starts (B.2.4: a later definition replaces an earlier one).
    quantization: dict[int, np.ndarray]
    huffman: dict[tuple[int, int], HuffmanTable]
    #: (start, end) of each entropy-coded segment: the data between the SOS segment, the restart
    #: markers and the marker that ends the scan, stuffing and trailing fill bytes included.
    segments: list[tuple[int, int]] = field(default_factory=list)

    @property
    def interleaved(self) -> bool:
        return len(self.components) > 1


@dataclass
class Stream:
    """What a stream declares, and every offence against T.81 found while reading it."""

    length: int
    frame: Frame | None = None
    scans: list[Scan] = field(default_factory=list)
    jfif: bool = False
    adobe_transform: int | None = None
    #: Offset of the APP14 Adobe segment that set :attr:`adobe_transform`.
    adobe_offset: int | None = None
    eoi: int | None = None
    offences: list[Offence] = field(default_factory=list)
    #: Offences found but not listed (beyond MAX_OFFENCES).
    unlisted: int = 0

    def offend(self, offset: int, clause: str, text: str, requirement: str = FMT, about: str = "") -> None:
        if len(self.offences) < MAX_OFFENCES:
            self.offences.append(Offence(offset, clause, text, requirement, about))
        else:
            self.unlisted += 1

    @property
    def stored_color_space(self) -> str | None:
        """The colour space the Zarr spec's rule reads: APP14, when present, decides (JPEG-DEC-01)."""
        if self.frame is None:
            return None
        n = len(self.frame.components)
        if n == 1:
            return "grayscale"
        if n != 3:
            return None
        if self.adobe_transform is not None:
            return {0: "rgb", 1: "ycbcr"}.get(self.adobe_transform)
        if self.jfif:
            return "ycbcr"
        return "rgb" if tuple(c.id for c in self.frame.components) == (82, 71, 66) else "ycbcr"


@dataclass
class _State:
    data: bytes
    stream: Stream
    quantization: dict[int, np.ndarray] = field(default_factory=dict)
    huffman: dict[tuple[int, int], HuffmanTable] = field(default_factory=dict)
    restart_interval: int = 0
    coded: set[int] = field(default_factory=set)


def read(data: bytes | bytearray | memoryview) -> Stream:
    """Read ``data`` as a T.81 interchange-format stream; every offence is in :attr:`Stream.offences`."""
    data = bytes(data)
    state = _State(data, Stream(len(data)))
    stream = state.stream
    if data[:2] != b"\xff\xd8":
        stream.offend(0, "B.2.1", f"the stream starts with {data[:2].hex(' ') or 'nothing'}, not the SOI marker (FF D8)")
        return stream
    pos = 2
    while pos < len(data) and stream.eoi is None:
        start = pos
        pos = _skip_fill(data, pos)
        if pos >= len(data):
            break
        if data[pos] != 0xFF or pos + 1 >= len(data):
            found = _FF_RUN.search(data, pos)
            stream.offend(start, "B.1.1.2", f"{(found.start() if found else len(data)) - start} byte(s) between marker "
                          "segments that are neither a marker nor fill bytes (X'FF')")
            if found is None:
                break
            pos = found.start()
            continue
        marker = data[pos + 1]
        pos = _marker(state, marker, pos, pos + 2)
    _finish(state)
    return stream


def _skip_fill(data: bytes, pos: int) -> int:
    """The offset of the last 0xFF of a run of fill bytes before a marker (B.1.1.2), or ``pos``."""
    while pos + 1 < len(data) and data[pos] == 0xFF and data[pos + 1] == 0xFF:
        pos += 1
    return pos


def _marker(state: _State, marker: int, offset: int, pos: int) -> int:
    """Handle the marker at ``offset``; returns where the next marker may start."""
    stream, data = state.stream, state.data
    if marker == EOI:
        if not stream.scans:
            stream.offend(offset, "B.2.1", "EOI before any scan: the stream holds no image")
        stream.eoi = offset
        return pos
    if marker in RST or marker == 0x01 or marker == 0x00:
        what = "a restart marker outside entropy-coded data" if marker in RST else f"the marker FF {marker:02X}"
        stream.offend(offset, "B.1.1.3" if marker in RST else "B.1.1.3, Table B.1", f"{what} between marker segments")
        return pos
    if marker == SOI:
        stream.offend(offset, "B.2.1", "a second SOI marker inside the stream")
        return pos
    if pos + 2 > len(data):
        stream.offend(offset, "B.1.1.4", f"marker FF {marker:02X} without its segment length: the stream ends")
        return len(data)
    length = int.from_bytes(data[pos:pos + 2], "big")
    end = pos + length
    if length < 2 or end > len(data):
        stream.offend(offset, "B.1.1.4", f"marker FF {marker:02X} declares a segment of {length} bytes; "
                      f"{len(data) - pos} remain in the stream" if length >= 2 else
                      f"marker FF {marker:02X} declares a segment length of {length} (at least 2)")
        return len(data)
    payload = data[pos + 2:end]
    if marker in SOF_MARKERS:
        _frame(state, marker, offset, payload)
    elif marker == DQT:
        _dqt(state, offset, payload)
    elif marker == DHT:
        _dht(state, offset, payload)
    elif marker == DRI:
        if length != 4:
            stream.offend(offset, "B.2.4.4", f"DRI segment of length {length} (it is 4)")
        else:
            state.restart_interval = int.from_bytes(payload, "big")
    elif marker == SOS:
        return _scan(state, offset, payload, end)
    elif marker == DNL:
        stream.offend(offset, "B.2.5", "a DNL segment: the frame header's height must be the image's (JPEG-DIM-01), "
                      "and a DNL stands only after the first scan of a frame of height 0")
    elif 0xE0 <= marker <= 0xEF:
        _app(state, marker, offset, payload)
    elif marker == DAC:
        if stream.frame is not None and stream.frame.marker in SEQUENTIAL_HUFFMAN:
            stream.offend(offset, "B.2.4.3", "arithmetic-coding conditioning (DAC) in a Huffman-coded frame")
    elif marker != COM:
        stream.offend(offset, "B.1.1.3, Table B.1", f"marker FF {marker:02X}, reserved or not of a sequential or "
                      "progressive frame")
    return end


def _frame(state: _State, marker: int, offset: int, p: bytes) -> None:
    stream = state.stream
    if stream.frame is not None:
        stream.offend(offset, "B.2.1", "a second frame header: a non-hierarchical stream has one frame")
        return
    if stream.scans:
        stream.offend(offset, "B.2.1", "a frame header after a scan")
    if marker != 0xC0:
        stream.offend(offset, "B.2.2, Table B.2", f"frame marker SOF{marker - 0xC0} (FF {marker:02X}): the baseline "
                      "process is SOF0", GEN, "process")
    if len(p) < 6:
        stream.offend(offset, "B.2.2", f"frame header of {len(p) + 2} bytes, too short for its fields")
        return
    precision, height, width, count = p[0], int.from_bytes(p[1:3], "big"), int.from_bytes(p[3:5], "big"), p[5]
    if len(p) != 6 + 3 * count:
        stream.offend(offset, "B.2.2", f"frame header length {len(p) + 2} for {count} components (it is 8 + 3 x Nf = "
                      f"{8 + 3 * count})")
        if len(p) < 6 + 3 * count:
            return
    if precision != 8:
        stream.offend(offset + 4, "B.2.2, Table B.2", f"sample precision P = {precision}: baseline is 8-bit", GEN, "process")
    if height == 0:
        stream.offend(offset + 5, "B.2.2, B.2.5", "frame height Y = 0: the height is left to a DNL segment, and the "
                      "frame header must record the chunk's height (JPEG-DIM-01)")
    if width == 0:
        stream.offend(offset + 7, "B.2.2, Table B.2", "frame width X = 0 (it is 1-65535)")
    if count == 0:
        stream.offend(offset + 9, "B.2.2, Table B.2", "a frame of no components")
    components: list[FrameComponent] = []
    for i in range(count):
        cid, hv, tq = p[6 + 3 * i], p[7 + 3 * i], p[8 + 3 * i]
        at = offset + 10 + 3 * i
        h, v = hv >> 4, hv & 0x0F
        if not (1 <= h <= 4 and 1 <= v <= 4):
            stream.offend(at + 1, "B.2.2, Table B.2", f"component {cid}: sampling factors H = {h}, V = {v} (each is 1-4)")
        if tq > 3:
            stream.offend(at + 2, "B.2.2, Table B.2", f"component {cid}: quantization table {tq} (ids are 0-3)")
        if any(c.id == cid for c in components):
            stream.offend(at, "B.2.2", f"component id {cid} appears twice in the frame header")
        components.append(FrameComponent(cid, max(h, 1), max(v, 1), tq))
    stream.frame = Frame(marker, offset, precision, height, width, tuple(components))


def _dqt(state: _State, offset: int, p: bytes) -> None:
    stream, j = state.stream, 0
    if not p:
        stream.offend(offset, "B.2.4.1", "a DQT segment that defines no table")
    while j < len(p):
        pq, tq = p[j] >> 4, p[j] & 0x0F
        size = 128 if pq == 1 else 64
        at = offset + 4 + j
        if pq > 1:
            stream.offend(at, "B.2.4.1, Table B.4", f"quantization table precision Pq = {pq} (0 or 1)")
            return
        if j + 1 + size > len(p):
            stream.offend(at, "B.2.4.1", f"quantization table {tq} runs past the end of its DQT segment")
            return
        if tq > 3:
            stream.offend(at, "B.2.4.1, Table B.4", f"quantization table id Tq = {tq} (ids are 0-3)")
        if pq == 1:
            stream.offend(at, "B.2.4.1", f"quantization table {tq} has 16-bit values: 8-bit samples take 8-bit tables "
                          "(Pq = 0), as the baseline process does", GEN, "process")
            values = np.frombuffer(p[j + 1:j + 129], dtype=">u2").astype(np.int32)
        else:
            values = np.frombuffer(p[j + 1:j + 65], dtype=np.uint8).astype(np.int32)
        zero = np.flatnonzero(values == 0)
        if zero.size:
            stream.offend(at + 1 + int(zero[0]) * (pq + 1), "B.2.4.1, Table B.4",
                          f"quantization table {tq} holds {zero.size} value(s) 0 (each is 1-{255 if pq == 0 else 65535})")
        natural = np.empty(64, np.int32)
        natural[ZIGZAG] = values  # the table's values come in zigzag order (B.2.4.1)
        state.quantization[tq & 3] = natural.reshape(8, 8)
        j += 1 + size


def _dht(state: _State, offset: int, p: bytes) -> None:
    stream, j = state.stream, 0
    if not p:
        stream.offend(offset, "B.2.4.2", "a DHT segment that defines no table")
    while j < len(p):
        tc, th = p[j] >> 4, p[j] & 0x0F
        at = offset + 4 + j
        if j + 17 > len(p):
            stream.offend(at, "B.2.4.2", f"Huffman table ({tc}, {th}) is cut off in its code counts")
            return
        counts = tuple(p[j + 1:j + 17])
        total = sum(counts)
        if j + 17 + total > len(p):
            stream.offend(at, "B.2.4.2", f"Huffman table ({tc}, {th}) declares {total} symbols; its DHT segment holds "
                          f"{len(p) - j - 17}")
            return
        if tc > 1:
            stream.offend(at, "B.2.4.2, Table B.5", f"Huffman table class Tc = {tc} (0 for DC, 1 for AC)")
        elif th > 3:
            stream.offend(at, "B.2.4.2, Table B.5", f"Huffman table id Th = {th} (ids are 0-3)")
        else:
            if th > 1:
                stream.offend(at, "B.2.4.2, Table B.5", f"Huffman table {'AC' if tc else 'DC'} {th}: the baseline "
                              "process has tables 0 and 1 of each class", GEN)
            problem = code_problem(counts)
            if problem:
                stream.offend(at, "C.2, Figure C.2", f"Huffman table {'AC' if tc else 'DC'} {th}: {problem}")
            state.huffman[(tc, th)] = HuffmanTable(counts, p[j + 17:j + 17 + total])
        j += 17 + total


def listed(offences: list[Offence], shown: int = 3) -> str:
    """The first offences in words, and how many more there are."""
    if not offences:
        return "no offence found"
    more = f"; and {len(offences) - shown} more" if len(offences) > shown else ""
    return "; ".join(str(o) for o in offences[:shown]) + more


def code_problem(counts: tuple[int, ...]) -> str | None:
    """Why no code of T.81's assignment (Annex C) exists for these code counts, or None.

    Codes are assigned in order of length; a length whose codes run out of its bits has no
    valid code, and the all-1-bits code is kept out because pad bits are 1-bits (F.1.2.3):
    the same rule libjpeg applies when it builds its decoding tables.
    """
    code = 0
    for length, count in enumerate(counts, start=1):
        code += count
        if code >= 1 << length and count:
            return f"{count} code(s) of length {length} do not fit in {length} bits after the shorter ones"
        code <<= 1
    return None


def _app(state: _State, marker: int, offset: int, p: bytes) -> None:
    stream = state.stream
    # libjpeg trusts these markers only at or above these lengths (jdmarker.c); so does the spec's reading.
    if marker == APP0 and p[:5] == b"JFIF\x00" and len(p) >= 14:
        stream.jfif = True
    elif marker == APP14 and p[:5] == b"Adobe" and len(p) >= 12:
        stream.adobe_transform, stream.adobe_offset = p[11], offset


def _scan(state: _State, offset: int, p: bytes, end: int) -> int:
    """Read the scan header at ``offset`` and locate its entropy-coded segments; returns the offset after them."""
    stream = state.stream
    frame = stream.frame
    if frame is None:
        stream.offend(offset, "B.2.1", "a scan before the frame header")
    if len(p) < 1 or len(p) != 4 + 2 * p[0]:
        stream.offend(offset, "B.2.3", f"scan header length {len(p) + 2} (it is 6 + 2 x Ns)")
        return _entropy_end(state, end, None)
    count = p[0]
    if not 1 <= count <= 4:
        stream.offend(offset + 4, "B.2.3, Table B.3", f"a scan of {count} components (1-4)")
    ids = [p[1 + 2 * i] for i in range(count)]
    tables = [p[2 + 2 * i] for i in range(count)]
    ss, se, ah, al = p[1 + 2 * count], p[2 + 2 * count], p[3 + 2 * count] >> 4, p[3 + 2 * count] & 0x0F
    if frame is None:
        return _entropy_end(state, end, None)
    index = {c.id: i for i, c in enumerate(frame.components)}
    chosen: list[int] = []
    for cid in ids:
        if cid not in index:
            stream.offend(offset + 5, "B.2.3", f"the scan names component {cid}, which the frame does not have")
        elif index[cid] in chosen:
            stream.offend(offset + 5, "B.2.3", f"the scan names component {cid} twice")
        else:
            chosen.append(index[cid])
    if chosen != sorted(chosen):
        stream.offend(offset + 5, "B.2.3", f"the scan's components {ids} are not in the frame header's order")
    sequential = frame.marker not in (0xC2, 0xC6, 0xCA, 0xCE)
    if sequential and (ss, se, ah, al) != (0, 63, 0, 0):
        stream.offend(offset + 5 + 2 * count, "B.2.3, Table B.3", f"Ss = {ss}, Se = {se}, Ah = {ah}, Al = {al} in a "
                      "sequential scan (Ss = 0, Se = 63, Ah = Al = 0)")
    for i, k in enumerate(chosen):
        c = frame.components[k]
        if sequential and k in state.coded:
            stream.offend(offset, "B.2.3", f"component {c.id} coded in a second scan: a sequential frame codes each "
                          "component in exactly one scan")
        td, ta = tables[i] >> 4, tables[i] & 0x0F
        if frame.marker == 0xC0 and (td > 1 or ta > 1):
            stream.offend(offset + 6 + 2 * i, "B.2.3, Table B.3", f"component {c.id} uses Huffman tables DC {td} / AC "
                          f"{ta}: the baseline process has tables 0 and 1", GEN)
        if c.tq not in state.quantization:
            stream.offend(offset, "B.2.4.1", f"component {c.id} uses quantization table {c.tq}, not defined before its scan")
        if frame.marker in SEQUENTIAL_HUFFMAN:
            for cls, tid in ((0, td), (1, ta)):
                if (cls, tid) not in state.huffman:
                    stream.offend(offset, "B.2.4.2", f"component {c.id} uses Huffman table {'AC' if cls else 'DC'} "
                                  f"{tid}, not defined before its scan")
    blocks = sum(frame.components[k].h * frame.components[k].v for k in chosen)
    if len(chosen) > 1 and blocks > 10:
        stream.offend(offset, "B.2.3", f"an interleaved MCU of {blocks} blocks (at most 10)")
    state.coded.update(chosen)
    if not chosen:
        return _entropy_end(state, end, None)
    scan = Scan(offset, tuple(chosen), tuple(t >> 4 for t in tables[:len(chosen)]), tuple(t & 0x0F for t in tables[:len(chosen)]),
                ss, se, ah, al, state.restart_interval, dict(state.quantization), dict(state.huffman))
    stream.scans.append(scan)
    return _entropy_end(state, end, scan)


def _entropy_end(state: _State, start: int, scan: Scan | None) -> int:
    """Split the entropy-coded data from ``start`` at its restart markers; returns the offset of the marker ending it.

    Checks the restart markers' sequence (RST0-RST7, modulo 8) and count against the frame's
    MCUs (B.2.1, B.2.4.4): an interval is Ri MCUs, and none follows the last MCU.
    """
    stream, data = state.stream, state.data
    pos = seg_start = start
    markers, segments = 0, []
    while True:
        found = _FF_RUN.search(data, pos)
        if found is None:
            segments.append((seg_start, len(data)))
            end = len(data)
            break
        byte = found.group(1)[0]
        if byte == 0x00:  # a stuffed X'FF' (B.1.1.5); fill bytes may precede a marker only
            if found.end() - found.start() > 2:
                stream.offend(found.start(), "B.1.1.5", "X'FF' bytes in entropy-coded data not followed by X'00'")
            pos = found.end()
            continue
        segments.append((seg_start, found.start()))
        if 0xD0 <= byte <= 0xD7:
            if byte - 0xD0 != markers % 8:
                stream.offend(found.end() - 2, "B.2.1, E.1.4", f"RST{byte - 0xD0} where RST{markers % 8} is next: "
                              "restart markers count 0-7 in sequence")
            markers += 1
            pos = seg_start = found.end()
            continue
        end = found.end() - 2
        break
    if scan is not None:
        scan.segments = segments
        _check_restarts(state, scan, markers)
    return end


def _check_restarts(state: _State, scan: Scan, markers: int) -> None:
    stream, frame = state.stream, state.stream.frame
    assert frame is not None
    units = _units(frame, scan)
    interval = scan.restart_interval
    if interval == 0:
        if markers:
            stream.offend(scan.offset, "B.2.4.4, E.1.4", f"{markers} restart marker(s) in a scan without a restart "
                          "interval (no DRI, or Ri = 0)")
        return
    intervals = -(-units // interval)
    if markers != intervals - 1:
        stream.offend(scan.offset, "B.2.4.4, E.1.4", f"{markers} restart marker(s) where {units} MCUs in intervals of "
                      f"Ri = {interval} need {intervals - 1}"
                      + (": a restart marker follows the last MCU" if markers == intervals else ""))


def _units(frame: Frame, scan: Scan) -> int:
    """MCUs of the scan: of the frame's MCU grid when interleaved, else the component's blocks (A.2)."""
    if scan.interleaved:
        rows, cols = frame.mcus
    else:
        rows, cols = frame.blocks(scan.components[0])
    return rows * cols


def _finish(state: _State) -> None:
    stream = state.stream
    if stream.eoi is None:
        stream.offend(len(state.data), "B.2.1", "no EOI marker: the stream is cut or does not end")
    elif stream.eoi + 2 < len(state.data):
        stream.offend(stream.eoi + 2, "B.2.1", f"{len(state.data) - stream.eoi - 2} byte(s) after the EOI marker")
    if stream.frame is None:
        if stream.eoi is not None:
            stream.offend(0, "B.2.1", "no frame header")
        return
    missing = [c.id for i, c in enumerate(stream.frame.components) if i not in state.coded]
    if missing and stream.scans:
        stream.offend(stream.eoi if stream.eoi is not None else len(state.data), "B.2.3",
                      f"component(s) {missing} of the frame are coded in no scan")


__all__ = ["FMT", "GEN", "MAX_OFFENCES", "SEQUENTIAL_HUFFMAN", "ZIGZAG", "Frame", "FrameComponent", "HuffmanTable",
           "Offence", "Scan", "Stream", "code_problem", "listed", "read"]
