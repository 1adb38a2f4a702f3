"""A baseline JPEG writer in numpy, written apart from the suite's code, with a knob for every choice.

The meta-tests need encoders that make one realistic choice each, legal (zero padding, a
deadzone quantizer, optimized Huffman tables, restart markers, tables after the frame header, a
separate Cr table, APP14 after the frame header) or not (zero pad bits, a restart marker after
the last MCU, a third Huffman table, Se = 64, a level shift of 127, the BT.709 matrix, Cb and Cr
swapped, tables written in natural order, a restart interval off by one). No library makes those
choices on request, so this writer does: the DCT in float64, quantization by rounding (or a
deadzone), Huffman coding with the standard tables (taken from a stream Pillow writes) or with
optimal ones (T.81 K.2), the markers of T.81 Annex B. It shares no code with the suite under test.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, replace
from functools import cache

import numpy as np

ZIGZAG = np.array([
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21,
    28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61,
    54, 47, 55, 62, 63,
])
_K = np.arange(8)
_T = np.where(_K[:, None] == 0, 1 / np.sqrt(2), 1.0) / 2 * np.cos((2 * _K[None, :] + 1) * _K[:, None] * np.pi / 16)
LUMA = np.array([16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17,
                 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78,
                 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99]).reshape(8, 8)
CHROMA = np.full((8, 8), 99)
CHROMA[:4, :4] = [[17, 18, 24, 47], [18, 21, 26, 66], [24, 26, 56, 99], [47, 66, 99, 99]]
MATRICES = {"bt601": (0.299, 0.114), "bt709": (0.2126, 0.0722), "bt2020": (0.2627, 0.0593)}


@dataclass(frozen=True)
class Options:
    """Every choice of the writer; the defaults write what libjpeg would (box chroma, edge padding, rounding)."""

    level_shift: int = 128
    matrix: str = "bt601"
    swap_chroma: bool = False
    #: box | point | triangle (centred)
    downsample: str = "box"
    #: edge | zero | mirror: the samples beyond the image in partial MCUs
    padding: str = "edge"
    #: round | deadzone (round toward zero when the fraction is under deadzone)
    quantizer: str = "round"
    deadzone: float = 0.8
    #: zigzag | natural: the order of the DQT's values
    table_order: str = "zigzag"
    restart: int = 0
    #: Restart markers every restart + this many MCUs, while DRI says ``restart``.
    restart_slip: int = 0
    rst_after_last: bool = False
    pad_bit: int = 1
    #: The Huffman table ids of chroma (luma uses 0).
    chroma_huffman_id: int = 1
    se: int = 63
    optimized: bool = False
    jfif: bool = True
    adobe: int | None = None
    #: Where APP14 goes: "start" (after SOI) or "after-frame" (between SOF and SOS).
    adobe_place: str = "start"
    tables_after_frame: bool = False
    separate_cr_table: bool = False
    #: Samples at 255 stored as this much more (mozjpeg's overshoot deringing: a decoder clamps them back).
    overshoot: int = 0
    #: The samples raised so: those at this value or above (255: at the end of the range alone, as mozjpeg; lower
    #: raises samples a decoder does not clamp back, which changes the image).
    overshoot_from: int = 255
    #: Each raised sample raised by its own amount up to ``overshoot`` (mozjpeg's follows a curve along each run of
    #: samples at 255: some are raised by little), not all by the same.
    overshoot_varies: bool = False
    #: RGB -> YCbCr modulo 256 instead of clamped (a converter that wraps pure blue's Cb of 255.5 to 0).
    wrap: bool = False


def _segment(marker: int, body: bytes) -> bytes:
    return bytes((0xFF, marker)) + (len(body) + 2).to_bytes(2, "big") + body


@cache
def standard_tables() -> dict[tuple[int, int], tuple[bytes, bytes]]:
    """(class, id) -> (16 code counts, symbols): the Annex K tables, as Pillow (libjpeg) writes them."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.zeros((8, 8, 3), np.uint8), "RGB").save(buf, "JPEG", quality=90)
    data, pos, out = buf.getvalue(), 2, {}
    while data[pos + 1] != 0xDA:
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        if data[pos + 1] == 0xC4:
            p, j = data[pos + 4:pos + 2 + length], 0
            while j < len(p):
                total = sum(p[j + 1:j + 17])
                out[(p[j] >> 4, p[j] & 15)] = (p[j + 1:j + 17], p[j + 17:j + 17 + total])
                j += 17 + total
        pos += 2 + length
    return out


def _codes(counts: bytes, symbols: bytes) -> dict[int, tuple[int, int]]:
    code, i, out = 0, 0, {}
    for length, count in enumerate(counts, start=1):
        for _ in range(count):
            out[symbols[i]] = (code, length)
            code, i = code + 1, i + 1
        code <<= 1
    return out


def optimal_table(frequencies: Counter[int]) -> tuple[bytes, bytes]:
    """Code counts and symbols of an optimal table of at most 16 bits (T.81 K.2), no code of all 1-bits."""
    freq = dict(frequencies)
    freq[256] = 1  # the reserved code point: no symbol gets the all-1-bits code
    size = {s: 0 for s in freq}
    others = {s: None for s in freq}
    live = dict(freq)
    while len(live) > 1:
        a = min(live, key=lambda s: (live[s], -s))
        del_a = live.pop(a)
        b = min(live, key=lambda s: (live[s], -s))
        live[b] += del_a
        for chain in (b, a):
            s = chain
            size[s] += 1
            while others[s] is not None:
                s = others[s]
                size[s] += 1
        s = b
        while others[s] is not None:
            s = others[s]
        others[s] = a
    bits = [0] * 33
    for n in size.values():
        bits[n] += 1
    for i in range(32, 16, -1):
        while bits[i]:
            j = i - 2
            while not bits[j]:
                j -= 1
            bits[i] -= 2
            bits[i - 1] += 1
            bits[j + 1] += 2
            bits[j] -= 1
    i = 16
    while not bits[i]:
        i -= 1
    bits[i] -= 1  # remove the reserved code point
    order = sorted((s for s in freq if s != 256), key=lambda s: (size[s], s))
    return bytes(bits[1:17]), bytes(order)


class _Bits:
    def __init__(self, pad_bit: int) -> None:
        self.out = bytearray()
        self.acc = 0
        self.n = 0
        self.pad_bit = pad_bit

    def put(self, value: int, length: int) -> None:
        self.acc = (self.acc << length) | (value & ((1 << length) - 1))
        self.n += length
        while self.n >= 8:
            self.n -= 8
            byte = (self.acc >> self.n) & 0xFF
            self.out.append(byte)
            if byte == 0xFF:
                self.out.append(0)
        self.acc &= (1 << self.n) - 1

    def flush(self) -> bytes:
        if self.n:
            self.put((1 << (8 - self.n)) - 1 if self.pad_bit else 0, 8 - self.n)
        data, self.out = bytes(self.out), bytearray()
        return data


def _size(value: int) -> int:
    return int(abs(value)).bit_length()


def _bits(value: int, size: int) -> int:
    return value if value >= 0 else value + (1 << size) - 1


class Writer:
    """Writes an (H, W) or (H, W, 3) uint8 image under a configuration (encoded, decoded, factors) with Options."""

    def __init__(self, options: Options = Options()) -> None:
        self.o = options

    def with_(self, **changes: object) -> Writer:
        return Writer(replace(self.o, **changes))  # type: ignore[arg-type]

    # -- samples

    def planes(self, image: np.ndarray, encoded: str, decoded: str) -> list[np.ndarray]:
        img = image.astype(np.float64).reshape(image.shape[0], image.shape[1], -1)
        if encoded == "ycbcr" and decoded == "rgb":
            kr, kb = MATRICES[self.o.matrix]
            r, g, b = img[..., 0], img[..., 1], img[..., 2]
            y = kr * r + (1 - kr - kb) * g + kb * b
            planes = [y, (b - y) / (2 - 2 * kb) + 128, (r - y) / (2 - 2 * kr) + 128]
        else:
            planes = [img[..., i] for i in range(img.shape[2])]
        planes = [np.floor(p + 0.5) % 256 if self.o.wrap else np.clip(np.floor(p + 0.5), 0, 255) for p in planes]
        if self.o.swap_chroma and len(planes) == 3:
            planes = [planes[0], planes[2], planes[1]]
        return planes

    def _down(self, plane: np.ndarray, fy: int, fx: int) -> np.ndarray:
        h, w = -(-plane.shape[0] // fy), -(-plane.shape[1] // fx)
        full = np.pad(plane, ((0, h * fy - plane.shape[0]), (0, w * fx - plane.shape[1])), mode="edge")
        if self.o.downsample == "point":
            return full[::fy, ::fx]
        if self.o.downsample == "triangle":
            out = full
            for axis, f in ((0, fy), (1, fx)):
                if f == 2:
                    ext = np.pad(out, [(1, 1) if a == axis else (0, 0) for a in range(2)], mode="edge")
                    index = np.arange(out.shape[axis] // 2) * 2 + 1
                    taps = [np.take(ext, index + o, axis=axis) for o in (-1, 0, 1, 2)]
                    out = (taps[0] + 3 * taps[1] + 3 * taps[2] + taps[3]) / 8
                elif f != 1:
                    out = out.reshape(*(out.shape[:axis]), -1, f, *(out.shape[axis + 1:])).mean(axis=axis + 1)
            return np.floor(out + 0.5)
        return np.floor(full.reshape(h, fy, w, fx).mean(axis=(1, 3)) + 0.5)

    def _pad(self, plane: np.ndarray, rows: int, cols: int) -> np.ndarray:
        extra = ((0, rows - plane.shape[0]), (0, cols - plane.shape[1]))
        if self.o.padding == "zero":
            return np.pad(plane, extra)
        if self.o.padding == "mirror":
            return np.pad(plane, extra, mode="symmetric") if plane.shape[0] > 1 and plane.shape[1] > 1 else np.pad(
                plane, extra, mode="edge")
        return np.pad(plane, extra, mode="edge")

    def _overshoot(self, plane: np.ndarray) -> np.ndarray:
        """Samples at 255 raised by up to ``overshoot``, each block's mean kept at most 255 (as mozjpeg limits it)."""
        rows, cols = plane.shape[0] // 8, plane.shape[1] // 8
        blocks = plane.reshape(rows, 8, cols, 8).swapaxes(1, 2).reshape(rows, cols, 64).copy()
        at_max = blocks >= self.o.overshoot_from
        count = at_max.sum(axis=2, keepdims=True)
        room = (255 - blocks.mean(axis=2, keepdims=True)) * 64 / np.maximum(count, 1)
        raise_by = np.minimum(self.o.overshoot, np.floor(room))
        if self.o.overshoot_varies:
            raise_by = np.floor(raise_by * np.random.default_rng(0).random(blocks.shape))
        blocks = np.where(at_max, 255 + raise_by, blocks)
        return blocks.reshape(rows, cols, 8, 8).swapaxes(1, 2).reshape(plane.shape)

    # -- coefficients

    def _quantize(self, plane: np.ndarray, table: np.ndarray) -> np.ndarray:
        rows, cols = plane.shape[0] // 8, plane.shape[1] // 8
        blocks = (plane - self.o.level_shift).reshape(rows, 8, cols, 8).swapaxes(1, 2)
        coef = _T @ blocks @ _T.T / table
        if self.o.quantizer == "deadzone":
            mag = np.abs(coef)
            q = np.where(mag - np.floor(mag) < self.o.deadzone, np.floor(mag), np.floor(mag) + 1) * np.sign(coef)
            q[..., 0, 0] = np.floor(coef[..., 0, 0] + 0.5)
        else:
            q = np.floor(coef + 0.5)
        return q.astype(np.int64).reshape(rows, cols, 64)[:, :, ZIGZAG]

    # -- the stream

    def write(self, image: np.ndarray, encoded: str, decoded: str, factors: list[tuple[int, int]], quality: int) -> bytes:
        o = self.o
        planes = self.planes(image, encoded, decoded)
        height, width = image.shape[:2]
        h_max, v_max = max(f[0] for f in factors), max(f[1] for f in factors)
        scale = 5000 / quality if quality < 50 else 200 - 2 * quality
        base = [LUMA, CHROMA] if encoded == "ycbcr" else [LUMA, LUMA]
        tables = [np.clip((t * scale + 50) // 100, 1, 255) for t in base]
        if o.separate_cr_table and len(planes) == 3:
            tables.append(np.clip(tables[1] - 1, 1, 255))
        tq = [0] if len(planes) == 1 else [0, 1, 2 if o.separate_cr_table else 1]
        mcu_rows, mcu_cols = -(-height // (8 * v_max)), -(-width // (8 * h_max))
        coefs = []
        for i, plane in enumerate(planes):
            h, v = factors[i]
            down = self._down(plane, v_max // v, h_max // h) if (h, v) != (h_max, v_max) else plane
            padded = self._pad(down, mcu_rows * v * 8, mcu_cols * h * 8)
            if o.overshoot:
                padded = self._overshoot(padded)
            coefs.append(self._quantize(padded, tables[tq[i]]))
        hid = [0] if len(planes) == 1 else [0, o.chroma_huffman_id, o.chroma_huffman_id]
        order = []  # (component, block row, block col) in MCU order
        for mr in range(mcu_rows):
            for mc in range(mcu_cols):
                for i, (h, v) in enumerate(factors):
                    order += [(i, mr * v + y, mc * h + x) for y in range(v) for x in range(h)]
        huff = self._huffman(coefs, order, hid, len(planes))
        entropy = self._entropy(coefs, order, hid, huff, mcu_rows * mcu_cols)
        ids = (1,) if len(planes) == 1 else (82, 71, 66) if encoded == "rgb" else (1, 2, 3)
        dqt = b"".join(bytes((n,)) + bytes(int(x) for x in (t.reshape(64)[ZIGZAG] if o.table_order == "zigzag" else t.reshape(64)))
                       for n, t in enumerate(tables))
        dht = b"".join(bytes((cls << 4 | tid,)) + counts + symbols for (cls, tid), (counts, symbols) in sorted(huff.items()))
        sof = bytes((8,)) + height.to_bytes(2, "big") + width.to_bytes(2, "big") + bytes((len(planes),)) + b"".join(
            bytes((ids[i], factors[i][0] << 4 | factors[i][1], tq[i])) for i in range(len(planes)))
        sos = bytes((len(planes),)) + b"".join(bytes((ids[i], hid[i] << 4 | hid[i])) for i in range(len(planes))) + bytes(
            (0, o.se, 0))
        app = (_segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00") if o.jfif else b"")
        adobe = _segment(0xEE, b"Adobe\x00\x64\x00\x00\x00\x00" + bytes((o.adobe,))) if o.adobe is not None else b""
        tables_part = _segment(0xDB, dqt) + _segment(0xC4, dht)
        dri = _segment(0xDD, o.restart.to_bytes(2, "big")) if o.restart else b""
        head = b"\xff\xd8" + app + (adobe if o.adobe_place == "start" else b"")
        if o.tables_after_frame:
            head += _segment(0xC0, sof) + tables_part
        else:
            head += tables_part + _segment(0xC0, sof)
        head += (adobe if o.adobe_place == "after-frame" else b"") + dri
        return head + _segment(0xDA, sos) + entropy + b"\xff\xd9"

    def _huffman(self, coefs: list[np.ndarray], order: list[tuple[int, int, int]], hid: list[int],
                 count: int) -> dict[tuple[int, int], tuple[bytes, bytes]]:
        standard = standard_tables()
        ids = sorted(set(hid))
        if not self.o.optimized:
            return {(cls, tid): standard[(cls, min(tid, 1))] for cls in (0, 1) for tid in ids}
        freq: dict[tuple[int, int], Counter[int]] = {(cls, tid): Counter() for cls in (0, 1) for tid in ids}
        pred = [0] * count
        for i, r, c in order:
            block = coefs[i][r, c]
            freq[(0, hid[i])][_size(int(block[0]) - pred[i])] += 1
            pred[i] = int(block[0])
            for symbol, _ in _ac_symbols(block, self.o.se):
                freq[(1, hid[i])][symbol] += 1
        return {key: optimal_table(counter) for key, counter in freq.items()}

    def _entropy(self, coefs: list[np.ndarray], order: list[tuple[int, int, int]], hid: list[int],
                 huff: dict[tuple[int, int], tuple[bytes, bytes]], mcus: int) -> bytes:
        codes = {key: _codes(*table) for key, table in huff.items()}
        bits, out = _Bits(self.o.pad_bit), bytearray()
        pred = [0] * len(coefs)
        per_mcu = len(order) // mcus
        every = self.o.restart + self.o.restart_slip
        rst = 0
        for m in range(mcus):
            if every and m and m % every == 0:
                out += bits.flush() + bytes((0xFF, 0xD0 + rst % 8))
                rst += 1
                pred = [0] * len(coefs)
            for i, r, c in order[m * per_mcu:(m + 1) * per_mcu]:
                block = coefs[i][r, c]
                diff = int(block[0]) - pred[i]
                pred[i] = int(block[0])
                size = _size(diff)
                bits.put(*codes[(0, hid[i])][size])
                if size:
                    bits.put(_bits(diff, size), size)
                for symbol, value in _ac_symbols(block, self.o.se):
                    bits.put(*codes[(1, hid[i])][symbol])
                    if symbol & 15:
                        bits.put(_bits(value, symbol & 15), symbol & 15)
        out += bits.flush()
        if self.o.rst_after_last:
            out += bytes((0xFF, 0xD0 + rst % 8))
        return bytes(out)


def _ac_symbols(block: np.ndarray, se: int) -> list[tuple[int, int]]:
    out, run = [], 0
    last = max((k for k in range(1, 64) if block[k]), default=0)
    for k in range(1, 64):
        value = int(block[k])
        if k > last:
            out.append((0x00, 0))
            break
        if not value:
            run += 1
            if run == 16:
                out.append((0xF0, 0))
                run = 0
            continue
        out.append(((run << 4) | _size(value), value))
        run = 0
    del se  # a scan header's Se does not change what the encoder codes: the fault is the header's alone
    return out


__all__ = ["CHROMA", "LUMA", "MATRICES", "Options", "Writer", "optimal_table", "standard_tables"]
