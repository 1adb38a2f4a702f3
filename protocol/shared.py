"""The memory region of shared framing: payloads that cross no pipe.

In shared framing (``docs/protocol.md``) the client makes one region of memory per harness
process, which the harness maps too; a request's payload is written there instead of on
the pipe, and the harness may write its reply's payload into room the request set aside.
The frames themselves (the JSON header lines) still go through the pipes, and say where
the bytes are. The region is a ``memfd`` (Linux): no file to leave behind, whatever
happens to either process; the harness opens it as ``/proc/self/fd/N``, the descriptor it
inherited.

:class:`Region` hands out space first in, first out, as the replies come back in the order
of the requests: a ring. A request that does not fit (a huge chunk, or too many in
flight) goes on the pipe as in binary framing, so the region's size bounds nothing.
"""

from __future__ import annotations

import mmap
import os
import sys
from collections import deque

import numpy as np

try:
    import fcntl
except ImportError:  # not POSIX: no region (available() says so)
    fcntl = None  # type: ignore[assignment]

#: Bytes of the region. Eight 256x256x3 chunks in flight with a decoded chunk's room each take 3 MiB; pages are
#: only backed once written, so room for larger chunks costs nothing until it is used.
REGION_SIZE = 32 << 20


#: Every space the client takes is a multiple of ALIGN bytes, so each starts at a multiple of it, as the region does:
#: a request's payload is aligned for any sample type, and rows of samples start where caches and vector units want them.
ALIGN = 64
#: A reply's room starts this far past a multiple of ALIGN: aligned for any sample type of the wire (complex128: 16
#: bytes), and not to 32. libjpeg-turbo's AVX2 color conversion (3.1.3 in imagecodecs) writes rows that start at a
#: multiple of 32 with non-temporal stores, past the caches, and the client reads the room right after the reply:
#: 256x256x3 decodes through harnesses.server with imagecodecs, pipelined, took 0.39 ms a call into rooms at
#: multiples of 32, 0.33 ms into rooms 16 past (batches of 500 calls in shared framing, two runs of each).
ROOM_SKEW = 16


def layout(size: int, room: int) -> tuple[int, int]:
    """Bytes to take for a payload of ``size`` and a reply room of ``room`` (a multiple of ALIGN), and where the room
    starts in them (where the payload ends, without one)."""
    room_at = -(-size // ALIGN) * ALIGN + ROOM_SKEW if room else size
    return -(-(room_at + room) // ALIGN) * ALIGN, room_at


def room_like(size: int) -> np.ndarray:
    """``size`` bytes of fresh memory (uint8) that lie as the client lays out a reply's room: a library whose speed
    depends on where its output lies is timed there by the benchmarks (``bench`` requests, bench_protocol)."""
    memory = np.empty(size + 2 * ALIGN, np.uint8)
    skip = (ROOM_SKEW - memory.ctypes.data) % ALIGN
    return memory[skip : skip + size]


def available() -> bool:
    """Whether this platform can make a region a harness process inherits, and seal its size (memfd, its seals and
    /proc: Linux)."""
    return (sys.platform == "linux" and hasattr(os, "memfd_create") and fcntl is not None and hasattr(fcntl, "F_ADD_SEALS")
            and os.path.isdir("/proc/self/fd"))


#: The region's size is sealed: a harness that shrank it (ftruncate of its /proc/self/fd/N) would turn every access of
#: the client's past the new end into a SIGBUS, which kills the client; growing it is sealed too, and so are the seals.
_SEALS = getattr(fcntl, "F_SEAL_SHRINK", 0) | getattr(fcntl, "F_SEAL_GROW", 0) | getattr(fcntl, "F_SEAL_SEAL", 0)


class Region:
    """A shared memory region and the FIFO allocation of its space to requests in flight."""

    def __init__(self, size: int | None = None) -> None:
        size = REGION_SIZE if size is None else size
        if size <= 0:
            raise ValueError(f"a region needs a positive size, got {size}")
        self.size = size
        # Not inherited by default: only the harness it is passed to (Popen's pass_fds) gets it.
        self.fd = os.memfd_create("zarr-jpeg-conformance-region", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(self.fd, size)
            # Before it is mapped or shared: a region whose size cannot be sealed is no region (OSError; the client then
            # offers binary framing). Its size is known from here on, whatever a harness does.
            fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, _SEALS)
            self._map = mmap.mmap(self.fd, size)
        except BaseException:
            os.close(self.fd)
            raise
        self.view = memoryview(self._map)
        #: (start, end) of each allocation still in use, oldest first.
        self._live: deque[tuple[int, int]] = deque()

    @property
    def path(self) -> str:
        """Where the harness process opens it: its own copy of the descriptor."""
        return f"/proc/self/fd/{self.fd}"

    def take(self, n: int) -> int | None:
        """The start of ``n`` free bytes (n > 0), after every allocation still in use; None if they do not fit now."""
        start = self._place(n) if 0 < n <= self.size else None
        if start is not None:
            self._live.append((start, start + n))
        return start

    def _place(self, n: int) -> int | None:
        if not self._live:
            return 0
        first, last = self._live[0][0], self._live[-1][1]
        if last > first:  # in use: [first, last); free: its two sides
            if last + n <= self.size:
                return last
            return 0 if n <= first else None
        return last if last + n <= first else None  # wrapped: in use [first, size) and [0, last); free: [last, first)

    def release(self, start: int) -> None:
        """Give back the oldest allocation, which must start at ``start`` (replies come in the order of requests)."""
        if not self._live or self._live[0][0] != start:
            raise ValueError(f"the oldest allocation in use starts at {self._live[0][0] if self._live else None}, not {start}")
        self._live.popleft()

    def reset(self) -> None:
        """Nothing is in use any more (the process the allocations were made for has ended)."""
        self._live.clear()

    @property
    def in_use(self) -> int:
        return len(self._live)

    def close(self) -> None:
        try:
            self.view.release()
            self._map.close()
        except BufferError:  # a view of it is still held somewhere: the mapping goes when that does
            pass
        finally:
            os.close(self.fd)


__all__ = ["ALIGN", "REGION_SIZE", "ROOM_SKEW", "Region", "available", "layout", "room_like"]
