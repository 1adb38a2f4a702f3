"""What a wrong decode looks like, and the rule each look breaks: the table that decides what a failure cites.

A fidelity, shape or colour check that fails says only that the samples are wrong. Before it
cites a rule, the suite compares the wrong samples with what the classic faults would give
(components reversed, RGB -> YCbCr skipped or applied where the configuration says none,
height and width swapped, a constant decode, ...). A fault explains the samples when they lie
at least four times closer to its result than to the expected samples; the failure then cites
the fault's rule (:data:`FAULTS`). Where no fault explains them, the check cites its own rule
and says that it cannot tell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core import color

#: How much closer (mean absolute difference) a fault's result must lie than the expected samples.
CLOSER = 4


@dataclass(frozen=True)
class Fault:
    """A classic fault: the rule it breaks, and how a message names it."""

    requirement: str
    words: str


#: Diagnosis -> the rule it breaks (README, "Diagnosed citations").
FAULTS: dict[str, Fault] = {
    "reversed": Fault("JPEG-DEC-02", "the three components in reverse order"),
    "swapped": Fault("JPEG-DIM-01", "height and width swapped"),
    "constant": Fault("JPEG-DEC-01", "a constant decode where the image is not"),
    "encode-skipped-ycbcr": Fault("JPEG-ECS-04", "the RGB input stored unconverted in a stream that says YCbCr "
                                                 "(RGB -> YCbCr skipped when encoding)"),
    "decode-skipped-ycbcr": Fault("JPEG-DCS-03", "the stored YCbCr returned without conversion to RGB"),
    "studio-range": Fault("JPEG-DCS-03", "YCbCr read as studio range (BT.601 16-235), not JFIF's full range"),
    "rgb-transformed": Fault("JPEG-ECS-05", "a YCbCr transform applied to rgb components, which are stored as-is"),
    "passthrough-converted": Fault("JPEG-DCS-03", "YCbCr input converted although decoded_color_space ycbcr asks for none"),
    "inverse-on-rgb": Fault("JPEG-ECS-12", "an inverse YCbCr transform applied to samples the stream stores untransformed"),
    "inverse-on-passthrough": Fault("JPEG-DCS-06", "the stored YCbCr converted to RGB although decoded_color_space is ycbcr"),
    "quality-lower": Fault("JPEG-Q-02", "quality lower than asked"),
}


def _studio_range(rgb: np.ndarray) -> np.ndarray:
    """An RGB decode as it comes out when its YCbCr is read as studio range (Y 16-235, chroma 16-240)."""
    ycc = color.rgb_to_ycbcr(rgb).astype(np.float64)
    ycc[..., 0] = (ycc[..., 0] - 16) * 255 / 219
    ycc[..., 1:] = (ycc[..., 1:] - 128) * 255 / 224 + 128
    return color.ycbcr_to_rgb(np.clip(np.rint(ycc), 0, 255).astype(np.uint8))


def _mean_abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean()) if a.size else 0.0


def _explains(got: np.ndarray, expected: np.ndarray, candidates: list[tuple[str, Callable[[], np.ndarray]]]) -> str | None:
    if got.shape != expected.shape or not got.size:
        return None
    if got.min() == got.max() and expected.min() != expected.max():
        return "constant"
    off = _mean_abs(got, expected)
    for name, make in candidates:
        candidate = make()
        if candidate.shape == got.shape and _mean_abs(got, candidate) * CLOSER < off:
            return name
    return None


def _geometry(expected: np.ndarray) -> list[tuple[str, Callable[[], np.ndarray]]]:
    """Height and width swapped: the transpose for a square image, the same samples read with swapped sides otherwise."""
    if expected.ndim < 2 or min(expected.shape[:2]) < 2:
        return []
    if expected.shape[0] == expected.shape[1]:
        return [("swapped", lambda: np.ascontiguousarray(expected.swapaxes(0, 1)))]
    return [("swapped", lambda: np.ascontiguousarray(expected.swapaxes(0, 1)).reshape(expected.shape))]


def _three(expected: np.ndarray) -> bool:
    return expected.ndim == 3 and expected.shape[-1] == 3


def diagnose_decode(got: np.ndarray, expected: np.ndarray, stored: str | None, decoded: str) -> str | None:
    """The fault a decoder's wrong decode of a stream looks like (a key of :data:`FAULTS`), or None.

    ``stored``: the stream's stored colour space by the spec's rule; ``decoded``: the
    configuration's decoded_color_space; ``expected``: the expected decode.
    """
    candidates: list[tuple[str, Callable[[], np.ndarray]]] = []
    if _three(expected):
        if stored == "rgb":
            candidates.append(("inverse-on-rgb", lambda: color.ycbcr_to_rgb(expected)))
        elif stored == "ycbcr" and decoded == "ycbcr":
            candidates.append(("inverse-on-passthrough", lambda: color.ycbcr_to_rgb(expected)))
        elif stored == "ycbcr":
            candidates.append(("decode-skipped-ycbcr", lambda: color.rgb_to_ycbcr(expected)))
            if decoded == "rgb":
                candidates.append(("studio-range", lambda: _studio_range(expected)))
        candidates.append(("reversed", lambda: expected[..., ::-1]))
    return _explains(got, expected, candidates + _geometry(expected))


def diagnose_roundtrip(got: np.ndarray, chunk: np.ndarray, encoded: str, decoded: str) -> str | None:
    """The fault a round trip (one implementation wrote and read) looks like, or None.

    Which side made it cannot be told from a round trip; the rule is the one the fault breaks
    on the side where it is usually made (an encoder skipping the conversion it is asked for).
    """
    candidates: list[tuple[str, Callable[[], np.ndarray]]] = []
    if _three(chunk):
        if encoded == "ycbcr" and decoded == "rgb":
            candidates += [("encode-skipped-ycbcr", lambda: color.ycbcr_to_rgb(chunk)),
                           ("decode-skipped-ycbcr", lambda: color.rgb_to_ycbcr(chunk))]
        elif encoded == "rgb":
            candidates += [("rgb-transformed", lambda: color.rgb_to_ycbcr(chunk)),
                           ("rgb-transformed", lambda: color.ycbcr_to_rgb(chunk))]
        elif decoded == "ycbcr":
            candidates += [("passthrough-converted", lambda: color.ycbcr_to_rgb(chunk)),
                           ("passthrough-converted", lambda: color.rgb_to_ycbcr(chunk))]
        candidates.append(("reversed", lambda: chunk[..., ::-1]))
    return _explains(got, chunk, candidates + _geometry(chunk))


#: IJG's luminance quantization table (T.81 Annex K, table K.1) at quality 50: only its sum is used.
_IJG_LUMA_SUM = sum((16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
                     14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
                     49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99))
#: How far under the asked quality a stream's tables must lie to call its quality lower than asked.
QUALITY_GAP = 10


def table_quality(data: bytes) -> int | None:
    """The IJG quality whose luminance table has the same sum as the stream's first table; None if it has none.

    Only for naming a fault: the spec leaves quality -> tables to the encoder (JPEG-Q-03).
    """
    i = 2
    while i + 4 <= len(data) and data[i] == 0xFF and data[i + 1] != 0xDA:
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if data[i + 1] == 0xDB and length >= 67:
            precision = data[i + 4] >> 4
            values = data[i + 5 : i + 5 + 64] if precision == 0 else data[i + 5 : i + 5 + 128][1::2]
            scale = 100 * sum(values) / _IJG_LUMA_SUM
            return max(1, min(100, round(5000 / scale) if scale > 100 else round((200 - scale) / 2)))
        i += 2 + length
    return None


def diagnose_quality(data: bytes, quality: int) -> str | None:
    """'quality-lower' where the stream's tables are those of a quality far under ``quality``."""
    found = table_quality(data)
    return "quality-lower" if found is not None and found < quality - QUALITY_GAP else None


def cite(fault: str | None, own: str) -> tuple[str, str]:
    """(requirement, words for the message) of a diagnosis; the check's own rule where there is none."""
    if fault is None:
        return own, "no classic fault explains the samples: the check's own rule is cited"
    found = FAULTS[fault]
    return found.requirement, f"it looks like {found.words}"


__all__ = ["CLOSER", "FAULTS", "QUALITY_GAP", "Fault", "cite", "diagnose_decode", "diagnose_quality", "diagnose_roundtrip",
           "table_quality"]
