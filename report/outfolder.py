"""An output folder (``--out DIR``) a run claims, writes atomically and never cleans beyond its own files.

The folder may hold the user's own files, or be the ``--out`` of a run still going:
:func:`claim` creates it and takes a lock for the run's duration (a second run into the same
folder is refused at once, rather than each deleting what the other writes), and
:func:`write_text` replaces a file whole (a temporary file renamed over it), so a reader
sees the old version or the new one, never half of one. What cannot be written (a
read-only file system, a file where the folder should be) is an :class:`OutFolderError`,
one line for the user, a usage error.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: no lock (two runs into one folder are then the user's to avoid)
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK", "OutFolderError", "claim", "write_text"]

#: The lock file a run holds in its output folder.
LOCK = ".zarr-jpeg-conformance.lock"


class OutFolderError(Exception):
    """The output folder cannot be used: it cannot be created or written, or another run holds it."""


@contextlib.contextmanager
def claim(folder: Path, option: str = "--out") -> Iterator[Path]:
    """Create ``folder`` if need be and hold its lock while the block runs."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutFolderError(f"{option} {folder}: a file is there, not a folder") from None
    except OSError as exc:
        raise OutFolderError(f"{option} {folder}: cannot create it: {exc.strerror or exc}") from None
    try:
        fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise OutFolderError(f"{option} {folder}: cannot write there: {exc.strerror or exc}") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise OutFolderError(f"{option} {folder}: another run is writing there (it holds {LOCK}); wait for it to "
                                     "end, or give another folder") from None
        yield folder
    finally:
        os.close(fd)  # releases the lock


def write_text(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: a temporary file beside it, renamed over it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
