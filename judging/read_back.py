"""Every stream an encoder writes, read back by the reference decoders and compared with the chunk it was given.

An encoder is judged by what it wrote, never by its own decoder (a fault made on both sides
cancels in a round trip) and never by what its quality number means (JPEG-Q-03 leaves the
tables to it). The stream is decoded by libjpeg-turbo under the spec's colour rule (and with
chroma repeated, the other legal upsampling); the decode must lie as close to the chunk as
the stream's own tables and factors allow (``judging.own_tables``), within
``OWN_TABLES_MARGIN_DB``. A miss is the encoder's: cited under the rule of the fault it looks
like (components reversed, RGB -> YCbCr skipped or applied to rgb or passthrough data, axes
swapped: ``judging.diagnoses``), else under what the configuration asks the encoder to keep
(grayscale and rgb stored as-is, ycbcr converted, passthrough YCbCr stored).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.config import JpegConfig
from .diagnoses import cite, diagnose_encode
from .legal_decoders import expected_decodes, libjpeg_turbo_decode
from .own_tables import rewritten, subsampled
from .roots import DEFAULT_TAKEN_WRONG
from .tolerances import OWN_TABLES_MARGIN_DB, OWN_TABLES_SLACK_MSE, OWN_TABLES_SMALL_MARGIN_DB


def kept_requirement(config: JpegConfig) -> str:
    """The rule that says what an encoder keeps of the chunk's samples under ``config``."""
    if config.encoded_color_space == "grayscale":
        return "JPEG-ECS-03"  # stored as-is
    if config.encoded_color_space == "rgb":
        return "JPEG-ECS-05"  # stored as-is, no conversion
    return "JPEG-ECS-04" if config.decoded_color_space == "rgb" else "JPEG-DCS-03"


def _mse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)) if a.size else 0.0


def _db(mse: float) -> float:
    return math.inf if mse == 0 else 10 * math.log10(255.0**2 / mse)


def margin_db(chunk_shape: tuple[int, ...]) -> float:
    """The margin that applies to a chunk: wider for one under a block on a side (OWN_TABLES_SMALL_MARGIN_DB)."""
    return OWN_TABLES_SMALL_MARGIN_DB if min(chunk_shape[:2]) < 8 else OWN_TABLES_MARGIN_DB


def allowed_mse(reference_mse: float, margin: float = OWN_TABLES_MARGIN_DB) -> float:
    """The largest MSE an encoder may reach where its own tables, written by the reference encoder, reach ``reference_mse``."""
    return reference_mse * 10 ** (margin / 10) + OWN_TABLES_SLACK_MSE


def _reference(config: JpegConfig, chunk: np.ndarray, data: bytes, point: bool = False) -> np.ndarray:
    """The reference decode of ``chunk`` written with the tables and factors of ``data`` (``judging.own_tables``)."""
    return libjpeg_turbo_decode(rewritten(config, chunk, data, point=point), config, chunk.shape)


def _within(data: bytes, config: JpegConfig, chunk: np.ndarray) -> bool:
    """Whether ``data`` is as close to ``chunk`` as its own tables allow (False where that cannot be told)."""
    try:
        decodes = expected_decodes(data, config, chunk.shape)
        own = max(_mse(chunk, _reference(config, chunk, data, point)) for point in ((False, True) if subsampled(data) else (False,)))
    except (ImportError, LookupError, ValueError):
        return False
    return min(_mse(chunk, d) for d in decodes) <= allowed_mse(own, margin_db(chunk.shape))


def check_read_back(judge: Any, data: bytes, config: JpegConfig, chunk: np.ndarray, what: str = "encode",
                    defaults: Callable[[], bytes | None] | None = None) -> None:
    """Judge the samples of one written stream (structure already checked by ``judging.written``).

    ``defaults`` writes the chunk again with the omitted decoded_color_space written out: where
    that stream is right, the fault is the default taken wrong (JPEG-DCS-02).
    """
    where = f"the stream {what} wrote for a {'x'.join(map(str, chunk.shape))} chunk"
    try:
        decodes = expected_decodes(data, config, chunk.shape)
        reference = _reference(config, chunk, data)
    except (ImportError, LookupError) as exc:  # no reference (an extra missing, a side over libjpeg's): say so
        judge.metrics["read_back"] = f"not judged: {exc}"
        return
    except ValueError as exc:
        judge.require(False, "JPEG-FMT-01", f"{where} is refused by the reference decoder (libjpeg-turbo): {exc}")
        return
    got = min(_mse(chunk, d) for d in decodes)
    own = _mse(chunk, reference)
    margin = margin_db(chunk.shape)
    if got > allowed_mse(own, margin) and subsampled(data):  # the other legal chroma downsampling
        own = max(own, _mse(chunk, _reference(config, chunk, data, point=True)))
    if own or not got:  # against an exact reference a difference in dB has no size
        judge.metrics["own_tables_db"] = round(_db(got) - _db(own), 2) if got else 0.0
    if got <= allowed_mse(own, margin):
        return
    best = min(decodes, key=lambda d: _mse(chunk, d))

    def through(image: np.ndarray) -> np.ndarray:
        return libjpeg_turbo_decode(rewritten(config, image.reshape(chunk.shape), data), config, best.shape)

    fault = diagnose_encode(best, chunk.reshape(best.shape), config.encoded_color_space, config.decoded_color_space,
                            through, reference.reshape(best.shape))
    requirement, why = cite(fault, kept_requirement(config))
    again = defaults() if defaults is not None else None
    if again is not None and _within(again, config, chunk):
        requirement, why = DEFAULT_TAKEN_WRONG
    judge.require(False, requirement,
                  f"{where}, decoded by libjpeg-turbo, lies {_db(got):.2f} dB from the chunk where its own quantization "
                  f"tables and sampling factors allow {f'{_db(own):.2f} dB' if own else 'an exact copy'} "
                  f"(margin {margin} dB): {why}")


__all__ = ["allowed_mse", "check_read_back", "kept_requirement", "margin_db"]
