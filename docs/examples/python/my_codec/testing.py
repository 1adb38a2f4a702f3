"""The conformance adapter of a Zarr ``jpeg`` codec in Python: what the suites call.

The codec here is Pillow's JPEG decoder (it decodes; this adapter does not encode), a library with
no parser of its own, so the adapter is a ``LibraryAdapter``: the suite's own parse rules and
chunk-shape table, then the library. A codec that parses its configuration itself is adapted with
a plain class of the ``Adapter`` shape instead (``name``, ``roles``, ``versions``, ``parse``,
``encode``, ``decode``): its verdicts are then its own.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import ClassVar

import numpy as np
import PIL
from PIL import Image

from zarr_jpeg_conformance.adapters.library import PARSER, Factor, LibraryAdapter, LibraryRefusal, fit_check, to_chunk
from zarr_jpeg_conformance.core.config import JpegConfig


class JpegAdapter(LibraryAdapter):
    name = "example-pillow"
    roles = frozenset({"decode"})
    schemes: ClassVar[Mapping[Factor, object]] = {}  # what it writes: nothing, it does not encode
    scheme_option = "no encoder"
    no_rgb = "this adapter does not encode"
    # An optional feature the codec does not have is refused when parsing (LibraryAdapter.parse).
    no_ycbcr_output = "Image.convert gives RGB or L, never the stored YCbCr"

    def versions(self) -> dict[str, str]:
        return {"pillow": PIL.__version__, "parse": PARSER}

    def _decode(self, config: JpegConfig, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        # A ValueError (LibraryRefusal is one) or TypeError is a refusal; anything else an error.
        try:
            with Image.open(io.BytesIO(data), formats=["JPEG"]) as image:
                # Before any pixel is decoded: a frame that does not fit the chunk is refused, not cropped.
                fit_check((image.height, image.width, len(image.getbands())), config, chunk_shape, self.name)
                pixels = np.asarray(image.convert("L" if config.decoded_color_space == "grayscale" else "RGB"))
        except (OSError, SyntaxError, Image.DecompressionBombError) as exc:
            # Every error of the library is a refusal of this stream.
            raise LibraryRefusal("JPEG-DEC-01", f"Pillow could not decode the stream: {exc}") from exc
        return to_chunk(pixels, config, chunk_shape, self.name)
