"""Numeric limits of the suites, each with where it comes from.

The spec does not fix how quality maps to quantization tables (JPEG-Q-03), so no
fidelity number here is normative: they are sanity bounds. Each is set below what every
correct libjpeg-family encoder measured, and far above what the classic bugs produce
(transposed axes, swapped channels, a YCbCr transform applied to rgb data or skipped
for ycbcr data, a quality ignored): those land 10 dB or more below.
"""

from __future__ import annotations

#: Margin below the measured PSNR, in dB. What a correct implementation may lose against
#: the libjpeg-turbo accurate-DCT reference: the fast integer DCT of the legacy TurboJPEG
#: API costs up to 0.9 dB (backends.md 11.8); decoders without libjpeg's "fancy"
#: upsampling lose about 1 dB at subsampled chroma (backends.md 4.2); other encoders'
#: quality-to-table mappings (allowed by JPEG-Q-03) shift results by 1-2 dB.
MARGIN_DB = 4.0

#: (mode, image kind, quality) -> PSNR floor in dB, for a 64x96 image (images.make_image).
#: The comment is the PSNR measured on 2026-11-29, identical to 0.01 dB for PyTurboJPEG
#: 1.8.3 (libjpeg-turbo 2.1.5, accurate DCT), imagecodecs 2026.3.6 (3.1.3) and Pillow
#: 13.0.0 (3.2.0) wherever they support the mode; the floor is that value minus
#: MARGIN_DB, rounded down to 0.5 dB. Regenerate with tools that print the same table.
PSNR_FLOORS: dict[tuple[str, str, int], float] = {
    ("gray", "natural", 50): 27.0,  # 31.19
    ("gray", "natural", 90): 33.5,  # 37.81
    ("gray", "natural", 100): 54.5,  # 58.64
    ("gray", "gradient", 50): 39.5,  # 43.67
    ("gray", "gradient", 90): 47.5,  # 51.56
    ("gray", "gradient", 100): 56.0,  # 60.13
    ("ycbcr-444", "natural", 50): 26.5,  # 30.51
    ("ycbcr-444", "natural", 90): 32.0,  # 36.19
    ("ycbcr-444", "natural", 100): 46.0,  # 50.30
    ("ycbcr-444", "gradient", 50): 33.0,  # 37.35
    ("ycbcr-444", "gradient", 90): 40.5,  # 44.92
    ("ycbcr-444", "gradient", 100): 46.5,  # 50.64
    ("ycbcr-422", "natural", 50): 26.0,  # 30.39
    ("ycbcr-422", "natural", 90): 31.5,  # 35.83
    ("ycbcr-422", "natural", 100): 39.0,  # 43.43
    ("ycbcr-422", "gradient", 50): 32.0,  # 36.30
    ("ycbcr-422", "gradient", 90): 38.5,  # 42.62
    ("ycbcr-422", "gradient", 100): 43.0,  # 47.00
    ("ycbcr-440", "natural", 50): 26.0,  # 30.34
    ("ycbcr-440", "natural", 90): 31.5,  # 35.75
    ("ycbcr-440", "natural", 100): 38.5,  # 42.94
    ("ycbcr-440", "gradient", 50): 32.0,  # 36.35
    ("ycbcr-440", "gradient", 90): 38.5,  # 42.94
    ("ycbcr-440", "gradient", 100): 43.5,  # 47.78
    ("ycbcr-420", "natural", 50): 26.0,  # 30.29
    ("ycbcr-420", "natural", 90): 31.5,  # 35.57
    ("ycbcr-420", "natural", 100): 37.5,  # 41.69
    ("ycbcr-420", "gradient", 50): 31.0,  # 35.30
    ("ycbcr-420", "gradient", 90): 37.0,  # 41.41
    ("ycbcr-420", "gradient", 100): 42.0,  # 46.17
    ("rgb", "natural", 50): 27.0,  # 31.06
    ("rgb", "natural", 90): 33.5,  # 37.76
    ("rgb", "natural", 100): 54.0,  # 58.44
    ("rgb", "gradient", 50): 39.0,  # 43.20
    ("rgb", "gradient", 90): 47.0,  # 51.04
    ("rgb", "gradient", 100): 55.5,  # 59.89
    ("rgb", "fluorescence", 50): 37.5,  # 41.75
    ("rgb", "fluorescence", 90): 45.5,  # 49.52
    ("rgb", "fluorescence", 100): 55.5,  # 59.83
    ("passthrough-444", "natural", 50): 24.5,  # 28.70
    ("passthrough-444", "natural", 90): 31.5,  # 35.62
    ("passthrough-444", "natural", 100): 54.0,  # 58.44
    ("passthrough-444", "gradient", 50): 35.0,  # 39.39
    ("passthrough-444", "gradient", 90): 42.5,  # 46.90
    ("passthrough-444", "gradient", 100): 55.5,  # 59.89
    ("passthrough-420", "natural", 50): 21.5,  # 25.89
    ("passthrough-420", "natural", 90): 24.5,  # 28.64
    ("passthrough-420", "natural", 100): 25.0,  # 29.21
    ("passthrough-420", "gradient", 50): 33.0,  # 37.26
    ("passthrough-420", "gradient", 90): 39.0,  # 43.49
    ("passthrough-420", "gradient", 100): 43.5,  # 47.69
    ("ycbcr-411", "natural", 50): 26.0,  # 30.20
    ("ycbcr-411", "natural", 90): 31.0,  # 35.25
    ("ycbcr-411", "natural", 100): 36.5,  # 40.96
    ("ycbcr-411", "gradient", 50): 23.5,  # 27.85
    ("ycbcr-411", "gradient", 90): 24.5,  # 28.98
    ("ycbcr-411", "gradient", 100): 25.0,  # 29.26
    ("ycbcr-42", "natural", 50): 26.0,  # 30.07
    ("ycbcr-42", "natural", 90): 30.5,  # 34.95
    ("ycbcr-42", "natural", 100): 36.0,  # 40.22
    ("ycbcr-42", "gradient", 50): 23.0,  # 27.32
    ("ycbcr-42", "gradient", 90): 24.5,  # 28.55
    ("ycbcr-42", "gradient", 100): 24.5,  # 28.88
    ("ycbcr-44", "natural", 50): 25.5,  # 29.93
    ("ycbcr-44", "natural", 90): 30.5,  # 34.62
    ("ycbcr-44", "natural", 100): 35.0,  # 39.02
    ("ycbcr-44", "gradient", 50): 21.5,  # 25.84
    ("ycbcr-44", "gradient", 90): 23.0,  # 27.26
    ("ycbcr-44", "gradient", 100): 23.5,  # 27.66
}

#: Round trip of the "axes" image (smooth, different along each axis and per channel) at
#: quality 90, for chunks of at least 16 samples per axis. Measured: correct decodes
#: 27.8 dB or more in every mode (worst: factor-4 subsampling at 16x48); flipped,
#: transposed, wrongly factorized or channel-swapped decodes 17.7 dB at most.
SHAPE_PSNR_FLOOR = 22.0
SHAPE_MIN_SIDE = 16
#: Round trip of chunks under SHAPE_MIN_SIDE a side ("offsets" / "luma" images: detail in
#: luma only, constant chroma, so no subsampling or upsampling rule matters) at quality 90,
#: largest |error| over all samples. Measured 2026-11-30 at 1x1, 2x2, 3x5, 5x3, 7x13, 1x37,
#: 29x1 and 15x15 in every mode: 3 at most (PyTurboJPEG 1.8.3, imagecodecs 2026.3.6,
#: Pillow 13). Swapped axes are 56 or more off at the non-square sizes, swapped channels 60.
#: 12 leaves four times the measured error for other encoders' tables and other IDCTs.
SMALL_MAX_ABS = 12

#: YCbCr passthrough at quality 100, 4:4:4, on uniform random YCbCr triples. Measured
#: 49.7 dB (imagecodecs, Pillow); a detour through RGB clips out-of-gamut triples and
#: drops it below 20 dB.
PASSTHROUGH_PSNR_FLOOR = 40.0

#: rgb round trip of independent "fluorescence" channels at quality 95. Measured
#: 52.6 dB; a YCbCr transform applied on one side only gives about 10 dB.
RAW_RGB_PSNR_FLOOR = 35.0

#: Qualities of the monotonicity sweep (JPEG-Q-02): every step of 5 from 5 to 100.
SWEEP_QUALITIES = tuple(range(5, 101, 5))
