"""How far a correct decoder's output may lie from the reference decode of a stream.

The spec fixes the JPEG stream, not the decoder's arithmetic: T.81 defines the inverse DCT
mathematically and leaves its computation to the decoder (ISO/IEC 10918-2 tests only its
accuracy), and it does not say how subsampled chroma is upsampled. Every libjpeg-turbo-based decoder returns bit-identical pixels
(research/backends.md 4.2), so the reference decode (``corpus.streams.reference_decode``) is
exact for them; other decoders (the JavaScript family, anything with a float IDCT or
with box instead of libjpeg's "fancy" triangle upsampling) differ by up to 3 levels
without subsampling and by up to 28-37 with it (backends.md 4.2, 11.9).

A family per stream structure, each with a bound on the largest and on the mean absolute
difference over all samples. The bounds must let such a decoder pass and must still
fail the classic decoder bugs, which all move most samples by tens of levels: a YCbCr
transform applied to stored RGB (or skipped for stored YCbCr), transposed axes,
swapped channels. ``generate_fixtures.py`` refuses to write a colour stream whose
wrong-transform decode would pass its family, and its ``--measure`` prints the numbers
the reasons below quote.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import color
from ..core.markers import LOSSLESS_SOF, StreamInfo


@dataclass(frozen=True)
class Tolerance:
    """Bounds on |decoded - expected| over all samples, in 8-bit levels."""

    name: str
    max_abs: int
    mean_abs: float
    reason: str


#: Numbers from ``python -m zarr_jpeg_conformance.generate_fixtures --measure`` over the
#: committed corpus, as "max (mean)": largest over the family's cases. "Box upsampling" is
#: libjpeg-turbo with TJFLAG_FASTUPSAMPLE (PyTurboJPEG 1.8.3) or djpeg -nosmooth, "float
#: IDCT" djpeg -dct float, "fast IDCT" TJFLAG_FASTDCT; "wrong transform" is the smallest
#: error of a decode that skips the YCbCr conversion, or applies it to stored RGB.
FAMILIES: dict[str, Tolerance] = {
    t.name: t
    for t in (
        Tolerance(
            "lossless",
            0,
            0.0,
            "Lossless (SOF3) decoding is exact by definition: any difference is a decoding error.",
        ),
        Tolerance(
            "gray",
            4,
            0.5,
            "One component, nothing to upsample or convert: only the IDCT's arithmetic differs. Float IDCT "
            "1 (0.02); JavaScript decoders 1 (0.06) (backends.md 4.2). libjpeg-turbo's fast integer IDCT, "
            "documented as less accurate and used by no decoder by default, reaches 8 (1.66) at quality 95 "
            "and does not pass. What must fail moves whole rows: axes transposed, a wrong crop.",
        ),
        Tolerance(
            "444",
            8,
            1.0,
            "No subsampling: the IDCT, and the rounding of the colour conversion. Float IDCT 3 (0.17); "
            "JavaScript decoders 3 (0.47) (backends.md 4.2); fast IDCT 18 (2.20), which does not pass. "
            "A wrong colour transform is at least 125 (36.7) away.",
        ),
        Tolerance(
            "subsampled",
            80,
            8.0,
            "T.81 leaves chroma upsampling to the decoder: box upsampling lies up to 53 (4.06) from "
            "libjpeg's triangle filter on the corpus, whose subsampled images have smooth chroma "
            "(fixturegen.reference.SMOOTH_CHROMA); JavaScript decoders 28-37 (1.88) on natural images "
            "(backends.md 4.2). A wrong colour transform is at least 125 (35.1) away.",
        ),
    )
}


def family_for(info: StreamInfo) -> str:
    """The tolerance family of a stream, from its structure alone."""
    if info.sof in LOSSLESS_SOF:
        return "lossless"
    if len(info.components) == 1:
        return "gray"
    if len({(c.h, c.v) for c in info.components}) == 1:
        return "444"
    return "subsampled"


@dataclass(frozen=True)
class Difference:
    """The largest and mean absolute difference between two decodes."""

    max_abs: int
    mean_abs: float

    def within(self, tolerance: Tolerance) -> bool:
        return self.max_abs <= tolerance.max_abs and self.mean_abs <= tolerance.mean_abs

    def __str__(self) -> str:
        return f"max |diff| {self.max_abs}, mean |diff| {self.mean_abs:.3f}"


def difference(got: np.ndarray, expected: np.ndarray) -> Difference:
    """|got - expected| of two same-shape uint8 arrays, as max and mean."""
    if got.shape != expected.shape:
        raise ValueError(f"shapes differ: {got.shape} and {expected.shape}")
    if not expected.size:
        return Difference(0, 0.0)
    diff = np.abs(got.astype(np.int16) - expected.astype(np.int16))
    return Difference(int(diff.max()), float(diff.mean()))


def diagnose(got: np.ndarray, expected: np.ndarray, stored: str | None, decoded: str) -> tuple[str, str] | None:
    """The classic bug a decode outside its tolerance looks like: (requirement it breaks, what).

    ``stored`` is the stream's stored colour space by the spec's rule, ``decoded`` the
    configuration's decoded_color_space. A candidate explains the decode when the decode
    lies at least four times closer to it than to the expected decode; None if none does.
    """
    if got.shape != expected.shape:
        return None
    candidates: list[tuple[np.ndarray, str, str]] = []
    if expected.ndim == 3 and expected.shape[-1] == 3:
        if stored == "rgb" or (stored == "ycbcr" and decoded == "ycbcr"):
            requirement = "JPEG-ECS-12" if stored == "rgb" else "JPEG-DCS-06"
            candidates.append((color.ycbcr_to_rgb(expected), requirement,
                               "an inverse YCbCr transform applied to samples the stream stores untransformed"))
        elif stored == "ycbcr":
            candidates.append((color.rgb_to_ycbcr(expected), "JPEG-DCS-03", "the stored YCbCr returned without conversion to RGB"))
        candidates.append((expected[..., ::-1], "JPEG-DEC-02", "the three components in reverse order"))
    if expected.shape[0] != expected.shape[1]:
        swapped = np.ascontiguousarray(expected.swapaxes(0, 1)).reshape(expected.shape)
        candidates.append((swapped, "JPEG-SHP-07", "height and width swapped"))
    off = difference(got, expected).mean_abs
    for candidate, requirement, what in candidates:
        if difference(got, candidate).mean_abs * 4 < off:
            return requirement, what
    return None


__all__ = ["FAMILIES", "Difference", "Tolerance", "diagnose", "difference", "family_for"]
