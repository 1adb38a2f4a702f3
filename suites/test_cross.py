"""Cross decoding: what one implementation under test writes, every other one reads back right.

For every encoder x decoder pair among the implementations under test (the pair of an
implementation with itself included) and every mode: the encoder writes a 64x96 natural
image at quality 90, the decoder reads the stream. The decode must lie within its
tolerance family of the span of the expected decodes of that stream
(``corpus.streams.reference_decode``: libjpeg-turbo under the spec's colour rule; and the same
stream with chroma repeated instead of interpolated, where PyTurboJPEG can give its planes).
Encoders may differ (JPEG-Q-03); decoders of one stream may not.

The streams are written once, when the cases are collected. A stream an encoder could not
write (it refused the mode, failed, returned something that is not bytes, or wrote a
stream that breaks what every stream must be) gives no case to its decoders: that is the
encoder's fault, and its own suites judge it, where the same image is written at the same
quality and every stream is read back (``judging.read_back``: a stream that loses more than
its own tables allow is a finding against its encoder). A poor stream still gives cases:
a decoder is judged by the span alone, and a right decode of a poor stream is right. Case ids name the mode and the encoder,
``cross.<mode>.from-<encoder>``; the decoder is the implementation the case runs on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.core.markers import inspect
from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.modes import MODES, Mode
from zarr_jpeg_conformance.corpus.streams import decode_requirements
from zarr_jpeg_conformance.judging import plugin, roots
from zarr_jpeg_conformance.judging.checks import Calls, judge_error, level_mark, owned, raised
from zarr_jpeg_conformance.judging.decode_tolerances import cite_decode, difference, judge_reconstruction
from zarr_jpeg_conformance.judging.legal_decoders import expected_decodes
from zarr_jpeg_conformance.judging.verdict import Outcome, attempt

# The expected decode of each stream is libjpeg-turbo's, through imagecodecs: without it
# there is nothing to judge a decoder against, and the suite says so rather than pass.
pytest.importorskip("imagecodecs", reason="the cross suite computes expected decodes with imagecodecs: "
                    "pip install 'zarr-jpeg-conformance[imagecodecs]'")
pytestmark = pytest.mark.roles("decode")

HEIGHT, WIDTH, QUALITY, KIND = 64, 96, 90, "natural"  # a case of the round trip's fidelity cases too


@dataclass(frozen=True)
class CrossCase:
    """A stream one implementation wrote in one mode, to be read by the implementation under test."""

    id: str
    mode: Mode
    encoder: str
    chunk: np.ndarray
    data: bytes
    #: libjpeg-turbo's decode of ``data`` under the spec's colour rule, and where it can be
    #: made the same stream with chroma repeated instead of interpolated (judging.legal_decoders).
    references: tuple[np.ndarray, ...]
    requirements: tuple[str, ...]
    level: str


def _write(encoder: Any, mode: Mode) -> tuple[np.ndarray, bytes | None]:
    """(chunk, stream) of one encoder in one mode; None where the encoder wrote no valid stream."""
    image = make_image(KIND, HEIGHT, WIDTH, mode.channels, 0)
    chunk = image[:, :, 0] if mode.channels == 1 else image
    parsed = attempt(encoder.parse, mode.codec(QUALITY))
    if not parsed.ok:
        return chunk, None
    got = attempt(encoder.encode, parsed.value, chunk.copy())
    if not got.ok or not isinstance(got.value, bytes | bytearray | memoryview):
        return chunk, None
    data = bytes(got.value)
    info, config = inspect(data), parse_codec(mode.codec(QUALITY))
    fits = (info.ok and info.baseline and (info.height, info.width) == chunk.shape[:2]
            and tuple((c.h, c.v) for c in info.components) == config.subsampling)
    return chunk, data if fits else None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" not in metafunc.fixturenames:
        return
    encoders = [i for i in plugin.implementations(metafunc.config) if "encode" in i.roles]
    params = []
    for encoder in encoders:
        for mode in MODES:
            chunk, data = _write(encoder, mode)
            references = _reference(data, mode, chunk.shape) if data is not None else None
            if data is None or references is None:
                continue
            requirements, level, _ = decode_requirements(mode)
            case = CrossCase(f"cross.{mode.id}.from-{encoder.name}", mode, encoder.name, chunk, data, references,
                             requirements, level)
            params.append(pytest.param(case, id=f"{mode.id}-from-{encoder.name}", marks=level_mark(level)))
    metafunc.parametrize("case", params or [pytest.param(None, marks=pytest.mark.skip(
        reason="no implementation under test wrote a stream to cross-decode"))])


def _reference(data: bytes, mode: Mode, shape: tuple[int, ...]) -> tuple[np.ndarray, ...] | None:
    """The expected decodes, or None for a stream libjpeg-turbo refuses (no case: nothing to judge against)."""
    try:
        return expected_decodes(data, parse_codec(mode.codec(QUALITY)), shape)
    except ValueError:
        return None


def test_cross_decode(impl, case, judge) -> None:
    """A stream one implementation wrote decodes in another to the expected decode, within tolerance."""
    mode, chunk, data = case.mode, case.chunk, case.data
    judge.metrics.update(encoder=case.encoder, decoder=impl.name)
    calls = Calls(judge, impl, mode.codec(QUALITY), chunk.shape)
    what = f"decode of {case.encoder}'s {mode.id} stream"
    kind = decode_requirements(mode)[2]
    got = attempt(impl.decode, calls.parse(), data, chunk.shape)
    if got.error is not None:
        judge_error(judge, what, got)
    if got.rejection is not None:
        if kind == "decode-or-reject":
            judge.finish(Outcome.UNSUPPORTED, f"{what} refused, which {case.requirements[0]} allows: {raised(got)}")
        # What the refusal is about (judging.roots), asked only where refusing is a fail: no probe changes a case's level.
        requirement, why, cause = (roots.decode_diagnosis(impl.decode, calls.parse(), data, chunk.shape, got.rejection,
                                                          mode.codec(QUALITY)) or (case.requirements[0], "", None))
        judge.require(False, requirement, f"{what} refused: {raised(got)}" + (f"; {why}" if why else ""), cause=cause)
    out = owned(judge, got.value, chunk.shape, what)
    judge.metrics["psnr"] = round(psnr(chunk, out), 3)
    config = parse_codec(mode.codec(QUALITY))
    judged = judge_reconstruction(out, data, config, case.references)
    judge.metrics["max_abs"] = difference(out, case.references[0]).max_abs
    cite_decode(judge, judged, out, data, config, f"{impl.name}'s {what}", level="MUST",
                cure=lambda: roots.default_cure(impl, mode.codec(QUALITY), data, chunk.shape,
                                                lambda again: judge_reconstruction(again, data, config, case.references).ok))
