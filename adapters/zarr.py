"""Adapter that runs the suites through real zarr-python arrays using this project's JpegCodec.

Every encode and decode goes through zarr's metadata and codec pipeline, not a direct codec
call: each chunk is the one chunk of an array in a ``MemoryStore``, reopened from its
``zarr.json`` so that the codec that codes is the one zarr's registry parses (zarr_arrays.py).
``build`` is what a user's ``JpegCodec(...)`` writes into ``zarr.json``: its ``to_dict``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import zarr

from ..core.config import CONFIG_MEMBERS
from ..zarrcodecs.jpeg import BACKEND_CONFIG_KEY, REGISTRY_KEY, JpegCodec, backend_adapter, default_backend, register
from .zarr_arrays import decode_through_zarr, encode_through_zarr

__all__ = ["ZarrAdapter"]


class ZarrAdapter:
    """The ``jpeg`` codec of this project, driven through zarr-python (``name = "zarr"``)."""

    name = "zarr"
    roles = frozenset({"encode", "decode", "build"})

    def __init__(self, backend: str | None = None) -> None:
        register()
        self.backend = backend or default_backend()
        backend_adapter(self.backend)  # fail now, at load time, if the library is missing

    def versions(self) -> dict[str, str]:
        return {"zarr": zarr.__version__, "backend": self.backend, **backend_adapter(self.backend).versions()}

    def _settings(self) -> dict[str, Any]:
        # Pin this class for the name "jpeg" (other packages may register one too) and the backend.
        return {"codecs.jpeg": REGISTRY_KEY, BACKEND_CONFIG_KEY: self.backend}

    def parse(self, codec: Mapping[str, Any]) -> JpegCodec:
        return JpegCodec.with_backend(codec, self.backend)

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        # The options are JpegCodec's keyword arguments; ``backend`` is this adapter's, not the user's.
        unknown = set(options) - CONFIG_MEMBERS
        if unknown:
            raise TypeError(f"zarr: JpegCodec takes no option {', '.join(sorted(map(repr, unknown)))}")
        return JpegCodec(**options, backend=self.backend).to_dict()

    def _codec(self, parsed: object) -> JpegCodec:
        if not isinstance(parsed, JpegCodec):
            raise TypeError(f"zarr: expected a parsed codec from ZarrAdapter.parse, got {type(parsed).__name__}")
        return parsed

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        return encode_through_zarr(self._codec(parsed), chunk, self._settings(), self.name)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        return decode_through_zarr(self._codec(parsed), data, chunk_shape, self._settings(), self.name)
