"""simplejpeg as a Zarr codec author would call it: ``encode_jpeg`` and ``decode_jpeg``.

simplejpeg (libjpeg-turbo, statically linked, through the legacy TurboJPEG API) is what
cloud-volume uses for neuroglancer ``precomputed`` JPEG chunks. What it can write is
what its ``colorsubsampling`` names: 4:4:4, 4:2:2, 4:2:0, 4:4:0, 4:1:1 and grayscale.
It converts every color image to YCbCr and writes JFIF, so it cannot write ``rgb``; it
decodes ``rgb`` streams (libjpeg-turbo honours APP14), and it has no way to return the
stored YCbCr samples. ``fastdct=False`` is passed to ask for the accurate DCT; the legacy
API still uses the fast one below quality 96 (research: backends.md 4.1), which is an
encoder's choice. ``decode_jpeg`` converts to the color space it is asked for; the
configuration says which one the chunk holds, as cloud-volume's ``decode_jpeg`` decides
from the channel count.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np
import simplejpeg

from ..core.config import JpegConfig
from .library import PARSER, Factor, LibraryAdapter, LibraryRefusal, to_chunk


class SimplejpegAdapter(LibraryAdapter):
    name = "simplejpeg"
    schemes: ClassVar[Mapping[Factor, str]] = {(1, 1): "444", (2, 1): "422", (1, 2): "440", (2, 2): "420", (4, 1): "411"}
    scheme_option = "encode_jpeg's colorsubsampling"
    no_rgb = "encode_jpeg converts color to YCbCr and writes no APP14 marker"
    no_ycbcr_output = "decode_jpeg converts them to RGB or GRAY"

    def versions(self) -> dict[str, str]:
        return {"simplejpeg": str(simplejpeg.__version__), "parse": PARSER}

    def _encode(self, config: JpegConfig, image: np.ndarray) -> bytes:
        if config.encoded_color_space == "grayscale":
            colorspace, subsampling = "GRAY", "Gray"
        else:
            colorspace, subsampling = "RGB", self.schemes[config.luma_factors]
        try:
            data = simplejpeg.encode_jpeg(
                image, quality=config.quality, colorspace=colorspace, colorsubsampling=subsampling, fastdct=False
            )
        except ValueError as exc:
            raise LibraryRefusal(
                "JPEG-ENC-04", f"simplejpeg refused to encode a {image.shape[0]}x{image.shape[1]} chunk: {exc}"
            ) from exc
        return bytes(data)

    def _decode(self, config: JpegConfig, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        colorspace = "GRAY" if config.decoded_color_space == "grayscale" else "RGB"
        try:
            pixels = simplejpeg.decode_jpeg(data, colorspace=colorspace)
        except ValueError as exc:
            raise LibraryRefusal("JPEG-DEC-01", f"simplejpeg could not decode the stream ({len(data)} bytes): {exc}") from exc
        return to_chunk(pixels, config, chunk_shape, self.name)


__all__ = ["SimplejpegAdapter"]
