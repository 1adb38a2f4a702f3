"""Legal encoders and decoders: choices the spec leaves open, written as small functions.

The spec does not say how quality maps to quantization tables, which component uses which
table, or how the DCT is computed (JPEG-Q-03). The fidelity floors of the suites
(``judging/tolerances.py``) must let every such choice pass, so they are measured over
these encoders (``python -m zarr_jpeg_conformance.tools.floors``), and the meta-tests run
the suites against them (``tests/legal_adapters.py``).

Each encoder is ``encode(config, image) -> bytes`` for an (H, W, C) uint8 image, or raises
``LookupError`` for a configuration it has no way to write (skipped, not a measurement).
Each decoder is ``decode(data, config, chunk_shape) -> array``; T.81 leaves chroma
upsampling to the decoder, so repeating chroma samples is as legal as interpolating them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from ..core import scans
from ..core.config import JpegConfig
from ..judging import legal_decoders
from ..judging.own_tables import encode_with_tables

Encoder = Callable[[JpegConfig, np.ndarray], bytes]


def libjpeg_turbo(config: JpegConfig, image: np.ndarray) -> bytes:
    """libjpeg-turbo's own choices (accurate DCT, IJG tables at the quality), through this project's imagecodecs backend."""
    from ..backends import load_backend

    backend = load_backend("imagecodecs")
    return backend.encode(config, image if config.components == 3 else image[:, :, :1])


def _planar(config: JpegConfig, image: np.ndarray, tables: list[np.ndarray]) -> bytes:
    """One scan per component through Pillow with ``tables`` (the read-back's reference writer, judging.own_tables)."""
    count = config.components
    return encode_with_tables(config, image[:, :, :count], tables[:count])


def tables_of_quality_minus_one(config: JpegConfig, image: np.ndarray) -> bytes:
    """IJG tables of quality q-1 for quality q: quality 100 is then not all ones."""
    luma, chroma = scans.quant_tables(max(config.quality - 1, 1))
    return _planar(config, image, [luma, chroma, chroma])


def chroma_table_on_g_and_b(config: JpegConfig, image: np.ndarray) -> bytes:
    """rgb with the chroma table on G and B (libjpeg puts the luma table on all three)."""
    if config.encoded_color_space != "rgb":
        raise LookupError("only rgb has a table assignment to vary")
    luma, chroma = scans.quant_tables(config.quality)
    return _planar(config, image, [luma, chroma, chroma])


_TJSAMP = {(1, 1): "TJSAMP_444", (2, 1): "TJSAMP_422", (1, 2): "TJSAMP_440", (2, 2): "TJSAMP_420"}


def fast_integer_dct(config: JpegConfig, image: np.ndarray) -> bytes:
    """libjpeg-turbo's fast integer DCT (the legacy TurboJPEG API's default below quality 96: simplejpeg, cloud-volume)."""
    import turbojpeg as tj

    if config.encoded_color_space == "rgb" or config.decoded_color_space == "ycbcr":
        raise LookupError("the legacy TurboJPEG API writes neither rgb nor YCbCr input")
    if config.encoded_color_space == "grayscale":
        return bytes(_turbojpeg().encode(np.ascontiguousarray(image[:, :, :1]), quality=config.quality,
                                         pixel_format=tj.TJPF_GRAY, jpeg_subsample=tj.TJSAMP_GRAY))
    if config.luma_factors not in _TJSAMP:
        raise LookupError(f"no TurboJPEG subsampling for {config.luma_factors}")
    sub = getattr(tj, _TJSAMP[config.luma_factors])
    return bytes(_turbojpeg().encode(np.ascontiguousarray(image), quality=config.quality, pixel_format=tj.TJPF_RGB,
                                     jpeg_subsample=sub))


@cache
def _turbojpeg() -> Any:
    import turbojpeg as tj

    return tj.TurboJPEG()


def _mozjpeg(quant_table: int) -> Encoder:
    def encode(config: JpegConfig, image: np.ndarray) -> bytes:
        import pyvips

        if not _has_trellis():
            raise LookupError("this libvips is not built with mozjpeg (trellis quantization changes nothing)")
        if config.encoded_color_space == "rgb" or config.decoded_color_space == "ycbcr":
            raise LookupError("libvips writes neither rgb nor YCbCr input")
        modes = {(1, 1): "off", (2, 2): "on"}
        if config.encoded_color_space == "ycbcr" and config.luma_factors not in modes:
            raise LookupError(f"libvips writes 4:4:4 and 4:2:0 only, not {config.luma_factors}")
        bands = image if config.components == 3 else image[:, :, :1]
        vips = pyvips.Image.new_from_array(np.ascontiguousarray(bands))
        options: dict[str, Any] = {"Q": config.quality, "trellis_quant": True, "overshoot_deringing": True,
                                   "quant_table": quant_table}
        if config.components == 3:
            options["subsample_mode"] = modes[config.luma_factors]
        return bytes(vips.jpegsave_buffer(**options))

    return encode


@cache
def _has_trellis() -> bool:
    import pyvips

    noise = pyvips.Image.new_from_array(np.random.default_rng(0).integers(0, 256, (64, 64), dtype=np.uint8))
    try:
        return bool(noise.jpegsave_buffer(Q=75, trellis_quant=True) != noise.jpegsave_buffer(Q=75))
    except pyvips.Error:
        return False


#: name -> encoder; the floors are measured over all of them.
ENCODERS: dict[str, Encoder] = {
    "libjpeg-turbo": libjpeg_turbo,
    "fast integer DCT": fast_integer_dct,
    "tables of quality q-1": tables_of_quality_minus_one,
    "chroma table on G and B": chroma_table_on_g_and_b,
    "mozjpeg trellis, Annex K tables": _mozjpeg(0),
    "mozjpeg trellis, ImageMagick tables": _mozjpeg(3),
}



# The legal decoders the floors are measured with live with the suites that use them too.
DECODERS = legal_decoders.DECODERS


__all__ = ["DECODERS", "ENCODERS", "Encoder", "chroma_table_on_g_and_b", "fast_integer_dct", "libjpeg_turbo",
           "tables_of_quality_minus_one"]
