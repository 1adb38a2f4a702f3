"""Legal decoders: ways of decoding a stream that the spec leaves open, as small functions.

T.81 defines the inverse DCT mathematically and leaves its computation to the decoder, and
it does not say how subsampled chroma is upsampled: libjpeg's "fancy" triangle filter and
plain repetition of each chroma sample (Go's image/jpeg, the JavaScript decoders) are both
correct. The fidelity floors are measured over these (``tools/floors.py``), and the cross
suite judges a decode by the span of them (``judging/decode_tolerances.py``).

Each decoder is ``decode(data, config, chunk_shape) -> array``, or raises ``LookupError``
for a stream it has no way to decode.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from ..core import color
from ..core.config import JpegConfig

Decoder = Callable[[bytes, JpegConfig, tuple[int, ...]], np.ndarray]


def libjpeg_turbo_decode(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    """libjpeg-turbo's decode ("fancy" triangle upsampling, accurate IDCT) under the spec's colour rule."""
    from ..corpus.streams import reference_decode

    return reference_decode(data, config, shape)


def box_upsampling_decode(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> np.ndarray:
    """Chroma repeated, not interpolated (T.81 leaves upsampling to the decoder: Go, the JavaScript decoders)."""
    if config.components == 1 or config.encoded_color_space == "rgb" or config.luma_factors == (1, 1):
        return libjpeg_turbo_decode(data, config, shape)
    try:
        planes = _turbojpeg().decode_to_yuv_planes(data)
    except OSError as exc:  # the legacy TurboJPEG API knows only the five common factor sets
        raise LookupError(f"TurboJPEG returns no planes of this stream: {exc}") from exc
    height, width = shape[0], shape[1]
    full = [np.asarray(planes[0])[:height, :width]]
    for plane in planes[1:]:
        plane = np.asarray(plane)
        fy, fx = -(-height // plane.shape[0]), -(-width // plane.shape[1])
        full.append(np.repeat(np.repeat(plane, fy, axis=0), fx, axis=1)[:height, :width])
    ycc = np.stack(full, axis=-1)
    return (ycc if config.decoded_color_space == "ycbcr" else color.ycbcr_to_rgb(ycc)).reshape(shape)


DECODERS: dict[str, Decoder] = {
    "libjpeg-turbo": libjpeg_turbo_decode,
    "box upsampling": box_upsampling_decode,
}


@cache
def _turbojpeg() -> Any:
    import turbojpeg as tj

    return tj.TurboJPEG()




def with_repeated_chroma(first: np.ndarray, data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """``first`` and, where it can be made and differs, the same stream decoded with chroma repeated.

    What the suites judge a decode by when only one decoder's output is at hand: the span
    of the two legal ways of upsampling chroma.
    """
    try:
        second = box_upsampling_decode(data, config, shape)
    except (LookupError, ImportError, ValueError, OSError):
        return (first,)
    return (first,) if np.array_equal(first, second) else (first, second)


def expected_decodes(data: bytes, config: JpegConfig, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """libjpeg-turbo's decode under the spec's colour rule, with its repeated-chroma twin; ValueError if it refuses."""
    return with_repeated_chroma(libjpeg_turbo_decode(data, config, shape), data, config, shape)


__all__ = ["DECODERS", "Decoder", "box_upsampling_decode", "expected_decodes", "libjpeg_turbo_decode", "with_repeated_chroma"]
