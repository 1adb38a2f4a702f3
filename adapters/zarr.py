"""Adapter that runs the suites through real zarr-python arrays using this project's JpegCodec.

Every encode and decode goes through zarr's metadata and codec pipeline, not a direct
codec call. ``encode`` creates a one-chunk array in a ``MemoryStore`` (zarr writes its
``zarr.json`` from ``JpegCodec.to_dict``), reopens it from that ``zarr.json`` (zarr's
registry rebuilds the codec through ``JpegCodec.from_dict``), writes the chunk and returns
the bytes zarr stored under the chunk key. ``decode`` does the reverse: the same metadata,
the stream put under the chunk key, the array reopened and read. ``build`` is what a user's
``JpegCodec(...)`` writes into ``zarr.json``: its ``to_dict``.

zarr-python API used beyond the documented top level: ``zarr.core.buffer`` (to put raw bytes
into the store, as custom codecs and stores do) and ``Array.metadata.encode_chunk_key``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
import zarr
from zarr.core.buffer import default_buffer_prototype
from zarr.storage import MemoryStore

from ..core.config import CONFIG_MEMBERS
from ..zarrcodecs.jpeg import BACKEND_CONFIG_KEY, REGISTRY_KEY, JpegCodec, backend_adapter, default_backend, register

__all__ = ["ZarrAdapter"]

#: How far down an exception's __cause__/__context__ chain to look for the codec's rejection.
_MAX_CHAIN = 8


def _rejection(exc: BaseException) -> BaseException | None:
    """The ValueError/TypeError behind ``exc``, if zarr wrapped one in another exception."""
    seen: BaseException | None = exc
    for _ in range(_MAX_CHAIN):
        if seen is None:
            return None
        if isinstance(seen, ValueError | TypeError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


@contextmanager
def _unwrapped() -> Iterator[None]:
    # zarr 3.1 re-raises a codec's exception unchanged (checked by tests/test_zarr_codec.py);
    # this only matters if a zarr release wraps it, so that a rejection stays a rejection.
    try:
        yield
    except (ValueError, TypeError):
        raise
    except Exception as exc:
        cause = _rejection(exc)
        if cause is None:
            raise
        raise cause from exc


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

    @contextmanager
    def _zarr_config(self) -> Iterator[None]:
        # Pin this class for the name "jpeg" (other packages may register one too) and the
        # backend. Without write_empty_chunks zarr skips storing a chunk equal to the fill value.
        settings = {"codecs.jpeg": REGISTRY_KEY, BACKEND_CONFIG_KEY: self.backend, "array.write_empty_chunks": True}
        with zarr.config.set(settings):
            yield

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

    def _create(self, store: MemoryStore, codec: JpegCodec, shape: tuple[int, ...], dtype: Any) -> zarr.Array:
        return zarr.create_array(
            store,
            shape=shape,
            chunks=shape,
            dtype=dtype,
            serializer=codec,
            compressors=None,
            fill_value=0,
            zarr_format=3,
        )

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        codec = self._codec(parsed)
        if not isinstance(chunk, np.ndarray):
            raise TypeError(f"zarr: chunk must be a numpy array, got {type(chunk).__name__}")
        entries: dict[str, Any] = {}
        store = MemoryStore(entries)
        with self._zarr_config(), _unwrapped():
            self._create(store, codec, tuple(chunk.shape), chunk.dtype)
            # Reopen from zarr.json, so the codec that writes is the one zarr's registry parses.
            array = zarr.open_array(store, mode="r+", zarr_format=3)
            array[...] = chunk
            key = array.metadata.encode_chunk_key((0,) * chunk.ndim)
        if key not in entries and chunk.size == 0:
            # zarr 3.1 accepts a chunk shape with a 0 in it and then has no chunk to code:
            # the codec never runs, and no stream exists for this chunk.
            raise ValueError(f"zarr: an array of shape {chunk.shape} has no elements, so zarr writes no chunk to encode")
        if key not in entries:
            raise RuntimeError(f"zarr stored no chunk under {key!r}; keys: {sorted(entries)}")
        return entries[key].to_bytes()

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        codec = self._codec(parsed)
        shape = tuple(int(n) for n in chunk_shape)
        entries: dict[str, Any] = {}
        store = MemoryStore(entries)
        with self._zarr_config(), _unwrapped():
            written = self._create(store, codec, shape, np.uint8)
            key = written.metadata.encode_chunk_key((0,) * len(shape))
            entries[key] = default_buffer_prototype().buffer.from_bytes(bytes(data))
            # Reopen from zarr.json: the codec zarr reads with is the one its registry parses.
            array = zarr.open_array(store, mode="r", zarr_format=3)
            return np.asarray(array[...])
