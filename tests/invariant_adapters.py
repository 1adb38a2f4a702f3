"""Adapters that fail or pass only by the spec's invariants: faults nobody had listed, and freedoms nobody had listed.

Each is the imagecodecs adapter (right in everything else) with one change. The wrong ones make
realistic mistakes that no case caught before the suites judged streams, coefficients and decodes
by what T.81 and the spec define; the legal ones make choices the spec leaves open that a suite
recognizing known faults failed. tests/test_invariants_bite.py runs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarr_jpeg_conformance.backends.imagecodecs import ImagecodecsAdapter
from zarr_jpeg_conformance.core.config import JpegConfig
from zarr_jpeg_conformance.core.errors import ConfigError


class UpsamplesByQuality(ImagecodecsAdapter):
    """Upsamples chroma by repetition under a configuration of quality below 50, by libjpeg's filter above: each legal,
    the choice by the configuration is not (decoding does not depend on it, JPEG-DEC-01, JPEG-Q-04)."""

    name = "wrong-upsamples-by-quality"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        from zarr_jpeg_conformance.fixturegen.decoder_faults import repeat

        right = super().decode(parsed, data, chunk_shape)
        if isinstance(parsed, JpegConfig) and parsed.quality < 50 and right.ndim == 3 and right.shape[-1] == 3:
            try:
                return repeat(bytes(data), parsed, tuple(chunk_shape))
            except LookupError:
                return right
        return right


class GarbageWhenWide(ImagecodecsAdapter):
    """Returns a chunk of the right shape and dtype but garbage for images over 60000 samples wide."""

    name = "wrong-garbage-when-wide"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        right = super().decode(parsed, data, chunk_shape)
        if len(chunk_shape) >= 2 and chunk_shape[1] > 60000:
            return np.ascontiguousarray(right[:, ::-1])  # every row reversed: shape, dtype and histogram kept
        return right


class SkipsHeightCheckIn3d(ImagecodecsAdapter):
    """Checks the 65535 limit on (H, W) chunks and on the width of (H, W, C) ones, not on their height: writes the
    first 65535 rows of a taller colour chunk."""

    name = "wrong-skips-height-check-in-3d"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(chunk, np.ndarray) and chunk.ndim == 3 and chunk.shape[0] > 65535 and chunk.shape[1] <= 65535:
            chunk = np.ascontiguousarray(chunk[:65535])
        return super().encode(parsed, chunk)


class BoolFactors(ImagecodecsAdapter):
    """Takes true for 1 in sampling factors under every colour space (Python's bool is an int)."""

    name = "wrong-bool-factors"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        cfg = codec.get("configuration") if isinstance(codec, Mapping) else None
        factors = cfg.get("subsampling") if isinstance(cfg, Mapping) else None
        if isinstance(factors, list):
            ints = [[int(v) if isinstance(v, bool) else v for v in f] if isinstance(f, list) else f for f in factors]
            codec = {**codec, "configuration": {**cfg, "subsampling": ints}}
        return super().parse(codec)


class PartialMcusOnlyInRequiredModes(ImagecodecsAdapter):
    """Writes its optional modes (rgb, YCbCr passthrough) only for chunks of whole MCUs: refuses the padding the
    spec asks every encoder to do (JPEG-MCU-01), a fault, not the optional feature refused."""

    name = "wrong-partial-mcus-only-in-required-modes"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(parsed, JpegConfig) and (parsed.encoded_color_space == "rgb" or parsed.decoded_color_space == "ycbcr"):
            mcu_h, mcu_w = parsed.mcu
            if isinstance(chunk, np.ndarray) and chunk.ndim >= 2 and (chunk.shape[0] % mcu_h or chunk.shape[1] % mcu_w):
                raise ValueError(f"{chunk.shape[0]}x{chunk.shape[1]} is not a whole number of {mcu_h}x{mcu_w} MCUs")
        return super().encode(parsed, chunk)


class RefusesIntegralFloats(ImagecodecsAdapter):
    """Legal: a parser whose quality and factors are integer types (a Rust codec's ``u8``) refuses 100.0 and 1.0
    (JPEG-X-02 lets it)."""

    name = "legal-refuses-integral-floats"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        cfg = codec.get("configuration") if isinstance(codec, Mapping) else None
        if isinstance(cfg, Mapping):
            values = [cfg.get("quality"), *(v for f in cfg.get("subsampling") or [] if isinstance(f, list) for v in f)]
            if any(isinstance(v, float) for v in values):
                raise ConfigError("JPEG-X-02", "quality and sampling factors are integers: a JSON number with a fraction "
                                  "part is refused")
        return super().parse(codec)
