"""How far a correct decoder's output may lie from the expected decodes of a stream.

The spec fixes the JPEG stream, not the decoder's arithmetic: T.81 defines the inverse DCT
mathematically and leaves its computation to the decoder (ISO/IEC 10918-2 tests only its
accuracy), and it does not say how subsampled chroma is upsampled. So a stream has no one
correct decode. Each stream case stores two expected decodes from decoders that share no
code (``fixturegen.independent``: libjpeg-turbo, with its accurate IDCT and triangle
upsampling, and Go's image/jpeg, with its own IDCT and chroma repetition); the cross suite
computes two at run time (libjpeg-turbo's, and its planes with chroma repeated). A decode
is judged by how far each sample lies outside the span of the expected decodes: the
difference between legal decoders is the spread the span already holds, so the slack on top
of it can be small, and a wrong decoder (a wrong colour transform or range, chroma shifted by
a sample, a wrong upsampling phase, swapped axes) lies far outside.

Where a stream has one expected decode only (no second decoder could read it), the slack is
the older, wider bound around that one decode (``alone_*``), since the span is missing.
The numbers are measured by ``python -m zarr_jpeg_conformance.tools.decoder_spread`` over
every decoder this project ships and over deliberately wrong ones; their reasons are beside
them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.config import JpegConfig
from ..core.markers import LOSSLESS_SOF, StreamInfo, inspect
from .diagnoses import FAULTS, diagnose_decode
from .roots import DEFAULT_TAKEN_WRONG


@dataclass(frozen=True)
class Tolerance:
    """Bounds, in 8-bit levels, on how far a decode may lie outside the span of the expected decodes."""

    name: str
    #: Largest and mean distance of a sample beyond the span of two expected decodes.
    slack_max: int
    slack_mean: float
    #: The same around a single expected decode, where there is no second one.
    alone_max: int
    alone_mean: float
    reason: str

    def bounds(self, references: int) -> tuple[int, float]:
        return (self.slack_max, self.slack_mean) if references > 1 else (self.alone_max, self.alone_mean)


#: Measured 2026-11-30 with ``generate_fixtures --measure`` over every decoder this project
#: ships (the built-ins, simplejpeg, OpenCV, pyvips, pdf.js, jpeg-js, sharp, @jsquash/jpeg,
#: cornerstone, Chromium, javax.imageio, TwelveMonkeys, Go) and the decoders of
#: ``fixturegen.decoder_faults``; "outside" is the distance beyond the span of the expected
#: decodes, as max (mean). Decoders whose colour rule differs from the spec's (JFIF against
#: APP14) are failures of that rule, not of arithmetic, and are not counted here.
FAMILIES: dict[str, Tolerance] = {
    t.name: t
    for t in (
        Tolerance(
            "lossless", 0, 0.0, 0, 0.0,
            "Lossless (SOF3) decoding is exact by definition: any difference is a decoding error.",
        ),
        Tolerance(
            "gray", 2, 0.25, 4, 0.5,
            "One component, nothing to upsample or convert: only the IDCT's arithmetic differs. Outside "
            "the span of libjpeg-turbo and Go: pdf.js and jpeg-js 1 (0.08), a float IDCT 1 (0.01), every "
            "other decoder 0. libjpeg-turbo's fast integer IDCT, documented as less accurate and the "
            "default of no decoder, lies outside on 11 of 14 cases; alone, around one decode, the JavaScript "
            "decoders need 1 (0.06) and the fast IDCT reaches 8 (1.66).",
        ),
        Tolerance(
            "444", 4, 0.6, 8, 1.0,
            "No subsampling: the IDCT, and the rounding of the colour conversion. Outside the span: pdf.js "
            "3 (0.17), a float IDCT 3 (0.42), every other decoder 0 or a colour-rule failure. A studio-range "
            "(BT.601 16-235) decode lies outside on 25 of 27 cases, chroma shifted by a sample on all 27, "
            "the fast IDCT on 16. Alone, around one decode: the JavaScript decoders 3 (0.47).",
        ),
        Tolerance(
            "subsampled", 5, 0.75, 80, 8.0,
            "Chroma upsampling is the decoder's choice (T.81 A.1.1): the span of libjpeg-turbo's triangle "
            "filter and Go's repetition holds it (up to 118 (23.6) apart, a checkerboard at quality 20). "
            "Outside the span: jpeg-js 3 (0.58), pdf.js 3 (0.25), @jsquash/jpeg (mozjpeg) 2 (0.31), a float "
            "IDCT 3 (0.46). Chroma shifted by a sample lies outside on 81 of 81 cases, a studio-range decode "
            "on 79, the fast IDCT on 65, the triangle filter's neighbours swapped on 56, the last chroma "
            "sample of an odd edge replaced by its neighbour on 62 (the edge cases among them). Alone, "
            "around one decode (factor sets no second decoder reads, whose images keep chroma smooth): "
            "repetition against the triangle filter needs up to 53 (4.06).",
        ),
    )
}


def family_for(info: StreamInfo) -> str:
    """The tolerance family of a stream, from its structure alone."""
    if info.sof in LOSSLESS_SOF:
        return "lossless"
    if len(info.components) == 1:
        return "gray"
    if len({(c.h, c.v) for c in info.components}) == 1:
        return "444"
    return "subsampled"


@dataclass(frozen=True)
class Difference:
    """The largest and mean absolute difference between two decodes."""

    max_abs: int
    mean_abs: float

    def within(self, bounds: tuple[int, float]) -> bool:
        return self.max_abs <= bounds[0] and self.mean_abs <= bounds[1]

    def __str__(self) -> str:
        return f"max |diff| {self.max_abs}, mean |diff| {self.mean_abs:.3f}"


def difference(got: np.ndarray, expected: np.ndarray) -> Difference:
    """|got - expected| of two same-shape uint8 arrays, as max and mean."""
    if got.shape != expected.shape:
        raise ValueError(f"shapes differ: {got.shape} and {expected.shape}")
    if not expected.size:
        return Difference(0, 0.0)
    diff = np.abs(got.astype(np.int16) - expected.astype(np.int16))
    return Difference(int(diff.max()), float(diff.mean()))


def outside(got: np.ndarray, references: Sequence[np.ndarray]) -> Difference:
    """How far each sample of ``got`` lies outside the span (per sample, min to max) of ``references``."""
    if any(r.shape != got.shape for r in references):
        raise ValueError(f"shapes differ: {got.shape} and {[r.shape for r in references]}")
    if not got.size:
        return Difference(0, 0.0)
    stack = np.stack([r.astype(np.int16) for r in references])
    value = got.astype(np.int16)
    beyond = np.maximum(np.maximum(value - stack.max(axis=0), stack.min(axis=0) - value), 0)
    return Difference(int(beyond.max()), float(beyond.mean()))


def judge_decode(got: np.ndarray, references: Sequence[np.ndarray], family: str) -> tuple[bool, Difference, tuple[int, float]]:
    """(within the family's bounds, the distance outside the span, the bounds that apply)."""
    bounds = FAMILIES[family].bounds(len(references))
    beyond = outside(got, references)
    return beyond.within(bounds), beyond, bounds


def diagnose(got: np.ndarray, expected: np.ndarray, stored: str | None, decoded: str) -> tuple[str, str] | None:
    """The classic bug a decode outside its tolerance looks like: (requirement it breaks, what), from
    ``judging.diagnoses`` (its table decides the rule); None if no fault explains the decode.

    ``stored`` is the stream's stored colour space by the spec's rule, ``decoded`` the
    configuration's decoded_color_space.
    """
    fault = diagnose_decode(got, expected, stored, decoded)
    return (FAULTS[fault].requirement, FAULTS[fault].words) if fault else None




def check_decode(judge: Any, out: np.ndarray, data: bytes, config: JpegConfig, what: str, own: str = "JPEG-DEC-01",
                 defaults: Callable[[], np.ndarray | None] | None = None) -> None:
    """Judge a decoder by its decode ``out`` of ``data``: within its family's slack of the stream's expected decodes.

    The expected decodes are those of the stream, not the chunk it was written from: a right
    decode of a poor stream is right, and the stream's writer is judged by its read-back
    (``judging.read_back``). A decode outside cites the rule of the fault it looks like, else ``own``;
    JPEG-DCS-02 where ``defaults`` (the decode with the omitted decoded_color_space written out) is right.
    """
    from .legal_decoders import expected_decodes

    try:
        references = expected_decodes(data, config, out.shape)
    except (ImportError, LookupError, ValueError) as exc:  # no reference decode: the read-back said why
        judge.metrics["decode_judged"] = f"not judged: {exc}"
        return
    info = inspect(data)
    family = family_for(info)
    ok, beyond, bounds = judge_decode(out, references, family)
    judge.metrics.update(outside_max=beyond.max_abs, outside_mean=round(beyond.mean_abs, 3))
    if ok:
        return
    found = diagnose(out, references[0], info.stored_color_space, config.decoded_color_space)
    again = defaults() if defaults is not None else None
    if again is not None and again.shape == out.shape and judge_decode(again, references, family)[0]:
        found = DEFAULT_TAKEN_WRONG
    requirement, looks = found or (own, "no classic fault explains the samples: the check's own rule is cited")
    span = "the span of libjpeg-turbo's decode and the same with chroma repeated" if len(references) > 1 else "libjpeg-turbo's decode"
    judge.require(False, requirement, f"{what} lies {beyond} outside {span} of the same stream, beyond the {family!r} slack "
                  f"(max {bounds[0]}, mean {bounds[1]}): {'it looks like ' + looks if found else looks}")


__all__ = ["FAMILIES", "Difference", "Tolerance", "check_decode", "diagnose", "difference", "family_for", "judge_decode", "outside"]
