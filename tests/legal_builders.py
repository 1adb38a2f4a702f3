"""Legal builders: choices the spec leaves to whoever writes the codec object, which must pass.

Over the zarr adapter, like tests/wrong_builders.py; tests/test_build_suite.py requires that
none gets a fail, a warning or an error from the build suite.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarr_jpeg_conformance.adapters.zarr import ZarrAdapter
from zarr_jpeg_conformance.zarrcodecs.jpeg import JpegCodec


class ExplicitDecodedColorSpace(ZarrAdapter):
    """Always writes decoded_color_space, the default too: the spec asks only subsampling to be left out (JPEG-SUB-06)."""

    name = "legal-explicit-decoded"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        codec = super().build(options)
        config = codec["configuration"]
        config.setdefault("decoded_color_space", "grayscale" if config["encoded_color_space"] == "grayscale" else "rgb")
        return codec


class NoDefaultQuality(ZarrAdapter):
    """Offers no default quality: the user must always give one (JPEG-Q-06 applies only to builders that offer one)."""

    name = "legal-no-default-quality"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        if "quality" not in options:
            raise TypeError("quality is required: this builder offers no default")
        return super().build(options)


class Defaults420(ZarrAdapter):
    """Offers 4:2:0 as its default subsampling for ycbcr, and writes it (the spec neither gives nor forbids one)."""

    name = "legal-default-420"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        if options.get("encoded_color_space") == "ycbcr" and "subsampling" not in options:
            options = {**options, "subsampling": [[2, 2], [1, 1], [1, 1]]}
        return super().build(options)


class WritesMustUnderstand(ZarrAdapter):
    """Writes ``"must_understand": true`` on the codec object, which Zarr v3 core allows on any extension object (JPEG-X-19)."""

    name = "legal-must-understand"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().build(options), "must_understand": True}


class NoRgb(ZarrAdapter):
    """Neither writes nor reads rgb, an optional feature (JPEG-ECS-09): refused at build and at parse."""

    name = "legal-no-rgb"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        if options.get("encoded_color_space") == "rgb":
            raise ValueError("rgb is not supported")
        return super().build(options)

    def parse(self, codec: Mapping[str, Any]) -> Any:
        config = codec.get("configuration") if isinstance(codec, Mapping) else None
        if isinstance(config, Mapping) and config.get("encoded_color_space") == "rgb":
            raise ValueError("rgb is not supported")
        return super().parse(codec)


class RgbWrittenNotEncoded(ZarrAdapter):
    """Builds and reads rgb metadata, decodes rgb streams, and refuses to write them (decoding only, JPEG-ECS-09)."""

    name = "legal-rgb-decode-only"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(parsed, JpegCodec) and parsed.encoded_color_space == "rgb":
            raise ValueError("this implementation reads rgb streams but does not write them")
        return super().encode(parsed, chunk)
