"""Adapter for ``imagecodecs_jpeg``, the Zarr v3 JPEG codec of imagecodecs-zarr, through real zarr arrays.

Most JPEG-in-Zarr v3 data today names ``imagecodecs_jpeg`` (registered by the imagecodecs-zarr
package, Python >= 3.12), not the spec's ``jpeg``. This adapter puts it under test as a user
migrating between the two would use it: the spec's codec object is mapped to imagecodecs_jpeg's
own configuration where it has an exact equivalent (:func:`imagecodecs_jpeg_object`; the rest
is refused, saying so), with the values verbatim, so that imagecodecs_jpeg's own validation
decides (a quality of -1 becomes its ``level`` -1); zarr's registry builds the codec from that
codec object, and every chunk goes through a one-chunk zarr array (``adapters.zarr_arrays``).
imagecodecs' ``Jpeg8Error`` is its rejection of bad input. Nothing of this project's stream
handling or parsing is involved, so the row shows what imagecodecs_jpeg itself does.

On a Python below 3.12 (imagecodecs-zarr needs 3.12) the shipped harness ``imagecodecs_jpeg``
runs this adapter through ``harnesses.server`` in a venv of its own, made by ``harnesses
install`` with the newest Python >= 3.12 it finds. :func:`from_imagecodecs_jpeg` is the
reverse mapping, the metadata change a migration to ``jpeg`` makes (docs/data-publishers.md,
"Migrating from imagecodecs_jpeg"), and :func:`to_imagecodecs_jpeg` its inverse for a parsed configuration.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from typing import Any

from ..core.config import JpegConfig
from .zarr_codecs import (
    IMAGECODECS_SUBSAMPLING,
    NoEquivalent,
    SerializerAdapter,
    color_spaces,
    exactly,
    imagecodecs_subsampling,
    installed,
    spec_configuration,
)

__all__ = ["NAME", "ImagecodecsZarrAdapter", "from_imagecodecs_jpeg", "imagecodecs_jpeg_object", "to_imagecodecs_jpeg"]

#: The codec name imagecodecs-zarr registers in zarr's ``zarr.codecs`` entry point group.
NAME = "imagecodecs_jpeg"
#: The spec's luma sampling factors (chroma [1, 1]) and the ``subsampling`` strings imagecodecs knows.
#: Its ``(h, v)`` tuple form does not survive JSON (a list is refused), so metadata can only use these.
SUBSAMPLING = IMAGECODECS_SUBSAMPLING
#: The spec's color spaces and libjpeg's names for them, as imagecodecs_jpeg writes them.
COLOR_SPACES = {"grayscale": "GRAYSCALE", "rgb": "RGB", "ycbcr": "YCbCr"}


def to_imagecodecs_jpeg(config: JpegConfig) -> dict[str, Any]:
    """The imagecodecs_jpeg codec object that stores chunks the way ``config`` asks.

    ValueError when imagecodecs_jpeg's configuration cannot say it (sampling factors
    beyond the five imagecodecs names: an optional feature of the spec).
    """
    cfg: dict[str, Any] = {
        "level": config.quality,
        "colorspace_data": COLOR_SPACES[config.decoded_color_space],
        "colorspace_jpeg": COLOR_SPACES[config.encoded_color_space],
    }
    if config.encoded_color_space == "ycbcr":
        luma, *chroma = config.subsampling
        name = SUBSAMPLING.get(tuple(luma)) if all(tuple(c) == (1, 1) for c in chroma) else None  # type: ignore[arg-type]
        if name is None:
            factors = [list(f) for f in config.subsampling]
            raise ValueError(f"{NAME}: its 'subsampling' has no value for sampling factors {factors} "
                             f"(it knows {', '.join(SUBSAMPLING.values())})")
        cfg["subsampling"] = name
    return {"name": NAME, "configuration": cfg}


def from_imagecodecs_jpeg(codec: Mapping[str, Any], quality: int = 95) -> dict[str, Any]:
    """The spec's ``jpeg`` codec object for data an imagecodecs_jpeg codec object wrote.

    ``quality`` is used when the object has no ``level`` (imagecodecs' own default is 95);
    decoding never depends on it. ValueError for what ``jpeg`` cannot describe: shared
    tables or headers (chunks are not whole JPEG streams), 12-bit or lossless JPEG, and
    color spaces other than grayscale, RGB and YCbCr. ``subsampling`` is needed for ycbcr:
    an object without it wrote imagecodecs' default, 4:2:0.
    """
    if codec.get("name") != NAME:
        raise ValueError(f"not an {NAME} codec object: {dict(codec)!r}")
    cfg = dict(codec.get("configuration") or {})
    for key in ("tables", "header"):
        if cfg.get(key):
            raise ValueError(f"{NAME} with {key!r}: its chunks are abbreviated streams; re-encode them for jpeg")
    if cfg.get("lossless") or cfg.get("bitspersample") not in (None, 8):
        raise ValueError(f"{NAME} with lossless or {cfg.get('bitspersample')}-bit samples: jpeg is 8-bit baseline only")
    spaces = {name.lower(): spec for spec, name in COLOR_SPACES.items()}
    stored, data = str(cfg.get("colorspace_jpeg") or "").lower(), str(cfg.get("colorspace_data") or "").lower()
    level = cfg.get("level")
    out: dict[str, Any] = {"quality": min(100, max(1, int(level))) if level is not None else quality}
    if not stored and data in ("", "rgb"):
        stored = "ycbcr"  # what imagecodecs writes for 3-component data when not told
    if stored not in spaces or (data and data not in spaces):
        raise ValueError(f"{NAME} color spaces {cfg.get('colorspace_data')!r} -> {cfg.get('colorspace_jpeg')!r} "
                         "have no jpeg encoded_color_space/decoded_color_space")
    out["encoded_color_space"] = spaces[stored]
    if data and spaces[data] != ("grayscale" if stored == "grayscale" else "rgb"):
        out["decoded_color_space"] = spaces[data]
    if spaces[stored] == "ycbcr":
        names = {v: k for k, v in SUBSAMPLING.items()}
        luma = names.get(str(cfg.get("subsampling") or "420"))
        if luma is None:
            raise ValueError(f"{NAME} subsampling {cfg.get('subsampling')!r} has no jpeg equivalent")
        out["subsampling"] = [list(luma), [1, 1], [1, 1]]
    return {"name": "jpeg", "configuration": out}


def imagecodecs_jpeg_object(codec: object) -> dict[str, Any]:
    """The imagecodecs_jpeg codec object for the spec's codec object, values verbatim.

    NoEquivalent where imagecodecs_jpeg's configuration cannot say it: sampling factors
    beyond the five imagecodecs names, or a subsampling for grayscale or rgb other than
    none. Members the object leaves out are left out (imagecodecs_jpeg's defaults apply).
    """
    config = spec_configuration(codec, NAME)
    encoded, decoded = color_spaces(config, NAME)
    out: dict[str, Any] = {"colorspace_data": COLOR_SPACES[decoded], "colorspace_jpeg": COLOR_SPACES[encoded]}
    if "quality" in config:
        out["level"] = config["quality"]
    if "subsampling" in config:
        if encoded == "ycbcr":
            out["subsampling"] = imagecodecs_subsampling(config["subsampling"], NAME)
        elif not exactly(config["subsampling"], [[1, 1]] if encoded == "grayscale" else [[1, 1]] * 3):
            # Only the default, as JSON integers, means what leaving subsampling out of its configuration says.
            raise NoEquivalent(f"{NAME}: it subsamples only YCbCr, so subsampling {json.dumps(config['subsampling'])} "
                               f"with encoded_color_space {encoded!r} has no equivalent")
    return {"name": NAME, "configuration": out}


class ImagecodecsZarrAdapter(SerializerAdapter):
    """imagecodecs_jpeg through zarr-python arrays, configured from the spec's codec object."""

    name = NAME
    codec_name = NAME

    def __init__(self) -> None:
        found = installed("imagecodecs-zarr", NAME, f"it needs Python >= 3.12, this is Python {platform.python_version()}")
        import imagecodecs
        import zarr

        self._versions = {"imagecodecs-zarr": found, "imagecodecs": imagecodecs.__version__, "zarr": zarr.__version__,
                          "writes": NAME, "parse": f"imagecodecs-zarr {found} (from_dict)"}
        self._errors = (imagecodecs.Jpeg8Error,)

    def codec_object(self, codec: object) -> dict[str, Any]:
        return imagecodecs_jpeg_object(codec)
