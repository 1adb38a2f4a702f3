"""Numeric limits of the suites, each with where it comes from.

The spec does not fix how quality maps to quantization tables, which component uses which
table, or how the DCT is computed (JPEG-Q-03), so no PSNR per quality is required of an
encoder: it is held to what its own tables allow, within a margin measured over legal
encoders (OWN_TABLES_MARGIN_DB), and a decoder to the expected decodes of the stream it
reads (``judging.decode_tolerances``).
"""

from __future__ import annotations

#: How much more an encoder may lose than its own tables lose (``judging.own_tables``: the chunk
#: written again with the stream's tables and factors by the reference encoder), in dB of PSNR
#: against the chunk it was given, both streams decoded by libjpeg-turbo (the encoder's also with
#: chroma repeated; the better counts). Measured 2026-12-02 with
#: ``python -m zarr_jpeg_conformance.tools.own_tables_spread`` over the fidelity cases: libjpeg-turbo
#: itself -0.09 (its chroma downsampling is not the reference's), its fast integer DCT -0.79 (gray
#: "gradient" q90), other tables (q-1, the chroma table on G and B) 0.00; mozjpeg 4.0.3's trellis
#: quantization -1.00 (gray "gradient" q100; measured once through jpeglib's build, as this
#: machine's libvips has no mozjpeg); ``--results`` over a matrix run gives the shipped rows (Go,
#: Java, JavaScript, Rust encoders), the lowest of which is in the closing note of issue 23. Three
#: times the worst legal loss measured; a wrong colour conversion, reversed components, swapped
#: axes or a chunk read in memory order lose 6 dB or more (tests/test_read_back.py).
OWN_TABLES_MARGIN_DB = 3.0
#: Slack on top, in squared levels (about 1.4 levels RMS): a chunk of a few samples that the
#: reference writes exactly leaves an encoder that rounds one level differently at MSE 1-2,
#: where any ratio of MSEs is meaningless.
OWN_TABLES_SLACK_MSE = 2.0

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
#: Not a verdict on any implementation: the spec leaves quality -> tables to the encoder
#: (JPEG-Q-03), so an encoder is judged by what its own tables allow (OWN_TABLES_MARGIN_DB).
#: These are what libjpeg's quality scale gives: the reference lines of the rate-distortion
#: record, the sanity bound of this project's own codec tests, and the cases of the fidelity
#: suite (FIDELITY_CASES).
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

#: (mode, image kind, quality) of the round-trip fidelity cases.
FIDELITY_CASES: tuple[tuple[str, str, int], ...] = tuple(PSNR_FLOORS)

#: Shape round trips of chunks under this many samples a side use images with detail in luma only
#: ("luma", "offsets"): too small for a smooth image to show axes or channels mixed up.
SHAPE_MIN_SIDE = 16

#: Qualities of the monotonicity sweep (JPEG-Q-02): every step of 5 from 5 to 100.
SWEEP_QUALITIES = tuple(range(5, 101, 5))
