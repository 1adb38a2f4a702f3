"""What a wrong decode looks like, and the rule each look breaks: the table that decides what a failure cites.

A fidelity, shape or colour check that fails says only that the samples are wrong. Before it
cites a rule, the suite compares the wrong samples with what the classic faults would give
(components reversed, RGB -> YCbCr skipped or applied where the configuration says none,
height and width swapped, a constant decode, ...). A fault explains the samples when they lie
at least four times closer to its result than to the expected samples (the closest such fault); the failure then cites
the fault's rule (:data:`FAULTS`). Where no fault explains them, the check cites its own rule
and says that it cannot tell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core import color
from .verdict import Cause

#: How much closer (mean absolute difference) a fault's result must lie than the expected samples.
CLOSER = 4


@dataclass(frozen=True)
class Fault:
    """A classic fault: the rule it breaks, and how a message names it."""

    requirement: str
    words: str


#: Diagnosis -> the rule it breaks (docs/codec-authors.md, "One deviation, one finding").
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
    "ycbcr-twice": Fault("JPEG-DCS-03", "an RGB -> YCbCr conversion applied once more to the YCbCr the spec's rule gives"),
    "passthrough-detour": Fault("JPEG-DCS-03", "the stored YCbCr converted to RGB and back (clipped to the RGB gamut) "
                                               "although decoded_color_space ycbcr asks for no conversion"),
    "bt709": Fault("JPEG-DCS-03", "YCbCr converted to RGB by the BT.709 matrix, not T.871's (BT.601 full range)"),
    "wraps": Fault("JPEG-DCS-03", "YCbCr converted to RGB modulo 256, not clamped to 0-255"),
    "chroma-swapped": Fault("JPEG-DCS-03", "Cb read as Cr and Cr as Cb"),
    "bt2020": Fault("JPEG-DCS-03", "YCbCr converted to RGB by the BT.2020 matrix, not T.871's (BT.601 full range)"),
    "level-shift": Fault("JPEG-DEC-01", "every sample shifted by the same number of levels, as by a level shift other "
                                        "than 128 (T.81 A.3.1)"),
    "planar": Fault("JPEG-DEC-02", "the decoded components returned one plane after the other (planar) as if "
                                   "interleaved: the chunk's bytes [0, HW), [HW, 2HW), [2HW, 3HW) hold the three planes"),
    "all-zero": Fault("JPEG-DEC-01", "an all-zero decode (every sample 0) where the image is not"),
    "jfif-over-app14": Fault("JPEG-ECS-12", "the JFIF APP0 marker taken over APP14 transform 0: the stream's RGB "
                                            "samples converted as if they were YCbCr"),
    "ids-over-app14": Fault("JPEG-DCS-03", "the component ids 'R', 'G', 'B' taken over APP14 transform 1: the stored "
                                           "YCbCr returned without conversion to RGB"),
    "encode-reversed": Fault("JPEG-ENC-03", "the three components read in reverse order (BGR for RGB)"),
    "memory-order": Fault("JPEG-ENC-02", "the samples read in the chunk's memory order, not in C order"),
}


def fault_cause(fault: str, stage: str) -> Cause:
    """The :class:`Cause` a diagnosis names: the fault's rule and words, at ``stage`` (encode or decode)."""
    found = FAULTS[fault]
    return Cause(stage, fault, found.requirement, found.words)


#: Faults :func:`by_markers` names more exactly, and the fault each refines. A refinement says why the general fault
#: happened on streams with those markers; where the same decoder shows the general fault on streams without them
#: too, the markers explain nothing and the cases are one defect, the general one (``report.roots`` folds them).
REFINES = {"jfif-over-app14": "inverse-on-rgb", "ids-over-app14": "decode-skipped-ycbcr"}


def by_markers(fault: str, data: bytes | None) -> str:
    """A fault named more exactly by the stream's markers: an inverse transform on a stream with both JFIF and APP14
    transform 0 is JFIF taken over APP14; YCbCr returned unconverted from a stream whose APP14 transform 1 says YCbCr
    and whose component ids say R, G, B is the ids taken over APP14."""
    if data is None or fault not in ("inverse-on-rgb", "decode-skipped-ycbcr"):
        return fault
    from ..core.markers import inspect

    info = inspect(data)
    if fault == "inverse-on-rgb" and info.jfif and info.adobe_transform == 0:
        return "jfif-over-app14"
    if fault == "decode-skipped-ycbcr" and info.adobe_transform == 1 and info.component_ids == (82, 71, 66):
        return "ids-over-app14"
    return fault


def planar(image: np.ndarray) -> np.ndarray:
    """An (H, W, C) image as a decoder that returns its planes one after the other hands it over: the bytes of plane 0,
    then plane 1, ..., read as the interleaved (H, W, C) chunk."""
    return np.ascontiguousarray(np.moveaxis(image, -1, 0)).reshape(image.shape)


def planar_sizes(frame: object) -> dict[int, str]:
    """Sample counts of a frame's planar buffer as libjpeg-turbo lays it out (``tj3YUVBufSize``: each plane's width
    padded to its MCU, then to a row alignment; its height padded to its MCU), for the alignments 1 and 4 (the
    defaults of TurboJPEG's two APIs), each with how it is made up."""
    components = getattr(frame, "components", ())
    if len(components) < 1:
        return {}
    h_max, v_max = max(c.h for c in components), max(c.v for c in components)
    width, height = int(getattr(frame, "width", 0)), int(getattr(frame, "height", 0))
    padded_w = -(-width // h_max) * h_max
    padded_h = -(-height // v_max) * v_max
    out: dict[int, str] = {}
    for align in (1, 4):
        parts = []
        total = 0
        for c in components:
            pw = padded_w * c.h // h_max
            ph = padded_h * c.v // v_max
            pw = -(-pw // align) * align
            total += pw * ph
            parts.append(f"{pw}x{ph}")
        out.setdefault(total, f"planes of {' + '.join(parts)} samples (widths padded to {align})")
    return out


def _studio_range(rgb: np.ndarray) -> np.ndarray:
    """An RGB decode as it comes out when its YCbCr is read as studio range (Y 16-235, chroma 16-240)."""
    ycc = color.rgb_to_ycbcr(rgb).astype(np.float64)
    ycc[..., 0] = (ycc[..., 0] - 16) * 255 / 219
    ycc[..., 1:] = (ycc[..., 1:] - 128) * 255 / 224 + 128
    return color.ycbcr_to_rgb(np.clip(np.rint(ycc), 0, 255).astype(np.uint8))


def _inverse(ycc: np.ndarray, matrix: tuple[float, float], wrap: bool = False) -> np.ndarray:
    """YCbCr (float, never clamped) to RGB by the matrix of luma weights (kr, kb), rounded; clamped, or modulo 256."""
    kr, kb = matrix
    y, cb, cr = ycc[..., 0], ycc[..., 1] - 128, ycc[..., 2] - 128
    r, b = y + (2 - 2 * kr) * cr, y + (2 - 2 * kb) * cb
    g = (y - kr * r - kb * b) / (1 - kr - kb)
    out = np.rint(np.stack([r, g, b], axis=-1))
    return (out.astype(np.int64) % 256 if wrap else np.clip(out, 0, 255)).astype(np.uint8)


def _mean_abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean()) if a.size else 0.0


#: Levels from the expected decode beyond which a sample is wrong whatever legal decoder or encoder made it: the
#: samples a fault must explain (a fault that moves a few samples far is judged on those, not drowned by the rest).
WRONG_BEYOND = 3


def _explains(got: np.ndarray, expected: np.ndarray, candidates: list[tuple[str, Callable[[], np.ndarray]]]) -> str | None:
    if got.shape != expected.shape or not got.size:
        return None
    if not got.any() and int(expected.max()) > WRONG_BEYOND:
        return "all-zero"
    if got.min() == got.max() and expected.min() != expected.max():
        return "constant"
    wrong = np.abs(got.astype(np.int16) - expected.astype(np.int16)) > WRONG_BEYOND
    where = wrong if wrong.any() else np.ones(got.shape, bool)
    off = _mean_abs(got[where], expected[where])
    best: tuple[float, str] | None = None
    for name, make in candidates:  # the closest that explains the samples; the first of equals
        candidate = make()
        if candidate.shape != got.shape:
            continue
        near = _mean_abs(got[where], candidate[where])
        if near * CLOSER < off and (best is None or near < best[0]):
            best = (near, name)
    return best[1] if best else None


def _geometry(expected: np.ndarray) -> list[tuple[str, Callable[[], np.ndarray]]]:
    """Height and width swapped: the transpose for a square image, the same samples read with swapped sides otherwise."""
    if expected.ndim < 2 or min(expected.shape[:2]) < 2:
        return []
    if expected.shape[0] == expected.shape[1]:
        return [("swapped", lambda: np.ascontiguousarray(expected.swapaxes(0, 1)))]
    return [("swapped", lambda: np.ascontiguousarray(expected.swapaxes(0, 1)).reshape(expected.shape))]


def _three(expected: np.ndarray) -> bool:
    return expected.ndim == 3 and expected.shape[-1] == 3


def diagnose_decode(got: np.ndarray, expected: np.ndarray, stored: str | None, decoded: str,
                    exact: Callable[[Callable[[np.ndarray], np.ndarray]], np.ndarray] | None = None,
                    raw: Callable[[], np.ndarray] | None = None) -> str | None:
    """The fault a decoder's wrong decode of a stream looks like (a key of :data:`FAULTS`), or None.

    ``stored``: the stream's stored colour space by the spec's rule; ``decoded``: the
    configuration's decoded_color_space; ``expected``: the expected decode; ``exact``, where the
    stream's coefficients were read: the exact reconstruction (upsampled as ``expected`` is) with
    another YCbCr -> RGB conversion, from YCbCr that was never clamped; ``raw``, where they were read: the stream's
    components at full resolution, unconverted (what a decoder that hands over its planes has).
    """
    candidates: list[tuple[str, Callable[[], np.ndarray]]] = []
    if _three(expected):
        if stored == "rgb":
            candidates.append(("inverse-on-rgb", lambda: color.ycbcr_to_rgb(expected)))
        elif stored == "ycbcr" and decoded == "ycbcr":
            candidates += [("inverse-on-passthrough", lambda: color.ycbcr_to_rgb(expected)),
                           ("passthrough-detour", lambda: color.rgb_to_ycbcr(color.ycbcr_to_rgb(expected)))]
        elif stored == "ycbcr":
            candidates.append(("decode-skipped-ycbcr", lambda: color.rgb_to_ycbcr(expected)))
            if decoded == "rgb":
                candidates.append(("studio-range", lambda: _studio_range(expected)))
        if decoded == "ycbcr":
            candidates.append(("ycbcr-twice", lambda: color.rgb_to_ycbcr(expected)))
        candidates.append(("reversed", lambda: expected[..., ::-1]))
        candidates.append(("planar", lambda: planar(expected)))
        if raw is not None:  # the stream's own components, unconverted, handed over planar
            candidates.append(("planar", lambda: planar(raw())))
        if exact is not None and stored == "ycbcr" and decoded == "rgb":
            candidates += [("bt709", lambda: exact(lambda ycc: _inverse(ycc, (0.2126, 0.0722)))),
                           ("bt2020", lambda: exact(lambda ycc: _inverse(ycc, (0.2627, 0.0593)))),
                           ("wraps", lambda: exact(lambda ycc: _inverse(ycc, (0.299, 0.114), wrap=True))),
                           ("chroma-swapped", lambda: exact(lambda ycc: _inverse(ycc[..., [0, 2, 1]], (0.299, 0.114))))]
    if _varies(expected):  # a shift of a flat image looks like any wrong value: no evidence for it
        candidates.append(("level-shift", lambda: _shifted(got, expected)))
    return _explains(got, expected, candidates + _geometry(expected))


def _varies(image: np.ndarray) -> bool:
    """Whether some channel of ``image`` holds samples more than :data:`WRONG_BEYOND` levels apart."""
    if image.ndim < 2 or not image.size:
        return False
    flat = image.reshape(image.shape[0] * image.shape[1], -1).astype(np.int16)
    return bool((np.ptp(flat, axis=0) > WRONG_BEYOND).any())


def _shifted(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """``expected`` moved by the decode's mean offset from it, clamped: a decoder whose level shift is not 128 moves every
    sample by the same amount. An offset within :data:`WRONG_BEYOND` levels is none (legal decoders differ by as much):
    the expected decode itself, as it is where the samples move by different amounts (beyond :data:`WRONG_BEYOND`
    levels of spread, away from the clamped ends): that is another image, not a shifted one."""
    difference = got.astype(np.float64) - expected.astype(np.float64)
    offset = int(np.rint(float(difference.mean())))
    inside = (got > 0) & (got < 255)
    if abs(offset) <= WRONG_BEYOND or not inside.any() or float(difference[inside].std()) > WRONG_BEYOND:
        return expected
    return np.clip(expected.astype(np.int16) + offset, 0, 255).astype(np.uint8)


def diagnose_encode(got: np.ndarray, chunk: np.ndarray, encoded: str, decoded: str,
                    through: Callable[[np.ndarray], np.ndarray] | None = None, expected: np.ndarray | None = None) -> str | None:
    """The fault an encoder's stream looks like, from the reference decode ``got`` of it and the chunk it was given.

    The decode is independent of the encoder, so every fault found here is the encoder's.
    ``through`` writes an image with the stream's own tables and decodes it again: each
    fault's result is compared after it (at quality 1 the tables' loss is as large as the
    fault's), and ``expected`` is then the chunk written the same way.
    """
    candidates: list[tuple[str, Callable[[], np.ndarray]]] = []
    if not chunk.flags.c_contiguous:
        candidates.append(("memory-order", lambda: np.ravel(chunk, order="K").reshape(chunk.shape)))
    if _three(chunk):
        if encoded == "ycbcr" and decoded == "rgb":
            candidates.append(("encode-skipped-ycbcr", lambda: color.ycbcr_to_rgb(chunk)))
        elif encoded == "rgb":
            candidates += [("rgb-transformed", lambda: color.rgb_to_ycbcr(chunk)),
                           ("rgb-transformed", lambda: color.ycbcr_to_rgb(chunk))]
        elif decoded == "ycbcr":
            candidates += [("passthrough-converted", lambda: color.rgb_to_ycbcr(chunk)),
                           ("passthrough-converted", lambda: color.ycbcr_to_rgb(chunk))]
        candidates.append(("encode-reversed", lambda: chunk[..., ::-1]))
    candidates += _geometry(chunk)
    if through is not None:
        candidates = [(name, _through(through, make)) for name, make in candidates]
    return _explains(got, chunk if expected is None else expected, candidates)


def _through(through: Callable[[np.ndarray], np.ndarray], make: Callable[[], np.ndarray]) -> Callable[[], np.ndarray]:
    return lambda: through(np.ascontiguousarray(make()))


def cite(fault: str | None, own: str) -> tuple[str, str]:
    """(requirement, words for the message) of a diagnosis; the check's own rule where there is none."""
    if fault is None:
        return own, "no classic fault explains the samples: the check's own rule is cited"
    found = FAULTS[fault]
    return found.requirement, f"it looks like {found.words}"


__all__ = ["REFINES", "CLOSER", "FAULTS", "Fault", "by_markers", "cite", "diagnose_decode", "diagnose_encode", "fault_cause", "planar",
           "planar_sizes"]
