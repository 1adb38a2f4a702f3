"""Color spaces: YCbCr passthrough stays untouched, rgb stays raw, decoding follows the stream."""

from __future__ import annotations

import numpy as np
import pytest

from zarr_jpeg_conformance.core.color import ycbcr_to_rgb
from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.modes import codec
from zarr_jpeg_conformance.judging.checks import parsed_or_verdict, succeed
from zarr_jpeg_conformance.judging.tolerances import PASSTHROUGH_PSNR_FLOOR, RAW_RGB_PSNR_FLOOR
from zarr_jpeg_conformance.judging.verdict import attempt

pytestmark = pytest.mark.roles("encode", "decode")

PASSTHROUGH = codec(100, "ycbcr", "ycbcr", [(1, 1), (1, 1), (1, 1)])
RGB = codec(95, "rgb")


@pytest.mark.may
def test_passthrough_untouched(impl, judge) -> None:
    """decoded_color_space ycbcr: YCbCr in, the same YCbCr stored, the same YCbCr out."""
    judge.cite("JPEG-DCS-03")
    judge.cite("JPEG-DCS-06")
    parsed = parsed_or_verdict(judge, impl, PASSTHROUGH)
    # Uniform random triples: many lie outside the RGB gamut, so any detour through RGB
    # clips them and moves samples by up to ~110 levels (backends.md 3).
    chunk = make_image("noise", 32, 48, channels=3, seed=7)
    data = bytes(succeed(judge, "encode", impl.encode, parsed, chunk))
    out = np.asarray(succeed(judge, "decode", impl.decode, parsed, data, chunk.shape)).reshape(chunk.shape)
    value = psnr(chunk, out)
    judge.metrics["psnr"] = round(value, 3)
    judge.require(value >= PASSTHROUGH_PSNR_FLOOR, "JPEG-DCS-03",
                  f"YCbCr round trip at quality 100, 4:4:4 gives {value:.2f} dB < {PASSTHROUGH_PSNR_FLOOR} dB: converted somewhere?")
    # The stream must hold the input's YCbCr: read as RGB it must give the input's RGB.
    as_rgb = parsed_or_verdict(judge, impl, codec(100, "ycbcr", None, [(1, 1), (1, 1), (1, 1)]))
    rgb = np.asarray(succeed(judge, "decode", impl.decode, as_rgb, data, chunk.shape)).reshape(chunk.shape)
    expected = ycbcr_to_rgb(chunk)
    value = psnr(expected, rgb)
    judge.metrics["psnr_as_rgb"] = round(value, 3)
    judge.require(value >= PASSTHROUGH_PSNR_FLOOR, "JPEG-DCS-03",
                  f"the stream read as RGB is {value:.2f} dB from the input's RGB: the stored samples are not the input YCbCr")


@pytest.mark.may
def test_rgb_raw_components(impl, judge) -> None:
    """encoded_color_space rgb: three independent channels come back unconverted."""
    judge.cite("JPEG-ECS-05")
    parsed = parsed_or_verdict(judge, impl, RGB)
    chunk = make_image("fluorescence", 48, 64, channels=3, seed=3)
    data = bytes(succeed(judge, "encode", impl.encode, parsed, chunk))
    out = np.asarray(succeed(judge, "decode", impl.decode, parsed, data, chunk.shape)).reshape(chunk.shape)
    value = psnr(chunk, out)
    judge.metrics["psnr"] = round(value, 3)
    judge.require(value >= RAW_RGB_PSNR_FLOOR, "JPEG-ECS-12",
                  f"rgb round trip gives {value:.2f} dB < {RAW_RGB_PSNR_FLOOR} dB: a YCbCr transform applied on one side?")
    # Decoding ignores encoded_color_space: under a ycbcr configuration the APP14 marker
    # still says the samples are RGB, so the same raw components come back.
    other = parsed_or_verdict(judge, impl, codec(50, "ycbcr", None, [(2, 2), (1, 1), (1, 1)]))
    again = attempt(impl.decode, other, data, chunk.shape)
    if again.rejection is not None:
        judge.cite("JPEG-ECS-12")
        return  # rejecting a stream it cannot honor is allowed
    judge.require(again.ok and np.array_equal(np.asarray(again.value).reshape(chunk.shape), out), "JPEG-DEC-01",
                  f"decoding the rgb stream under a ycbcr configuration {again.describe() if not again.ok else 'gave other samples'}")


@pytest.mark.must
@pytest.mark.parametrize("channels", [1, 3], ids=["gray", "ycbcr"])
def test_decode_ignores_configuration(impl, channels, judge) -> None:
    """Decoding depends on the stream, not on quality or subsampling in the configuration."""
    judge.cite("JPEG-Q-04")
    judge.cite("JPEG-DEC-01")
    if channels == 1:
        written, reading = codec(95, "grayscale"), codec(5, "grayscale")
    else:
        written, reading = codec(95, "ycbcr", None, [(1, 1), (1, 1), (1, 1)]), codec(5, "ycbcr", None, [(2, 2), (1, 1), (1, 1)])
    chunk = make_image("natural", 40, 56, channels=channels)
    parsed_w = parsed_or_verdict(judge, impl, written)
    parsed_r = parsed_or_verdict(judge, impl, reading)
    data = bytes(succeed(judge, "encode", impl.encode, parsed_w, chunk))
    same = np.asarray(succeed(judge, "decode", impl.decode, parsed_w, data, chunk.shape)).reshape(chunk.shape)
    other = np.asarray(succeed(judge, "decode", impl.decode, parsed_r, data, chunk.shape)).reshape(chunk.shape)
    judge.require(np.array_equal(same, other), "JPEG-DEC-01",
                  f"decoding under quality 5 / 4:2:0 differs from decoding under the writing configuration "
                  f"(max difference {int(np.abs(same.astype(int) - other.astype(int)).max())})")
