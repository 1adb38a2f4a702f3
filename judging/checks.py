"""How the suites call an implementation: every refusal judged by one capability model.

The capability model. Every configuration and chunk a case asks for is either something
every implementation must do (grayscale and RGB -> YCbCr with the four J:a:b schemes:
JPEG-ECS-08, JPEG-SUB-08) or an optional feature (rgb JPEG-ECS-09, YCbCr passthrough
JPEG-DCS-05, other sampling factors JPEG-X-04, dimensions 65501-65535 JPEG-X-03). A clean
refusal (ValueError/TypeError) of an optional feature is ``unsupported`` wherever it
happens: at parse, at encode or at decode, in every suite. A refusal of a required
feature is a ``fail`` wherever it happens, citing the requirement that makes it required.
Two optional features cannot be refused at decode once the configuration was accepted:
the spec asks an implementation that cannot *decode* rgb to reject it when parsing
(JPEG-ECS-11), and one that accepted ``decoded_color_space: ycbcr`` must return the
stored YCbCr (JPEG-DCS-06). Support for decoding only needs no declaration: accept the
configuration, refuse at encode.

:class:`Calls` applies the model, hands the implementation a copy of every chunk (an
encoder that changes its input cannot change what it is compared with), checks every
stream it writes (``judging.written``) and reads it back by the reference decoders
(``judging.read_back``), and turns every result into a plain, owned
``numpy.ndarray`` at once (two decodes compared are never the same memory).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from ..core.chunk import LIBJPEG_MAX_DIMENSION, SPEC_MAX_DIMENSION
from ..core.config import JpegConfig, parse_codec
from . import roots
from .encoder_accuracy import layout_cause
from .read_back import check_samples
from .t81.reading import reading
from .verdict import Attempt, Cause, Diagnosis, Outcome, attempt
from .written import check_written

_MARK = {"MUST": pytest.mark.must, "SHOULD": pytest.mark.should, "MAY": pytest.mark.may}
STAGES = ("parse", "encode", "decode")


def level_mark(level: str) -> pytest.MarkDecorator:
    """The must / should / may marker of a requirement level."""
    return _MARK[level]


def case_params(cases: Iterable[Any]) -> list[Any]:
    """pytest params with the case ID as test ID and the case's level as marker."""
    return [pytest.param(c, id=c.id, marks=level_mark(c.level)) for c in cases]


@dataclass(frozen=True)
class Feature:
    """An optional feature a case uses: the requirement that makes it optional, and where it may be refused."""

    requirement: str
    #: Stages at which a clean refusal is 'unsupported'.
    refusable: frozenset[str]
    #: The requirement broken by refusing it at any other stage, once the configuration was accepted.
    afterwards: str


_RGB = Feature("JPEG-ECS-09", frozenset({"parse", "encode"}), "JPEG-ECS-11")
_PASSTHROUGH = Feature("JPEG-DCS-05", frozenset({"parse", "encode"}), "JPEG-DCS-06")
_FACTORS = Feature("JPEG-X-04", frozenset(STAGES), "JPEG-X-04")
_LARGE = Feature("JPEG-X-03", frozenset({"encode", "decode"}), "JPEG-X-03")


@dataclass(frozen=True)
class Support:
    """What a case asks of an implementation: its optional features, and why the rest is required."""

    features: tuple[Feature, ...]
    #: The requirement that makes what is not optional required.
    required_by: str

    @property
    def optional(self) -> str | None:
        """The first optional feature's requirement (None when everything is required)."""
        return self.features[0].requirement if self.features else None

    def refusable_at(self, stage: str) -> Feature | None:
        return next((f for f in self.features if stage in f.refusable), None)

    def broken_by_refusal(self) -> str:
        """The requirement a refusal breaks where no feature allows it."""
        return next((f.afterwards for f in self.features), self.required_by)


def support_of(config: JpegConfig, chunk_shape: Sequence[int] | None = None) -> Support:
    """The capability model's reading of a configuration (and, for chunks, of its size)."""
    features: list[Feature] = []
    if config.encoded_color_space == "rgb":
        features.append(_RGB)
    if config.decoded_color_space == "ycbcr":
        features.append(_PASSTHROUGH)
    if not config.is_required_scheme:
        features.append(_FACTORS)
    if chunk_shape is not None and any(LIBJPEG_MAX_DIMENSION < int(n) <= SPEC_MAX_DIMENSION for n in tuple(chunk_shape)[:2]):
        features.append(_LARGE)
    required = "JPEG-SUB-08" if config.encoded_color_space == "ycbcr" else "JPEG-ECS-08"
    return Support(tuple(features), required)


def raised(got: Attempt[Any]) -> str:
    """``ExceptionType: message`` of a call that did not succeed."""
    exc = got.rejection or got.error
    return f"{type(exc).__name__}: {exc}" if exc is not None else "nothing"


def judge_refusal(judge: Any, support: Support, stage: str, what: str, got: Attempt[Any],
                  diagnosis: Diagnosis | None = None) -> None:
    """Record a clean refusal at ``stage``: 'unsupported' where an optional feature allows it, else a fail.

    The fail cites ``diagnosis``'s requirement where a probe found what the refusal is about
    (``judging.roots``), else the requirement that makes the refused feature required. A
    diagnosed refusal is no refusal of the optional feature: the probe shows the
    implementation has it, and refuses something else.
    """
    feature = support.refusable_at(stage)
    if feature is not None and diagnosis is None:
        judge.cite(feature.requirement)
        judge.finish(Outcome.UNSUPPORTED, f"{what} refused, an optional feature ({feature.requirement}): {raised(got)}")
    requirement, why, cause = diagnosis or (support.broken_by_refusal(), "", None)
    judge.require(False, requirement, f"{what} refused: {raised(got)}" + (f"; {why}" if why else ""), cause=cause)


def no_equivalent(got: Attempt[Any]) -> bool:
    """Whether a refusal is the adapter's, not the codec's: the adapter of a codec with a configuration of its own found
    no exact equivalent of the spec's codec object (``adapters.zarr_codecs.NoEquivalent``, in process or named by a
    harness's reply), so the codec was never asked."""
    exc = got.rejection
    return exc is not None and "NoEquivalent" in (type(exc).__name__, getattr(exc, "exception", None))


def judge_error(judge: Any, what: str, got: Attempt[Any]) -> None:
    """Record an exception that is not a rejection as the implementation's error.

    Its finding is the stage and the exception's type (``parse: RuntimeError``): one fault that
    raises wherever a stage runs is one finding, whatever the cases' own rules.
    """
    stage = next((s for s in (*STAGES, "build") if what.split(" ", 1)[0] == s), "call")
    exc = got.error or got.rejection
    if getattr(judge, "finding", None) is None:
        judge.finding = f"{stage}: {type(exc).__name__}"
    judge.finish(Outcome.ERROR, f"{what} raised an exception that is not a rejection: {raised(got)}\n{got.trace()}")


def owned(judge: Any, value: object, shape: Sequence[int], what: str) -> np.ndarray:
    """A decode result as a plain, owned uint8 array of ``shape``; anything else fails the case.

    Copied at once, so a decoder that reuses one output buffer cannot make two decodes
    compare equal, and a subclass cannot change how the suite's comparisons behave.
    """
    shape = tuple(int(n) for n in shape)
    if not isinstance(value, np.ndarray):
        judge.require(False, "JPEG-DEC-03", f"{what} returned {type(value).__name__}, not an array of shape {shape}")
    assert isinstance(value, np.ndarray)
    out = np.array(value, copy=True, subok=False)
    judge.require(out.dtype == np.uint8, "JPEG-DT-01", f"{what} returned samples of dtype {out.dtype}, not uint8")
    judge.require(out.shape == shape, "JPEG-DEC-03", f"{what} returned shape {out.shape}, not the chunk shape {shape}")
    return out


def constant_note(got: np.ndarray, expected: np.ndarray) -> str:
    """'; the decode is constant (every sample is N)' where that is the bug, else ''."""
    if got.size and expected.size and got.min() == got.max() and expected.min() != expected.max():
        return f"; the decode is constant (every sample is {int(got.flat[0])}) where the image is not"
    return ""


def frame_sides(data: object) -> tuple[int, int] | None:
    """(height, width) a written stream's frame header records, None where it has none."""
    frame = reading(bytes(data)).stream.frame if isinstance(data, bytes | bytearray | memoryview) else None
    return (frame.height, frame.width) if frame is not None else None


def squeezed_frame(data: object, shape: Sequence[int]) -> bool:
    """Whether a stream written for a chunk of ``shape`` is the image the chunk makes once its length-1 axes are
    dropped (and what is left made at least 2-D: a row, or a column where the last axis was 1), where that is not the
    chunk's own (H, W): what an encoder that squeezes its input writes (imagecodecs' ``_squeeze_shape``)."""
    from ..core.markers import inspect

    info = inspect(bytes(data)) if isinstance(data, bytes | bytearray | memoryview) else None
    if info is None or not info.ok:
        return False
    left = [int(n) for n in shape if int(n) != 1]
    if not left:
        image = (1, 1)
    elif len(left) == 1:
        image = (left[0], 1) if len(shape) > 1 and int(shape[-1]) == 1 else (1, left[0])
    else:
        image = (left[0], left[1])
    own = tuple(int(n) for n in shape[:2]) if len(shape) >= 2 else None
    return (info.height, info.width) == image and image != own


class Calls:
    """Calls to one implementation under one configuration, judged by the capability model.

    ``parse`` parses the (valid) codec object; ``encode`` hands over a copy of the chunk
    and checks the stream; ``decode`` returns an owned array of the chunk shape. A
    refusal is 'unsupported' or a fail as :func:`judge_refusal` says, any other
    exception is an error; either ends the test.
    """

    def __init__(self, judge: Any, impl: Any, codec: Mapping[str, Any], chunk_shape: Sequence[int] | None = None) -> None:
        self.judge = judge
        self.impl = impl
        self.codec = codec
        self.config = parse_codec(codec)
        self.support = support_of(self.config, chunk_shape)
        self._parsed: object = None
        self._has_parsed = False

    def parse(self) -> object:
        """The implementation's parse of the configuration (once; later calls reuse it)."""
        if not self._has_parsed:
            got = attempt(self.impl.parse, self.codec)
            what = "parse of a valid configuration"
            diagnosis = roots.parse_diagnosis(self.impl.parse, self.codec) if got.rejection is not None else None
            if not got.ok:
                if diagnosis is None:
                    self._refusable(got, "parse", what)
                roots.block_or_root(self.judge, roots.key("parse", self.impl.name, self.codec),
                                    roots.own_parse_case(self.codec), what, got)
            if got.error is not None:
                judge_error(self.judge, what, got)
            if got.rejection is not None:
                judge_refusal(self.judge, self.support, "parse", what, got, diagnosis)
            self._parsed, self._has_parsed = got.value, True
        return self._parsed

    def encode(self, chunk: np.ndarray, what: str = "encode") -> bytes:
        """The stream written for a copy of ``chunk``, checked against what every stream must be; a check that fails
        without a cause of its own asks :meth:`written_cause`."""
        data = self.write(chunk, what)
        with self.judge.explaining(lambda: self.written_cause(data, chunk)):
            check_written(self.judge, data, self.config, chunk.shape, what)
            check_samples(self.judge, data, self.config, np.asarray(chunk), what,
                          lambda: roots.written_with_defaults(self.impl, self.codec, chunk))
        return data

    def written_cause(self, data: bytes, chunk: np.ndarray) -> Cause | None:
        """What a wrong stream of ``chunk`` is, where a fault of layout explains it whatever its header says: the chunk
        read as planes, its chroma handed over unsubsampled (``encoder_accuracy.layout_cause``), its length-1 axes
        dropped (``roots.squeezes``)."""
        cause = layout_cause(data, self.config, chunk)
        if cause is not None:
            return cause
        if squeezed_frame(data, chunk.shape) and roots.squeezes(self.impl.encode, self.parse(), tuple(chunk.shape[2:])):
            return roots.SQUEEZE  # first: a 1xWx1 chunk squeezed and made a column also looks transposed
        if chunk.ndim >= 2 and chunk.shape[0] != chunk.shape[1] and frame_sides(data) == (chunk.shape[1], chunk.shape[0]):
            return roots.SWAPPED_AXES  # the frame records the chunk's sides the other way round
        return None

    def write(self, chunk: np.ndarray, what: str = "encode") -> bytes:
        """Like :meth:`encode`, without the stream checks (for suites that judge the stream themselves)."""
        parsed = self.parse()
        got = attempt(self.impl.encode, parsed, np.array(chunk, copy=True))
        where = f"{what} of a valid {chunk.dtype}{list(chunk.shape)} chunk"
        # What the refusal is about is asked first, as parse and decode do: an encoder that writes its optional
        # mode for a 16x16 chunk and refuses this one has the feature, and refuses something else.
        diagnosis = (roots.encode_diagnosis(self.impl.encode, parsed, chunk, self.config.mcu)
                     if got.rejection is not None else None)
        if diagnosis is not None and diagnosis[0] == "JPEG-DIM-02" and _LARGE in self.support.features:
            diagnosis = None  # refused for its size, which is the optional feature itself (65501-65535, JPEG-X-03)
        if not got.ok:
            if diagnosis is None:
                self._refusable(got, "encode", where)
            form = roots.chunk_form(chunk, self.config.mcu)
            roots.block_or_root(self.judge, (*roots.key("encode", self.impl.name, self.codec), form),
                                roots.own_chunk_case(self.codec, chunk), where, got)
        if got.error is not None:
            judge_error(self.judge, where, got)
        if got.rejection is not None:
            judge_refusal(self.judge, self.support, "encode", where, got, diagnosis)
        data = got.value
        self.judge.require(isinstance(data, bytes | bytearray | memoryview), "JPEG-FMT-01",
                           f"{where} returned {type(data).__name__}, not the bytes of a JPEG stream")
        assert isinstance(data, bytes | bytearray | memoryview)
        return bytes(data)

    def decode(self, data: bytes, shape: Sequence[int], what: str = "decode") -> np.ndarray:
        """The implementation's decode of ``data`` into ``shape``, as an owned array."""
        parsed = self.parse()
        got = attempt(self.impl.decode, parsed, bytes(data), tuple(int(n) for n in shape))
        diagnosis = (roots.decode_diagnosis(self.impl.decode, parsed, data, shape, got.rejection, self.codec)
                     if got.rejection is not None else None)
        if diagnosis is not None and diagnosis.requirement == "JPEG-DIM-02" and _LARGE in self.support.features:
            diagnosis = None  # refused for its size, which is the optional feature itself (65501-65535, JPEG-X-03)
        if not got.ok:
            if diagnosis is None:
                self._refusable(got, "decode", what)
            form = f"{len(shape)}d-{shape[2] if len(shape) > 2 else 1}c"
            roots.block_or_root(self.judge, (*roots.key("decode", self.impl.name, self.codec), form), None, what, got)
        if got.error is not None:
            judge_error(self.judge, what, got)
        if got.rejection is not None:
            judge_refusal(self.judge, self.support, "decode", what, got, diagnosis)
        return owned(self.judge, got.value, shape, what)

    def _refusable(self, got: Attempt[Any], stage: str, what: str) -> None:
        """A clean refusal of an optional feature at a stage that allows it: 'unsupported' now, before any root is looked for."""
        if got.rejection is not None and self.support.refusable_at(stage) is not None:
            judge_refusal(self.judge, self.support, stage, what, got)


__all__ = ["Calls", "Feature", "Support", "case_params", "constant_note", "judge_error",
           "judge_refusal", "level_mark", "no_equivalent", "owned", "raised", "frame_sides", "squeezed_frame", "support_of"]
