"""Adapter over PyTurboJPEG: 1.x on libjpeg-turbo 2.x (Debian's libturbojpeg0), or 2.x on >= 3.

The legacy TurboJPEG API of 1.x uses the fast DCT below quality 96 unless told
otherwise, and its header call rejects sampling factors outside its fixed list
(backends.md §1-§4, §11.17); both generations return truncated data unless asked to
stop on warnings.
"""

from __future__ import annotations

import ctypes.util
import inspect
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import turbojpeg as tj

from ..core.stream import DecodePlan
from .base import BackendAdapter, BackendRejection, DecodeMode, Factor

_SAMP = {(1, 1): tj.TJSAMP_444, (2, 1): tj.TJSAMP_422, (2, 2): tj.TJSAMP_420, (1, 2): tj.TJSAMP_440, (4, 1): tj.TJSAMP_411}
#: The legacy header call knows only these chroma layouts (TJSAMP_441 needs libjpeg-turbo 3).
_LEGACY_READABLE = frozenset(_SAMP)


class TurboJpegAdapter(BackendAdapter):
    name = "turbojpeg"
    native_factors: frozenset[Factor] = frozenset(_SAMP)
    # TJFLAG_STOPONWARNING turns libjpeg's corrupt-data warnings into errors (_decode_pixels).
    strict = True

    def __init__(self) -> None:
        self._tj = tj.TurboJPEG()
        # PyTurboJPEG 2.x (tj3 API, libjpeg-turbo >= 3) can write rgb itself and reads any factors.
        self._tj3 = "jpeg_colorspace" in inspect.signature(self._tj.encode).parameters
        self.native_rgb = self._tj3
        if self._tj3 and hasattr(tj, "TJSAMP_441"):
            # 4:4:1 ([[1, 4], ...]) is a TurboJPEG subsampling only from libjpeg-turbo 3.
            self._samp = {**_SAMP, (1, 4): tj.TJSAMP_441}
            self.native_factors = frozenset(self._samp)
        else:
            self._samp = _SAMP
        # tj3 defaults to the accurate DCT; the legacy API needs the flag (group A bytes).
        self._flags = 0 if self._tj3 else tj.TJFLAG_ACCURATEDCT

    def versions(self) -> dict[str, str]:
        return {
            "PyTurboJPEG": getattr(tj, "__version__", "unknown"),
            "api": "tj3 (libjpeg-turbo >= 3)" if self._tj3 else "legacy (libjpeg-turbo 2.x)",
            "library": ctypes.util.find_library("turbojpeg") or "unknown",
        }

    def reads_factors(self, factors: tuple[Factor, ...]) -> bool:
        if self._tj3 or len(factors) == 1:
            return True
        return factors[0] in _LEGACY_READABLE and all(f == (1, 1) for f in factors[1:])

    def _encode(self, image: np.ndarray, quality: int, pixel_format: int, subsample: int, **extra: int) -> bytes:
        return bytes(
            self._tj.encode(image, quality=quality, pixel_format=pixel_format, jpeg_subsample=subsample, flags=self._flags, **extra)
        )

    def _encode_gray(self, plane: np.ndarray, quality: int) -> bytes:
        return self._encode(plane[:, :, None], quality, tj.TJPF_GRAY, tj.TJSAMP_GRAY)

    def _encode_ycbcr(self, image: np.ndarray, quality: int, luma: Factor, *, ycbcr_input: bool) -> bytes:
        return self._encode(image, quality, tj.TJPF_RGB, self._samp[luma])

    def _encode_rgb(self, image: np.ndarray, quality: int) -> bytes:
        # tj3 keeps its default 4:2:2 in RGB mode unless told 4:4:4 (backends.md §11.17).
        return self._encode(image, quality, tj.TJPF_RGB, tj.TJSAMP_444, jpeg_colorspace=tj.TJCS_RGB)

    def _encode_plane(self, plane: np.ndarray, quality: int, table: np.ndarray) -> bytes:
        # TurboJPEG takes no quantization table: its luma table for `quality` it is.
        return self._encode_gray(plane, quality)

    def _decode_pixels(self, data: bytes, plan: DecodePlan, mode: DecodeMode) -> np.ndarray:
        pixel_format = tj.TJPF_GRAY if mode == "gray" else tj.TJPF_RGB
        # STOPONWARNING stops libjpeg at "premature end of data" and the like, but
        # PyTurboJPEG reports a stop on a warning with warnings.warn and returns the
        # partly decoded buffer (found by tools/fuzz.py): catch it and reject.
        with _TAP.capture() as stops:
            out = self._tj.decode(data, pixel_format=pixel_format, flags=self._flags | tj.TJFLAG_STOPONWARNING)
        if stops:
            raise BackendRejection("JPEG-X-07", f"libjpeg-turbo stopped on a warning: {stops[0]}")
        return out


class _WarningTap:
    """Stands in for the ``warnings`` module inside PyTurboJPEG, to catch its warnings per thread.

    ``warnings.catch_warnings`` swaps process-wide state: guarding it with a lock would let
    only one decode run at a time, whereas libjpeg-turbo decodes in parallel (bench_zarr).
    Outside :meth:`capture`, and for everything but ``warn``, the real module answers.
    """

    def __init__(self, real: Any) -> None:
        self._real = real
        self._local = threading.local()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def warn(self, message: object, *args: Any, **kwargs: Any) -> None:
        caught = getattr(self._local, "caught", None)
        if caught is None:
            self._real.warn(message, *args, **kwargs)
        else:
            caught.append(str(message))

    @contextmanager
    def capture(self) -> Iterator[list[str]]:
        caught: list[str] = []
        self._local.caught = caught
        try:
            yield caught
        finally:
            self._local.caught = None


def _tap() -> _WarningTap:
    # PyTurboJPEG calls ``warnings.warn`` through its module global ``warnings``.
    if not isinstance(tj.warnings, _WarningTap):
        tj.warnings = _WarningTap(tj.warnings)
    return tj.warnings


_TAP = _tap()
