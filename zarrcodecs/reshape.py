"""A minimal ``reshape`` codec for zarr-python, as zarr-extensions ``codecs/reshape`` defines it.

The jpeg spec points to ``reshape`` for chunks that are not 2D or 3D, notably neuroglancer's
``[z, y, x, channel]`` layout stored as a ``(z * y, x, channel)`` image (JPEG-INT-02).
zarr-python 3.1 has no ``reshape`` codec, so this project carries one; :func:`register`
adds it only when zarr has none of its own.

``shape`` has one entry per output dimension: a positive size, a list of input dimensions
whose sizes multiply to the output size, or ``-1`` (at most once) for whatever size keeps
the element count. The element order is C order on both sides: the codec never transposes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import TYPE_CHECKING, Any, ClassVar

from zarr.abc.codec import ArrayArrayCodec

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer

__all__ = ["ReshapeCodec", "output_shape", "parse_shape", "register"]

#: One entry of ``shape``: a size, ``-1``, or a tuple of input dimensions.
Entry = int | tuple[int, ...]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_shape(value: object) -> tuple[Entry, ...]:
    """Check ``shape`` as written in the configuration; ValueError/TypeError if it is malformed."""
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise TypeError(f"reshape: 'shape' must be an array, got {value!r}")
    entries: list[Entry] = []
    for item in value:
        if _is_int(item):
            # The README says "a positive integer" or -1; its schema's minimum of -1 would let 0
            # through, which can never satisfy prod(B_shape) == prod(A_shape) for a chunk.
            if item == 0 or item < -1:
                raise ValueError(f"reshape: a size in 'shape' must be positive or -1, got {item}")
            entries.append(int(item))
        elif isinstance(item, Sequence) and not isinstance(item, str):
            if not all(_is_int(d) and d >= 0 for d in item):
                raise ValueError(f"reshape: input dimensions must be non-negative integers, got {list(item)}")
            entries.append(tuple(int(d) for d in item))
        else:
            raise TypeError(f"reshape: each 'shape' entry must be an integer or an array of integers, got {item!r}")
    if sum(1 for e in entries if e == -1) > 1:
        raise ValueError("reshape: -1 may occur at most once in 'shape'")
    flat = [d for e in entries if isinstance(e, tuple) for d in e]
    # Strictly increasing: an input dimension used twice, or out of order, would suggest a
    # transpose the codec never performs.
    if any(b <= a for a, b in pairwise(flat)):
        raise ValueError(f"reshape: the input dimensions in 'shape' must be increasing, got {flat}")
    return tuple(entries)


def output_shape(entries: Sequence[Entry], input_shape: Sequence[int]) -> tuple[int, ...]:
    """The output shape for an input shape, or ValueError if the configuration does not fit it."""
    a = tuple(int(n) for n in input_shape)
    sizes: list[int | None] = []
    for e in entries:
        if isinstance(e, tuple):
            if any(d >= len(a) for d in e):
                raise ValueError(f"reshape: input dimensions {list(e)} do not exist in a {len(a)}D chunk {a}")
            sizes.append(math.prod(a[d] for d in e))
        else:
            sizes.append(None if e == -1 else e)
    total = math.prod(a)
    known = math.prod(s for s in sizes if s is not None)
    if None in sizes:
        if known == 0 or total % known:
            raise ValueError(f"reshape: no size for -1 turns {a} into {list(entries)}")
        sizes[sizes.index(None)] = total // known
    b = tuple(s for s in sizes if s is not None)
    if math.prod(b) != total:
        raise ValueError(f"reshape: {a} has {total} elements but the output shape {b} has {math.prod(b)}")
    # An output dimension given by input dimensions must be exactly those dimensions raveled:
    # everything before it (and after it) in the output covers everything before (after) them.
    for i, e in enumerate(entries):
        if isinstance(e, tuple) and e and (
            math.prod(b[:i]) != math.prod(a[: e[0]]) or math.prod(b[i + 1 :]) != math.prod(a[e[-1] + 1 :])
        ):
            raise ValueError(f"reshape: output dimension {i} does not line up with input dimensions {list(e)} of {a}")
    return b


@dataclass(frozen=True)
class ReshapeCodec(ArrayArrayCodec):
    """``{"name": "reshape", "configuration": {"shape": [...]}}``."""

    is_fixed_size: ClassVar[bool] = True  # type: ignore[misc]

    shape: tuple[Entry, ...]

    def __init__(self, *, shape: Sequence[int | Sequence[int]]) -> None:
        object.__setattr__(self, "shape", parse_shape(shape))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        if not isinstance(data, Mapping) or data.get("name") != "reshape":
            raise ValueError(f"reshape: expected a codec object named 'reshape', got {data!r}")
        extra = set(data) - {"name", "configuration"}
        cfg = data.get("configuration")
        if extra or not isinstance(cfg, Mapping) or set(cfg) != {"shape"}:
            raise ValueError(f"reshape: the codec object must be {{name, configuration: {{shape}}}}, got {data!r}")
        return cls(shape=cfg["shape"])

    def to_dict(self) -> dict[str, Any]:
        shape = [list(e) if isinstance(e, tuple) else e for e in self.shape]
        return {"name": "reshape", "configuration": {"shape": shape}}

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        return replace(chunk_spec, shape=output_shape(self.shape, chunk_spec.shape))

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        return input_byte_length

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        # numpy's reshape is C order: a view when it can be, a copy in logical order otherwise.
        return chunk_array.reshape(output_shape(self.shape, chunk_spec.shape))

    def _decode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        return chunk_array.reshape(tuple(chunk_spec.shape))

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        return self._encode_sync(chunk_array, chunk_spec)

    async def _decode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        return self._decode_sync(chunk_array, chunk_spec)


def register() -> None:
    """Register :class:`ReshapeCodec` as ``reshape`` unless zarr already has an implementation."""
    from zarr.registry import get_codec_class, register_codec

    try:
        existing = get_codec_class("reshape")
    except Exception:  # noqa: BLE001 - KeyError in zarr 3.1, UnknownCodecError later
        existing = None
    if existing is None or existing is ReshapeCodec:
        register_codec("reshape", ReshapeCodec)
