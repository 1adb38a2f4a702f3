"""Naming the classic fault a wrong decode or stream looks like (judging/diagnoses.py), on samples made for each."""

from __future__ import annotations

import numpy as np
import pytest

from zarr_jpeg_conformance.backends import load_backend
from zarr_jpeg_conformance.core import color
from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.judging.diagnoses import (
    _studio_range,
    cite,
    diagnose_decode,
    diagnose_quality,
    diagnose_roundtrip,
    table_quality,
)

IMAGE = np.random.default_rng(5).integers(0, 256, (8, 8, 3), np.uint8)


def _gray_stream(quality: int) -> bytes:
    config = parse_codec({"name": "jpeg", "configuration": {"quality": quality, "encoded_color_space": "grayscale"}})
    return load_backend("pillow").encode(config, IMAGE[..., :1].copy())


def test_a_constant_decode_of_a_varied_image_is_named_constant() -> None:
    assert diagnose_decode(np.full_like(IMAGE, 7), IMAGE, "ycbcr", "rgb") == "constant"
    assert diagnose_decode(np.full_like(IMAGE, 7), np.full_like(IMAGE, 9), "ycbcr", "rgb") is None


def test_a_decode_is_named_by_the_fault_it_is_far_closer_to_and_by_none_otherwise() -> None:
    assert diagnose_decode(IMAGE[..., ::-1].copy(), IMAGE, "ycbcr", "rgb") == "reversed"
    near = np.clip(IMAGE.astype(int) + 1, 0, 255).astype(np.uint8)
    assert diagnose_decode(near, IMAGE, "ycbcr", "rgb") is None


def test_a_round_trip_that_skipped_the_ycbcr_conversion_is_named_so() -> None:
    assert diagnose_roundtrip(color.ycbcr_to_rgb(IMAGE), IMAGE, "ycbcr", "rgb") == "encode-skipped-ycbcr"
    assert diagnose_roundtrip(color.rgb_to_ycbcr(IMAGE), IMAGE, "rgb", "rgb") == "rgb-transformed"


def test_studio_range_stretches_luma_from_16_235_to_0_255() -> None:
    assert _studio_range(np.full((1, 1, 3), 126, np.uint8)).tolist() == [[[128, 128, 128]]]  # (126 - 16) * 255 / 219


@pytest.mark.parametrize("quality", [30, 50, 90])  # under ~25 baseline clamps table entries at 255
def test_the_quality_of_ijg_tables_is_read_back_past_a_long_segment(quality: int) -> None:
    data = _gray_stream(quality)
    assert table_quality(data) == quality
    app = b"\xff\xe5" + (2 + 300).to_bytes(2, "big") + bytes(300)  # a segment longer than 255 bytes before the tables
    assert table_quality(data[:2] + app + data[2:]) == quality


def test_a_stream_cut_inside_a_segment_length_has_no_quality() -> None:
    assert table_quality(b"\xff\xd8\xff\xdb\x43") is None


def test_quality_lower_than_asked_is_named_only_past_the_gap() -> None:
    assert diagnose_quality(_gray_stream(20), 90) == "quality-lower"
    assert diagnose_quality(_gray_stream(90), 90) is None and diagnose_quality(_gray_stream(85), 90) is None


def test_a_round_trip_that_transformed_rgb_is_charged_to_the_rule_that_rgb_is_stored_as_is() -> None:
    requirement, words = cite(diagnose_roundtrip(color.rgb_to_ycbcr(IMAGE), IMAGE, "rgb", "rgb"), "JPEG-ECS-09")
    assert requirement == "JPEG-ECS-05" and "rgb components, which are stored as-is" in words
    assert cite(None, "JPEG-ECS-09")[0] == "JPEG-ECS-09"


def test_the_quality_is_read_from_all_64_entries_of_an_8_or_16_bit_table() -> None:
    eight = b"\xff\xd8\xff\xdb\x00\x43\x00" + bytes([255] + [1] * 63)
    sixteen = b"\xff\xd8\xff\xdb\x00\x83\x10" + b"\x00\xff" + b"\x00\x01" * 63
    # sum 318 against IJG's 3,688 at quality 50: scale 8.6 %, quality (200 - 8.6) / 2
    assert table_quality(eight) == table_quality(sixteen) == 96
