"""Protocol version 1 on the wire: arrays and streams inside messages.

Both the client (``adapters.remote``) and the server (``harnesses.server``) encode and
decode messages with these functions, so the two sides cannot drift apart.
``schema/protocol/v1.schema.json`` is the same contract as a JSON Schema. A message's
bytes are base64 text in JSON lines and raw bytes in binary framing (``framing.py``):
:func:`field_bytes` reads either.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from typing import Any, TypeGuard

import numpy as np

PROTOCOL_VERSION = 1
#: Cap on the text one message may carry from a harness (stderr tail, trace): one
#: harness's flood must not swamp a report.
TEXT_CAP = 4096

#: Data types an array may have on the wire (zarr v3 core names); samples little-endian, C order.
WIRE_DTYPES = frozenset(
    {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
     "float16", "float32", "float64", "complex64", "complex128"}
)


#: Wire name and little-endian dtype of each dtype the wire carries: ``dtype.name`` is a Python
#: property of numpy's that costs more than the rest of a 256x256x3 request's header (5 us).
_WIRE_OF: dict[np.dtype[Any], tuple[str, np.dtype[Any]]] = {
    np.dtype(name): (name, np.dtype(name).newbyteorder("<")) for name in WIRE_DTYPES
}
_INT = {int}
#: The little-endian and the native dtype of each wire name, and whether they are the same (no conversion).
_DTYPE_OF: dict[str, tuple[np.dtype[Any], np.dtype[Any], bool]] = {
    name: (np.dtype(name).newbyteorder("<"), np.dtype(name), np.dtype(name).newbyteorder("<") == np.dtype(name))
    for name in WIRE_DTYPES
}


def array_to_wire(array: np.ndarray, *, raw: bool = False) -> dict[str, Any]:
    """``{"shape", "dtype", "data"}`` of an array: its samples, little-endian, C order.

    ``data`` is base64 text, or with ``raw`` the samples' bytes themselves (a memoryview
    of them, not a copy), which :func:`~zarr_jpeg_conformance.protocol.framing.encode_message`
    sends in either framing.
    """
    known = _WIRE_OF.get(array.dtype)
    name, little = known if known is not None else (array.dtype.name, array.dtype.newbyteorder("<"))
    if name not in WIRE_DTYPES:
        raise TypeError(f"an array of dtype {array.dtype} cannot be sent to a harness (protocol dtypes: {sorted(WIRE_DTYPES)})")
    samples = np.ascontiguousarray(array, dtype=little)
    # Raw: a view of the samples, no copy (valid while ``array`` is not modified).
    data = samples.data.cast("B") if raw and samples.size else samples.tobytes()
    return {"shape": list(array.shape), "dtype": name, "data": data if raw else base64.b64encode(data).decode("ascii")}


def is_shape(value: object) -> TypeGuard[list[int]]:
    """Whether a message's value is a shape: a list of integers >= 0 (JSON's integers are exactly int; a bool is not
    one). Per request: a set of the items' types and a min are 0.5 us against 1.0 for a test of each item."""
    return type(value) is list and set(map(type, value)) <= _INT and (not value or min(value) >= 0)


def array_from_wire(obj: Mapping[str, Any], *, borrow: bool = False) -> np.ndarray:
    """The array of a wire ``{"shape", "dtype", "data"}`` object; ValueError if it is inconsistent.

    With ``borrow``, samples that are a memoryview (a payload in the shared region) and already native are not
    copied: the array is a view of that memory, valid while the memory is (a harness's request, until it replies).
    """
    name, shape = obj.get("dtype"), obj.get("shape")
    if name not in WIRE_DTYPES:
        raise ValueError(f"unknown wire dtype {name!r}")
    if not is_shape(shape):
        raise ValueError(f"wire shape must be a list of non-negative integers, got {shape!r}")
    data = obj.get("data")
    raw: bytes | bytearray | memoryview
    if isinstance(data, memoryview):
        raw, size, owned = data, data.nbytes, borrow
    elif isinstance(data, bytearray):  # a binary frame's payload, which nobody else holds: the array's memory
        raw, size, owned = data, len(data), True
    else:
        raw = field_bytes(data)
        size, owned = len(raw), False
    dtype, native, same = _DTYPE_OF[name]
    count = math.prod(shape)
    if size != count * dtype.itemsize:
        raise ValueError(f"wire data has {size} bytes, shape {shape} of {name} needs {count * dtype.itemsize}")
    if owned and same:
        return np.ndarray(shape, native, raw)  # its memory as it is: 0.3 us, where frombuffer and reshape take 0.7
    return np.frombuffer(raw, dtype=dtype).astype(native, copy=not owned).reshape(shape)


def field_bytes(value: object) -> bytes:
    """The bytes of a message's ``data``: a binary frame's payload, or base64 text from a JSON line."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return b64decode(value)


def b64decode(text: object) -> bytes:
    if not isinstance(text, str):
        raise ValueError(f"base64 data must be a string, got {type(text).__name__}")
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"invalid base64 data: {exc}") from exc


__all__ = ["PROTOCOL_VERSION", "TEXT_CAP", "WIRE_DTYPES", "array_from_wire", "array_to_wire", "b64decode", "field_bytes", "is_shape"]
