"""The peak resident memory of a harness process during one call, read from Linux's /proc.

Inside the suite's own process tracemalloc sees the allocations of Python and numpy; an
implementation in a harness process (``exec:``, ``--isolate``) is measured from outside, in
any language: the kernel's high-water mark of its resident set (VmHWM), reset before the
call (``clear_refs`` 5) and read after it, less the resident set before. Pages a library
only reserves are not counted, pages it fills are, which is what a forged header costs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _status_kib(pid: int, field: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


class Peak:
    """Bytes the process's resident set grew by at its peak during the call; None where unknown."""

    bytes: int | None = None


@contextmanager
def resident_peak(pid: int | None) -> Iterator[Peak]:
    """Measure ``pid``'s resident-set peak over the block (None on other systems, or if the process changed)."""
    peak = Peak()
    before = None
    if pid is not None:
        try:
            Path(f"/proc/{pid}/clear_refs").write_text("5")
            before = _status_kib(pid, "VmRSS")
        except OSError:
            before = None
    yield peak
    if pid is not None and before is not None:
        high = _status_kib(pid, "VmHWM")
        if high is not None:
            peak.bytes = max(0, high - before) * 1024
