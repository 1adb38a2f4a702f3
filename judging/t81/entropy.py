"""The Huffman-coded data of sequential scans (T.81 Annex F.2), decoded to quantized coefficients.

Decoding is where the rest of the syntax shows: every code must be in its table (F.2.2), a
run must stay inside its block (F.1.2.2), each restart interval must hold exactly its MCUs
(B.2.4.4, E.1.4), and what follows an interval's last MCU is at most seven pad bits, all 1
(F.1.2.3). The coefficients are what an encoder's quantizer wrote (``judging.encoder_accuracy``)
and what a decoder's reconstruction is judged against (``judging.decoder_accuracy``).

Why not a library: a decoder library returns samples, not coefficients, and the ones that
return coefficients (libjpeg's ``jpeg_read_coefficients``) accept what this module must
report (zero pad bits, data after the last MCU, a restart marker too many). The decode is
plain Python over a 16-bit lookup table per Huffman table: about a microsecond a code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .syntax import FMT, SEQUENTIAL_HUFFMAN, ZIGZAG, Frame, HuffmanTable, Offence, Scan, Stream

#: Largest DC difference category and AC coefficient size of 8-bit samples (T.81 Tables F.1, F.2).
DC_MAX_CATEGORY, AC_MAX_SIZE = 11, 10


@dataclass
class Coefficients:
    """The quantized coefficients of every frame component, with the tables that dequantize them."""

    frame: Frame
    #: Per frame component: (rows, cols, 8, 8) int32 in natural order, over the MCU-padded block grid
    #: of an interleaved scan (blocks a non-interleaved scan does not code stay 0).
    quantized: list[np.ndarray]
    #: Per frame component: the 8x8 quantization table (natural order) in effect at its scan.
    tables: list[np.ndarray]
    offences: list[Offence] = field(default_factory=list)

    def dequantized(self, index: int) -> np.ndarray:
        return self.quantized[index].astype(np.float64) * self.tables[index]


class Undecodable(ValueError):
    """The stream's scans cannot be decoded by this module (not sequential Huffman, or tables missing)."""


def decode(stream: Stream, data: bytes) -> Coefficients:
    """Decode every scan of a sequential Huffman-coded frame; offences go to :attr:`Coefficients.offences`.

    Raises :class:`Undecodable` for a frame of another process, or a scan whose tables its
    header names but the stream never defines (the syntax reading lists those).
    """
    frame = stream.frame
    if frame is None or frame.marker not in SEQUENTIAL_HUFFMAN:
        raise Undecodable("no sequential Huffman-coded frame" if frame is None else
                          f"frame SOF{frame.marker - 0xC0} is not sequential Huffman-coded")
    if frame.precision != 8:
        raise Undecodable(f"{frame.precision}-bit samples")
    rows, cols = frame.mcus
    grids = [(rows * c.v, cols * c.h) for c in frame.components]
    blocks = sum(r * c for r, c in grids)
    coded = sum(end - start for scan in stream.scans for start, end in scan.segments)
    if blocks > 4 * coded + 64:
        # Every block costs at least 2 bits (a DC code and an EOB, F.1.2): the work follows what is stored.
        raise Undecodable(f"a {frame.height}x{frame.width} frame of {blocks} blocks, whose entropy-coded data of {coded} "
                          f"bytes cannot hold them")
    out = Coefficients(frame, [np.zeros((*g, 8, 8), np.int32) for g in grids],
                       [np.ones((8, 8), np.int32) for _ in frame.components])
    for scan in stream.scans:
        for k in scan.components:
            table = scan.quantization.get(frame.components[k].tq)
            if table is None:
                raise Undecodable(f"component {frame.components[k].id}'s quantization table is not defined")
            out.tables[k] = table
        _decode_scan(data, frame, scan, out, grids)
    return out


@lru_cache(maxsize=64)
def _lookup(counts: tuple[int, ...], symbols: bytes) -> list[int]:
    """A 16-bit lookahead table: entry (symbol << 5) | code length for every 16-bit prefix of a code; 0 for none."""
    lut = [0] * 65536
    code, i = 0, 0
    for length, count in enumerate(counts, start=1):
        for _ in range(count):
            if code >= 1 << length:  # no code left at this length (syntax.code_problem says so)
                return lut
            shift = 16 - length
            entry = (symbols[i] << 5) | length
            lut[code << shift:(code + 1) << shift] = [entry] * (1 << shift)
            code, i = code + 1, i + 1
        code <<= 1
    return lut


def _block_order(frame: Frame, scan: Scan, grids: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """(scan slot, flat block index in the component's grid) of every block, in coding order (A.2)."""
    order: list[tuple[int, int]] = []
    if not scan.interleaved:
        k = scan.components[0]
        rows, cols = frame.blocks(k)
        grid_cols = grids[k][1]
        return [(0, r * grid_cols + c) for r in range(rows) for c in range(cols)]
    mcu_rows, mcu_cols = frame.mcus
    shapes = [(slot, frame.components[k].v, frame.components[k].h, grids[k][1]) for slot, k in enumerate(scan.components)]
    for mr in range(mcu_rows):
        for mc in range(mcu_cols):
            for slot, v, h, grid_cols in shapes:
                for y in range(v):
                    base = (mr * v + y) * grid_cols + mc * h
                    order.extend((slot, base + x) for x in range(h))
    return order


def _decode_scan(data: bytes, frame: Frame, scan: Scan, out: Coefficients, grids: Sequence[tuple[int, int]]) -> None:
    luts = []
    for slot, k in enumerate(scan.components):
        tables = []
        for cls, tid in ((0, scan.dc[slot]), (1, scan.ac[slot])):
            table: HuffmanTable | None = scan.huffman.get((cls, tid))
            if table is None:
                raise Undecodable(f"component {frame.components[k].id}'s Huffman table {'AC' if cls else 'DC'} {tid} "
                                  "is not defined")
            tables.append(_lookup(table.counts, table.symbols))
        luts.append(tables)
    order = _block_order(frame, scan, grids)
    per_unit = sum(frame.components[k].h * frame.components[k].v for k in scan.components) if scan.interleaved else 1
    units = len(order) // per_unit
    interval = scan.restart_interval or units
    flats = [out.quantized[k].reshape(-1) for k in scan.components]
    done = 0
    for number, (start, end) in enumerate(scan.segments):
        if done >= units:
            break  # a segment too many: the syntax reading counted the restart markers
        count = min(interval, units - done)
        segment = data[start:end].replace(b"\xff\x00", b"\xff")
        blocks = order[done * per_unit:(done + count) * per_unit]
        problem = _decode_interval(segment, blocks, luts, flats)
        where = f"entropy-coded data at bytes {start}-{end}" + (f" (restart interval {number})" if scan.restart_interval else "")
        if problem:
            out.offences.append(Offence(start, problem[0], f"{where}: {problem[1]}", FMT))
        done += count
    if done < units:
        out.offences.append(Offence(scan.segments[-1][1] if scan.segments else scan.offset, "B.2.4.4, E.1.4",
                                    f"the scan's entropy-coded data holds {done} of its {units} MCUs", FMT))


def _decode_interval(segment: bytes, blocks: Sequence[tuple[int, int]], luts: Sequence[Sequence[list[int]]],
                     flats: Sequence[np.ndarray]) -> tuple[str, str] | None:
    """Decode one restart interval's blocks into ``flats``; (clause, what) of its first offence, or None.

    The hot loop of the judge: locals only, one table lookup per code, bits kept in an int
    of at most 64 bits, refilled 32 at a time (beyond the end with 1-bits, and counted).
    """
    n = len(segment)
    buf = nbits = pos = 0
    preds = [0] * len(luts)
    positions: list[list[int]] = [[] for _ in luts]
    values: list[list[int]] = [[] for _ in luts]
    zigzag = ZIGZAG.tolist()
    problem: tuple[str, str] | None = None
    for slot, block in blocks:
        dc, ac = luts[slot]
        if nbits < 27:
            buf = ((buf & ((1 << nbits) - 1)) << 32) | int.from_bytes(segment[pos:pos + 4].ljust(4, b"\xff"), "big")
            pos, nbits = pos + 4, nbits + 32
        entry = dc[(buf >> (nbits - 16)) & 0xFFFF]
        if not entry:
            problem = ("F.2.2.3", "a code that is not in the DC Huffman table")
            break
        nbits -= entry & 31
        size = entry >> 5
        if size > DC_MAX_CATEGORY:
            problem = ("F.1.2.1, Table F.1", f"DC difference category {size} (0-11 for 8-bit samples)")
            break
        diff = 0
        if size:
            diff = (buf >> (nbits - size)) & ((1 << size) - 1)
            nbits -= size
            if diff < 1 << (size - 1):
                diff -= (1 << size) - 1
        preds[slot] += diff
        base = block * 64
        positions[slot].append(base)
        values[slot].append(preds[slot])
        k = 1
        while k < 64:
            if nbits < 26:
                buf = ((buf & ((1 << nbits) - 1)) << 32) | int.from_bytes(segment[pos:pos + 4].ljust(4, b"\xff"), "big")
                pos, nbits = pos + 4, nbits + 32
            entry = ac[(buf >> (nbits - 16)) & 0xFFFF]
            if not entry:
                problem = ("F.2.2.3", "a code that is not in the AC Huffman table")
                break
            nbits -= entry & 31
            rs = entry >> 5
            size = rs & 15
            if size:
                k += rs >> 4
                if k > 63 or size > AC_MAX_SIZE:
                    problem = ("F.1.2.2", "a run past coefficient 63" if k > 63 else
                               f"AC coefficient size {size} (1-10 for 8-bit samples)")
                    break
                value = (buf >> (nbits - size)) & ((1 << size) - 1)
                nbits -= size
                if value < 1 << (size - 1):
                    value -= (1 << size) - 1
                positions[slot].append(base + zigzag[k])
                values[slot].append(value)
                k += 1
            elif rs == 0xF0:
                k += 16
                if k > 64:
                    problem = ("F.1.2.2", "a run of zeros (ZRL) past coefficient 63")
                    break
            elif rs == 0:
                break
            else:
                problem = ("F.1.2.2, Table F.2", f"AC symbol 0x{rs:02X}: size 0 is only EOB (0x00) and ZRL (0xF0)")
                break
        if problem:
            break
    for slot, flat in enumerate(flats):
        if positions[slot]:
            flat[np.asarray(positions[slot], np.intp)] = values[slot]
    if problem:
        return problem
    used = pos * 8 - nbits
    if used > n * 8:
        return "F.1.2.3, E.1.4", f"the data ends {used - n * 8} bit(s) short of the interval's last MCU"
    left = n * 8 - used
    if left >= 8:
        return "E.1.4, F.1.2.3", f"{left // 8} byte(s) after the last MCU of the interval, where only pad bits may follow"
    if left and (segment[-1] & ((1 << left) - 1)) != (1 << left) - 1:
        return "F.1.2.3", f"pad bits {segment[-1] & ((1 << left) - 1):0{left}b} after the last MCU: pad bits are 1-bits"
    return None


__all__ = ["AC_MAX_SIZE", "DC_MAX_CATEGORY", "Coefficients", "Undecodable", "decode"]
