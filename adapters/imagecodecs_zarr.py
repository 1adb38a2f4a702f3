"""Adapter for ``imagecodecs_jpeg``, the Zarr v3 JPEG codec of imagecodecs-zarr, through real zarr arrays.

Most JPEG-in-Zarr v3 data today names ``imagecodecs_jpeg`` (registered by the imagecodecs-zarr
package, Python >= 3.12), not the spec's ``jpeg``. This adapter puts it under test as a user
migrating between the two would use it: the spec's configuration is mapped to imagecodecs_jpeg's
own (:func:`to_imagecodecs_jpeg`), zarr's registry builds the codec from that codec object, and
every chunk goes through a one-chunk zarr array (``adapters.zarr_arrays``). Nothing of this project's
stream handling is involved, so the row shows what imagecodecs_jpeg itself does.

Its kind is ``library``: imagecodecs_jpeg is not an implementation of the spec's codec (another
name, another configuration, and it cannot read ``jpeg`` metadata), it is the existing codec
the spec's users come from. :func:`from_imagecodecs_jpeg` is the reverse mapping, the metadata
change a migration to ``jpeg`` makes (README, "Migrating from imagecodecs_jpeg").
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import Any

import numpy as np

from ..core.config import JpegConfig, parse_codec

__all__ = ["NAME", "ImagecodecsZarrAdapter", "from_imagecodecs_jpeg", "to_imagecodecs_jpeg"]

#: The codec name imagecodecs-zarr registers in zarr's ``zarr.codecs`` entry point group.
NAME = "imagecodecs_jpeg"
#: The spec's luma sampling factors (chroma [1, 1]) and the ``subsampling`` strings imagecodecs knows.
#: Its ``(h, v)`` tuple form does not survive JSON (a list is refused), so metadata can only use these.
SUBSAMPLING = {(1, 1): "444", (2, 1): "422", (2, 2): "420", (1, 2): "440", (4, 1): "411"}
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


@dataclass(frozen=True)
class Parsed:
    """The spec's configuration and the imagecodecs_jpeg codec zarr's registry built for it."""

    config: JpegConfig
    codec: Any


def _installed() -> str:
    """imagecodecs-zarr's version; ImportError saying why it cannot run here."""
    try:
        found = version("imagecodecs-zarr")
    except PackageNotFoundError:
        raise ImportError(f"imagecodecs-zarr is not installed (pip install imagecodecs-zarr; it needs Python >= 3.12, "
                          f"this is Python {platform.python_version()})") from None
    if not any(ep.name == NAME for ep in entry_points(group="zarr.codecs")):
        raise ImportError(f"imagecodecs-zarr {found} registers no zarr codec named {NAME!r}")
    return found


class ImagecodecsZarrAdapter:
    """imagecodecs_jpeg through zarr-python arrays, configured from the spec's codec object."""

    name = NAME
    kind = "library"
    roles = frozenset({"encode", "decode"})

    def __init__(self) -> None:
        self._version = _installed()
        import zarr
        from zarr.registry import get_codec_class

        self._zarr = zarr.__version__
        self._class = get_codec_class(NAME)

    def versions(self) -> dict[str, str]:
        import imagecodecs

        return {"imagecodecs-zarr": self._version, "imagecodecs": imagecodecs.__version__, "zarr": self._zarr}

    def parse(self, codec: Mapping[str, Any]) -> Parsed:
        config = parse_codec(codec)
        return Parsed(config, self._class.from_dict(to_imagecodecs_jpeg(config)))

    def _codec(self, parsed: object) -> Any:
        if not isinstance(parsed, Parsed):
            raise TypeError(f"{NAME}: expected a parsed codec from {type(self).__name__}.parse, got {type(parsed).__name__}")
        return parsed.codec

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        from .zarr_arrays import encode_through_zarr

        return encode_through_zarr(self._codec(parsed), chunk, {}, NAME)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        from .zarr_arrays import decode_through_zarr

        return decode_through_zarr(self._codec(parsed), data, chunk_shape, {}, NAME)
