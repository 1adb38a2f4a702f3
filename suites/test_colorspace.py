"""Colour spaces: YCbCr passthrough stays untouched, rgb stays raw, decoding follows the stream, not the configuration."""

from __future__ import annotations

import numpy as np
import pytest

from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.modes import MODE, codec
from zarr_jpeg_conformance.judging import roots
from zarr_jpeg_conformance.judging.checks import Calls
from zarr_jpeg_conformance.judging.decode_tolerances import check_decode

pytestmark = pytest.mark.roles("encode", "decode")

# The spec's schemes, from the corpus's one table of them (corpus.modes), not written out again here.
C444 = list(MODE["ycbcr-444"].subsampling or ())
C420 = list(MODE["ycbcr-420"].subsampling or ())
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
    # The stream must hold the input's YCbCr (its read-back, in Calls.encode); the decode
    # returns the stored YCbCr, and read as RGB the same stream gives the RGB of what it stores.
    calls = Calls(judge, impl, PASSTHROUGH, chunk.shape)
    data = calls.encode(chunk)
    out = calls.decode(data, chunk.shape)
    judge.metrics["psnr"] = round(psnr(chunk, out), 3)
    check_decode(judge, out, data, calls.config, "decode of its passthrough stream", "JPEG-DCS-06")
    as_rgb = Calls(judge, impl, codec(100, "ycbcr", None, C444), chunk.shape)
    rgb = as_rgb.decode(data, chunk.shape, "decode as RGB")
    check_decode(judge, rgb, data, as_rgb.config, "decode of its passthrough stream as RGB", "JPEG-DCS-03",
                 lambda: roots.decoded_with_defaults(impl, as_rgb.codec, data, chunk.shape))


@pytest.mark.may
def test_rgb_raw_components(impl, judge) -> None:
    """encoded_color_space rgb: three independent channels come back unconverted, under any configuration."""
    judge.cite("JPEG-ECS-05")
    chunk = make_image("fluorescence", 48, 64, channels=3, seed=3)
    calls = Calls(judge, impl, RGB, chunk.shape)
    data = calls.encode(chunk)  # read back: the components stored as given (judging.read_back)
    out = calls.decode(data, chunk.shape)
    judge.metrics["psnr"] = round(psnr(chunk, out), 3)
    check_decode(judge, out, data, calls.config, "decode of its rgb stream", "JPEG-DEC-01")
    # Decoding ignores encoded_color_space and subsampling (JPEG-DEC-01): under a ycbcr
    # configuration the APP14 marker still says the samples are RGB, and an implementation
    # that accepted rgb can decode rgb streams (JPEG-ECS-11), so the same samples come back.
    judge.cite("JPEG-DEC-01")
    other = Calls(judge, impl, codec(50, "ycbcr", None, C420), chunk.shape)
    other.support = calls.support  # refusing this rgb stream is refusing rgb, which the implementation accepted
    again = other.decode(data, chunk.shape, "decode of the rgb stream under a ycbcr 4:2:0 configuration")
    diff = int(np.abs(again.astype(np.int16) - out.astype(np.int16)).max())
    cure = roots.default_cure(impl, other.codec, data, chunk.shape, lambda right: bool(np.array_equal(right, out))) if diff else None
    requirement, why, cause = cure or ("JPEG-DEC-01", "the configuration, not the stream, chose the colour transform",
                                       roots.FOLLOWS_CONFIGURATION)
    judge.require(diff == 0, requirement, f"decoding the rgb stream under a ycbcr configuration gives samples up to {diff} "
                  f"levels from its decode under the rgb configuration: {why}", cause=cause)


C422 = list(MODE["ycbcr-422"].subsampling or ())
C440 = list(MODE["ycbcr-440"].subsampling or ())
#: (written subsampling, the configurations read under): a 4:4:4 stream and subsampled ones, whose upsampling a
#: decoder must not choose by the configuration either.
RE_READ = {"gray": (None, ()), "ycbcr": (C444, (C420,)), "ycbcr-420": (C420, (C444, C422)), "ycbcr-422": (C422, (C440, C444))}


@pytest.mark.must
@pytest.mark.parametrize("written", list(RE_READ))
def test_decode_ignores_configuration(impl, written, judge) -> None:
    """Decoding depends on the stream, not on quality or subsampling in the configuration."""
    judge.cite("JPEG-Q-04")
    judge.cite("JPEG-DEC-01")
    factors, others = RE_READ[written]
    if factors is None:
        writing, readings = codec(95, "grayscale"), [codec(5, "grayscale")]
    else:
        writing, readings = codec(95, "ycbcr", None, factors), [codec(q, "ycbcr", None, f) for f in others for q in (5, 100)]
    chunk = make_image("natural", 40, 56, channels=1 if factors is None else 3)
    writer = Calls(judge, impl, writing, chunk.shape)
    data = writer.encode(chunk)
    same = writer.decode(data, chunk.shape, "decode under the writing configuration")
    check_decode(judge, same, data, writer.config, "decode under the writing configuration")
    for reading in readings:
        settings = reading["configuration"]
        what = f"quality {settings['quality']}" + (f", subsampling {settings['subsampling']}" if "subsampling" in settings else "")
        other = Calls(judge, impl, reading, chunk.shape).decode(data, chunk.shape, f"decode under {what}")
        diff = int(np.abs(same.astype(np.int16) - other.astype(np.int16)).max())
        judge.require(diff == 0, "JPEG-DEC-01",
                      f"decoding under {what} differs from decoding under the writing configuration by up to {diff} levels")
