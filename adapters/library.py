"""What a Zarr codec author writes around any JPEG library: the spec's chunk rules, nothing more.

The library adapters (``simplejpeg``, ``opencv``, ``pyvips``) put a JPEG library under test
the way a codec author in Python would call it. They share this project's configuration
parser (``core.config.parse_codec``: parsing is not what a library brings) and the few
lines here, which every such codec needs whatever its library: the dtype and shape rules
of the spec's "Supported chunk shapes" table on encode, and, on decode, that the image the
library returned fits the chunk. Nothing here looks inside a JPEG stream: no marker
inspection, no pre-decode checks, no color conversion. What a library does with streams
and pixels stays its own, so its row in the matrix shows that library.

:class:`LibraryAdapter` says once what follows from what a library can write (its
chroma schemes, no ``rgb``, no YCbCr output): sampling factors it cannot write are
refused when parsing if optional (JPEG-X-04) and at encode if required, because the
library still decodes them; ``rgb`` is refused at encode, because libjpeg-based decoders
read it (APP14); YCbCr passthrough is refused when parsing, because none returns stored
YCbCr samples.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from ..core.config import JpegConfig, parse_codec

#: What a library adapter's versions() say under "parse": this project's configuration parser
#: (the matrix shows the parse cases of rows that share a parser once).
PARSER = "zarr-jpeg-conformance core.config"
#: The largest height or width the spec allows (JPEG-DIM-02: a 16-bit field of the frame header).
MAX_DIMENSION = 65535
Factor = tuple[int, int]
#: J:a:b names of the luma factors (chroma [1, 1]) that libraries offer.
SCHEME_NAMES: dict[Factor, str] = {(1, 1): "4:4:4", (2, 1): "4:2:2", (1, 2): "4:4:0", (2, 2): "4:2:0", (4, 1): "4:1:1"}


class LibraryRefusal(ValueError):
    """A clean refusal by a library adapter, citing the requirement it rests on."""

    def __init__(self, requirement: str, message: str) -> None:
        super().__init__(f"{message} [{requirement}]")
        self.requirement = requirement


def config_of(parsed: object, library: str) -> JpegConfig:
    """The configuration ``parse`` returned; anything else is a caller's mistake."""
    if not isinstance(parsed, JpegConfig):
        raise TypeError(f"{library}: expected the result of {library}.parse, got {type(parsed).__name__}")
    return parsed


def chunk_components(config: JpegConfig, shape: tuple[int, ...], library: str) -> int:
    """The component count a chunk of ``shape`` holds, checked against the configuration.

    (H, W) and (H, W, 1) hold 1 component, (H, W, 3) holds 3; every other shape is rejected
    (JPEG-SHP-01..06), and so is a count that differs from the one ``encoded_color_space``
    fixes (JPEG-CFG-02).
    """
    if len(shape) == 2:
        components = 1
    elif len(shape) == 3 and shape[2] in (1, 3):
        components = shape[2]
    elif len(shape) < 2:
        raise LibraryRefusal("JPEG-SHP-01", f"{library}: chunk shape {shape} has {len(shape)} axis/axes; reshape to 2D first")
    elif len(shape) > 3:
        raise LibraryRefusal("JPEG-SHP-06", f"{library}: chunk shape {shape} has {len(shape)} axes; only 2D or 3D chunks are JPEG images")
    else:
        raise LibraryRefusal("JPEG-SHP-05", f"{library}: chunk shape {shape} has {shape[2]} channels; the channel axis must be 1 or 3")
    if components != config.components:
        raise LibraryRefusal(
            "JPEG-CFG-02",
            f"{library}: chunk shape {shape} holds {components} component(s) but encoded_color_space "
            f"{config.encoded_color_space!r} stores {config.components}",
        )
    return components


def chunk_image(config: JpegConfig, chunk: np.ndarray, library: str) -> np.ndarray:
    """The chunk as a C-contiguous (H, W, C) uint8 image, or a refusal saying which rule it breaks."""
    chunk = np.asarray(chunk)
    if chunk.dtype != np.uint8:
        raise LibraryRefusal("JPEG-DT-01", f"{library}: chunk dtype is {chunk.dtype}; only uint8 is supported")
    components = chunk_components(config, chunk.shape, library)
    height, width = chunk.shape[:2]
    if not (1 <= height <= MAX_DIMENSION and 1 <= width <= MAX_DIMENSION):
        raise LibraryRefusal(
            "JPEG-DIM-02", f"{library}: chunk is {height}x{width}; height and width must be 1-{MAX_DIMENSION}"
        )
    return np.ascontiguousarray(chunk.reshape(height, width, components))


def fit_check(got: tuple[int, int, int], config: JpegConfig, chunk_shape: tuple[int, ...], library: str) -> None:
    """Refuse an image of (height, width, components) ``got`` that is not the chunk's (JPEG-DIM-03).

    A same-size image of other dimensions is refused too: reshaping it would scramble the
    samples without a word (JPEG-X-08).
    """
    shape = tuple(int(n) for n in chunk_shape)
    components = chunk_components(config, shape, library)
    expected = (shape[0], shape[1], components)
    if tuple(got) != expected:
        raise LibraryRefusal(
            "JPEG-DIM-03",
            f"{library}: the stream holds a {got[0]}x{got[1]} image of {got[2]} component(s), "
            f"the chunk {shape} needs {expected[0]}x{expected[1]} of {expected[2]}",
        )


def to_chunk(pixels: np.ndarray, config: JpegConfig, chunk_shape: tuple[int, ...], library: str) -> np.ndarray:
    """The decoded image reshaped to the chunk, once :func:`fit_check` accepts it."""
    pixels = np.asarray(pixels)
    if pixels.dtype != np.uint8:
        raise LibraryRefusal("JPEG-DEC-01", f"{library}: decoded samples are {pixels.dtype}, not uint8")
    if pixels.ndim not in (2, 3):
        raise LibraryRefusal("JPEG-DEC-01", f"{library}: decoded samples have shape {pixels.shape}, not an image")
    height, width = pixels.shape[:2]
    fit_check((height, width, pixels.shape[2] if pixels.ndim == 3 else 1), config, chunk_shape, library)
    return np.ascontiguousarray(pixels).reshape(tuple(int(n) for n in chunk_shape))


class LibraryAdapter:
    """What a library adapter says about its library; subclasses call the library in ``_encode`` and ``_decode``."""

    name: ClassVar[str]
    kind = "library"
    language = "Python"
    roles = frozenset({"encode", "decode"})
    #: Luma factors (chroma [1, 1]) the library writes -> the library's option that writes them.
    schemes: ClassVar[Mapping[Factor, object]]
    #: Where the library's scheme option lives, for messages ("encode_jpeg's colorsubsampling").
    scheme_option: ClassVar[str]
    #: Why the library cannot write rgb, and why it cannot return YCbCr samples.
    no_rgb: ClassVar[str]
    no_ycbcr_output: ClassVar[str]

    def versions(self) -> dict[str, str]:
        raise NotImplementedError

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        config = parse_codec(codec)
        if config.decoded_color_space == "ycbcr":
            raise LibraryRefusal("JPEG-DCS-05", f"{self.name} cannot return YCbCr samples: {self.no_ycbcr_output}")
        if config.encoded_color_space == "ycbcr" and not config.is_required_scheme and config.luma_factors not in self.schemes:
            raise LibraryRefusal("JPEG-X-04", f"{self.name} cannot write sampling factors {self._offers(config)}")
        return config

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        config = config_of(parsed, self.name)
        image = chunk_image(config, chunk, self.name)
        if config.encoded_color_space == "rgb":
            raise LibraryRefusal("JPEG-ECS-09", f"{self.name} cannot write rgb: {self.no_rgb}")
        if config.encoded_color_space == "ycbcr" and config.luma_factors not in self.schemes:
            raise LibraryRefusal(
                "JPEG-SUB-08",
                f"{self.name} cannot write {SCHEME_NAMES[config.luma_factors]}, which the spec requires, "
                f"sampling factors {self._offers(config)}",
            )
        return self._encode(config, image)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        config = config_of(parsed, self.name)
        shape = tuple(int(n) for n in chunk_shape)
        chunk_components(config, shape, self.name)
        return self._decode(config, bytes(data), shape)

    def _offers(self, config: JpegConfig) -> str:
        offered = ", ".join(SCHEME_NAMES[f] for f in self.schemes)
        return f"{[list(f) for f in config.subsampling]}: {self.scheme_option} offers {offered} only"

    def _encode(self, config: JpegConfig, image: np.ndarray) -> bytes:
        """Encode an (H, W, C) image the chunk rules accepted, with a scheme the library writes."""
        raise NotImplementedError

    def _decode(self, config: JpegConfig, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        """Decode a stream into a chunk of ``chunk_shape``, whose shape the chunk rules accepted."""
        raise NotImplementedError


__all__ = ["MAX_DIMENSION", "SCHEME_NAMES", "Factor", "LibraryAdapter", "LibraryRefusal", "chunk_components", "chunk_image",
           "config_of", "fit_check", "to_chunk"]
