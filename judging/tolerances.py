"""Numeric limits of the suites, each with where it comes from.

The spec does not fix how quality maps to quantization tables, which component uses which
table, or how the DCT is computed (JPEG-Q-03), so no fidelity number here is normative:
they are sanity bounds, set below what every legal encoder measured does and far above
what the classic bugs produce (transposed axes, swapped channels, a YCbCr transform
applied to rgb data or skipped for ycbcr data, a quality ignored): those land 10 dB or
more below.
"""

from __future__ import annotations

#: Margin below the lowest PSNR of the legal encoder x decoder pairs, in dB: the choices
#: measured are not all there are (other table sets, float IDCTs, other upsampling filters);
#: on the measured ones, such variations move results by 0.1-1.5 dB.
MARGIN_DB = 2.0
#: The margin at quality 100, in dB. There the tables are (near) all ones, so what a round trip
#: loses is the encoder's and decoder's arithmetic and chroma filters (DCT precision,
#: quantization rounding, down- and upsampling), all left open by the spec; independent
#: encoders measured after the floors spread wider there than the ones above: the image crate's
#: encoder 55.13 dB on gray "gradient" (4.0 dB under the lowest measured, while at quality 50
#: and 90 it keeps 2-3 dB over the floors), jpeg-encoder + zune-jpeg 32.00 dB on 4:2:0
#: "gradient" and 37.88 dB on 4:1:1 "natural" (2.5-2.6 dB under). The classic bugs still land
#: 10 dB or more under these floors.
MARGIN_Q100_DB = 5.0

#: (mode, image kind, quality) -> PSNR floor in dB, for a 64x96 image (corpus.images.make_image).
#: Measured over the legal encoders of ``tools/legal_encoders.py``, 2026-11-30: libjpeg-turbo
#: 3.1.3 (imagecodecs 2026.3.6, accurate DCT, IJG tables); its fast integer DCT (PyTurboJPEG
#: 1.8.3, libjpeg-turbo 2.1.5); IJG tables of quality q-1 for quality q (so quality 100 is
#: not all ones); for rgb the chroma table on G and B; mozjpeg 5 with trellis quantization
#: and Annex K or ImageMagick tables (libvips 8.18 from pyvips-binary; gray, 4:4:4 and 4:2:0
#: only). Each stream decoded twice: by libjpeg-turbo, and with chroma repeated instead of
#: interpolated (T.81 leaves upsampling to the decoder: Go's image/jpeg, the JavaScript
#: decoders; on the chroma-rich "gradient" image it costs up to 8 dB at 4:2:0). The comment
#: is the lowest PSNR, the pair that gave it, how many pairs were measured, and
#: libjpeg-turbo's own; the floor is the lowest minus MARGIN_DB (MARGIN_Q100_DB at quality 100),
#: rounded down to 0.5 dB.
#: Reprint with ``python -m zarr_jpeg_conformance.tools.floors --python``.
PSNR_FLOORS: dict[tuple[str, str, int], float] = {
    ("gray", "natural", 50): 28.0,  # 30.07: mozjpeg trellis, ImageMagick tables (lowest of 10; libjpeg-turbo 31.19)
    ("gray", "natural", 90): 33.5,  # 35.72: mozjpeg trellis, ImageMagick tables (lowest of 10; libjpeg-turbo 37.81)
    ("gray", "natural", 100): 49.0,  # 54.44: tables of quality q-1 (lowest of 10; libjpeg-turbo 58.64)
    ("gray", "gradient", 50): 40.5,  # 42.66: mozjpeg trellis, ImageMagick tables (lowest of 10; libjpeg-turbo 43.67)
    ("gray", "gradient", 90): 48.0,  # 50.00: mozjpeg trellis, ImageMagick tables (lowest of 10; libjpeg-turbo 51.56)
    ("gray", "gradient", 100): 54.0,  # 59.12: mozjpeg trellis, Annex K tables (lowest of 10; libjpeg-turbo 60.13)
    ("ycbcr-444", "natural", 50): 27.5,  # 29.55: mozjpeg trellis, ImageMagick tables (lowest of 10; libjpeg-turbo 30.51)
    ("ycbcr-444", "natural", 90): 32.5,  # 34.81: mozjpeg trellis, ImageMagick tables (lowest of 10; libjpeg-turbo 36.19)
    ("ycbcr-444", "natural", 100): 42.0,  # 47.06: tables of quality q-1 (lowest of 10; libjpeg-turbo 50.30)
    ("ycbcr-444", "gradient", 50): 35.0,  # 37.24: mozjpeg trellis, Annex K tables (lowest of 10; libjpeg-turbo 37.35)
    ("ycbcr-444", "gradient", 90): 42.5,  # 44.55: fast integer DCT (lowest of 10; libjpeg-turbo 44.92)
    ("ycbcr-444", "gradient", 100): 45.0,  # 50.44: tables of quality q-1 (lowest of 10; libjpeg-turbo 50.64)
    ("ycbcr-422", "natural", 50): 28.0,  # 30.30: tables of quality q-1 + box upsampling (lowest of 6; libjpeg-turbo 30.39)
    ("ycbcr-422", "natural", 90): 33.0,  # 35.34: tables of quality q-1 + box upsampling (lowest of 6; libjpeg-turbo 35.83)
    ("ycbcr-422", "natural", 100): 37.5,  # 42.58: tables of quality q-1 + box upsampling (lowest of 6; libjpeg-turbo 43.43)
    ("ycbcr-422", "gradient", 50): 30.5,  # 32.91: tables of quality q-1 + box upsampling (lowest of 6; libjpeg-turbo 36.30)
    ("ycbcr-422", "gradient", 90): 33.0,  # 35.26: tables of quality q-1 + box upsampling (lowest of 6; libjpeg-turbo 42.62)
    ("ycbcr-422", "gradient", 100): 31.0,  # 36.02: tables of quality q-1 + box upsampling (lowest of 6; libjpeg-turbo 47.00)
    ("ycbcr-440", "natural", 50): 28.0,  # 30.29: tables of quality q-1 + box upsampling (lowest of 6; libjpeg-turbo 30.34)
    ("ycbcr-440", "natural", 90): 33.0,  # 35.24: tables of quality q-1 + box upsampling (lowest of 6; libjpeg-turbo 35.75)
    ("ycbcr-440", "natural", 100): 37.0,  # 42.17: tables of quality q-1 + box upsampling (lowest of 6; libjpeg-turbo 42.94)
    ("ycbcr-440", "gradient", 50): 32.0,  # 34.40: fast integer DCT + box upsampling (lowest of 6; libjpeg-turbo 36.35)
    ("ycbcr-440", "gradient", 90): 35.5,  # 37.83: fast integer DCT + box upsampling (lowest of 6; libjpeg-turbo 42.94)
    ("ycbcr-440", "gradient", 100): 34.0,  # 39.15: tables of quality q-1 + box upsampling (lowest of 6; libjpeg-turbo 47.78)
    ("ycbcr-420", "natural", 50): 27.0,  # 29.33: mozjpeg trellis, ImageMagick tables + box upsampling (lowest of 10; libjpeg-turbo 30.29)
    ("ycbcr-420", "natural", 90): 32.0,  # 34.23: mozjpeg trellis, ImageMagick tables + box upsampling (lowest of 10; libjpeg-turbo 35.57)
    ("ycbcr-420", "natural", 100): 36.0,  # 41.05: tables of quality q-1 + box upsampling (lowest of 10; libjpeg-turbo 41.69)
    ("ycbcr-420", "gradient", 50): 29.0,  # 31.34: mozjpeg trellis, Annex K tables + box upsampling (lowest of 10; libjpeg-turbo 35.30)
    ("ycbcr-420", "gradient", 90): 31.5,  # 33.67: mozjpeg trellis, Annex K tables + box upsampling (lowest of 10; libjpeg-turbo 41.41)
    ("ycbcr-420", "gradient", 100): 29.0,  # 34.48: tables of quality q-1 + box upsampling (lowest of 10; libjpeg-turbo 46.17)
    ("rgb", "natural", 50): 26.5,  # 28.65: tables of quality q-1 (lowest of 6; libjpeg-turbo 31.06)
    ("rgb", "natural", 90): 33.0,  # 35.05: tables of quality q-1 (lowest of 6; libjpeg-turbo 37.76)
    ("rgb", "natural", 100): 48.0,  # 53.05: tables of quality q-1 (lowest of 6; libjpeg-turbo 58.44)
    ("rgb", "gradient", 50): 37.0,  # 39.33: tables of quality q-1 (lowest of 6; libjpeg-turbo 43.20)
    ("rgb", "gradient", 90): 44.5,  # 46.61: tables of quality q-1 (lowest of 6; libjpeg-turbo 51.04)
    ("rgb", "gradient", 100): 51.5,  # 56.82: tables of quality q-1 (lowest of 6; libjpeg-turbo 59.89)
    ("rgb", "fluorescence", 50): 36.0,  # 38.29: tables of quality q-1 (lowest of 6; libjpeg-turbo 41.75)
    ("rgb", "fluorescence", 90): 42.5,  # 44.68: tables of quality q-1 (lowest of 6; libjpeg-turbo 49.52)
    ("rgb", "fluorescence", 100): 51.0,  # 56.37: tables of quality q-1 (lowest of 6; libjpeg-turbo 59.83)
    ("passthrough-444", "natural", 50): 26.5,  # 28.65: tables of quality q-1 (lowest of 4; libjpeg-turbo 28.70)
    ("passthrough-444", "natural", 90): 33.0,  # 35.05: tables of quality q-1 (lowest of 4; libjpeg-turbo 35.62)
    ("passthrough-444", "natural", 100): 48.0,  # 53.05: tables of quality q-1 (lowest of 4; libjpeg-turbo 58.44)
    ("passthrough-444", "gradient", 50): 37.0,  # 39.33: tables of quality q-1 (lowest of 4; libjpeg-turbo 39.39)
    ("passthrough-444", "gradient", 90): 44.5,  # 46.61: tables of quality q-1 (lowest of 4; libjpeg-turbo 46.90)
    ("passthrough-444", "gradient", 100): 51.5,  # 56.82: tables of quality q-1 (lowest of 4; libjpeg-turbo 59.89)
    ("passthrough-420", "natural", 50): 23.0,  # 25.16: tables of quality q-1 + box upsampling (lowest of 4; libjpeg-turbo 25.89)
    ("passthrough-420", "natural", 90): 25.5,  # 27.72: tables of quality q-1 + box upsampling (lowest of 4; libjpeg-turbo 28.64)
    ("passthrough-420", "natural", 100): 23.5,  # 28.69: tables of quality q-1 + box upsampling (lowest of 4; libjpeg-turbo 29.21)
    ("passthrough-420", "gradient", 50): 30.0,  # 32.23: tables of quality q-1 + box upsampling (lowest of 4; libjpeg-turbo 37.26)
    ("passthrough-420", "gradient", 90): 31.5,  # 33.90: tables of quality q-1 + box upsampling (lowest of 4; libjpeg-turbo 43.49)
    ("passthrough-420", "gradient", 100): 29.0,  # 34.44: tables of quality q-1 + box upsampling (lowest of 4; libjpeg-turbo 47.69)
    ("ycbcr-411", "natural", 50): 28.0,  # 30.18: tables of quality q-1 (lowest of 4; libjpeg-turbo 30.20)
    ("ycbcr-411", "natural", 90): 32.5,  # 34.88: tables of quality q-1 (lowest of 4; libjpeg-turbo 35.25)
    ("ycbcr-411", "natural", 100): 35.0,  # 40.48: tables of quality q-1 (lowest of 4; libjpeg-turbo 40.96)
    ("ycbcr-411", "gradient", 50): 25.5,  # 27.84: tables of quality q-1 (lowest of 4; libjpeg-turbo 27.85)
    ("ycbcr-411", "gradient", 90): 26.5,  # 28.94: tables of quality q-1 (lowest of 4; libjpeg-turbo 28.98)
    ("ycbcr-411", "gradient", 100): 24.0,  # 29.25: tables of quality q-1 (lowest of 4; libjpeg-turbo 29.26)
    ("ycbcr-42", "natural", 50): 28.0,  # 30.05: tables of quality q-1 (lowest of 2; libjpeg-turbo 30.27)
    ("ycbcr-42", "natural", 90): 32.5,  # 34.61: tables of quality q-1 (lowest of 2; libjpeg-turbo 35.37)
    ("ycbcr-42", "natural", 100): 34.5,  # 39.81: tables of quality q-1 (lowest of 2; libjpeg-turbo 40.22)
    ("ycbcr-42", "gradient", 50): 25.0,  # 27.30: tables of quality q-1 (lowest of 2; libjpeg-turbo 28.29)
    ("ycbcr-42", "gradient", 90): 26.0,  # 28.50: tables of quality q-1 (lowest of 2; libjpeg-turbo 28.78)
    ("ycbcr-42", "gradient", 100): 23.5,  # 28.88: tables of quality q-1 (lowest of 2; libjpeg-turbo 28.88)
    ("ycbcr-44", "natural", 50): 27.5,  # 29.91: tables of quality q-1 (lowest of 2; libjpeg-turbo 30.10)
    ("ycbcr-44", "natural", 90): 32.0,  # 34.28: tables of quality q-1 (lowest of 2; libjpeg-turbo 34.93)
    ("ycbcr-44", "natural", 100): 33.5,  # 38.74: tables of quality q-1 (lowest of 2; libjpeg-turbo 39.02)
    ("ycbcr-44", "gradient", 50): 23.5,  # 25.85: tables of quality q-1 (lowest of 2; libjpeg-turbo 27.06)
    ("ycbcr-44", "gradient", 90): 25.0,  # 27.22: tables of quality q-1 (lowest of 2; libjpeg-turbo 27.54)
    ("ycbcr-44", "gradient", 100): 22.5,  # 27.65: tables of quality q-1 (lowest of 2; libjpeg-turbo 27.66)
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
