"""What a Zarr codec author writes around any JPEG library: the spec's chunk rules, nothing more.

The library adapters (``simplejpeg``, ``opencv``, ``pyvips``) put a JPEG library under test
the way a codec author in Python would call it. They share this project's configuration
parser (``core.config.parse_codec``: parsing is not what a library brings) and the few
lines here, which every such codec needs whatever its library: the dtype and shape rules
of the spec's "Supported chunk shapes" table on encode, and, on decode, that the image the
library returned fits the chunk. Nothing here looks inside a JPEG stream: no marker
inspection, no pre-decode checks, no color conversion. What a library does with streams
and pixels stays its own, so its row in the matrix shows that library.
"""

from __future__ import annotations

import numpy as np

from ..core.config import JpegConfig

#: The largest height or width the spec allows (JPEG-DIM-02: a 16-bit field of the frame header).
MAX_DIMENSION = 65535


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


__all__ = ["MAX_DIMENSION", "LibraryRefusal", "chunk_components", "chunk_image", "config_of", "fit_check", "to_chunk"]
