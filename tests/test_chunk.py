"""Meta-tests for core.chunk: the chunk-shape table, the dimension limits and the chunk checks.

Each rejection is checked at its boundary (the last size accepted, the first refused)
and by the requirement it cites, since that ID is what a conformance message quotes.
The built-in backends use these checks; the suites see them only through a backend,
so a check removed here went unnoticed by ``tests/`` (tools/mutate.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from zarr_jpeg_conformance.core.chunk import (
    LIBJPEG_MAX_DIMENSION,
    SPEC_MAX_DIMENSION,
    check_chunk,
    check_dimensions,
    image_shape,
)
from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.core.errors import ChunkError, Rejection, Unsupported

GRAY = parse_codec({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}})
YCBCR = parse_codec({"name": "jpeg", "configuration": {
    "quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}})


def _refused(kind: type[Rejection], requirement: str, call: object, *args: object) -> Rejection:
    with pytest.raises(kind) as caught:
        call(*args)  # type: ignore[operator]
    assert caught.value.requirement == requirement
    assert str(caught.value).endswith(f"[{requirement}]"), "the message cites the requirement"
    return caught.value


@pytest.mark.parametrize(("shape", "expected"), [((4, 5), (4, 5, 1)), ((4, 5, 1), (4, 5, 1)), ((4, 5, 3), (4, 5, 3))])
def test_shape_table_rows_that_encode(shape: tuple[int, ...], expected: tuple[int, int, int]) -> None:
    assert image_shape(shape) == expected


@pytest.mark.parametrize(
    ("shape", "requirement", "words"),
    [((7,), "JPEG-SHP-01", "1D"), ((), "JPEG-SHP-01", "0D"), ((1, 2, 3, 1), "JPEG-SHP-06", "4D"),
     ((4, 5, 2), "JPEG-SHP-05", "2 channels"), ((4, 5, 4), "JPEG-SHP-05", "4 channels")],
)
def test_shape_table_rows_that_are_refused(shape: tuple[int, ...], requirement: str, words: str) -> None:
    assert words in _refused(ChunkError, requirement, image_shape, shape).reason


def test_dimensions_at_the_limits_of_the_sof_and_of_libjpeg() -> None:
    """1 and 65535 fit a SOF's 16-bit fields; 0 and 65536 do not; 65501-65535 is libjpeg's optional range."""
    assert (SPEC_MAX_DIMENSION, LIBJPEG_MAX_DIMENSION) == (65535, 65500)
    check_dimensions(1, 1)
    check_dimensions(65535, 65535)
    check_dimensions(65500, 65500, LIBJPEG_MAX_DIMENSION)
    for height, width, axis in ((0, 5, "height"), (5, 0, "width"), (65536, 5, "height"), (5, 65536, "width")):
        assert axis in _refused(ChunkError, "JPEG-DIM-02", check_dimensions, height, width).reason
    for height, width in ((65501, 5), (5, 65501)):
        _refused(Unsupported, "JPEG-X-03", check_dimensions, height, width, LIBJPEG_MAX_DIMENSION)


def test_check_chunk_refusals_cite_their_rows() -> None:
    _refused(ChunkError, "JPEG-DT-01", check_chunk, GRAY, [[1, 2]])
    _refused(ChunkError, "JPEG-DT-01", check_chunk, GRAY, np.zeros((4, 5), np.float32))
    _refused(ChunkError, "JPEG-SHP-06", check_chunk, GRAY, np.zeros((1, 4, 5, 1), np.uint8))
    _refused(ChunkError, "JPEG-CFG-02", check_chunk, GRAY, np.zeros((4, 5, 3), np.uint8))
    _refused(ChunkError, "JPEG-CFG-02", check_chunk, YCBCR, np.zeros((4, 5), np.uint8))
    _refused(ChunkError, "JPEG-DIM-02", check_chunk, GRAY, np.zeros((0, 5), np.uint8))
    _refused(Unsupported, "JPEG-X-03", check_chunk, GRAY, np.zeros((1, 65501), np.uint8), LIBJPEG_MAX_DIMENSION)
    assert check_chunk(GRAY, np.zeros((1, 65535), np.uint8)).shape == (1, 65535, 1)


def test_check_chunk_returns_a_contiguous_image_of_the_same_samples() -> None:
    chunk = np.asfortranarray(np.arange(60, dtype=np.uint8).reshape(4, 5, 3))
    out = check_chunk(YCBCR, chunk)
    assert out.flags.c_contiguous and out.shape == (4, 5, 3)
    np.testing.assert_array_equal(out, chunk)
    gray = np.arange(20, dtype=np.uint8).reshape(4, 5)
    np.testing.assert_array_equal(check_chunk(GRAY, gray)[:, :, 0], gray)
