"""Many encodes or decodes with one configuration, from any adapter: the batch form of its calls.

An adapter may offer ``encode_many(parsed, chunks)`` and ``decode_many(parsed, streams,
chunk_shape)`` (:class:`~zarr_jpeg_conformance.adapters.remote.ExecAdapter` does: it keeps
several requests in flight to its harness). They are not part of the
:class:`~zarr_jpeg_conformance.adapters.Adapter` contract: :func:`encode_many` and
:func:`decode_many` call them where an adapter has them and are plain loops over
``encode`` / ``decode`` otherwise, so a caller (a benchmark, the report's throughput
table) treats every adapter alike. Either way item i is what the single call would give:
its value, or the exception it raised (a ValueError or TypeError is a rejection).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


def _outcome(call: Callable[..., T], *args: Any) -> T | Exception:
    try:
        return call(*args)
    except Exception as exc:  # noqa: BLE001 - each call's exception is its outcome, as the remote batch gives it
        return exc


def encode_many(adapter: Any, parsed: object, chunks: Sequence[np.ndarray]) -> list[bytes | Exception]:
    """``adapter.encode(parsed, chunk)`` of each chunk: its stream, or the exception it raised."""
    many = getattr(adapter, "encode_many", None)
    if many is not None:
        return list(many(parsed, chunks))
    return [_outcome(adapter.encode, parsed, chunk) for chunk in chunks]


def decode_many(adapter: Any, parsed: object, streams: Sequence[bytes], chunk_shape: tuple[int, ...]) -> list[np.ndarray | Exception]:
    """``adapter.decode(parsed, data, chunk_shape)`` of each stream: its chunk, or the exception it raised."""
    many = getattr(adapter, "decode_many", None)
    if many is not None:
        return list(many(parsed, streams, chunk_shape))
    return [_outcome(adapter.decode, parsed, data, chunk_shape) for data in streams]


def pipelined(adapter: Any) -> bool:
    """Whether the adapter's own batch calls keep several requests in flight (a harness), not a plain loop."""
    return callable(getattr(adapter, "encode_many", None)) or callable(getattr(adapter, "decode_many", None))


__all__ = ["decode_many", "encode_many", "pipelined"]
