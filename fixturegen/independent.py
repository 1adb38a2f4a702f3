"""A second expected decode of each stream, from a decoder that shares no code with libjpeg-turbo.

T.81 fixes the stream, not the decoder's arithmetic or its chroma upsampling, so one
reference decode cannot say how far a correct decoder may lie from it. Each decodable case
therefore stores two: libjpeg-turbo's (``corpus.streams.reference_decode``) and Go's
standard ``image/jpeg`` (its own IDCT, colour conversion and chroma replication), through
this project's Go harness. Where Go cannot decode a stream (arithmetic coding, factor 3,
12-bit...) the second decode is libjpeg-turbo's own planes with chroma repeated instead of
interpolated (PyTurboJPEG; the five common factor sets); where neither applies, or where
the second decoder reads the colour markers against the spec's rule (Go lets JFIF win over
APP14, as libjpeg does), there is no second decode and the case says why. The span of the
two decodes, widened by a small slack per family (``judging.decode_tolerances``), is what
a correct decoder must stay within.
"""

from __future__ import annotations

import atexit
import sys
from functools import cache
from typing import Any

import numpy as np

from ..core import color
from ..core.config import JpegConfig
from ..judging.decode_tolerances import difference
from ..judging.legal_decoders import box_upsampling_decode

#: Two decoders read a stream alike when their luma, and their chroma averaged over each
#: MCU, agree to within this many levels. Upsampling moves chroma within an MCU (up to 118
#: levels between repetition and the triangle filter on a checkerboard at quality 20), and
#: once the decode is RGB, clipping carries some of that into the MCU averages: up to 44 on
#: the corpus (noise and checkerboards at quality 20). A different colour rule (Go lets JFIF
#: win over APP14, and 'R','G','B' ids over APP14 transform 1) moves them by 84 or more.
SAME_READING = 60


@cache
def _go() -> Any:
    from ..adapters.remote import ExecAdapter
    from ..harnesses import Unavailable, command

    try:
        command("go-image-jpeg")
    except Unavailable:
        return None
    adapter = ExecAdapter([sys.executable, "-m", "zarr_jpeg_conformance.harnesses", "go-image-jpeg"])
    atexit.register(adapter.close)
    return adapter


@cache
def go_version() -> str | None:
    go = _go()
    return None if go is None else go.versions().get("go", go.versions().get("harness", "?"))


def second_decode(data: bytes, codec: dict[str, Any], config: JpegConfig, chunk_shape: tuple[int, ...],
                  expected: np.ndarray) -> tuple[np.ndarray | None, dict[str, Any]]:
    """(second decode or None, the sidecar's record of it: who decoded, the spread, or why there is none)."""
    tried = []
    go = _go()
    if go is not None:
        try:
            out = np.asarray(go.decode(go.parse(codec), data, chunk_shape))
        except (ValueError, RuntimeError) as exc:
            tried.append(f"Go image/jpeg: {str(exc)[:160]}")
        else:
            record = _judged(out, expected, config, {"name": "Go image/jpeg", "version": go_version()}, tried)
            if record is not None:
                return out, record
    else:
        tried.append("Go image/jpeg is not built here (harnesses/go)")
    try:
        out = box_upsampling_decode(data, config, chunk_shape)
    except (LookupError, ImportError, ValueError, OSError) as exc:
        tried.append(f"no chroma-repeating decode ({str(exc)[:120]})")
    else:
        if config.components == 3 and config.encoded_color_space != "rgb" and not np.array_equal(out, expected):
            record = _judged(out, expected, config, {"name": "libjpeg-turbo planes, chroma repeated (PyTurboJPEG)"}, tried)
            if record is not None:
                return out, record
        else:
            tried.append("chroma repetition changes nothing in this stream")
    return None, {"absent": "; ".join(tried)}


def _reading(decode: np.ndarray, config: JpegConfig) -> list[np.ndarray]:
    """Luma, and each chroma plane averaged over the MCUs: what stays when only upsampling differs."""
    if config.components == 1:
        return [decode.astype(np.float64)]
    ycc = decode if config.decoded_color_space == "ycbcr" else color.rgb_to_ycbcr(decode.reshape(*decode.shape[:2], 3))
    ycc = ycc.astype(np.float64)
    mcu_h, mcu_w = config.mcu
    h, w = -(-ycc.shape[0] // mcu_h) * mcu_h, -(-ycc.shape[1] // mcu_w) * mcu_w
    padded = np.pad(ycc, ((0, h - ycc.shape[0]), (0, w - ycc.shape[1]), (0, 0)), mode="edge")
    blocks = padded.reshape(h // mcu_h, mcu_h, w // mcu_w, mcu_w, 3).mean(axis=(1, 3))
    return [ycc[..., 0], blocks[..., 1], blocks[..., 2]]


def _judged(out: np.ndarray, expected: np.ndarray, config: JpegConfig, who: dict[str, Any],
            tried: list[str]) -> dict[str, Any] | None:
    if out.dtype != np.uint8 or out.shape != expected.shape:
        tried.append(f"{who['name']} returned {out.dtype} {out.shape}")
        return None
    apart = max(float(np.abs(a - b).max()) for a, b in zip(_reading(out, config), _reading(expected, config), strict=True))
    if apart > SAME_READING:
        tried.append(f"{who['name']} reads the stream differently: its luma or MCU-averaged chroma lies {apart:.0f} "
                     "levels from libjpeg-turbo's (a colour rule, not arithmetic)")
        return None
    spread = difference(out, expected)
    return {**{k: v for k, v in who.items() if v is not None},
            "spread": {"max_abs": spread.max_abs, "mean_abs": round(spread.mean_abs, 4)}}


__all__ = ["SAME_READING", "second_decode"]
