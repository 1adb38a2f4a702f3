"""Streams of a flat grey image assembled by hand, with whatever scans are wanted.

No encoder writes a stream that repeats its scans, so the repeated-scan bombs are built here
from T.81's parts, and so are their legal counterparts: every DC difference 0, every block
empty, each coded with the shortest Huffman codes there are, so that a scan costs a few bytes
(progressive) or 2 bits a block (sequential) whatever the frame's size. libjpeg decodes a
repeated scan again over every block and warns about none (backends.md §6, issue 13).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .edits import segment

__all__ = ["progressive_flat", "progressive_repeats", "sequential_flat", "sequential_repeats"]

#: One quantization table (all 1): the coefficients are all 0, so its values do not matter.
DQT = segment(0xDB, b"\x00" + bytes([1] * 64))
#: DC: difference category 0 alone, code '0' (T.81 C.2 allows a 1-bit code).
DC_TABLE = segment(0xC4, bytes([0x00, 1]) + bytes(15) + bytes([0x00]))


def _ac_table(symbols: Sequence[int], length: int) -> bytes:
    """AC table 0 giving each symbol a code of ``length`` bits, in canonical order (T.81 C.2)."""
    counts = bytes(len(symbols) if n == length else 0 for n in range(1, 17))
    return segment(0xC4, bytes([0x10]) + counts + bytes(symbols))


def _sof(marker: int, height: int, width: int, components: int) -> bytes:
    body = bytes([8]) + height.to_bytes(2, "big") + width.to_bytes(2, "big") + bytes([components])
    return segment(marker, body + b"".join(bytes([cid, 0x11, 0]) for cid in range(1, components + 1)))


def _sos(cid: int, ss: int, se: int) -> bytes:
    return segment(0xDA, bytes([1, cid, 0x00, ss, se, 0x00]))


class _Bits:
    """Entropy-coded data: bits most significant first, padded with 1-bits, 0xFF stuffed (T.81 F.1.2.3)."""

    def __init__(self) -> None:
        self.value, self.count = 0, 0

    def put(self, value: int, bits: int) -> None:
        self.value, self.count = (self.value << bits) | value, self.count + bits

    def data(self) -> bytes:
        pad = -self.count % 8
        raw = ((self.value << pad) | ((1 << pad) - 1)).to_bytes((self.count + pad) // 8, "big") if self.count else b""
        return raw.replace(b"\xff", b"\xff\x00")


def _blocks(height: int, width: int) -> int:
    return math.ceil(height / 8) * math.ceil(width / 8)


def _zeros(bits: int) -> bytes:
    out = _Bits()
    out.put(0, bits)
    return out.data()


def progressive_flat(height: int, width: int, bands: Sequence[tuple[int, int]]) -> bytes:
    """A progressive grayscale stream: a first DC scan, then a first AC scan (Ah = Al = 0) of each (Ss, Se) band.

    AC codes: the end-of-band symbols EOB0-EOB14, 4 bits each; a run of r blocks is EOBn with
    n = floor(log2 r) and n more bits, at most 32767 blocks a code (T.81 G.1.2.2).
    """
    eob = _Bits()
    left = _blocks(height, width)
    while left:
        run = min(left, 32767)
        n = run.bit_length() - 1
        eob.put(n, 4)
        eob.put(run - (1 << n), n)
        left -= run
    head = b"\xff\xd8" + DQT + _sof(0xC2, height, width, 1) + DC_TABLE + _ac_table([n << 4 for n in range(15)], 4)
    scans = [_sos(1, 0, 0) + _zeros(_blocks(height, width))]
    scans += [_sos(1, ss, se) + eob.data() for ss, se in bands]
    return head + b"".join(scans) + b"\xff\xd9"


def progressive_repeats(height: int, width: int, repeats: int) -> bytes:
    """:func:`progressive_flat` with the band 1-63 sent ``1 + repeats`` times: every repeat is a first
    scan of coefficients already sent, which T.81 G.1.1.1.2 does not allow (JPEG-X-14)."""
    return progressive_flat(height, width, [(1, 63)] * (1 + repeats))


def sequential_flat(height: int, width: int, scans: Sequence[int]) -> bytes:
    """A baseline 3-component 4:4:4 stream of non-interleaved scans of the components ``scans`` names.

    DC and AC tables hold one symbol each (difference category 0; end of block) with code '0',
    so a block takes 2 bits, the fewest a sequential scan allows.
    """
    data = _zeros(2 * _blocks(height, width))
    head = b"\xff\xd8" + DQT + _sof(0xC0, height, width, 3) + DC_TABLE + _ac_table([0x00], 1)
    return head + b"".join(_sos(cid, 0, 63) + data for cid in scans) + b"\xff\xd9"


def sequential_repeats(height: int, width: int, repeats: int) -> bytes:
    """:func:`sequential_flat` of components 1, 2, 3, then component 1 ``repeats`` times more: a sequential
    frame codes each component in one scan (T.81 4.5, B.2.3), yet libjpeg decodes every repeat
    into its coefficient buffer, since the first scan did not hold all components (JPEG-X-14)."""
    return sequential_flat(height, width, [1, 2, 3] + [1] * repeats)
