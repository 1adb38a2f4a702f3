"""Full-range JFIF (ITU-T T.871) colour conversion between RGB and YCbCr, as libjpeg rounds it.

The conformance suite needs the codec's colour conversion outside any decoder: to build
expected values for `decoded_color_space` combinations, and to tell "the decoder applied
the wrong transform" apart from "the decoder is lossy". Both functions reproduce the
integer results of libjpeg(-turbo)'s jccolor.c / jdcolor.c exactly, so a mismatch with a
libjpeg-based decoder's output is a real difference, not rounding noise.

T.871 section 7 defines, for 8-bit samples:

    Y  =  0.299 R + 0.587 G + 0.114 B
    Cb = -0.299/1.772 R - 0.587/1.772 G + 0.5 B + 128
    Cr =  0.5 R - 0.587/1.402 G - 0.114/1.402 B + 128

    R = Y + 1.402 (Cr - 128)
    G = Y - (0.114 * 1.772 / 0.587) (Cb - 128) - (0.299 * 1.402 / 0.587) (Cr - 128)
    B = Y + 1.772 (Cb - 128)

libjpeg evaluates these in fixed point with 16 fractional bits, using the coefficients
rounded to 5 decimals *before* scaling (0.16874, not 0.168736...). Those rounded decimals
are kept below because the exact quotients give a different fixed-point constant for three
of the coefficients and so, for some inputs, a different integer result.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["rgb_to_ycbcr", "ycbcr_to_rgb"]

SCALEBITS = 16
ONE_HALF = 1 << (SCALEBITS - 1)
CENTER = 128


def _fix(x: float) -> int:
    """A coefficient in 16.16 fixed point, rounded to nearest as libjpeg's FIX() macro does."""
    return int(x * (1 << SCALEBITS) + 0.5)


# Forward transform (T.871 eq. for Y, Cb, Cr). The three luma weights sum to exactly
# 1 << 16, so Y never exceeds 255 and needs no clipping.
Y_R, Y_G, Y_B = _fix(0.29900), _fix(0.58700), _fix(0.11400)
CB_R, CB_G = _fix(0.16874), _fix(0.33126)  # 0.299/1.772, 0.587/1.772
CR_G, CR_B = _fix(0.41869), _fix(0.08131)  # 0.587/1.402, 0.114/1.402
HALF_WEIGHT = _fix(0.5)
# Cb and Cr carry a +128 offset; rounding with ONE_HALF - 1 instead of ONE_HALF keeps the
# largest result (B or R = 255, the other two 0) at 255 instead of 256, so no clipping.
CHROMA_BIAS = (CENTER << SCALEBITS) + ONE_HALF - 1

# Inverse transform.
R_CR = _fix(1.40200)
B_CB = _fix(1.77200)
G_CB = _fix(0.34414)  # 0.114 * 1.772 / 0.587
G_CR = _fix(0.71414)  # 0.299 * 1.402 / 0.587


def rgb_to_ycbcr(a: ArrayLike) -> NDArray[np.uint8]:
    """Convert uint8 RGB samples, shape (..., 3), to full-range JFIF YCbCr as libjpeg does."""
    r, g, b = _channels(a)
    y = (Y_R * r + Y_G * g + Y_B * b + ONE_HALF) >> SCALEBITS
    cb = (-CB_R * r - CB_G * g + HALF_WEIGHT * b + CHROMA_BIAS) >> SCALEBITS
    cr = (HALF_WEIGHT * r - CR_G * g - CR_B * b + CHROMA_BIAS) >> SCALEBITS
    return _stack(y, cb, cr)


def ycbcr_to_rgb(a: ArrayLike) -> NDArray[np.uint8]:
    """Convert uint8 full-range JFIF YCbCr samples, shape (..., 3), to RGB as libjpeg does."""
    y, cb, cr = _channels(a)
    cb = cb - CENTER
    cr = cr - CENTER
    # libjpeg rounds each chroma term on its own for R and B, but sums the two G terms
    # before a single rounding; the shifts are arithmetic (floor), as its RIGHT_SHIFT is.
    r = y + ((R_CR * cr + ONE_HALF) >> SCALEBITS)
    g = y + ((-G_CB * cb - G_CR * cr + ONE_HALF) >> SCALEBITS)
    b = y + ((B_CB * cb + ONE_HALF) >> SCALEBITS)
    return _stack(r, g, b, clip=True)


def _channels(a: ArrayLike) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]]:
    arr = np.asarray(a)
    if arr.dtype != np.uint8:
        raise TypeError(f"expected uint8 samples, got dtype {arr.dtype}")
    if arr.ndim < 1 or arr.shape[-1] != 3:
        raise ValueError(f"expected shape (..., 3), got {arr.shape}")
    # int32 holds every intermediate: |coefficient| < 2**17 times a sample < 2**8, three terms.
    wide = arr.astype(np.int32)
    return wide[..., 0], wide[..., 1], wide[..., 2]


def _stack(
    c0: NDArray[np.int32], c1: NDArray[np.int32], c2: NDArray[np.int32], clip: bool = False
) -> NDArray[np.uint8]:
    out = np.stack((c0, c1, c2), axis=-1)
    if clip:
        np.clip(out, 0, 255, out=out)
    return out.astype(np.uint8)
