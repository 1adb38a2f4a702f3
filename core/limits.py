"""What a stream may cost a decoder, judged from its marker structure before any pixel is decoded.

A decoder's work and memory follow from the frame (its blocks), its scans (each one a pass over
the blocks of its components) and its marker segments, while the stream's length can be tiny:
a few hundred bytes can declare a 16000x16000 frame, and a scan of end-of-band runs costs
12 bytes whatever the frame's size. libjpeg allocates the frame before it notices (and only
warns) that the data ran out, and decodes a repeated scan again without a word (issue 13,
tools/bombs.py), so the bounds are checked here, from T.81, on the bytes themselves:

* the entropy floor (JPEG-X-07, JPEG-X-13): the fewest bytes a legal stream of this frame
  can hold; a stream shorter than that is truncated, whatever its markers say;
* the scan rules (JPEG-X-14): scans a legal stream of this frame can have, which bound the
  passes over each block to what T.81 allows;
* the limits (JPEG-X-15): scans per component and markers beyond any encoder's output.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from .markers import Component, StreamInfo

__all__ = [
    "MAX_MARKERS",
    "MAX_SCANS_PER_COMPONENT",
    "MIN_BITS_PER_BLOCK",
    "blocks",
    "entropy_floor",
    "limit_problem",
    "scan_problem",
]

#: The fewest entropy-coded bits one 8x8 block can take, by frame type (SOFn marker).
#: Sequential Huffman (SOF0, SOF1): a block codes its DC difference, then AC coefficients up to an
#: end-of-block code or the 63rd (T.81 F.1.2.1, F.1.2.2); each is a Huffman code of 1 to 16 bits
#: (T.81 C.2), so a block takes at least 2 bits, exactly what an optimized table spends on a flat one.
#: Progressive Huffman (SOF2): every component has a first DC scan (T.81 G.1.1.1.1) coding each
#: block's DC difference with a Huffman code of at least 1 bit (G.1.2.1); AC scans can cover
#: 32767 blocks with one end-of-band run (G.1.2.2), so they add nothing to the floor.
#: Arithmetic coding (SOF9, SOF10) has no floor worth stating: a decision on a well-predicted
#: bit can cost far less than a bit (T.81 D.1, probabilities down to Qe = 0x0001).
MIN_BITS_PER_BLOCK: dict[int, int] = {0xC0: 2, 0xC1: 2, 0xC2: 1}

#: Scans one component may take part in. A component's finest progression that sends no bit
#: twice, spectral selection down to single coefficients, takes 64 scans (T.81 G.1.1.1.1);
#: libjpeg's default progression uses 6 for luma and 4 for each chroma component
#: (jcparam.c, jpeg_simple_progression), a sequential frame 1. T.81's own ceiling (a first scan
#: plus up to 13 refinements for each of 64 coefficients, Table B.3: Al <= 13) is 896, and each
#: scan is a pass over all the component's blocks; 64 passes keep a decode within about 64
#: times a baseline decode of the same frame.
MAX_SCANS_PER_COMPONENT = 64

#: Markers a stream may have after SOI (marker segments and standalone markers, not the RSTn
#: inside entropy-coded data, whose number the MCUs bound: T.81 B.2.4.4). Encoders write 5-20; a
#: progressive stream adds a scan header and a table or two per scan, at most about 600 within
#: MAX_SCANS_PER_COMPONENT; metadata adds few (an ICC profile takes at most 255 APP2 segments,
#: ICC.1 Annex B.4). Segments cost work by their number, not the frame's size: Pillow parses them
#: in Python at 4-9 us each (200000 empty COM segments: 0.7-1.9 s, tools/bombs.py) and this
#: project's walk at 10-25 us, so 1024 keeps the walk of a hostile stream to about 25 ms.
MAX_MARKERS = 1024


def blocks(height: int, width: int, components: Sequence[Component]) -> tuple[int, ...]:
    """The 8x8 blocks of each frame component (T.81 A.1.1: x_i = ceil(X * H_i / H_max), same for y).

    A non-interleaved scan codes exactly these; an interleaved one adds the blocks that pad
    its MCUs, so these are the fewest any scan of the component codes.
    """
    if not components:
        return ()
    h_max, v_max = max(c.h for c in components), max(c.v for c in components)
    return tuple(
        math.ceil(math.ceil(width * c.h / h_max) / 8) * math.ceil(math.ceil(height * c.v / v_max) / 8) for c in components
    )


@lru_cache(maxsize=64)
def entropy_floor(sof: int, height: int, width: int, components: tuple[Component, ...]) -> int:
    """The fewest bytes of entropy-coded data a legal stream of this frame holds (0: no bound known).

    Cached: the chunks of an array share one frame header, so this runs once per header.
    """
    bits = MIN_BITS_PER_BLOCK.get(sof, 0)
    return math.ceil(bits * sum(blocks(height, width, components)) / 8)


def scan_problem(info: StreamInfo) -> str | None:
    """Why the scans of a fully walked stream cannot all belong to a legal stream of its frame, or None."""
    index = {c.id: k for k, c in enumerate(info.components)}
    if info.sof in (0xC2, 0xCA):
        return _progression_problem(info, index)
    first_scan: dict[int, int] = {}
    for n, ids in enumerate(info.scans, 1):
        for cid in ids:
            if cid in first_scan:
                return (
                    f"component {cid} is coded in scans {first_scan[cid]} and {n}: a sequential frame codes each "
                    "component once, all 64 coefficients in one scan (T.81 4.5, B.2.3)"
                )
            first_scan[cid] = n
    return None


def _progression_problem(info: StreamInfo, index: dict[int, int]) -> str | None:
    """The first scan that breaks T.81 G.1.1.1's progression, or None.

    ``sent[c][k]`` is the point transform Al down to which coefficient k of component c has been
    sent (-1: not yet). A first scan (Ah = 0) of a band may only send coefficients not sent yet;
    each later scan refines by one bit (Ah = the previous Al, Al = Ah - 1). Every scan that passes
    thus brings new bits, which is what bounds their number. Stops at the first offence, so it
    costs at most a few thousand steps whatever the stream.
    """
    sent = [[-1] * 64 for _ in info.components]
    for n, (ids, (ss, se, ah, al)) in enumerate(zip(info.scans, info.scan_parameters, strict=True), 1):
        where = f"scan {n} (components {list(ids)}, Ss={ss}, Se={se}, Ah={ah}, Al={al})"
        if se > 63 or ss > se or (ss == 0) != (se == 0):
            return f"{where} has an invalid spectral band: DC alone (Ss = Se = 0) or AC within 1-63 (T.81 B.2.3, G.1.1.1.1)"
        if ss > 0 and len(ids) != 1:
            return f"{where} interleaves AC coefficients of several components (T.81 G.1.1.1.1)"
        if ah > 13 or al > 13 or (ah and al != ah - 1):
            return f"{where}: a refinement scan improves the precision by one bit, Al = Ah - 1 (T.81 G.1.1.1.2, Table B.3)"
        for cid in ids:
            if cid not in index:
                continue  # a scan naming a component the frame lacks is a marker problem
            bits = sent[index[cid]]
            if ss > 0 and bits[0] < 0:
                return f"{where} sends AC coefficients of component {cid} before its first DC scan (T.81 G.1.1.1.1)"
            band = bits[ss : se + 1]
            if ah == 0 and any(b >= 0 for b in band):
                return f"{where} sends coefficients of component {cid} that an earlier scan sent (T.81 G.1.1.1.2)"
            if ah and any(b != ah for b in band):
                return f"{where} refines coefficients of component {cid} that are not known down to bit {ah} (T.81 G.1.1.1.2)"
            bits[ss : se + 1] = [al] * (se + 1 - ss)
    return None


def limit_problem(info: StreamInfo) -> str | None:
    """Which limit of JPEG-X-15 the stream exceeds, or None."""
    if info.markers > MAX_MARKERS:
        return f"the stream has more than {MAX_MARKERS} markers"
    counts = [sum(cid in ids for ids in info.scans) for cid in info.component_ids]
    worst = max(counts, default=0)
    if worst > MAX_SCANS_PER_COMPONENT:
        cid = info.component_ids[counts.index(worst)]
        return f"component {cid} takes part in {worst} scans, more than {MAX_SCANS_PER_COMPONENT}"
    return None
