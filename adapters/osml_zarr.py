"""Adapter for osml-imagery-io's JPEG codec for zarr v3: decode only, through real zarr arrays.

osml-imagery-io 0.2.2 registers ``https://awslabs.github.io/osml-imagery-io/codecs/jpeg``, a
bytes-to-bytes codec that decodes (its encode raises NotImplementedError). Its
configuration describes the block: ``bits_per_pixel``, ``num_bands``, ``block_width``,
``block_height``, ``imode`` and ``color_space`` (``MONO``, ``RGB`` or ``YCbCr601``), and it
returns the bands one after the other (band, row, column). So a chunk is read as a zarr
array would hold it: codecs ``transpose`` (for (H, W, C) chunks: to (C, H, W)), ``bytes`` and
osml's codec, built by zarr's registry for the chunk's block size. The spec's color spaces
map to ``color_space`` (grayscale -> MONO, ycbcr -> YCbCr601, rgb -> RGB) with
``num_bands`` 1 or 3; a ``decoded_color_space`` of ycbcr has no equivalent (it returns
RGB) and is refused. quality and subsampling are not read: decoding depends on neither
(JPEG-Q-04, JPEG-DEC-01). Its documented rejection is ValueError.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .zarr_codecs import LogsGiven, NoEquivalent, color_spaces, installed, registry_codec, spec_configuration

__all__ = ["NAME", "OsmlAdapter", "to_osml"]

#: The name osml-imagery-io registers in zarr's ``zarr.codecs`` entry point group.
NAME = "https://awslabs.github.io/osml-imagery-io/codecs/jpeg"
COLOR_SPACES = {"grayscale": "MONO", "ycbcr": "YCbCr601", "rgb": "RGB"}


def to_osml(codec: object, chunk_shape: tuple[int, ...] | None = None) -> dict[str, Any]:
    """osml's codec object for the spec's codec object (and a chunk's block size); NoEquivalent where it has none."""
    config = spec_configuration(codec, NAME)
    encoded, decoded = color_spaces(config, NAME)
    if decoded != ("grayscale" if encoded == "grayscale" else "rgb"):
        raise NoEquivalent(f"{NAME}: it returns MONO or RGB samples, so encoded_color_space {encoded!r} with "
                           f"decoded_color_space {decoded!r} has no equivalent")
    height, width = (chunk_shape[0], chunk_shape[1]) if chunk_shape and len(chunk_shape) >= 2 else (1, 1)
    return {"name": NAME, "configuration": {
        "bits_per_pixel": 8, "num_bands": 1 if encoded == "grayscale" else 3,
        "block_width": width, "block_height": height, "imode": "P", "color_space": COLOR_SPACES[encoded]}}


@dataclass(frozen=True)
class Parsed:
    """The spec's codec object (osml's codec is built per chunk: its configuration holds the block size)."""

    codec: Mapping[str, Any]


class OsmlAdapter(LogsGiven):
    """osml-imagery-io's JPEG codec, decode only, through zarr-python arrays. What it is given (``given_log``): at parse,
    its configuration with a block of 1x1; at each decode, with the chunk's block size."""

    name = "osml-imagery-io"
    kind = "codec"
    roles = frozenset({"decode"})

    def __init__(self) -> None:
        self._version = installed("osml-imagery-io", NAME, "its zarr extra: osml-imagery-io[zarr]")
        import zarr

        self._versions = {"osml-imagery-io": self._version, "zarr": zarr.__version__, "reads": NAME,
                          "parse": f"osml-imagery-io {self._version} (JpegCodec.from_dict)"}

    def versions(self) -> dict[str, str]:
        return dict(self._versions)

    def parse(self, codec: Mapping[str, Any]) -> Parsed:
        try:
            given = to_osml(codec)
        except NoEquivalent as exc:
            self.given_log.add(codec, None, str(exc))
            raise
        self.given_log.add(codec, given)
        registry_codec(given)  # its own verdict on the configuration, before any chunk
        return Parsed(codec)

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        raise NotImplementedError(f"{NAME} decodes only (its encode raises NotImplementedError)")

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        from .zarr_arrays import decode_through_zarr

        if not isinstance(parsed, Parsed):
            raise TypeError(f"{NAME}: expected a parsed codec from {type(self).__name__}.parse, got {type(parsed).__name__}")
        given = to_osml(parsed.codec, tuple(chunk_shape))
        self.given_log.add(parsed.codec, given)
        codec = registry_codec(given)
        # Its bands come one after the other: a transpose codec gives the (H, W, C) chunk the
        # (C, H, W) order a zarr array of these blocks declares.
        filters = [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}] if len(chunk_shape) == 3 else None
        return decode_through_zarr({"name": "bytes"}, data, chunk_shape, {}, NAME, filters=filters, compressors=[codec])
