"""Meta-tests for core.color: exact agreement with libjpeg-turbo (through imagecodecs), and Pillow's offset.

Exact references used:
* inverse: a stream decoded to raw YCbCr and converted with ycbcr_to_rgb must equal the same
  stream decoded to RGB by libjpeg, bit for bit, at any subsampling;
* forward: an image of flat 8x8 blocks at quality 100, 4:4:4, passes libjpeg's DCT and
  quantisation unchanged (each block is a pure DC term with quantiser 1), so its raw YCbCr
  decode *is* libjpeg's colour conversion of the block colours.
"""

from __future__ import annotations

from collections.abc import Iterator

import imagecodecs
import numpy as np
import pytest
from PIL import Image

from zarr_jpeg_conformance.core import color
from zarr_jpeg_conformance.core.color import rgb_to_ycbcr, ycbcr_to_rgb

BLOCKS = 64  # 64 x 64 flat blocks = 4096 colours per stream


def _flat_blocks(colours: np.ndarray) -> np.ndarray:
    """One 8x8 block per colour, BLOCKS blocks per side."""
    grid = colours.reshape(BLOCKS, BLOCKS, 3)
    return np.repeat(np.repeat(grid, 8, axis=0), 8, axis=1)


def _block_colours(image: np.ndarray) -> np.ndarray:
    return image[::8, ::8].reshape(-1, 3)


def _random_colours(seed: int, extra: np.ndarray | None = None) -> np.ndarray:
    corners = np.array([[r, g, b] for r in (0, 255) for g in (0, 255) for b in (0, 255)], np.uint8)
    fixed = corners if extra is None else np.concatenate([corners, extra.astype(np.uint8)])
    rng = np.random.default_rng(seed)
    rest = rng.integers(0, 256, (BLOCKS * BLOCKS - len(fixed), 3), dtype=np.uint8)
    return np.concatenate([fixed, rest])


def _cube_chunks() -> Iterator[np.ndarray]:
    """Every one of the 2**24 8-bit triples, in 16 chunks of 2**20 to bound memory."""
    axis = np.arange(256, dtype=np.uint8)
    for first in range(0, 256, 16):
        block = np.meshgrid(axis[first : first + 16], axis, axis, indexing="ij")
        yield np.stack(block, axis=-1).reshape(-1, 3)


# ----------------------------------------------------------------------------- known values


@pytest.mark.parametrize(
    ("rgb", "ycbcr"),
    [
        ((0, 0, 0), (0, 128, 128)),
        ((255, 255, 255), (255, 128, 128)),
        ((128, 128, 128), (128, 128, 128)),
        ((255, 0, 0), (76, 85, 255)),
        ((0, 255, 0), (150, 44, 21)),
        ((0, 0, 255), (29, 255, 107)),
    ],
)
def test_known_forward_values(rgb: tuple[int, int, int], ycbcr: tuple[int, int, int]) -> None:
    assert tuple(rgb_to_ycbcr(np.array(rgb, np.uint8))) == ycbcr


@pytest.mark.parametrize(
    ("ycbcr", "rgb"),
    [
        ((128, 128, 128), (128, 128, 128)),
        ((0, 128, 128), (0, 0, 0)),
        ((0, 0, 0), (0, 135, 0)),  # out of the RGB gamut: clipped, as libjpeg's range_limit does
        ((255, 255, 255), (255, 121, 255)),
        ((76, 85, 255), (254, 0, 0)),
    ],
)
def test_known_inverse_values(ycbcr: tuple[int, int, int], rgb: tuple[int, int, int]) -> None:
    assert tuple(ycbcr_to_rgb(np.array(ycbcr, np.uint8))) == rgb


# ----------------------------------------------------------------------------- exactness vs libjpeg


@pytest.mark.parametrize("subsampling", ["444", "422", "440", "420", "411"])
@pytest.mark.parametrize("quality", [95, 50])
def test_inverse_matches_libjpeg_decode(subsampling: str, quality: int) -> None:
    rgb = np.random.default_rng(quality).integers(0, 256, (72, 88, 3), dtype=np.uint8)
    stream = imagecodecs.jpeg8_encode(rgb, level=quality, subsampling=subsampling)
    raw = imagecodecs.jpeg8_decode(stream, outcolorspace="YCbCr")
    np.testing.assert_array_equal(ycbcr_to_rgb(raw), imagecodecs.jpeg8_decode(stream))


def _green_discriminators() -> np.ndarray:
    """(128, Cb, Cr) triples where T.871's exact 0.344136 would round G differently from libjpeg's 0.34414."""
    cb, cr = (a.ravel() for a in np.meshgrid(np.arange(256), np.arange(256), indexing="ij"))
    cb, cr = cb - 128, cr - 128
    libjpeg = (-color.G_CB * cb - color.G_CR * cr + color.ONE_HALF) >> color.SCALEBITS
    exact = (-color._fix(0.114 * 1.772 / 0.587) * cb - color.G_CR * cr + color.ONE_HALF) >> color.SCALEBITS
    differ = libjpeg != exact
    return np.stack([np.full(differ.sum(), 128), cb[differ] + 128, cr[differ] + 128], axis=-1)


def test_inverse_on_flat_ycbcr_blocks_including_rounding_edge_cases() -> None:
    edge = _green_discriminators()
    assert 0 < len(edge) < BLOCKS * BLOCKS // 2
    ycc = _flat_blocks(_random_colours(11, extra=edge))
    stream = imagecodecs.jpeg8_encode(ycc, level=100, colorspace="YCbCr", outcolorspace="YCbCr", subsampling="444")
    raw = imagecodecs.jpeg8_decode(stream, outcolorspace="YCbCr")
    np.testing.assert_array_equal(raw, ycc)  # the flat-block path is lossless
    np.testing.assert_array_equal(ycbcr_to_rgb(raw), imagecodecs.jpeg8_decode(stream))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_forward_matches_libjpeg_encode(seed: int) -> None:
    rgb = _flat_blocks(_random_colours(seed))
    stream = imagecodecs.jpeg8_encode(rgb, level=100, subsampling="444")
    raw = imagecodecs.jpeg8_decode(stream, outcolorspace="YCbCr")
    blocks = raw.reshape(BLOCKS, 8, BLOCKS, 8, 3)
    assert (blocks == blocks[:, :1, :, :1]).all()  # every block still flat: no DCT rounding crept in
    np.testing.assert_array_equal(_block_colours(raw), rgb_to_ycbcr(_block_colours(rgb)))


def test_forward_t871_quotients_give_the_same_integers() -> None:
    """libjpeg's 5-decimal chroma weights and T.871's exact quotients round identically on all inputs."""
    fix = color._fix
    for cube in _cube_chunks():
        r, g, b = (c.astype(np.int32) for c in cube.T)
        cb = (-fix(0.299 / 1.772) * r - fix(0.587 / 1.772) * g + color.HALF_WEIGHT * b + color.CHROMA_BIAS) >> 16
        cr = (color.HALF_WEIGHT * r - fix(0.587 / 1.402) * g - fix(0.114 / 1.402) * b + color.CHROMA_BIAS) >> 16
        ours = rgb_to_ycbcr(cube)
        np.testing.assert_array_equal(ours[:, 1], cb)
        np.testing.assert_array_equal(ours[:, 2], cr)


# ----------------------------------------------------------------------------- whole-cube properties


def test_round_trip_error_is_at_most_one() -> None:
    worst = max(int(np.abs(ycbcr_to_rgb(rgb_to_ycbcr(c)).astype(np.int16) - c).max()) for c in _cube_chunks())
    assert worst == 1


def test_forward_stays_in_range_without_clipping() -> None:
    # The chroma bias (ONE_HALF - 1) is what keeps Cb at B=255, R=G=0 from reaching 256.
    low, high = 255, 0
    for cube in _cube_chunks():
        r, g, b = (c.astype(np.int32) for c in cube.T)
        cb = (-color.CB_R * r - color.CB_G * g + color.HALF_WEIGHT * b + color.CHROMA_BIAS) >> 16
        low, high = min(low, int(cb.min())), max(high, int(cb.max()))
    assert (low, high) == (0, 255)


# ----------------------------------------------------------------------------- Pillow (measured, not exact)


def _pillow_offset(pillow_mode: str, target: str, ours) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    """Largest difference from ours over the whole cube, and the share of triples that differ."""
    worst, differing = 0, 0
    for cube in _cube_chunks():
        image = Image.fromarray(cube.reshape(1024, 1024, 3), pillow_mode).convert(target)
        diff = np.abs(np.asarray(image).reshape(-1, 3).astype(np.int16) - ours(cube))
        worst = max(worst, int(diff.max()))
        differing += int((diff > 0).any(axis=-1).sum())
    return worst, differing / 2**24


def test_pillow_forward_is_within_one_of_libjpeg() -> None:
    """Pillow's own RGB->YCbCr (Convert.c) is not libjpeg's: off by one on most colours."""
    worst, share = _pillow_offset("RGB", "YCbCr", rgb_to_ycbcr)
    assert worst == 1
    assert 0.5 < share < 0.95  # measured 85 %


def test_pillow_inverse_is_within_one_of_libjpeg() -> None:
    worst, share = _pillow_offset("YCbCr", "RGB", ycbcr_to_rgb)
    assert worst == 1
    assert 0.5 < share < 0.95  # measured 70 %


# ----------------------------------------------------------------------------- API contract


@pytest.mark.parametrize("shape", [(3,), (5, 3), (2, 4, 3), (1, 2, 3, 3), (0, 3)])
@pytest.mark.parametrize("convert", [rgb_to_ycbcr, ycbcr_to_rgb])
def test_any_leading_shape(convert, shape: tuple[int, ...]) -> None:  # type: ignore[no-untyped-def]
    a = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    out = convert(a)
    assert out.shape == shape and out.dtype == np.uint8
    if a.size:
        np.testing.assert_array_equal(out.reshape(-1, 3), convert(a.reshape(-1, 3)))


@pytest.mark.parametrize("convert", [rgb_to_ycbcr, ycbcr_to_rgb])
def test_non_contiguous_input_and_input_untouched(convert) -> None:  # type: ignore[no-untyped-def]
    base = np.random.default_rng(5).integers(0, 256, (16, 16, 3), dtype=np.uint8)
    view = base[::2, ::-3]
    before = base.copy()
    np.testing.assert_array_equal(convert(view), convert(np.ascontiguousarray(view)))
    np.testing.assert_array_equal(base, before)


@pytest.mark.parametrize("convert", [rgb_to_ycbcr, ycbcr_to_rgb])
def test_rejects_wrong_dtype_and_shape(convert) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError):
        convert(np.zeros((2, 3), np.uint16))
    with pytest.raises(TypeError):
        convert(np.zeros((2, 3), np.float64))
    with pytest.raises(ValueError):
        convert(np.zeros((2, 4), np.uint8))
    with pytest.raises(ValueError):
        convert(np.zeros((), np.uint8))
