"""Wrong adapters for the corpus gaps of channels-first chunks and unusual component IDs.

Each breaks one rule that no case probed before: tests/test_suites_bite.py and
tests/test_decode_suites_bite.py require the suites to catch it, citing the requirement.
They build on the imagecodecs adapter, like those of wrong_adapters.py and wrong_decoders.py.
"""

from __future__ import annotations

import numpy as np

from zarr_jpeg_conformance.backends.imagecodecs import ImagecodecsAdapter
from zarr_jpeg_conformance.core.markers import inspect

#: The component IDs every encoder of the built-in backends writes: 1 (grayscale), 1, 2, 3
#: (YCbCr) and 'R', 'G', 'B' (rgb).
COMMON_IDS = ((1,), (1, 2, 3), (82, 71, 66))


def _channels_first(shape: tuple[int, ...]) -> bool:
    """The guess: a 3D shape whose first axis could be channels and whose last could not."""
    return len(shape) == 3 and shape[0] in (1, 3) and shape[2] not in (1, 3)


class GuessesChannelsFirst(ImagecodecsAdapter):
    """Reads a (C, H, W) chunk with C = 1 or 3 as channels first and moves that axis last, both ways."""

    name = "wrong-guesses-channels-first"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(chunk, np.ndarray) and _channels_first(chunk.shape):
            chunk = np.ascontiguousarray(np.moveaxis(chunk, 0, -1))
        return super().encode(parsed, chunk)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        if _channels_first(tuple(chunk_shape)):
            c, h, w = chunk_shape
            return np.ascontiguousarray(np.moveaxis(super().decode(parsed, data, (h, w, c)), -1, 0))
        return super().decode(parsed, data, chunk_shape)


class RefusesUnusualIds(ImagecodecsAdapter):
    """Decodes only streams whose component IDs are 1, (1, 2, 3) or ('R', 'G', 'B'); T.81 allows any of 0-255."""

    name = "wrong-refuses-unusual-ids"
    roles = frozenset({"decode"})

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        ids = inspect(data, entropy=False).component_ids
        if ids not in COMMON_IDS:
            raise ValueError(f"unsupported component identifiers {ids}")
        return super().decode(parsed, data, chunk_shape)
