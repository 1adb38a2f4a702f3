"""What one run of check-store reads at most: bytes per read, positions walked where nothing can be listed.

Every read of a store has a cap, so that what a store holds (a sparse 3 GiB chunk, a gzip
bomb behind a ``gzip`` codec, an endless http answer, a shard index of 2^32 entries) costs at
most the cap, and is reported as too large, naming the key and the cap, never read on:

* ``metadata``: a ``zarr.json`` (and an http folder's page);
* ``chunk``: a stored chunk (or inner chunk) read whole, what the bytes -> bytes codecs after
  ``jpeg`` make of it, the image a decode makes of it, and a shard's index.

Where a store cannot list the chunks it holds (http), at most ``positions`` grid positions
of an array are visited, in order, and the report says how many were left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEFAULT", "WHOLE_BUDGET", "Limits", "parse_bytes"]


@dataclass(frozen=True)
class Limits:
    #: Bytes of a zarr.json, or of an http folder's page.
    metadata: int = 32 << 20
    #: Bytes of a chunk read whole, of what a codec after jpeg makes of it, of a decoded image, of a shard index.
    chunk: int = 64 << 20
    #: Grid positions of an array visited one by one where the store cannot list the keys it holds.
    positions: int = 1 << 12

    @property
    def group(self) -> int:
        """Chunks read whole at once by one task: their caps together stay within :data:`WHOLE_BUDGET`."""
        return max(1, WHOLE_BUDGET // self.chunk)


#: Bytes a task holds at most of chunks read whole (``--decode``, or codecs after jpeg) before judging them.
WHOLE_BUDGET = 1 << 30
DEFAULT = Limits()

_SIZE = re.compile(r"(\d+)\s*([kmg]i?b?|b)?", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_bytes(text: str) -> int:
    """``65536``, ``64k``, ``64M``, ``1GiB`` -> bytes (binary units); ValueError for anything else."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text[:50]!r} is not a size (give bytes, or a number with k, M or G)")
    unit = (match.group(2) or "")[:1].lower()
    return int(match.group(1)) * _UNITS[unit]
