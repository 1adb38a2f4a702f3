"""Chunk checks at encode time, and the chunk-shape table (JPEG-SHP-*)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .config import JpegConfig
from .errors import ChunkError, Unsupported

#: JPEG stores each dimension as a 16-bit value (JPEG-DIM-02).
SPEC_MAX_DIMENSION = 65535
#: libjpeg's JPEG_MAX_DIMENSION; 65501-65535 is optional (JPEG-X-03).
LIBJPEG_MAX_DIMENSION = 65500


def image_shape(chunk_shape: Sequence[int]) -> tuple[int, int, int]:
    """(H, W, components) of a chunk shape, or a rejection citing the shape table row."""
    shape = tuple(int(n) for n in chunk_shape)
    if len(shape) < 2:
        raise ChunkError("JPEG-SHP-01", f"chunk shape {shape} is {len(shape)}D: reshape to 2D first")
    if len(shape) > 3:
        raise ChunkError("JPEG-SHP-06", f"chunk shape {shape} is {len(shape)}D: transpose/reshape down to 2D or 3D")
    if len(shape) == 2:
        return shape[0], shape[1], 1
    if shape[2] not in (1, 3):
        raise ChunkError(
            "JPEG-SHP-05", f"chunk shape {shape} has {shape[2]} channels: the channel axis must be 1 or 3"
        )
    return shape[0], shape[1], shape[2]


def check_dimensions(height: int, width: int, max_dimension: int = SPEC_MAX_DIMENSION) -> None:
    """Reject sizes a JPEG SOF cannot record, and sizes beyond what this backend can write."""
    for axis, n in (("height", height), ("width", width)):
        if n < 1:
            raise ChunkError("JPEG-DIM-02", f"image {axis} is {n}: a JPEG image needs at least one sample per axis")
        if n > SPEC_MAX_DIMENSION:
            raise ChunkError("JPEG-DIM-02", f"image {axis} {n} exceeds 65535")
        if n > max_dimension:
            raise Unsupported("JPEG-X-03", f"image {axis} {n} exceeds this backend's limit of {max_dimension}")


def check_chunk(config: JpegConfig, chunk: object, max_dimension: int = SPEC_MAX_DIMENSION) -> np.ndarray:
    """Validate a chunk for encoding and return it as a C-contiguous (H, W, C) uint8 array."""
    if not isinstance(chunk, np.ndarray):
        raise ChunkError("JPEG-DT-01", f"chunk must be a numpy array, got {type(chunk).__name__}")
    if chunk.dtype != np.uint8:
        raise ChunkError("JPEG-DT-01", f"chunk dtype is {chunk.dtype}: only uint8 is supported")
    height, width, components = image_shape(chunk.shape)
    if components != config.components:
        raise ChunkError(
            "JPEG-CFG-02",
            f"chunk shape {chunk.shape} has {components} component(s) but encoded_color_space "
            f"{config.encoded_color_space!r} needs {config.components}",
        )
    check_dimensions(height, width, max_dimension)
    return np.ascontiguousarray(chunk.reshape(height, width, components))
