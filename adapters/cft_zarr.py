"""Adapter for ``cft_zarr.jpeg``, the JPEG serializer of cft-zarr, through real zarr arrays.

cft_zarr.jpeg (cft-zarr 0.1.3, imagecodecs underneath) has two configuration members:
``level`` (its quality) and ``subsampling`` (an imagecodecs name such as ``"420"``); which
color spaces it writes follows from the array, as imagecodecs decides: one component is
grayscale, three are YCbCr from RGB. So the spec's codec object maps to it only as
``quality`` -> ``level`` (verbatim, whatever its JSON type), ycbcr's ``subsampling`` -> its
name (integer factors only: ``true`` or ``2.0`` has no name), and the color
spaces grayscale -> grayscale and ycbcr -> rgb; ``encoded_color_space: rgb`` and a
``decoded_color_space`` of ycbcr have no equivalent and are refused, saying so
(adapters.zarr_codecs). imagecodecs' ``Jpeg8Error`` is its rejection of bad input.
"""

from __future__ import annotations

import json
from typing import Any

from .zarr_codecs import (
    NoEquivalent,
    SerializerAdapter,
    color_spaces,
    exactly,
    imagecodecs_subsampling,
    installed,
    spec_configuration,
)

__all__ = ["NAME", "CftZarrAdapter", "to_cft_zarr"]

#: The name cft-zarr registers in zarr's ``zarr.codecs`` entry point group, and writes.
NAME = "cft_zarr.jpeg"


def to_cft_zarr(codec: object) -> dict[str, Any]:
    """The cft_zarr.jpeg codec object for the spec's codec object; NoEquivalent where it has none."""
    config = spec_configuration(codec, NAME)
    encoded, decoded = color_spaces(config, NAME)
    if (encoded, decoded) not in (("grayscale", "grayscale"), ("ycbcr", "rgb")):
        raise NoEquivalent(f"{NAME}: its configuration has no color spaces; it writes grayscale for one component and "
                           f"YCbCr from RGB for three, so encoded_color_space {encoded!r} with decoded_color_space "
                           f"{decoded!r} has no equivalent")
    out: dict[str, Any] = {}
    if "quality" in config:
        out["level"] = config["quality"]
    if "subsampling" in config:
        if encoded == "ycbcr":
            out["subsampling"] = imagecodecs_subsampling(config["subsampling"], NAME)
        elif not exactly(config["subsampling"], [[1, 1]]):
            # Only the default, as JSON integers, means what its configuration says by having no subsampling.
            raise NoEquivalent(f"{NAME}: it ignores subsampling for grayscale, so {json.dumps(config['subsampling'])} has "
                               "no equivalent")
    return {"name": NAME, "configuration": out}


class CftZarrAdapter(SerializerAdapter):
    """cft_zarr.jpeg through zarr-python arrays, configured from the spec's codec object."""

    name = "cft-zarr"
    codec_name = NAME

    def __init__(self) -> None:
        found = installed("cft-zarr", NAME)
        import imagecodecs
        import zarr

        self._versions = {"cft-zarr": found, "imagecodecs": imagecodecs.__version__, "zarr": zarr.__version__,
                          "writes": NAME, "parse": f"cft-zarr {found} (JPEGCodec.from_dict)"}
        self._errors = (imagecodecs.Jpeg8Error,)

    def codec_object(self, codec: object) -> dict[str, Any]:
        return to_cft_zarr(codec)
