"""pyvips as a Zarr codec author would call it: ``jpegsave_buffer`` and ``jpegload_buffer``.

pyvips binds libvips (Debian's ``libvips42``, which uses the system libjpeg-turbo; a
``pyvips-binary`` wheel, with mozjpeg, is used instead where it is installed: the
versions say which). ``jpegsave`` offers two chroma modes, ``subsample_mode="off"``
(4:4:4) and ``"on"`` (4:2:0), so 4:2:2 and 4:4:0, which the spec requires, are refused
at encode; decoding them works. It converts every color image to YCbCr, so it cannot
write ``rgb``; it decodes ``rgb`` streams (libjpeg honours APP14) but cannot return
stored YCbCr.

Traps avoided: libvips replaces a ``Q`` outside 1-100 by its default 75 with only a GLib
warning on stderr (the parser has already limited quality to 1-100), and its default
``subsample_mode="auto"`` picks 4:4:4 or 4:2:0 from the quality, so the mode is always
given. ``strip=True`` keeps out the EXIF block (about 190 bytes) libvips writes by
default; a chunk has no metadata to carry. ``jpegload`` is lazy: the header is read
first, and an image that does not fit the chunk is refused before any pixel is decoded.
``fail_on="warning"`` makes libvips refuse a stream that libjpeg can only decode with a
warning (a truncated one) instead of returning a partly grey image, its default.
``Image.numpy()`` is not used: it squeezes a 1x1 one-band image to a 0-d array.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pyvips

from ..core.config import JpegConfig
from .library import PARSER, Factor, LibraryAdapter, LibraryRefusal, fit_check, to_chunk


def _message(exc: pyvips.Error) -> str:
    """libvips' message and its error buffer, on one line."""
    return " ".join(str(exc).split())


def _libvips_version() -> str:
    return ".".join(str(pyvips.version(i)) for i in range(3))


class PyvipsAdapter(LibraryAdapter):
    name = "pyvips"
    schemes: ClassVar[Mapping[Factor, str]] = {(1, 1): "off", (2, 2): "on"}
    scheme_option = "jpegsave's subsample_mode"
    no_rgb = "jpegsave converts color to YCbCr and has no APP14 option"
    no_ycbcr_output = "jpegload converts them to sRGB"

    def versions(self) -> dict[str, str]:
        return {"pyvips": str(pyvips.__version__), "libvips": _libvips_version(), "parse": PARSER}

    def _encode(self, config: JpegConfig, image: np.ndarray) -> bytes:
        options: dict[str, Any] = {"Q": config.quality, "strip": True}
        if config.encoded_color_space == "grayscale":
            vips_image = pyvips.Image.new_from_array(image[:, :, 0])
        else:
            options["subsample_mode"] = self.schemes[config.luma_factors]
            vips_image = pyvips.Image.new_from_array(image)
        try:
            return bytes(vips_image.jpegsave_buffer(**options))
        except pyvips.Error as exc:
            raise LibraryRefusal(
                "JPEG-ENC-04", f"pyvips jpegsave refused a {image.shape[0]}x{image.shape[1]} chunk: {_message(exc)}"
            ) from exc

    def _decode(self, config: JpegConfig, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        try:
            vips_image = pyvips.Image.jpegload_buffer(data, fail_on="warning")
            if vips_image.format != "uchar":
                raise LibraryRefusal("JPEG-DEC-01", f"pyvips jpegload gives {vips_image.format} samples, not uchar (uint8)")
            height, width, bands = vips_image.height, vips_image.width, vips_image.bands
            fit_check((height, width, bands), config, chunk_shape, self.name)
            samples = vips_image.write_to_memory()
        except pyvips.Error as exc:
            raise LibraryRefusal(
                "JPEG-DEC-01", f"pyvips jpegload could not decode the stream ({len(data)} bytes): {_message(exc)}"
            ) from exc
        pixels = np.frombuffer(samples, dtype=np.uint8).reshape(height, width, bands)
        return to_chunk(pixels, config, chunk_shape, self.name)


__all__ = ["PyvipsAdapter"]
