"""Adapters that attack the runner rather than the spec (used by tests/test_runner.py).

Giant messages, a KeyboardInterrupt of their own, slow calls for a Ctrl-C to land in, and
attributes that are not what the adapter contract says. Each parses with the shared core
and is only ever run on the configuration corpus, so no pixel library is needed. The
triggers pick single cases by their quality, an integer no other case uses: 1 is
``config.quality.min``, 100 ``config.quality.max``, 50 ``config.quality.mid``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from broken_adapters import LaxQuality

from zarr_jpeg_conformance.core.config import JpegConfig, parse_codec

#: Length of the giant messages: far beyond any cap, small enough to build quickly.
GIANT = 5_000_000


def _quality(codec: object) -> object:
    cfg = codec.get("configuration") if isinstance(codec, Mapping) else None
    return cfg.get("quality") if isinstance(cfg, Mapping) else None


class _Parsing:
    """Parses with the shared core; never asked for pixels in these tests."""

    name = "parsing"
    roles = frozenset({"encode", "decode"})

    def versions(self) -> dict[str, str]:
        return {"hostile": "1"}

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        return parse_codec(codec)

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        raise NotImplementedError("not used by these tests")

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError("not used by these tests")


class GiantMessages(_Parsing):
    """Rejects quality 1 (valid: a fail) and errors on quality 100, each with a 5 MB message."""

    name = "giant-messages"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        if _quality(codec) == 1:
            raise ValueError("START-OF-REJECTION " + "v" * GIANT + " END-OF-REJECTION")
        if _quality(codec) == 100:
            raise RuntimeError("START-OF-ERROR " + "r" * GIANT + " END-OF-ERROR")
        return super().parse(codec)


class RaisesKeyboardInterrupt(_Parsing):
    """Raises KeyboardInterrupt itself on quality 50, with nobody pressing Ctrl-C."""

    name = "raises-keyboard-interrupt"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        if _quality(codec) == 50:
            raise KeyboardInterrupt
        return super().parse(codec)


class Slow(_Parsing):
    """A fifth of a second per parse: time for a Ctrl-C to arrive inside the implementation."""

    name = "slow"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        time.sleep(0.2)
        return super().parse(codec)


class SwallowsCtrlC(_Parsing):
    """Slow, and turns any interruption into a rejection, as ``except BaseException`` code does."""

    name = "swallows-ctrl-c"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        try:
            time.sleep(0.2)
        except BaseException as exc:  # the bad habit under test
            raise ValueError("interrupted") from exc
        return super().parse(codec)


class DecodeOnly(_Parsing):
    """A reader: cases that need an encoder do not apply to it."""

    name = "decode-only"
    roles = frozenset({"decode"})


class GeneratorRoles(_Parsing):
    name = "generator-roles"
    roles = (r for r in ("encode", "decode"))  # type: ignore[assignment]


class NoneRoles(_Parsing):
    name = "none-roles"
    roles = None  # type: ignore[assignment]


class ListRoles(_Parsing):
    name = "list-roles"
    roles: ClassVar = ["encode", "decode"]


class IntRoles(_Parsing):
    name = "int-roles"
    roles = frozenset({1, 2})  # type: ignore[assignment]


class IntName(_Parsing):
    name = 5  # type: ignore[assignment]


class BlankName(_Parsing):
    name = "  "


class HugeName(_Parsing):
    name = "n" * 1000


class NewlineName(_Parsing):
    name = "two\nlines"


class VersionsNotCallable(_Parsing):
    name = "versions-attribute"
    versions: ClassVar = {"a": "1"}


class LaxWithoutLuma13(LaxQuality):
    """broken_adapters.LaxQuality that also refuses the optional luma factors 1x3 at parse (cleanly)."""

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        cfg = codec.get("configuration") if isinstance(codec, Mapping) else None
        if isinstance(cfg, Mapping) and isinstance(cfg.get("subsampling"), list) and cfg["subsampling"][:1] == [[1, 3]]:
            raise ValueError("luma sampling factors 1x3 are not supported (optional, JPEG-X-04)")
        return super().parse(codec)
