"""Cross decoding: what one implementation under test writes, every other one reads back right.

For every encoder x decoder pair among the implementations under test (the pair of an
implementation with itself included) and every mode: the encoder writes a 64x96 natural
image at quality 90, the decoder reads the stream. The decode must lie within its
tolerance family of the reference decode (``corpus.streams.reference_decode``: libjpeg-turbo
under the spec's colour rule, when imagecodecs is installed) and above the mode's PSNR
floor against the image. Encoders may differ (JPEG-Q-03); decoders of one stream may not.
Case ids name the mode and the encoder, ``cross.<mode>.from-<encoder>``; the decoder is
the implementation the case runs on.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.core.markers import inspect
from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.modes import MODES, Mode
from zarr_jpeg_conformance.corpus.streams import decode_requirements, reference_decode
from zarr_jpeg_conformance.judging import plugin
from zarr_jpeg_conformance.judging.checks import level_mark, parsed_or_verdict
from zarr_jpeg_conformance.judging.decode_tolerances import FAMILIES, diagnose, difference, family_for
from zarr_jpeg_conformance.judging.tolerances import PSNR_FLOORS
from zarr_jpeg_conformance.judging.verdict import Outcome, attempt

pytestmark = pytest.mark.roles("decode")

HEIGHT, WIDTH, QUALITY, KIND = 64, 96, 90, "natural"  # the conditions PSNR_FLOORS were measured under


@dataclass(frozen=True)
class CrossCase:
    """A mode written by one implementation, to be read by the implementation under test."""

    id: str
    mode: Mode
    encoder: Any
    requirements: tuple[str, ...]
    level: str


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" not in metafunc.fixturenames:
        return
    encoders = [i for i in plugin.implementations(metafunc.config) if "encode" in i.roles]
    params = []
    for encoder in encoders:
        for mode in MODES:
            requirements, level, _ = decode_requirements(mode)
            case = CrossCase(f"cross.{mode.id}.from-{encoder.name}", mode, encoder, requirements, level)
            params.append(pytest.param(case, id=f"{mode.id}-from-{encoder.name}", marks=level_mark(level)))
    metafunc.parametrize("case", params)


@cache
def _written(encoder: Any, mode: Mode) -> tuple[np.ndarray, bytes | None, str]:
    """(chunk, stream or None, why not) for one encoder and mode, written once per session."""
    image = make_image(KIND, HEIGHT, WIDTH, mode.channels, 0)
    chunk = image[:, :, 0] if mode.channels == 1 else image
    parsed = attempt(encoder.parse, mode.codec(QUALITY))
    if not parsed.ok:
        return chunk, None, f"parse {parsed.describe()}"
    data = attempt(encoder.encode, parsed.value, chunk)
    if not data.ok:
        return chunk, None, f"encode {data.describe()}"
    return chunk, bytes(data.result), ""


def _reference(data: bytes, codec: dict[str, Any], shape: tuple[int, ...]) -> np.ndarray | None:
    try:
        return reference_decode(data, parse_codec(codec), shape)
    except ImportError:
        return None  # imagecodecs not installed: only the PSNR floor is checked
    except ValueError:
        return None  # the stream is beyond the reference decoder; the PSNR floor still holds


def test_cross_decode(impl, case, judge) -> None:
    """A stream one implementation wrote decodes in another to the reference decode, within tolerance."""
    mode, encoder = case.mode, case.encoder
    judge.metrics.update(encoder=encoder.name, decoder=impl.name)
    chunk, data, why = _written(encoder, mode)
    if data is None:
        judge.finish(Outcome.UNSUPPORTED, f"{encoder.name} wrote no {mode.id} stream to read ({why}); "
                                          "its own suites judge that")
        return
    codec = mode.codec(QUALITY)
    parsed = parsed_or_verdict(judge, impl, codec)
    got = attempt(impl.decode, parsed, data, chunk.shape)
    if got.error is not None:
        judge.finish(Outcome.ERROR, f"decode of {encoder.name}'s {mode.id} stream raised an error: {got.describe()}\n{got.trace()}")
    if got.rejection is not None:
        if decode_requirements(mode)[2] == "decode-or-reject":
            judge.finish(Outcome.UNSUPPORTED, f"{encoder.name}'s {mode.id} stream rejected cleanly ({case.requirements[0]}): {got.describe()}")
        judge.require(False, case.requirements[0], f"{encoder.name}'s {mode.id} stream: decode {got.describe()}")
    out = got.result
    judge.require(isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.shape == chunk.shape, "JPEG-DEC-03",
                  f"decode of {encoder.name}'s {mode.id} stream returned {type(out).__name__} "
                  f"{getattr(out, 'dtype', '')} {getattr(out, 'shape', '')}, expected uint8 {chunk.shape}")
    value = psnr(chunk, out)
    judge.metrics["psnr"] = round(value, 3)
    info = inspect(data)
    expected = _reference(data, codec, chunk.shape)
    if expected is not None:
        family = FAMILIES[family_for(info)]
        diff = difference(out, expected)
        judge.metrics.update(max_abs=diff.max_abs, mean_abs=round(diff.mean_abs, 3))
        if not diff.within(family):
            found = diagnose(out, expected, info.stored_color_space, mode.decoded)
            requirement, what = found if found else ("JPEG-DEC-01", "")
            judge.require(False, requirement,
                          f"{impl.name}'s decode of {encoder.name}'s {mode.id} stream is {diff} from libjpeg-turbo's, beyond "
                          f"the {family.name!r} tolerance (max {family.max_abs}, mean {family.mean_abs})"
                          + (f"; it looks like {what}" if what else ""), level="MUST")
    floor = PSNR_FLOORS[(mode.id, KIND, QUALITY)]
    judge.require(value >= floor, case.requirements[0] if case.level == "MUST" else "JPEG-DEC-01",
                  f"{impl.name}'s decode of {encoder.name}'s {mode.id} stream is {value:.2f} dB from the image, below the "
                  f"{floor} dB floor of the mode", level="MUST")
