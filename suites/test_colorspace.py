"""Colour spaces: YCbCr passthrough stays untouched, rgb stays raw, decoding follows the stream, not the configuration."""

from __future__ import annotations

import numpy as np
import pytest

from zarr_jpeg_conformance.core.color import ycbcr_to_rgb
from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.modes import codec
from zarr_jpeg_conformance.judging.checks import Calls
from zarr_jpeg_conformance.judging.diagnoses import cite, diagnose_quality, diagnose_roundtrip
from zarr_jpeg_conformance.judging.tolerances import PASSTHROUGH_PSNR_FLOOR, RAW_RGB_PSNR_FLOOR

pytestmark = pytest.mark.roles("encode", "decode")

C444 = [(1, 1), (1, 1), (1, 1)]
C420 = [(2, 2), (1, 1), (1, 1)]
PASSTHROUGH = codec(100, "ycbcr", "ycbcr", C444)
RGB = codec(95, "rgb")


@pytest.mark.may
def test_passthrough_untouched(impl, judge) -> None:
    """decoded_color_space ycbcr: YCbCr in, the same YCbCr stored, the same YCbCr out."""
    judge.cite("JPEG-DCS-03")
    judge.cite("JPEG-DCS-06")
    # Uniform random triples: many lie outside the RGB gamut, so any detour through RGB
    # clips them and moves samples by up to ~110 levels (backends.md 3).
    chunk = make_image("noise", 32, 48, channels=3, seed=7)
    calls = Calls(judge, impl, PASSTHROUGH, chunk.shape)
    data = calls.encode(chunk)
    out = calls.decode(data, chunk.shape)
    value = psnr(chunk, out)
    judge.metrics["psnr"] = round(value, 3)
    if value < PASSTHROUGH_PSNR_FLOOR:
        requirement, why = cite(diagnose_roundtrip(out, chunk, "ycbcr", "ycbcr") or diagnose_quality(data, 100), "JPEG-DCS-03")
        judge.require(False, requirement,
                      f"YCbCr round trip at quality 100, 4:4:4 gives {value:.2f} dB < {PASSTHROUGH_PSNR_FLOOR} dB: {why}")
    # The stream must hold the input's YCbCr: read as RGB it must give the input's RGB.
    rgb = Calls(judge, impl, codec(100, "ycbcr", None, C444), chunk.shape).decode(data, chunk.shape, "decode as RGB")
    expected = ycbcr_to_rgb(chunk)
    value = psnr(expected, rgb)
    judge.metrics["psnr_as_rgb"] = round(value, 3)
    judge.require(value >= PASSTHROUGH_PSNR_FLOOR, "JPEG-DCS-03",
                  f"the stream read as RGB is {value:.2f} dB from the input's RGB: the stored samples are not the input YCbCr")


@pytest.mark.may
def test_rgb_raw_components(impl, judge) -> None:
    """encoded_color_space rgb: three independent channels come back unconverted, under any configuration."""
    judge.cite("JPEG-ECS-05")
    chunk = make_image("fluorescence", 48, 64, channels=3, seed=3)
    calls = Calls(judge, impl, RGB, chunk.shape)
    data = calls.encode(chunk)
    out = calls.decode(data, chunk.shape)
    value = psnr(chunk, out)
    judge.metrics["psnr"] = round(value, 3)
    if value < RAW_RGB_PSNR_FLOOR:
        requirement, why = cite(diagnose_roundtrip(out, chunk, "rgb", "rgb") or diagnose_quality(data, 95), "JPEG-ECS-05")
        judge.require(False, requirement, f"rgb round trip gives {value:.2f} dB < {RAW_RGB_PSNR_FLOOR} dB: {why}")
    # Decoding ignores encoded_color_space and subsampling (JPEG-DEC-01): under a ycbcr
    # configuration the APP14 marker still says the samples are RGB, and an implementation
    # that accepted rgb can decode rgb streams (JPEG-ECS-11), so the same samples come back.
    judge.cite("JPEG-DEC-01")
    other = Calls(judge, impl, codec(50, "ycbcr", None, C420), chunk.shape)
    other.support = calls.support  # refusing this rgb stream is refusing rgb, which the implementation accepted
    again = other.decode(data, chunk.shape, "decode of the rgb stream under a ycbcr 4:2:0 configuration")
    diff = int(np.abs(again.astype(np.int16) - out.astype(np.int16)).max())
    judge.require(diff == 0, "JPEG-DEC-01",
                  f"decoding the rgb stream under a ycbcr configuration gives samples up to {diff} levels from its decode "
                  "under the rgb configuration: the configuration, not the stream, chose the colour transform")


@pytest.mark.must
@pytest.mark.parametrize("channels", [1, 3], ids=["gray", "ycbcr"])
def test_decode_ignores_configuration(impl, channels, judge) -> None:
    """Decoding depends on the stream, not on quality or subsampling in the configuration."""
    judge.cite("JPEG-Q-04")
    judge.cite("JPEG-DEC-01")
    if channels == 1:
        written, reading = codec(95, "grayscale"), codec(5, "grayscale")
    else:
        written, reading = codec(95, "ycbcr", None, C444), codec(5, "ycbcr", None, C420)
    chunk = make_image("natural", 40, 56, channels=channels)
    writer = Calls(judge, impl, written, chunk.shape)
    data = writer.encode(chunk)
    same = writer.decode(data, chunk.shape, "decode under the writing configuration")
    other = Calls(judge, impl, reading, chunk.shape).decode(data, chunk.shape, "decode under quality 5 / 4:2:0")
    diff = int(np.abs(same.astype(np.int16) - other.astype(np.int16)).max())
    judge.require(diff == 0, "JPEG-DEC-01",
                  f"decoding under quality 5 / 4:2:0 differs from decoding under the writing configuration by up to {diff} levels")
