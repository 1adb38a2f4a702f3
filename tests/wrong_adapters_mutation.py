"""Wrong adapters that kill mutants of the suites' checks (issue 28): each writes streams on which
one half of a compound check holds and the other does not, so that a check with ``and`` turned
into ``or`` (or one half dropped) lets it through where the real check catches it.

Kept apart from ``wrong_adapters.py`` and run by the same meta-tests (tests/test_suites_bite.py).
"""

from __future__ import annotations

import struct

import numpy as np
from wrong_adapters import _OtherQuality, _strip_segment

from zarr_jpeg_conformance.backends.base import Factor as _Factor
from zarr_jpeg_conformance.backends.imagecodecs import ImagecodecsAdapter

#: A COM segment's most bytes of payload.
_COM_MAX = 65533


def _with_app14(stream: bytes, transform: int) -> bytes:
    """The stream with an APP14 Adobe segment of ``transform`` right after SOI."""
    payload = b"Adobe" + struct.pack(">HHHB", 100, 0, 0, transform)
    return stream[:2] + b"\xff\xee" + struct.pack(">H", len(payload) + 2) + payload + stream[2:]


def _padded(stream: bytes, size: int) -> bytes:
    """The stream grown by COM segments to at least ``size`` bytes: the same image, more bytes."""
    out = stream
    while len(out) < size:
        n = min(_COM_MAX, max(1, size - len(out) - 4))
        out = out[:2] + b"\xff\xfe" + struct.pack(">H", n + 2) + bytes(n) + out[2:]
    return out


class LosesFidelityGrowsInSize(_OtherQuality):
    """Writes quality 55 with quality 40's tables, padded to four times its size: one step up loses
    fidelity though it grows in size (JPEG-X-16 asks for both to hold, not either)."""

    name = "wrong-loses-fidelity-grows-in-size"

    def _quality(self, quality: int) -> int:
        return 40 if quality == 55 else quality

    @staticmethod
    def _grown(stream: bytes, quality: int) -> bytes:
        return _padded(stream, 4 * len(stream)) if quality == 55 else stream  # the fault under test

    def _encode_gray(self, plane: np.ndarray, quality: int) -> bytes:
        return self._grown(super()._encode_gray(plane, quality), quality)

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: _Factor, *, ycbcr_input: bool) -> bytes:
        return self._grown(super()._encode_ycbcr(image, quality, luma, ycbcr_input=ycbcr_input), quality)


class IgnoresQualityButPads(_OtherQuality):
    """Encodes at quality 75 whatever the configuration says, padded by 40 bytes a quality step: the
    size grows with quality, the fidelity does not (JPEG-Q-02 asks for both to grow, not either)."""

    name = "wrong-ignores-quality-but-pads"

    def _quality(self, quality: int) -> int:
        return 75

    def _encode_gray(self, plane: np.ndarray, quality: int) -> bytes:
        stream = super()._encode_gray(plane, quality)
        return _padded(stream, len(stream) + 40 * quality)  # the fault under test


class YcbcrWithApp14Rgb(ImagecodecsAdapter):
    """Writes ycbcr streams with their JFIF marker and an APP14 transform 0: a JFIF decoder reads
    them as YCbCr, the spec's rule (APP14 decides) as RGB (JPEG-ECS-04 asks for both)."""

    name = "wrong-ycbcr-with-app14-rgb"

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: _Factor, *, ycbcr_input: bool) -> bytes:
        return _with_app14(super()._encode_ycbcr(image, quality, luma, ycbcr_input=ycbcr_input), 0)


class YcbcrWithUnknownTransform(ImagecodecsAdapter):
    """Writes ycbcr streams without JFIF and with APP14 transform 2: libjpeg assumes YCbCr, the
    spec's rule names no colour space for it (JPEG-ECS-04 asks for both to say YCbCr)."""

    name = "wrong-ycbcr-with-unknown-transform"

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: _Factor, *, ycbcr_input: bool) -> bytes:
        stream = _strip_segment(super()._encode_ycbcr(image, quality, luma, ycbcr_input=ycbcr_input), 0xE0)
        return _with_app14(stream, 2)
