"""Naming the classic fault a wrong decode or stream looks like (judging/diagnoses.py), on samples made for each."""

from __future__ import annotations

import numpy as np

from zarr_jpeg_conformance.core import color
from zarr_jpeg_conformance.judging.diagnoses import _studio_range, cite, diagnose_decode, diagnose_encode

IMAGE = np.random.default_rng(5).integers(0, 256, (8, 8, 3), np.uint8)


def test_a_constant_decode_of_a_varied_image_is_named_constant() -> None:
    assert diagnose_decode(np.full_like(IMAGE, 7), IMAGE, "ycbcr", "rgb") == "constant"
    assert diagnose_decode(np.full_like(IMAGE, 7), np.full_like(IMAGE, 9), "ycbcr", "rgb") is None


def test_a_decode_is_named_by_the_fault_it_is_far_closer_to_and_by_none_otherwise() -> None:
    assert diagnose_decode(IMAGE[..., ::-1].copy(), IMAGE, "ycbcr", "rgb") == "reversed"
    near = np.clip(IMAGE.astype(int) + 1, 0, 255).astype(np.uint8)
    assert diagnose_decode(near, IMAGE, "ycbcr", "rgb") is None


def test_a_stream_that_skipped_the_ycbcr_conversion_is_named_so() -> None:
    assert diagnose_encode(color.ycbcr_to_rgb(IMAGE), IMAGE, "ycbcr", "rgb") == "encode-skipped-ycbcr"
    assert diagnose_encode(color.rgb_to_ycbcr(IMAGE), IMAGE, "rgb", "rgb") == "rgb-transformed"


def test_studio_range_stretches_luma_from_16_235_to_0_255() -> None:
    assert _studio_range(np.full((1, 1, 3), 126, np.uint8)).tolist() == [[[128, 128, 128]]]  # (126 - 16) * 255 / 219


def test_a_stream_that_transformed_rgb_is_charged_to_the_rule_that_rgb_is_stored_as_is() -> None:
    requirement, words = cite(diagnose_encode(color.rgb_to_ycbcr(IMAGE), IMAGE, "rgb", "rgb"), "JPEG-ECS-09")
    assert requirement == "JPEG-ECS-05" and "rgb components, which are stored as-is" in words
    assert cite(None, "JPEG-ECS-09")[0] == "JPEG-ECS-09"
