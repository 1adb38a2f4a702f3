"""Large chunks judged on windows of their long axis: the start, the middle and the end.

A 16x65500 chunk holds a million samples. Judging every block against the exact DCT and every
sample against the exact reconstruction costs seconds per case, and a row has a dozen such cases
(measured: 5 of a native harness's 13 s before windows). Faults of size show at the end of the
long axis (a 16-bit count wrapping at 32768, a cap at 16384), faults of content everywhere, so
:data:`WINDOWS` windows of :data:`WINDOW_MCUS` MCUs are judged: the first, one in the middle, the
last (which holds the image's edge and its partial MCU). A window is cut with
:data:`MARGIN_MCUS` MCUs more each side where the image goes on, so that an upsampler reaching
across its edge is judged with what it saw; the margin itself is not judged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .t81.entropy import Coefficients

#: Samples above which a chunk is judged on windows.
LARGE_SAMPLES = 1 << 18
#: MCUs in each window along the long axis, and windows per chunk.
WINDOW_MCUS = 32
WINDOWS = 3
#: MCUs cut beyond each side of a window where the image goes on: more than an upsampler's reach
#: (decoder_accuracy.REACH chroma samples; an MCU holds 8 of them at least).
MARGIN_MCUS = 1


@dataclass(frozen=True)
class Window:
    """A cut of the image along ``axis`` (0: rows, 1: columns): samples [start, stop), of which
    [judged_start, judged_stop) are judged (the rest is margin)."""

    axis: int
    start: int
    stop: int
    judged_start: int
    judged_stop: int

    def cut(self, image: np.ndarray) -> np.ndarray:
        """The window of an (H, W, ...) image."""
        return np.take(image, np.arange(self.start, self.stop), axis=self.axis)

    def judged(self, height: int, width: int) -> np.ndarray:
        """(h, w) of the window: True where a sample is judged."""
        mask = np.zeros((height, width), bool)
        lo, hi = self.judged_start - self.start, self.judged_stop - self.start
        if self.axis:
            mask[:, lo:hi] = True
        else:
            mask[lo:hi, :] = True
        return mask


def windows(height: int, width: int, mcu: tuple[int, int]) -> list[Window] | None:
    """The windows of an image of ``height`` x ``width`` with MCUs of ``mcu`` (rows, columns) samples; None where it is
    small enough to judge whole."""
    if height * width <= LARGE_SAMPLES:
        return None
    axis = 1 if width >= height else 0
    side, step = (width, mcu[1]) if axis else (height, mcu[0])
    count = -(-side // step)
    if count <= WINDOWS * (WINDOW_MCUS + 2 * MARGIN_MCUS):
        return None
    out = []
    for first in (0, (count - WINDOW_MCUS) // 2, count - WINDOW_MCUS):
        last = first + WINDOW_MCUS
        lo, hi = max(0, first - MARGIN_MCUS), min(count, last + MARGIN_MCUS)
        out.append(Window(axis, lo * step, min(hi * step, side), first * step, min(last * step, side)))
    return out


def cut_coefficients(coefficients: Coefficients, window: Window) -> Coefficients:
    """The coefficients of the MCUs a window covers, under a frame the window's size."""
    frame = coefficients.frame
    per_mcu = frame.h_max if window.axis else frame.v_max
    step = 8 * per_mcu
    first, last = window.start // step, -(-window.stop // step)
    quantized = []
    for index, component in enumerate(frame.components):
        blocks = component.h if window.axis else component.v
        quantized.append(np.take(coefficients.quantized[index], np.arange(first * blocks, last * blocks), axis=window.axis))
    size = window.stop - window.start
    cut = replace(frame, width=size) if window.axis else replace(frame, height=size)
    return Coefficients(cut, quantized, coefficients.tables, coefficients.offences)


__all__ = ["LARGE_SAMPLES", "MARGIN_MCUS", "WINDOWS", "WINDOW_MCUS", "Window", "cut_coefficients", "windows"]
