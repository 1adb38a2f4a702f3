"""Byte edits of encoder-written streams: the foreign variants and the malformed cases are made with these.

They walk headers as encoders write them (no fill bytes between segments); core.markers
is the tolerant reader, this is the simple writer's view.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

Edit = Callable[[bytes], bytes]

#: Marker value standing for whichever SOF the stream has (SOF0, SOF1 or SOF2).
SOF = 0xC0


def segment(marker: int, payload: bytes) -> bytes:
    return bytes((0xFF, marker)) + (len(payload) + 2).to_bytes(2, "big") + payload


JFIF = segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")


def adobe(transform: int) -> bytes:
    return segment(0xEE, b"Adobe" + (100).to_bytes(2, "big") + bytes(4) + bytes((transform,)))


def header(data: bytes) -> list[tuple[int, int, int]]:
    """(offset, marker, end) of each segment after SOI, up to and including the first SOS."""
    out, pos = [], 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        end = pos + 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
        out.append((pos, marker, end))
        if marker == 0xDA:
            break
        pos = end
    return out


def span(data: bytes, marker: int) -> tuple[int, int]:
    """(start, end) of the first segment with ``marker``; :data:`SOF` matches any of SOF0-SOF2."""
    wanted = (0xC0, 0xC1, 0xC2) if marker == SOF else (marker,)
    for start, m, end in header(data):
        if m in wanted:
            return start, end
    raise ValueError("no SOF segment" if marker == SOF else f"no FF{marker:02X} segment")


def entropy(data: bytes) -> tuple[int, int]:
    """Span of the entropy-coded data of a single-scan stream (between SOS and EOI)."""
    _, sos_end = span(data, 0xDA)
    return sos_end, data.rindex(b"\xff\xd9")


def patch(data: bytes, offset: int, value: bytes) -> bytes:
    return data[:offset] + value + data[offset + len(value) :]


def patched(marker: int, offset: int, value: bytes) -> Edit:
    """An edit that overwrites bytes at ``offset`` from the start of the first ``marker`` segment."""
    return lambda data: patch(data, span(data, marker)[0] + offset, value)


def unchanged(data: bytes) -> bytes:
    return data


def drop_app(data: bytes, marker: int, signature: bytes) -> bytes:
    for start, m, end in header(data):
        if m == marker and data[start + 4 : start + 4 + len(signature)] == signature:
            return data[:start] + data[end:]
    raise ValueError(f"no FF{marker:02X} {signature!r} segment")


def drop_jfif(data: bytes) -> bytes:
    return drop_app(data, 0xE0, b"JFIF\x00")


def insert_before(data: bytes, marker: int, inserted: bytes) -> bytes:
    start, _ = span(data, marker)
    return data[:start] + inserted + data[start:]


def set_component_ids(data: bytes, ids: tuple[int, ...]) -> bytes:
    """Rename the frame's components (SOF and the SOS of a single-scan stream)."""
    out = bytearray(data)
    sof, _ = span(data, SOF)
    old = [out[sof + 10 + 3 * k] for k in range(out[sof + 9])]
    mapping = dict(zip(old, ids, strict=True))
    for k in range(len(old)):
        out[sof + 10 + 3 * k] = ids[k]
    sos, _ = span(data, 0xDA)
    for k in range(out[sos + 4]):
        out[sos + 5 + 2 * k] = mapping[out[sos + 5 + 2 * k]]
    return bytes(out)


def with_fill(data: bytes) -> bytes:
    """Three 0xFF fill bytes before every marker from DQT to SOS."""
    out = bytearray()
    last = 0
    for start, marker, _ in header(data):
        if marker in (0xDB, 0xC4, 0xC0, 0xDA):
            out += data[last:start] + b"\xff\xff\xff"
            last = start
    return bytes(out + data[last:])


def noise_bytes(n: int, label: str) -> bytes:
    """Pseudo-random bytes that never change: SHA-256 in counter mode, not a numpy generator."""
    blocks = (hashlib.sha256(f"{label}:{i}".encode()).digest() for i in range(-(-n // 32)))
    return b"".join(blocks)[:n]


def cut(fraction: float, then: bytes = b"") -> Edit:
    """Keep ``fraction`` of the entropy-coded data, then append ``then``."""

    def edit(data: bytes) -> bytes:
        start, end = entropy(data)
        return data[: start + int((end - start) * fraction)] + then

    return edit


def cut_before_scan(then: bytes = b"") -> Edit:
    return lambda data: data[: span(data, 0xDA)[0]] + then


def oversubscribed(data: bytes) -> bytes:
    # Two 1-bit codes fill the whole code space, so every longer code overflows it
    # (T.81 C.2); the symbol count stays the same, so the segment still parses.
    p = span(data, 0xC4)[0] + 4
    counts = bytearray(data[p + 1 : p + 17])
    donor = next(i for i in range(15, 0, -1) if counts[i] >= 2)
    counts[0] += 2
    counts[donor] -= 2
    return patch(data, p + 1, bytes(counts))


def dht_cut(data: bytes) -> bytes:
    start, end = span(data, 0xC4)
    length = end - start - 2
    return data[: start + 2] + (length - 8).to_bytes(2, "big") + data[start + 4 : end - 8] + data[end:]
