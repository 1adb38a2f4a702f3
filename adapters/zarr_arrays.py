"""One-chunk zarr arrays: how the zarr adapters put a serializer codec through zarr-python for each chunk.

``encode_through_zarr`` creates a one-chunk array in a ``MemoryStore`` (zarr writes its
``zarr.json`` from the codec's ``to_dict``), reopens it from that ``zarr.json`` (zarr's registry
rebuilds the codec from the codec object), writes the chunk and returns the bytes zarr stored
under the chunk key. ``decode_through_zarr`` does the reverse: the same metadata, the stream put
under the chunk key, the array reopened and read. Any serializer: this project's ``jpeg`` codec
(adapters/zarr.py) or another package's (adapters/imagecodecs_zarr.py).

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

__all__ = ["decode_through_zarr", "encode_through_zarr"]

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


@contextmanager
def _zarr_config(settings: Mapping[str, Any]) -> Iterator[None]:
    # Without write_empty_chunks zarr skips storing a chunk equal to the fill value.
    with zarr.config.set({**settings, "array.write_empty_chunks": True}):
        yield


def _create(store: MemoryStore, serializer: Any, shape: tuple[int, ...], dtype: Any, filters: Any = None,
            compressors: Any = None) -> zarr.Array:
    return zarr.create_array(store, shape=shape, chunks=shape, dtype=dtype, serializer=serializer, filters=filters,
                             compressors=compressors, fill_value=0, zarr_format=3)


def encode_through_zarr(serializer: Any, chunk: np.ndarray, settings: Mapping[str, Any], who: str) -> bytes:
    """The stream zarr stores for ``chunk`` as the one chunk of an array whose serializer is ``serializer``.

    The array is created (zarr writes ``zarr.json`` from the codec's ``to_dict``), reopened
    from that ``zarr.json`` (zarr's registry parses the codec that writes) and written.
    """
    if not isinstance(chunk, np.ndarray):
        raise TypeError(f"{who}: chunk must be a numpy array, got {type(chunk).__name__}")
    entries: dict[str, Any] = {}
    store = MemoryStore(entries)
    with _zarr_config(settings), _unwrapped():
        try:
            _create(store, serializer, tuple(chunk.shape), chunk.dtype)
        except ValueError as exc:
            if chunk.size:
                raise
            # zarr >= 3.2 refuses a chunk shape with a 0 in it when the array is created.
            raise ValueError(f"{who}: an array of shape {chunk.shape} has no elements, and zarr refuses "
                             f"its chunk shape: {exc}") from exc
        array = zarr.open_array(store, mode="r+", zarr_format=3)
        array[...] = chunk
        key = array.metadata.encode_chunk_key((0,) * chunk.ndim)
    if key not in entries and chunk.size == 0:
        # zarr 3.1 accepts a chunk shape with a 0 in it and then has no chunk to code:
        # the codec never runs, and no stream exists for this chunk.
        raise ValueError(f"{who}: an array of shape {chunk.shape} has no elements, so zarr writes no chunk to encode")
    if key not in entries:
        raise RuntimeError(f"zarr stored no chunk under {key!r}; keys: {sorted(entries)}")
    return bytes(entries[key].to_bytes())


def decode_through_zarr(serializer: Any, data: bytes, chunk_shape: tuple[int, ...], settings: Mapping[str, Any],
                        who: str, filters: Any = None, compressors: Any = None) -> np.ndarray:
    """What zarr reads from ``data`` stored as the one uint8 chunk of shape ``chunk_shape`` of such an array
    (whose codecs are ``filters``, ``serializer`` and ``compressors``, for a codec that is not a serializer)."""
    shape = tuple(int(n) for n in chunk_shape)
    entries: dict[str, Any] = {}
    store = MemoryStore(entries)
    with _zarr_config(settings), _unwrapped():
        written = _create(store, serializer, shape, np.uint8, filters, compressors)
        key = written.metadata.encode_chunk_key((0,) * len(shape))
        entries[key] = default_buffer_prototype().buffer.from_bytes(bytes(data))
        # Reopen from zarr.json: the codec zarr reads with is the one its registry parses.
        array = zarr.open_array(store, mode="r", zarr_format=3)
        return np.asarray(array[...])
