"""pyvips as a Zarr codec author would call it: ``jpegsave_buffer`` and ``jpegload_buffer``.

pyvips binds libvips (Debian's ``libvips42``, which uses the system libjpeg-turbo; a
``pyvips-binary`` wheel, with mozjpeg, is used instead where it is installed: the
versions say which). ``jpegsave`` offers two chroma modes, ``subsample_mode="off"``
(4:4:4) and ``"on"`` (4:2:0), so 4:2:2 and 4:4:0, which the spec requires, are refused
at encode; decoding them works. It converts every color image to YCbCr, so it cannot
write ``rgb``; it decodes ``rgb`` streams (libjpeg honours APP14) but cannot return
stored YCbCr, so ``decoded_color_space: ycbcr`` is refused when parsing.

Traps avoided: libvips replaces a ``Q`` outside 1-100 by its default 75 with only a GLib
warning on stderr (the parser has already limited quality to 1-100), and its default
``subsample_mode="auto"`` picks 4:4:4 or 4:2:0 from the quality, so the mode is always
given. ``strip=True`` keeps out the EXIF block (about 190 bytes) libvips writes by
default; a chunk has no metadata to carry. ``jpegload`` is lazy: the header is read first, and an image that does not fit
the chunk is refused before any pixel is decoded. ``fail_on="warning"`` makes libvips
refuse a stream that libjpeg can only decode with a warning (a truncated one) instead
of returning a partly grey image, which is its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyvips

from ..core.config import JpegConfig, parse_codec
from .library import LibraryRefusal, chunk_components, chunk_image, config_of, fit_check, to_chunk

#: Luma factors (chroma [1, 1]) -> jpegsave's subsample_mode.
SUBSAMPLE_MODE = {(1, 1): "off", (2, 2): "on"}
#: The schemes the spec requires (JPEG-SUB-08) that jpegsave cannot write: refused at encode
#: (a fail of the library), not when parsing, because jpegload decodes them.
REQUIRED_UNWRITABLE = {(2, 1): "4:2:2", (1, 2): "4:4:0"}


def _message(exc: pyvips.Error) -> str:
    """libvips' message and its error buffer, on one line."""
    return " ".join(str(exc).split())


def _libvips_version() -> str:
    return ".".join(str(pyvips.version(i)) for i in range(3))


class PyvipsAdapter:
    name = "pyvips"
    kind = "library"
    language = "Python"
    roles = frozenset({"encode", "decode"})

    def versions(self) -> dict[str, str]:
        return {"pyvips": str(pyvips.__version__), "libvips": _libvips_version()}

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        config = parse_codec(codec)
        if config.decoded_color_space == "ycbcr":
            raise LibraryRefusal("JPEG-DCS-05", "pyvips cannot return YCbCr samples: jpegload converts them to sRGB")
        luma = config.luma_factors
        if config.encoded_color_space == "ycbcr" and luma not in SUBSAMPLE_MODE and luma not in REQUIRED_UNWRITABLE:
            raise LibraryRefusal(
                "JPEG-X-04",
                f"pyvips cannot write sampling factors {[list(f) for f in config.subsampling]}: "
                "jpegsave's subsample_mode writes 4:4:4 or 4:2:0 only",
            )
        return config

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        config = config_of(parsed, self.name)
        image = chunk_image(config, chunk, self.name)
        if config.encoded_color_space == "rgb":
            raise LibraryRefusal(
                "JPEG-ECS-09", "pyvips cannot write rgb: jpegsave converts color to YCbCr and has no APP14 option"
            )
        if config.encoded_color_space == "grayscale":
            options: dict[str, Any] = {}
            vips_image = pyvips.Image.new_from_array(image[:, :, 0])
        else:
            luma = config.luma_factors
            if luma in REQUIRED_UNWRITABLE:
                raise LibraryRefusal(
                    "JPEG-SUB-08",
                    f"pyvips cannot write {REQUIRED_UNWRITABLE[luma]} ({[list(f) for f in config.subsampling]}): "
                    "jpegsave's subsample_mode writes 4:4:4 or 4:2:0 only",
                )
            options = {"subsample_mode": SUBSAMPLE_MODE[luma]}
            vips_image = pyvips.Image.new_from_array(image)
        try:
            data = vips_image.jpegsave_buffer(Q=config.quality, strip=True, **options)
        except pyvips.Error as exc:
            raise LibraryRefusal(
                "JPEG-ENC-04", f"pyvips jpegsave refused a {image.shape[0]}x{image.shape[1]} chunk: {_message(exc)}"
            ) from exc
        return bytes(data)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        config = config_of(parsed, self.name)
        shape = tuple(chunk_shape)
        chunk_components(config, shape, self.name)
        try:
            vips_image = pyvips.Image.jpegload_buffer(bytes(data), fail_on="warning")
            if vips_image.format != "uchar":
                raise LibraryRefusal("JPEG-DEC-01", f"pyvips jpegload gives {vips_image.format} samples, not uchar (uint8)")
            fit_check((vips_image.height, vips_image.width, vips_image.bands), config, shape, self.name)
            # Not Image.numpy(): it squeezes a 1x1 one-band image to a 0-d array.
            samples = vips_image.write_to_memory()
        except pyvips.Error as exc:
            raise LibraryRefusal("JPEG-DEC-01", f"pyvips jpegload could not decode the stream ({len(data)} bytes): {_message(exc)}") from exc
        pixels = np.frombuffer(samples, dtype=np.uint8).reshape(vips_image.height, vips_image.width, vips_image.bands)
        return to_chunk(pixels, config, shape, self.name)


__all__ = ["PyvipsAdapter"]
