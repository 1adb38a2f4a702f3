"""judging.decode_tolerances.outside: the distance of a decode outside the span of its expected decodes."""

from __future__ import annotations

import numpy as np
import pytest

from zarr_jpeg_conformance.judging.decode_tolerances import Difference, outside


def test_inside_the_span_is_zero_and_outside_is_the_distance_to_its_nearer_end() -> None:
    low, high = np.array([[10, 20]], np.uint8), np.array([[14, 20]], np.uint8)
    assert outside(np.array([[12, 20]], np.uint8), [low, high]) == Difference(0, 0.0)
    got = outside(np.array([[7, 25]], np.uint8), [high, low])  # order of the references does not matter
    assert (got.max_abs, got.mean_abs) == (5, 4.0)


def test_a_decode_of_another_shape_is_an_error_of_the_caller_not_a_distance() -> None:
    with pytest.raises(ValueError, match="shapes differ"):
        outside(np.zeros((2, 3), np.uint8), [np.zeros((3, 2), np.uint8)])
    assert outside(np.zeros((0, 3), np.uint8), [np.zeros((0, 3), np.uint8)]) == Difference(0, 0.0)
