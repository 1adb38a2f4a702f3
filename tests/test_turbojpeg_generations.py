"""The turbojpeg adapter drives both PyTurboJPEG generations correctly.

Only PyTurboJPEG 1.x runs here (Debian 12 has no libjpeg-turbo 3), so the 2.x (tj3)
path is checked against a stand-in with 2.x's ``encode`` signature that records the
calls: the traps of backends.md 11.17 (RGB mode keeps 4:2:2 unless told 4:4:4; the
legacy API's fast DCT) are what these tests pin down.
"""

from __future__ import annotations

from typing import Any

import imagecodecs
import numpy as np
import pytest
import turbojpeg as tj

from zarr_jpeg_conformance.backends import turbojpeg as adapter_module
from zarr_jpeg_conformance.core.markers import inspect
from zarr_jpeg_conformance.corpus.modes import codec


class FakeTj3:
    """PyTurboJPEG 2.x's encode/decode signatures; pixels come from imagecodecs."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def encode(self, img_array, quality=85, pixel_format=tj.TJPF_BGR, jpeg_subsample=tj.TJSAMP_422, flags=0,
               dst=None, lossless=False, icc_profile=None, jpeg_colorspace=None):
        self.calls.append({"op": "encode", "subsample": jpeg_subsample, "flags": flags, "colorspace": jpeg_colorspace})
        if jpeg_colorspace == tj.TJCS_RGB:
            return imagecodecs.jpeg8_encode(img_array, level=quality, colorspace="RGB", outcolorspace="RGB")
        return imagecodecs.jpeg8_encode(np.squeeze(img_array), level=quality)

    def decode(self, jpeg_buf, pixel_format=tj.TJPF_BGR, scaling_factor=None, flags=0, dst=None):
        self.calls.append({"op": "decode", "flags": flags})
        return imagecodecs.jpeg8_decode(jpeg_buf)


@pytest.fixture
def tj3(monkeypatch: pytest.MonkeyPatch) -> tuple[adapter_module.TurboJpegAdapter, FakeTj3]:
    fake = FakeTj3()
    monkeypatch.setattr(adapter_module.tj, "TurboJPEG", lambda: fake)
    return adapter_module.TurboJpegAdapter(), fake


def test_tj3_writes_rgb_itself_at_444_with_the_accurate_dct(tj3) -> None:
    adapter, fake = tj3
    assert adapter.versions()["api"].startswith("tj3")
    parsed = adapter.parse(codec(90, "rgb"))
    data = adapter.encode(parsed, np.zeros((16, 16, 3), np.uint8))
    (call,) = [c for c in fake.calls if c["op"] == "encode"]
    assert call == {"op": "encode", "subsample": tj.TJSAMP_444, "flags": 0, "colorspace": tj.TJCS_RGB}
    assert inspect(data).adobe_transform == 0


def test_tj3_reads_any_factors_and_writes_441(tj3) -> None:
    adapter, fake = tj3
    parsed = adapter.parse(codec(90, "ycbcr", None, [(1, 4), (1, 1), (1, 1)]))
    adapter.encode(parsed, np.zeros((32, 16, 3), np.uint8))
    assert fake.calls[-1]["subsample"] == tj.TJSAMP_441
    assert adapter.reads_factors(((4, 4), (1, 1), (1, 1)))


def test_tj3_decodes_with_stop_on_warning(tj3) -> None:
    adapter, fake = tj3
    parsed = adapter.parse(codec(90, "grayscale"))
    data = imagecodecs.jpeg8_encode(np.zeros((8, 8), np.uint8), level=90)
    adapter.decode(parsed, data, (8, 8))
    assert fake.calls[-1]["flags"] & tj.TJFLAG_STOPONWARNING


def test_legacy_api_asks_for_the_accurate_dct_and_stops_on_warnings() -> None:
    """On PyTurboJPEG 1.x (what runs here) the flags that make group-A bytes and strict decodes are set."""
    adapter = adapter_module.TurboJpegAdapter()
    assert adapter.versions()["api"].startswith("legacy")
    assert adapter._flags & tj.TJFLAG_ACCURATEDCT
    assert not adapter.native_rgb and not adapter.reads_factors(((4, 4), (1, 1), (1, 1)))
