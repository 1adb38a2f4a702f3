"""OpenCV as a Zarr codec author would call it: ``cv2.imencode(".jpg")`` and ``cv2.imdecode``.

OpenCV (``opencv-python-headless``, libjpeg-turbo built in) writes grayscale and YCbCr
with the sampling factors of ``IMWRITE_JPEG_SAMPLING_FACTOR_*`` (4:4:4, 4:2:2, 4:4:0,
4:2:0, 4:1:1). Two traps are avoided by not handing OpenCV what it would change without
an error: any other ``IMWRITE_JPEG_SAMPLING_FACTOR`` value becomes 4:2:0, and a quality
outside 0-100 is clamped (each with only a logged warning); the parser has already
limited quality to 1-100, and only the listed factors are ever passed. OpenCV orders
channels BGR. It cannot write ``rgb`` (no APP14 option); it decodes ``rgb`` streams
(libjpeg honours APP14) and cannot return stored YCbCr. ``IMREAD_UNCHANGED`` returns
the image as stored, without the EXIF rotation and color conversions of the other read
modes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

import cv2
import numpy as np

from ..core.config import JpegConfig
from .library import PARSER, Factor, LibraryAdapter, LibraryRefusal, to_chunk


def _libjpeg_version() -> str:
    """The JPEG library OpenCV was built with, as its build information states it."""
    found = re.search(r"^\s*JPEG:\s*(.+)$", cv2.getBuildInformation(), re.MULTILINE)
    return found[1].strip() if found else "unknown"


class OpenCVAdapter(LibraryAdapter):
    name = "opencv"
    schemes: ClassVar[Mapping[Factor, int]] = {
        (1, 1): cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444,
        (2, 1): cv2.IMWRITE_JPEG_SAMPLING_FACTOR_422,
        (1, 2): cv2.IMWRITE_JPEG_SAMPLING_FACTOR_440,
        (2, 2): cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420,
        (4, 1): cv2.IMWRITE_JPEG_SAMPLING_FACTOR_411,
    }
    scheme_option = "IMWRITE_JPEG_SAMPLING_FACTOR"
    no_rgb = "cv2.imencode converts color to YCbCr and has no APP14 option"
    no_ycbcr_output = "cv2.imdecode converts them to BGR"

    def versions(self) -> dict[str, str]:
        return {"opencv": str(cv2.__version__), "libjpeg": _libjpeg_version(), "parse": PARSER}

    def _encode(self, config: JpegConfig, image: np.ndarray) -> bytes:
        params = [cv2.IMWRITE_JPEG_QUALITY, config.quality]
        if config.encoded_color_space == "grayscale":
            pixels = image[:, :, 0]
        else:
            pixels = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
            params += [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, self.schemes[config.luma_factors]]
        where = f"a {image.shape[0]}x{image.shape[1]} chunk"
        try:
            ok, data = cv2.imencode(".jpg", pixels, params)
        except cv2.error as exc:
            raise LibraryRefusal("JPEG-ENC-04", f"cv2.imencode refused {where}: {exc}") from exc
        if not ok:
            raise LibraryRefusal("JPEG-ENC-04", f"cv2.imencode returned False for {where}")
        return data.tobytes()

    def _decode(self, config: JpegConfig, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        try:
            pixels = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_UNCHANGED)
        except cv2.error as exc:
            raise LibraryRefusal("JPEG-DEC-01", f"cv2.imdecode refused the stream ({len(data)} bytes): {exc}") from exc
        if pixels is None:
            raise LibraryRefusal("JPEG-DEC-01", f"cv2.imdecode could not decode the stream ({len(data)} bytes): it returned None")
        if pixels.ndim == 3 and pixels.shape[2] == 3:
            pixels = cv2.cvtColor(pixels, cv2.COLOR_BGR2RGB)
        return to_chunk(pixels, config, chunk_shape, self.name)


__all__ = ["OpenCVAdapter"]
