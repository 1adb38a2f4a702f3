"""How a decode is judged: by the accuracy of its reconstruction, or by the span of the stream's expected decodes.

Wherever the stream's coefficients can be read (every baseline and extended-sequential Huffman
stream: ``judging.t81``), a decode is judged against the exact reconstruction by the invariants
every legal decoder keeps (``judging.decoder_accuracy``): T.83's accuracy on full-resolution
components, every sample inside the colours the stream allows there, chroma reproducing its
stored samples over their footprints, sited as JFIF sites it. No decoder's output is the
reference, and any interpolating upsampler passes (:func:`judge_reconstruction`).

Where the coefficients cannot be read (progressive, arithmetic, lossless streams), the older
yardstick remains: the span of the expected decodes, from decoders that share no code
(``fixturegen.independent``: libjpeg-turbo, with its accurate IDCT and triangle upsampling,
and Go's image/jpeg, with its own IDCT and chroma repetition; the cross suite computes two at
run time), within a slack measured over every shipped decoder (:data:`FAMILIES`). Where a stream
has one expected decode only, the slack is the wider bound around it (``alone_*``).

A decode that is wrong cites the rule of the fault it looks like (``judging.diagnoses``: named
against the legal exact decode closest to it), else its case's own rule (:func:`cite_decode`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.config import JpegConfig
from ..core.markers import LOSSLESS_SOF, StreamInfo, inspect
from .checks import constant_note
from .decoder_accuracy import Region, accuracy_of, exact_decode, exact_ycbcr, where_wrong
from .decoder_accuracy import metrics as accuracy_metrics
from .diagnoses import FAULTS, by_markers, diagnose_decode, fault_cause
from .roots import default_taken_wrong
from .verdict import Cause, Diagnosis


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


def diagnose(got: np.ndarray, expected: np.ndarray, stored: str | None, decoded: str,
             exact: Callable[[Callable[[np.ndarray], np.ndarray]], np.ndarray] | None = None,
             data: bytes | None = None, raw: Callable[[], np.ndarray] | None = None) -> Diagnosis | None:
    """The classic bug a decode outside its tolerance looks like: (requirement it breaks, what, the cause), from
    ``judging.diagnoses`` (its table decides the rule); None if no fault explains the decode.

    ``stored`` is the stream's stored colour space by the spec's rule, ``decoded`` the
    configuration's decoded_color_space; ``data``, the stream, names a fault more exactly by its markers.
    """
    fault = diagnose_decode(got, expected, stored, decoded, exact, raw)
    if fault is None:
        return None
    fault = by_markers(fault, data)
    return Diagnosis(FAULTS[fault].requirement, FAULTS[fault].words, fault_cause(fault, "decode"))


#: Faults confined to the partial MCUs of an edge, by the edge (``decoder_accuracy.Region.edge``).
EDGE_CAUSES = {
    "right": Cause("decode", "partial-mcu-right-edge", "JPEG-DEC-01",
                   "wrong samples only in the partial MCU at the right edge (the columns past the last whole MCU)"),
    "bottom": Cause("decode", "partial-mcu-bottom-edge", "JPEG-DEC-01",
                    "wrong samples only in the partial MCU at the bottom edge (the rows past the last whole MCU)"),
    "right and bottom": Cause("decode", "partial-mcu-edges", "JPEG-DEC-01",
                              "wrong samples only in the partial MCUs at the right and bottom edges"),
}


@dataclass(frozen=True)
class Judgement:
    """A decode judged: whether it is one a legal decoder gives, what is wrong in words, and the decode faults are
    named against (the exact reconstruction where the stream's coefficients can be read, else libjpeg-turbo's)."""

    ok: bool
    observed: str
    expected: np.ndarray
    metrics: dict[str, float | str]
    #: Where the coefficients were read: the exact YCbCr, upsampled as ``expected`` is, converted by a given function
    #: (``judging.diagnoses`` names other conversions by it).
    exact: Callable[[Callable[[np.ndarray], np.ndarray]], np.ndarray] | None = None
    #: Where the decode is wrong (None where nothing is, or it cannot be told).
    region: Region | None = None
    #: Where the coefficients were read: the stream's components at full resolution, unconverted, rounded.
    raw: Callable[[], np.ndarray] | None = None


References = Sequence[np.ndarray] | Callable[[], Sequence[np.ndarray]]


def judge_reconstruction(out: np.ndarray, data: bytes, config: JpegConfig, references: References,
                         family: str | None = None) -> Judgement:
    """Judge a decode of ``data`` under ``config``: by the accuracy of its reconstruction where the stream's
    coefficients can be read (``judging.decoder_accuracy``), else by the span of the stream's expected decodes
    (``references``, given or made on demand) within ``family``'s slack.

    Raises LookupError where neither can be had (no coefficients, no expected decode).
    """
    from .decoder_accuracy import problems
    from .t81.reading import reading

    accuracy = accuracy_of(out, data, config)
    found = reading(data)
    raw = _raw(found.coefficients, out.shape)
    if accuracy is not None and found.coefficients is not None:
        stored = str(found.stream.stored_color_space)
        wrong = problems(accuracy, stored == "ycbcr" and config.decoded_color_space == "rgb")
        coefficients = found.coefficients
        legal = {way: exact_decode(coefficients, stored, config.decoded_color_space, out.shape, way)
                 for way in ("repeat", "triangle")}
        way = min(legal, key=lambda w: float(np.abs(legal[w].astype(np.int16) - out.astype(np.int16)).mean()))
        observed = "; ".join(wrong) + (constant_note(out, legal[way]) if wrong else "")
        return Judgement(not wrong, observed, legal[way], accuracy_metrics(accuracy),
                         lambda convert: convert(exact_ycbcr(coefficients, way)).reshape(out.shape),
                         where_wrong(accuracy.wrong, accuracy.mcu) if wrong else None, raw)
    refs = tuple(references() if callable(references) else references)
    if not refs:
        raise LookupError("no expected decode of this stream")
    family = family or family_for(inspect(data))
    ok, beyond, bounds = judge_decode(out, refs, family)
    span = ("the span of the expected decodes (libjpeg-turbo's, and another decoder's)" if len(refs) > 1
            else "the expected decode (libjpeg-turbo's)")
    observed = "" if ok else (f"it lies {beyond} outside {span}, beyond the {family!r} slack (max {bounds[0]}, mean "
                              f"{bounds[1]}; the stream's coefficients cannot be read here: {found.undecodable})"
                              + constant_note(out, refs[0]))
    region = None
    if not ok and refs[0].shape == out.shape and out.ndim >= 2:
        far = np.abs(out.astype(np.int16) - refs[0].astype(np.int16)) > bounds[0]
        info = inspect(data)
        mcu = (8 * max((c.v for c in info.components), default=1), 8 * max((c.h for c in info.components), default=1))
        region = where_wrong(np.asarray(far.reshape(*out.shape[:2], -1).any(axis=2)), mcu)
    return Judgement(ok, observed, refs[0], {"outside_max": beyond.max_abs, "outside_mean": round(beyond.mean_abs, 3)},
                     region=region, raw=raw)


def _raw(coefficients: Any, shape: tuple[int, ...]) -> Callable[[], np.ndarray] | None:
    """The stream's components at full resolution, unconverted and rounded, as a chunk of ``shape``; None where the
    coefficients were not read or do not fill it."""
    if coefficients is None:
        return None
    frame = coefficients.frame
    if frame.height * frame.width * len(frame.components) != int(np.prod(shape)):
        return None
    return lambda: np.clip(np.rint(exact_ycbcr(coefficients)), 0, 255).astype(np.uint8).reshape(shape)


def cite_decode(judge: Any, judged: Judgement, out: np.ndarray, data: bytes, config: JpegConfig, what: str,
                own: str = "JPEG-DEC-01", cure: Callable[[], Diagnosis | None] | None = None,
                level: str | None = None) -> None:
    """Record a judged decode: nothing where it passes; else fail under the rule of the fault it looks like (``cure``
    first: a fault that writing the default out, or another configuration, cures), else ``own``; a decode wrong only
    in the partial MCUs of an edge is that fault (:data:`EDGE_CAUSES`); where none fits, the message says where the
    samples are wrong."""
    judge.metrics.update(judged.metrics)
    if judged.ok:
        return
    stored = inspect(data).stored_color_space
    found = (cure() if cure is not None else None) or diagnose(out, judged.expected, stored, config.decoded_color_space,
                                                                judged.exact, data, judged.raw)
    region = judged.region
    if found is not None:
        requirement, looks, cause = found
        words = f"it looks like {looks}"
    elif region is not None and region.edge:
        cause = EDGE_CAUSES[region.edge]
        requirement, words = cause.requirement, f"{region}: {cause.words}"
    else:
        requirement, cause = own, None
        located = f" ({region})" if region is not None else ""
        words = f"no classic fault explains the samples{located}: the check's own rule is cited"
    judge.require(False, requirement, f"{what}: {judged.observed}; {words}", level=level, cause=cause)


def check_decode(judge: Any, out: np.ndarray, data: bytes, config: JpegConfig, what: str, own: str = "JPEG-DEC-01",
                 defaults: Callable[[], np.ndarray | None] | None = None) -> None:
    """Judge a decoder by its decode ``out`` of ``data`` (:func:`judge_reconstruction`).

    The stream is the truth, not the chunk it was written from: a right decode of a poor stream
    is right, and the stream's writer is judged by its coefficients and read-back
    (``judging.read_back``). A decode that is wrong cites the rule of the fault it looks like,
    else ``own``; JPEG-DCS-02 where ``defaults`` (the decode with the omitted decoded_color_space
    written out) is right.
    """
    from .legal_decoders import expected_decodes

    try:
        judged = judge_reconstruction(out, data, config, lambda: expected_decodes(data, config, out.shape))
    except (ImportError, LookupError, ValueError) as exc:  # no reference decode: the read-back said why
        judge.metrics["decode_judged"] = f"not judged: {exc}"
        return

    def cure() -> Diagnosis | None:
        again = defaults() if defaults is not None else None
        if again is not None and again.shape == out.shape and judge_reconstruction(again, data, config, (judged.expected,)).ok:
            return default_taken_wrong("decode")
        return None

    cite_decode(judge, judged, out, data, config, what, own, cure)


__all__ = ["EDGE_CAUSES", "FAMILIES", "Difference", "Judgement", "Tolerance", "check_decode", "cite_decode", "diagnose",
           "difference", "family_for", "judge_decode", "judge_reconstruction", "outside"]
