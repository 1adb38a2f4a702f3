"""Bitstream: what the encoder writes, read from the markers rather than trusted to a decoder."""

from __future__ import annotations

import pytest

from zarr_jpeg_conformance.core.markers import inspect
from zarr_jpeg_conformance.corpus.images import make_image
from zarr_jpeg_conformance.corpus.modes import MODES
from zarr_jpeg_conformance.judging.checks import level_mark, parsed_or_verdict, succeed

pytestmark = pytest.mark.roles("encode")

#: Quality 1 is where libjpeg needs 16-bit tables unless forced to baseline (backends.md 11.6).
QUALITIES = [1, 50, 90, 100]
#: Not square, not MCU-aligned: a swapped (H, W) or a padded size shows in the SOF.
HEIGHT, WIDTH = 40, 72


def _params() -> list[object]:
    return [
        pytest.param(m, q, id=f"{m.id}-q{q}", marks=level_mark(m.level))
        for m in MODES
        for q in QUALITIES
    ]


@pytest.mark.parametrize(("mode", "quality"), _params())
def test_stream_structure(impl, mode, quality, judge) -> None:
    """SOF0, 8-bit samples and tables, (H, W), component count, factors, color markers."""
    for r in mode.requirements:
        judge.cite(r)
    parsed = parsed_or_verdict(judge, impl, mode.codec(quality))
    chunk = make_image("natural", HEIGHT, WIDTH, channels=mode.channels)
    if mode.channels == 1:
        chunk = chunk[:, :, 0]
    data = bytes(succeed(judge, "encode", impl.encode, parsed, chunk))
    info = inspect(data)
    judge.metrics.update(bytes=len(data), quality=quality)
    judge.require(info.soi and info.eoi and not info.problems, "JPEG-FMT-01",
                  f"stream is not well formed: soi={info.soi} eoi={info.eoi} problems={list(info.problems)}")
    judge.require(info.sof == 0xC0, "JPEG-GEN-01", f"frame marker is {info.sof and hex(info.sof)}: the codec writes baseline (SOF0) JPEG")
    judge.require(info.sof == 0xC0, "JPEG-ENC-04", f"frame marker is {info.sof and hex(info.sof)}, not SOF0 (0xc0, baseline)")
    judge.require(info.precision == 8, "JPEG-ENC-04", f"sample precision {info.precision}, not 8")
    judge.require(all(p == 0 for p in info.dqt_precisions) and bool(info.dqt_precisions), "JPEG-ENC-04",
                  f"quantization table precisions {list(info.dqt_precisions)} (0 = 8-bit): baseline allows only 8-bit tables")
    judge.require((info.height, info.width) == (HEIGHT, WIDTH), "JPEG-DIM-01",
                  f"SOF records {info.height}x{info.width} (HxW) for a {HEIGHT}x{WIDTH} chunk")
    judge.require(len(info.components) == mode.channels, "JPEG-ECS-02",
                  f"{len(info.components)} components for encoded_color_space {mode.encoded!r}")
    factors = tuple((c.h, c.v) for c in info.components)
    expected = mode.subsampling or tuple((1, 1) for _ in range(mode.channels))
    judge.require(factors == expected, "JPEG-SUB-09" if mode.encoded == "rgb" else "JPEG-SUB-02",
                  f"sampling factors written {[list(f) for f in factors]}, configured {[list(f) for f in expected]}")
    if mode.encoded == "rgb":
        judge.require(info.adobe_transform == 0, "JPEG-ECS-06", f"APP14 Adobe transform is {info.adobe_transform} (None = no APP14)")
        judge.require(not info.jfif, "JPEG-X-05", "the rgb stream carries a JFIF APP0 marker, which libjpeg decoders let win over APP14")
    if mode.encoded == "ycbcr":
        judge.require(info.libjpeg_color_space == "ycbcr" and info.stored_color_space == "ycbcr", "JPEG-ECS-04",
                      f"a JFIF decoder reads the stream as {info.libjpeg_color_space}, the spec's rule as {info.stored_color_space}")
    if mode.encoded != "rgb":
        judge.require(info.jfif, "JPEG-X-06", "no JFIF APP0 marker")
