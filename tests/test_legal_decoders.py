"""The decoders a legal implementation may be (judging/legal_decoders.py): the spec leaves chroma upsampling to the
decoder, so a decode is judged against libjpeg-turbo's interpolation and against chroma repeated."""

from __future__ import annotations

import numpy as np
import pytest

from zarr_jpeg_conformance.backends import load_backend
from zarr_jpeg_conformance.core.config import JpegConfig, parse_codec
from zarr_jpeg_conformance.judging.legal_decoders import box_upsampling_decode, libjpeg_turbo_decode

pytest.importorskip("turbojpeg")


def _stream(configuration: dict[str, object], shape: tuple[int, ...]) -> tuple[bytes, JpegConfig]:
    config = parse_codec({"name": "jpeg", "configuration": {"quality": 90, **configuration}})
    image = np.random.default_rng(3).integers(0, 256, (shape[0], shape[1], shape[2] if len(shape) == 3 else 1), np.uint8)
    return load_backend("pillow").encode(config, image), config


def test_a_grayscale_stream_has_no_chroma_to_repeat() -> None:
    data, config = _stream({"encoded_color_space": "grayscale"}, (16, 24))
    assert np.array_equal(box_upsampling_decode(data, config, (16, 24)), libjpeg_turbo_decode(data, config, (16, 24)))


@pytest.mark.parametrize(("luma", "step"), [([2, 2], (2, 2)), ([2, 1], (1, 2)), ([1, 2], (2, 1))], ids=["420", "422", "440"])
def test_subsampled_chroma_is_repeated_over_its_block_not_interpolated(luma: list[int], step: tuple[int, int]) -> None:
    data, config = _stream({"encoded_color_space": "ycbcr", "subsampling": [luma, [1, 1], [1, 1]],
                            "decoded_color_space": "ycbcr"}, (16, 24, 3))
    box = box_upsampling_decode(data, config, (16, 24, 3)).astype(int)
    fancy = libjpeg_turbo_decode(data, config, (16, 24, 3)).astype(int)
    assert np.array_equal(box[..., 0], fancy[..., 0])  # luma is never upsampled
    chroma = box[..., 1:]
    sy, sx = step
    assert np.array_equal(chroma[:: sy], chroma[sy - 1 :: sy]) and np.array_equal(chroma[:, :: sx], chroma[:, sx - 1 :: sx])
    assert not np.array_equal(box[..., 1:], fancy[..., 1:])
