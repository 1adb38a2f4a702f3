"""simplejpeg as a Zarr codec author would call it: ``encode_jpeg`` and ``decode_jpeg``.

simplejpeg (libjpeg-turbo, statically linked, through the legacy TurboJPEG API) is what
cloud-volume uses for neuroglancer ``precomputed`` JPEG chunks. What it can write is
what its ``colorsubsampling`` names: 4:4:4, 4:2:2, 4:2:0, 4:4:0, 4:1:1 and grayscale.
It converts every color image to YCbCr and writes JFIF, so it cannot write ``rgb``; it
decodes ``rgb`` streams (libjpeg-turbo honours APP14), and it has no way to return the
stored YCbCr samples, so ``decoded_color_space: ycbcr`` is refused when parsing.
``fastdct=False`` is passed to ask for the accurate DCT; the legacy API still uses the
fast one below quality 96 (research: backends.md 4.1), which is an encoder's choice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import simplejpeg

from ..core.config import JpegConfig, parse_codec
from .library import LibraryRefusal, chunk_components, chunk_image, config_of, to_chunk

#: Luma factors (chroma [1, 1]) -> simplejpeg's ``colorsubsampling``.
SUBSAMPLING = {(1, 1): "444", (2, 1): "422", (1, 2): "440", (2, 2): "420", (4, 1): "411"}


class SimplejpegAdapter:
    name = "simplejpeg"
    kind = "library"
    language = "Python"
    roles = frozenset({"encode", "decode"})

    def versions(self) -> dict[str, str]:
        return {"simplejpeg": str(simplejpeg.__version__)}

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        config = parse_codec(codec)
        if config.decoded_color_space == "ycbcr":
            raise LibraryRefusal(
                "JPEG-DCS-05", "simplejpeg cannot return YCbCr samples: decode_jpeg converts them to RGB or GRAY"
            )
        if config.encoded_color_space == "ycbcr" and config.luma_factors not in SUBSAMPLING:
            raise LibraryRefusal(
                "JPEG-X-04",
                f"simplejpeg cannot write sampling factors {[list(f) for f in config.subsampling]}: "
                f"encode_jpeg's colorsubsampling is one of {', '.join(SUBSAMPLING.values())}",
            )
        return config

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        config = config_of(parsed, self.name)
        image = chunk_image(config, chunk, self.name)
        if config.encoded_color_space == "rgb":
            raise LibraryRefusal(
                "JPEG-ECS-09", "simplejpeg cannot write rgb: encode_jpeg converts color to YCbCr and writes no APP14 marker"
            )
        if config.encoded_color_space == "grayscale":
            colorspace, subsampling = "GRAY", "Gray"
        else:
            colorspace, subsampling = "RGB", SUBSAMPLING[config.luma_factors]
        try:
            data = simplejpeg.encode_jpeg(
                image, quality=config.quality, colorspace=colorspace, colorsubsampling=subsampling, fastdct=False
            )
        except ValueError as exc:
            raise LibraryRefusal(
                "JPEG-ENC-04", f"simplejpeg refused to encode a {image.shape[0]}x{image.shape[1]} chunk: {exc}"
            ) from exc
        return bytes(data)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        config = config_of(parsed, self.name)
        chunk_components(config, tuple(chunk_shape), self.name)
        # simplejpeg asks for the output color space; the configuration says which one the
        # chunk holds, as cloud-volume's decode_jpeg does from the channel count.
        colorspace = "GRAY" if config.decoded_color_space == "grayscale" else "RGB"
        try:
            pixels = simplejpeg.decode_jpeg(bytes(data), colorspace=colorspace)
        except ValueError as exc:
            raise LibraryRefusal("JPEG-DEC-01", f"simplejpeg could not decode the stream ({len(data)} bytes): {exc}") from exc
        return to_chunk(pixels, config, tuple(chunk_shape), self.name)


__all__ = ["SimplejpegAdapter"]
