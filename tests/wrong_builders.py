"""Deliberately wrong builders (the role ``build``), each breaking one rule for writers of the codec object.

They build on the zarr adapter (this project's ``JpegCodec`` and its ``to_dict``) so that
everything except the one fault is right; tests/test_build_suite.py requires the build suite
to catch each one, citing the requirement it breaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from legal_builders import ExplicitDecodedColorSpace

from zarr_jpeg_conformance.adapters.zarr import ZarrAdapter

_DEFAULT_SUBSAMPLING = {"grayscale": [[1, 1]], "rgb": [[1, 1], [1, 1], [1, 1]]}


class DefaultQuality75(ZarrAdapter):
    """Uses libjpeg's customary 75 where the user gives no quality, not the spec's 95 (JPEG-Q-06, SHOULD)."""

    name = "wrong-default-quality-75"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return super().build({"quality": 75, **options})


class SubsamplingForGrayscale(ZarrAdapter):
    """Writes every member, the default subsampling of grayscale and rgb too (JPEG-SUB-06, SHOULD)."""

    name = "wrong-subsampling-written"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        codec = super().build(options)
        space = codec["configuration"]["encoded_color_space"]
        if space in _DEFAULT_SUBSAMPLING:
            codec["configuration"]["subsampling"] = _DEFAULT_SUBSAMPLING[space]
        return codec


class NumcodecsName(ZarrAdapter):
    """Writes the name of the numcodecs-style codec, ``imagecodecs_jpeg``, instead of ``jpeg`` (JPEG-NAME-01)."""

    name = "wrong-name"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().build(options), "name": "imagecodecs_jpeg"}


class OmitsAllOnesSubsampling(ZarrAdapter):
    """Leaves out subsampling whenever every factor is [1, 1], for ycbcr as for rgb: invalid metadata (JPEG-SUB-04)."""

    name = "wrong-omits-ycbcr-444"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        codec = super().build(options)
        factors = codec["configuration"].get("subsampling")
        if factors is not None and all(list(f) == [1, 1] for f in factors):
            del codec["configuration"]["subsampling"]
        return codec


class WritesUnchecked(ZarrAdapter):
    """Writes the options as they come, checking nothing: invalid options become invalid metadata (JPEG-CFG-01)."""

    name = "wrong-unchecked"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"name": "jpeg", "configuration": {"quality": 95, **options}}


class ClampsQuality(ZarrAdapter):
    """Clamps an out-of-range quality into 1-100 and writes that: valid metadata the user did not ask for (JPEG-Q-01)."""

    name = "wrong-clamps-quality"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        quality = options.get("quality")
        if isinstance(quality, int) and not isinstance(quality, bool):
            options = {**options, "quality": min(max(quality, 1), 100)}
        return super().build(options)


class DropsDecodedColorSpace(ZarrAdapter):
    """Writes only the members it always had, so decoded_color_space ycbcr is lost and readers convert to RGB (JPEG-DCS-01)."""

    name = "wrong-drops-decoded"

    def __init__(self) -> None:
        super().__init__("imagecodecs")  # a backend that returns stored YCbCr, so passthrough is built

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        codec = super().build(options)
        codec["configuration"].pop("decoded_color_space", None)
        return codec


class OwnParseRejects(ExplicitDecodedColorSpace):
    """The legal builder that writes decoded_color_space always, with a parse that refuses the member when it repeats the default.

    The implementation cannot read the metadata it writes.
    """

    name = "wrong-own-parse-rejects"

    def parse(self, codec: Mapping[str, Any]) -> Any:
        config = codec.get("configuration") if isinstance(codec, Mapping) else None
        if isinstance(config, Mapping) and config.get("decoded_color_space") in ("grayscale", "rgb"):
            raise ValueError("decoded_color_space repeats the default: leave it out")
        return super().parse(codec)


class BuildsNothing(ZarrAdapter):
    """Returns the codec object's repr, a string, instead of the object (JPEG-CFG-01)."""

    name = "wrong-builds-text"

    def build(self, options: Mapping[str, Any]) -> Any:
        return repr(super().build(options))


class NumpyQuality(ZarrAdapter):
    """Writes the quality as the numpy integer it computed, which no JSON encoder writes to zarr.json (JPEG-CFG-01)."""

    name = "wrong-numpy-quality"

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        codec = super().build(options)
        codec["configuration"]["quality"] = np.int64(codec["configuration"]["quality"])
        return codec


class ReadsBackDefaultSubsampling(ZarrAdapter):
    """Writes subsampling right, but its parse drops the member and falls back to its constructor's 4:2:0.

    A from_dict that forgets a member: the metadata it writes is fine, and it reads it back
    as another configuration, so its own arrays come out 4:2:0 whatever they say (JPEG-SUB-02).
    """

    name = "wrong-reads-back-420"

    def parse(self, codec: Mapping[str, Any]) -> Any:
        config = codec.get("configuration") if isinstance(codec, Mapping) else None
        if isinstance(config, Mapping) and config.get("encoded_color_space") == "ycbcr":
            codec = {**codec, "configuration": {**config, "subsampling": [[2, 2], [1, 1], [1, 1]]}}
        return super().parse(codec)
