"""Pixel backends: this project's spec-aware codec (``base``) over one JPEG library each.

:class:`~zarr_jpeg_conformance.backends.base.BackendAdapter` holds what the spec says
(parsing, chunk and stream checks, colour rules, the multi-scan writer, all from ``core``);
each module here supplies the pixels from one library. The same objects are the built-in
adapters ``turbojpeg``, ``imagecodecs`` and ``pillow`` and the engines of the zarr codec
(:mod:`zarr_jpeg_conformance.zarrcodecs.jpeg`), so neither depends on the other.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import BackendAdapter

#: Backends by name, in the zarr codec's order of preference: "module:class" under this package.
#: turbojpeg comes first because it is the one strict backend (BackendAdapter.strict): imagecodecs
#: and Pillow return corrupt entropy-coded data as pixels, off by up to 245 levels, and their
#: APIs offer no way to make libjpeg's warnings errors. They stay available by name, and
#: imagecodecs does more (YCbCr passthrough, any sampling factors, 65501-65535).
BACKENDS: dict[str, str] = {
    "turbojpeg": "turbojpeg:TurboJpegAdapter",
    "imagecodecs": "imagecodecs:ImagecodecsAdapter",
    "pillow": "pillow:PillowAdapter",
}


class BackendUnavailable(RuntimeError):
    """A backend cannot run here (its library is missing or does not load); the message says why."""


@cache
def load_backend(name: str) -> BackendAdapter:
    """The backend ``name``, started once per process; BackendUnavailable with the reason if it cannot."""
    if name not in BACKENDS:
        raise ValueError(f"unknown jpeg backend {name!r}: use one of {', '.join(BACKENDS)}")
    module_name, _, attr = BACKENDS[name].partition(":")
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
        backend: BackendAdapter = getattr(module, attr)()
        return backend
    except (ImportError, OSError, RuntimeError) as exc:
        # Backends fail here when their native library is missing.
        raise BackendUnavailable(f"backend {name!r} cannot start: {type(exc).__name__}: {exc}") from exc


__all__ = ["BACKENDS", "BackendUnavailable", "load_backend"]
