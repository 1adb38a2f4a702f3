"""One reading of a stream: its syntax, its coefficients where they can be decoded, every offence; cached by bytes.

A stream an encoder wrote is read when it is written (its syntax and coefficients judged), and
again when a decoder's reconstruction of it is judged: the reading is made once.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass

from .entropy import Coefficients, Undecodable, decode
from .syntax import Offence, Stream, read


@dataclass(frozen=True)
class Reading:
    stream: Stream
    coefficients: Coefficients | None
    #: Why the coefficients could not be decoded (another process, a missing table, too little data), if so.
    undecodable: str | None

    @property
    def offences(self) -> list[Offence]:
        """Every offence against T.81: the syntax's, then decoding's."""
        return self.stream.offences + (self.coefficients.offences if self.coefficients is not None else [])


#: Readings by the SHA-256 of the stream: a few streams at a time are judged twice.
_CACHE: OrderedDict[bytes, Reading] = OrderedDict()
_CACHE_SIZE = 16


def reading(data: bytes) -> Reading:
    """The reading of ``data`` (never raises)."""
    key = hashlib.sha256(data).digest()
    found = _CACHE.get(key)
    if found is not None:
        _CACHE.move_to_end(key)
        return found
    stream = read(data)
    try:
        coefficients, why = decode(stream, data), None
    except Undecodable as exc:
        coefficients, why = None, str(exc)
    found = Reading(stream, coefficients, why)
    _CACHE[key] = found
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return found


__all__ = ["Reading", "reading"]
