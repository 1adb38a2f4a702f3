"""Every stream an encoder writes, judged by its coefficients and read back by the reference decoders.

First its quantized coefficients against the exact DCT of the chunk (``judging.encoder_accuracy``:
what T.81 fixes once the tables are chosen). Then the fidelity those coefficients add up to, which
no per-coefficient bound can hold when quantizing toward zero is allowed: an encoder is judged
by what it wrote, never by its own decoder (a fault made on both sides
cancels in a round trip) and never by what its quality number means (JPEG-Q-03 leaves the
tables to it). The stream is decoded by libjpeg-turbo under the spec's colour rule (and with
chroma repeated, the other legal upsampling); the decode must lie as close to the chunk as
the stream's own tables and factors allow (``judging.own_tables``), within
``OWN_TABLES_MARGIN_DB``, over the samples away from partial MCUs (:func:`interior`). A miss is
the encoder's: cited under the rule of the fault it looks
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
from .diagnoses import cite, diagnose_encode, fault_cause
from .encoder_accuracy import check_coefficients, kept_requirement
from .legal_decoders import expected_decodes, libjpeg_turbo_decode
from .own_tables import rewritten, subsampled
from .roots import default_taken_wrong
from .tolerances import OWN_TABLES_MARGIN_DB, OWN_TABLES_SLACK_MSE


def _mse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)) if a.size else 0.0


def _db(mse: float) -> float:
    return math.inf if mse == 0 else 10 * math.log10(255.0**2 / mse)


def allowed_mse(reference_mse: float, margin: float = OWN_TABLES_MARGIN_DB) -> float:
    """The largest MSE an encoder may reach where its own tables, written by the reference encoder, reach ``reference_mse``."""
    return reference_mse * 10 ** (margin / 10) + OWN_TABLES_SLACK_MSE


def _reference(config: JpegConfig, chunk: np.ndarray, data: bytes, point: bool = False) -> np.ndarray:
    """The reference decode of ``chunk`` written with the tables and factors of ``data`` (``judging.own_tables``)."""
    return libjpeg_turbo_decode(rewritten(config, chunk, data, point=point), config, chunk.shape)


def interior(shape: tuple[int, ...], config: JpegConfig) -> tuple[slice, slice] | None:
    """The samples whose MCUs, and their neighbours', hold no padding: (rows, columns), or None if there are none.

    T.81 leaves the padding of partial MCUs to the encoder (A.2.4), and the spec says the padded
    samples "can introduce extra artifacts near the right and bottom edges" (JPEG-MCU-01); chroma
    upsampling carries a partial MCU's chroma one MCU further. The fidelity asked here is the
    interior's; the coefficients of the edge blocks are judged on their real samples
    (``judging.encoder_accuracy``).
    """
    mcu_h, mcu_w = config.mcu
    height, width = shape[0], shape[1]
    rows = height if height % mcu_h == 0 else (height // mcu_h - 1) * mcu_h
    cols = width if width % mcu_w == 0 else (width // mcu_w - 1) * mcu_w
    return (slice(0, rows), slice(0, cols)) if rows > 0 and cols > 0 else None


def _within(data: bytes, config: JpegConfig, chunk: np.ndarray) -> bool:
    """Whether ``data`` is as close to ``chunk`` as its own tables allow (False where that cannot be told)."""
    inside = interior(chunk.shape, config)
    if inside is None:
        return True
    try:
        decodes = expected_decodes(data, config, chunk.shape)
        own = max(_mse(chunk[inside], _reference(config, chunk, data, point)[inside])
                  for point in ((False, True) if subsampled(data) else (False,)))
    except (ImportError, LookupError, ValueError):
        return False
    return min(_mse(chunk[inside], d[inside]) for d in decodes) <= allowed_mse(own)


def check_samples(judge: Any, data: bytes, config: JpegConfig, chunk: np.ndarray, what: str = "encode",
                  defaults: Callable[[], bytes | None] | None = None) -> None:
    """Judge the samples of one written stream (structure already checked by ``judging.written``): its coefficients
    (``judging.encoder_accuracy``), then the fidelity they add up to (:func:`check_read_back`)."""
    where = f"the stream {what} wrote for a {'x'.join(map(str, chunk.shape))} chunk"
    check_coefficients(judge, data, config, np.asarray(chunk), where, defaults)
    check_read_back(judge, data, config, chunk, what, defaults)


def check_read_back(judge: Any, data: bytes, config: JpegConfig, chunk: np.ndarray, what: str = "encode",
                    defaults: Callable[[], bytes | None] | None = None) -> None:
    """Judge the fidelity of one written stream, read back by libjpeg-turbo (its coefficients: :func:`check_samples`).

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
    inside = interior(chunk.shape, config)
    if inside is None:
        judge.metrics["read_back"] = "not judged: no whole MCU away from the padded edges (the coefficients are)"
        return
    got = min(_mse(chunk[inside], d[inside]) for d in decodes)
    own = _mse(chunk[inside], reference[inside])
    margin = OWN_TABLES_MARGIN_DB
    if got > allowed_mse(own, margin) and subsampled(data):  # the other legal chroma downsampling
        own = max(own, _mse(chunk[inside], _reference(config, chunk, data, point=True)[inside]))
    if own or not got:  # against an exact reference a difference in dB has no size
        judge.metrics["own_tables_db"] = round(_db(got) - _db(own), 2) if got else 0.0
    if got <= allowed_mse(own, margin):
        return
    best = min(decodes, key=lambda d: _mse(chunk[inside], d[inside]))

    def through(image: np.ndarray) -> np.ndarray:
        return libjpeg_turbo_decode(rewritten(config, image.reshape(chunk.shape), data), config, best.shape)

    fault = diagnose_encode(best, chunk.reshape(best.shape), config.encoded_color_space, config.decoded_color_space,
                            through, reference.reshape(best.shape))
    requirement, why = cite(fault, kept_requirement(config))
    cause = fault_cause(fault, "encode") if fault is not None else None
    again = defaults() if defaults is not None else None
    if again is not None and _within(again, config, chunk):
        requirement, why, cause = default_taken_wrong("encode")
    judge.require(False, requirement,
                  f"{where}, decoded by libjpeg-turbo, lies {_db(got):.2f} dB from the chunk where its own quantization "
                  f"tables and sampling factors allow {f'{_db(own):.2f} dB' if own else 'an exact copy'} "
                  f"(margin {margin} dB): {why}", cause=cause)


__all__ = ["allowed_mse", "check_read_back", "check_samples", "interior", "kept_requirement"]
