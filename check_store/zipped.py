"""Reading a ``.zip`` store: entries by byte range, each read within its cap.

zarr's ``ZipStore`` reads a whole entry to return part of it and seeks to the end of a
compressed entry to learn its size, so reading a chunk's last 64 bytes inflated all of it,
and ``--decode`` of a 1 MiB entry that inflates to 2 GiB held the 2 GiB. Here an entry's size
is the zip directory's, an uncompressed (stored) entry is read where its bytes lie in the
file (``os.pread``, no inflating, any thread), and a compressed one is inflated only as far
as the bytes asked for, and only when that is within the read's cap.
"""

from __future__ import annotations

import os
import threading
import weakref
import zipfile
import zlib
from pathlib import Path

from zarr.abc.store import ByteRequest, RangeByteRequest, SuffixByteRequest

__all__ = ["ZipError", "ZipReader"]

_LOCAL_HEADER = b"PK\x03\x04"


class ZipError(OSError):
    """An entry that cannot be read as asked: its message says why."""


class ZipReader:
    """The reads check-store makes of a zip store: byte ranges of entries, and the names it holds."""

    supports_listing = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip = zipfile.ZipFile(path)
        #: The zip's directory: what the store holds, by name.
        self.entries = {info.filename: info for info in self.zip.infolist() if not info.is_dir()}
        self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        self.lock = threading.Lock()  # one ZipFile: its compressed entries are read one at a time
        self._starts: dict[str, int] = {}
        weakref.finalize(self, _close, self.zip, self.fd)

    def read(self, key: str, request: ByteRequest, limit: int) -> bytes | None:
        """The bytes of ``request`` of the entry ``key`` (None: no such entry); ZipError when it cannot be read."""
        info = self.entries.get(key)
        if info is None:
            return None
        size = info.file_size
        if isinstance(request, RangeByteRequest):
            start, stop = min(request.start, size), min(request.end, size)
        elif isinstance(request, SuffixByteRequest):
            start, stop = max(0, size - request.suffix), size
        else:
            raise TypeError(f"unexpected byte range {request!r}")
        if stop <= start:
            return b""
        if info.flag_bits & 0x1:
            raise ZipError(f"{key}: an encrypted zip entry: not read")
        if info.compress_type == zipfile.ZIP_STORED:
            data = os.pread(self.fd, stop - start, self._start(info) + start)
        else:
            if stop > limit:
                raise ZipError(f"{key}: a compressed zip entry of {size:,} bytes: reading its bytes {start:,}..{stop:,} means "
                               f"inflating it that far, past the cap of this read ({limit:,} bytes): not read")
            try:
                with self.lock, self.zip.open(info) as f:
                    f.seek(start)  # inflates up to start, a piece at a time
                    data = f.read(stop - start)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
                raise ZipError(f"{key}: cannot inflate this zip entry: {type(exc).__name__}: {exc}") from None
        if start == 0 and stop == size and len(data) == size and zlib.crc32(data) != info.CRC:
            raise ZipError(f"{key}: its bytes do not match the zip directory's CRC-32: a corrupt zip entry")
        return data

    def _start(self, info: zipfile.ZipInfo) -> int:
        """Where a stored entry's bytes begin in the file: after its local header (whose name and extra field
        may differ in length from the directory's)."""
        start = self._starts.get(info.filename)
        if start is None:
            header = os.pread(self.fd, 30, info.header_offset)
            if len(header) < 30 or not header.startswith(_LOCAL_HEADER):
                raise ZipError(f"{info.filename}: no local file header where the zip directory puts it: a corrupt zip")
            start = info.header_offset + 30 + int.from_bytes(header[26:28], "little") + int.from_bytes(header[28:30], "little")
            self._starts[info.filename] = start
        return start

    def names(self, prefix: str) -> list[str]:
        """Every entry whose name starts with ``prefix``."""
        return [name for name in self.entries if name.startswith(prefix)]


def _close(archive: zipfile.ZipFile, fd: int) -> None:
    archive.close()
    os.close(fd)
