"""Deliberately broken adapters: they prove that --isolate and --known-failures do their job.

Each behaves like a correct implementation (parsing with the shared core, pixels from the
first built-in backend that loads) except on one trigger, where it kills, hangs or bloats
the process it runs in, or accepts what it must reject. Run them only through
``--isolate`` or ``exec:``: in the test session's own process they would take it down.
The triggers pick single cases of the configuration corpus by their quality, an integer
that no other case uses: 1 is ``config.quality.min``, 100 ``config.quality.max``, 50
``config.quality.mid``.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from zarr_jpeg_conformance.core.config import JpegConfig, parse_codec
from zarr_jpeg_conformance.core.errors import ConfigError

#: Where the memory hog stops even if no limit stops it first: big enough to break any
#: limit the tests set, small enough not to hurt a 24 GiB machine if the limit is missing.
HOG_CAP = 3 << 30
HOG_STEP = 64 << 20
#: A chunk of this shape makes ``encode`` crash (for the restart-and-replay test).
CRASH_SHAPE = (13, 13)


def _quality(codec: object) -> object:
    cfg = codec.get("configuration") if isinstance(codec, Mapping) else None
    q = cfg.get("quality") if isinstance(cfg, Mapping) else None
    return q if type(q) is int else None


def segfault() -> None:
    """Read address 0: SIGSEGV, as a native library with a bad pointer would."""
    ctypes.string_at(0)


def spin() -> None:
    """Never return, and never release the GIL to anyone who could interrupt us."""
    n = 0
    while True:
        n += 1


def hog() -> list[bytearray]:
    """Allocate (and touch) memory until something stops us, up to HOG_CAP."""
    held = []
    for _ in range(HOG_CAP // HOG_STEP):
        held.append(bytearray(HOG_STEP))
    return held


class _Broken:
    """A correct adapter but for ``_trigger``: real parsing, real pixels."""

    name = "broken"
    roles = frozenset({"encode", "decode"})
    quality_trigger: int | None = None
    _backend: Any = None

    def _trigger(self) -> None:
        raise NotImplementedError

    def _real(self) -> Any:
        if self._backend is None:
            from zarr_jpeg_conformance.adapters import available_builtins

            loaded = [a for a in available_builtins().values() if not isinstance(a, Exception)]
            if not loaded:
                raise RuntimeError("no built-in backend is installed to provide pixels")
            type(self)._backend = loaded[0]
        return self._backend

    def versions(self) -> dict[str, str]:
        return {"python": sys.version.split()[0], "behaviour": type(self).__doc__.splitlines()[0]}

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        if self.quality_trigger is not None and _quality(codec) == self.quality_trigger:
            self._trigger()
        return parse_codec(codec)

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(chunk, np.ndarray) and chunk.shape[:2] == CRASH_SHAPE:
            self._trigger()
        real = self._real()
        return real.encode(real.parse(parsed.to_codec()) if isinstance(parsed, JpegConfig) else parsed, chunk)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        real = self._real()
        return real.decode(real.parse(parsed.to_codec()) if isinstance(parsed, JpegConfig) else parsed, data, chunk_shape)


class Segfaulting(_Broken):
    """Segfaults when parsing quality 1 and when encoding a 13x13 chunk."""

    name = "segfaulting"
    quality_trigger = 1

    def _trigger(self) -> None:
        segfault()


class Hanging(_Broken):
    """Loops forever when parsing quality 100 and when encoding a 13x13 chunk."""

    name = "hanging"
    quality_trigger = 100

    def _trigger(self) -> None:
        spin()


class Hungry(_Broken):
    """Allocates without bound when parsing quality 50 and when encoding a 13x13 chunk."""

    name = "hungry"
    quality_trigger = 50

    def _trigger(self) -> None:
        hog()


class Chatty(_Broken):
    """Writes to stdout on every call, from Python and below it, as careless libraries do."""

    name = "chatty"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        print("chatty: parsing", codec)
        import os

        os.write(1, b"chatty: raw write to fd 1\n")
        return super().parse(codec)


class LaxQuality(_Broken):
    """Accepts any integer quality, 0 and 101 included (breaks JPEG-Q-01); otherwise correct."""

    name = "lax-quality"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        try:
            return parse_codec(codec)
        except ConfigError as exc:
            if exc.requirement != "JPEG-Q-01" or not isinstance(_quality(codec), int):
                raise
            fixed = {**codec, "configuration": {**codec["configuration"], "quality": 50}}
            return parse_codec(fixed)


class Forking(_Broken):
    """Forks a helper process when it starts, as adapters with worker pools do; hangs parsing quality 100."""

    name = "forking"
    quality_trigger = 100

    def __init__(self) -> None:
        import os
        import time

        self.helper = os.fork()
        if self.helper == 0:  # the helper: lingers for ten minutes unless something ends it
            time.sleep(600)
            os._exit(0)

    def _trigger(self) -> None:
        spin()

    def versions(self) -> dict[str, str]:
        return {**super().versions(), "helper_pid": str(self.helper)}


class Daemonizing(_Broken):
    """Starts a daemon when it starts, as a service wrapper may: forked twice, in a session of its own, its descriptors
    on /dev/null (it holds no pipe of the client's); segfaults parsing quality 1."""

    name = "daemonizing"
    quality_trigger = 1

    def __init__(self) -> None:
        import os
        import time

        read, write = os.pipe()
        child = os.fork()
        if child == 0:
            os.setsid()
            daemon = os.fork()
            if daemon:
                os.write(write, str(daemon).encode())
                os._exit(0)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.closerange(3, 4096)
            time.sleep(600)  # lingers for ten minutes unless something ends it
            os._exit(0)
        os.close(write)
        os.waitpid(child, 0)
        self.daemon = int(os.read(read, 32))
        os.close(read)

    def _trigger(self) -> None:
        segfault()

    def versions(self) -> dict[str, str]:
        return {**super().versions(), "daemon_pid": str(self.daemon)}


#: Decoding to a chunk of this shape makes ``Bloated`` return it without looking at the stream.
BLOAT_SHAPE = (2048, 2048, 3)


class Bloated(_Broken):
    """Returns a 12 MiB chunk for any stream when asked for BLOAT_SHAPE (a reply over a small cap)."""

    name = "bloated"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        if tuple(chunk_shape) == BLOAT_SHAPE:
            return np.full(BLOAT_SHAPE, 7, np.uint8)
        return super().decode(parsed, data, chunk_shape)


class Failing(_Broken):
    """Raises RuntimeError (an ``error`` reply: a bug, not a crash) when encoding a 13x13 chunk."""

    name = "failing"

    def _trigger(self) -> None:
        raise RuntimeError("failing: a bug in the implementation")


class Twice(_Broken):
    """Correct; ``fake_harnesses twice`` serves it and answers two of its parses twice (the harness's fault)."""

    name = "twice"


class ReturnsMemoryview(_Broken):
    """Decodes right, but returns the samples as a memoryview, not the array the Adapter contract asks for."""

    name = "returns-memoryview"

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        return memoryview(super().decode(parsed, data, chunk_shape))  # type: ignore[return-value]


class EncodesToArray(_Broken):
    """Encodes right, but returns the stream as a numpy array of its bytes, not bytes."""

    name = "encodes-to-array"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        return np.frombuffer(super().encode(parsed, chunk), np.uint8)  # type: ignore[return-value]
