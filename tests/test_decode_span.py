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


def test_diagnose_names_a_fault_once_the_decode_is_four_times_closer_to_it() -> None:
    """The decode on the line from the expected decode to the channels reversed: named past 4/5 of the way, not before."""
    from zarr_jpeg_conformance.judging.decode_tolerances import diagnose

    rng = np.random.default_rng(7)
    expected = rng.integers(0, 256, (32, 32, 3)).astype(np.float64)
    reversed_ = expected[..., ::-1]
    for a, named in ((0.83, True), (0.77, False)):
        got = np.rint(expected + a * (reversed_ - expected)).astype(np.uint8)
        found = diagnose(got, expected.astype(np.uint8), "ycbcr", "rgb")
        assert (found is not None and found[0] == "JPEG-DEC-02") is named, (a, found)


def test_the_studio_range_model_stretches_16_235_to_0_255() -> None:
    from zarr_jpeg_conformance.judging.diagnoses import _studio_range

    gray = np.array([[[16] * 3, [126] * 3, [235] * 3]], np.uint8)  # YCbCr (Y, 128, 128) of these grays is Y
    assert _studio_range(gray)[0, :, 0].tolist() == [0, 128, 255]
