"""Reading a local folder store: keys confined to the folder, symbolic links looked at, only regular files read.

A key is opened without following a symbolic link (``O_NOFOLLOW``); a link that stays inside
the store (compared path component by path component, after resolving it) is then followed,
one that leaves it is refused. Each folder on a key's way is looked at once per run (one
``scandir`` of the folder it is in). Only regular files are read: a named pipe, a device or a
socket where a chunk should be is refused before a byte of it is read (a device may be
endless, or change what it is by being read), and it is opened without waiting (a named
pipe's open would wait for a writer). Reads are of byte ranges only, each cut to the file's
size, so what a read costs is what was asked for.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from zarr.abc.store import ByteRequest, RangeByteRequest, SuffixByteRequest

from .keys import suspect

__all__ = ["FolderError", "forget", "read_ends", "read_local"]

#: A range read longer than this is first cut to the file's size.
_LARGE_READ = 1 << 20


class FolderError(OSError):
    """A key of a folder store that is not read (it leaves the store, or is no regular file): the message says why."""


def forget() -> None:
    """Forget what was learnt of folders: a store opened again may have changed (a folder may be a link out by now)."""
    _FOLDERS.clear()
    _ODD.clear()


def read_local(root: Path, requests: Sequence[tuple[str, ByteRequest]]) -> list[bytes | None]:
    """LocalStore's reads, with one open per key for the ranges asked of it in a row (a header and a tail)."""
    out: list[bytes | None] = []
    i = 0
    while i < len(requests):
        key = requests[i][0]
        j = i
        while j < len(requests) and requests[j][0] == key:
            j += 1
        try:
            with _open_inside(str(root), key) as f:
                for _key, r in requests[i:j]:
                    out.append(_read_open(f, r))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            out += [None] * (j - i)
        i = j
    return out


_NOT_A_FILE = "not a regular file (a named pipe, a device or a socket): not read"


def _open_inside(root: str, key: str) -> Any:
    """The file of ``key``, opened for reading; FolderError when a symbolic link takes it out of the store, or when
    it is no regular file (never opened: opening some devices acts).

    Its folder is resolved once per folder and listed once (what its entries are); the file
    itself is opened without following a link, and only a link that stays inside the store, to
    a regular file, is then followed.
    """
    folder, _, name = key.rpartition("/")
    if not _inside(root, folder):
        raise FolderError(f"key {key[:200]}: its folder is a symbolic link out of the store: not read")
    path = os.path.join(root, key)
    if name in _odd(root, folder) and not os.path.islink(path):
        raise FolderError(f"key {key[:200]}: {_NOT_A_FILE}")
    try:
        f = open(path, "rb", opener=_no_link)  # noqa: SIM115 - returned to the caller's with-block
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a device without a driver) made since its folder was listed
            raise FolderError(f"key {key[:200]}: {_NOT_A_FILE}") from None
        if exc.errno != errno.ELOOP:
            raise
        if not _resolves_inside(root, key):
            raise FolderError(f"key {key[:200]}: a symbolic link out of the store: not read") from None
        if not stat.S_ISREG(os.stat(path).st_mode):  # (a dangling link: FileNotFoundError, no such key)
            raise FolderError(f"key {key[:200]}: a symbolic link to what is {_NOT_A_FILE}") from None
        f = open(path, "rb", opener=_no_wait)  # noqa: SIM115 - returned to the caller's with-block
    mode = os.fstat(f.fileno()).st_mode
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        f.close()
        raise FolderError(f"key {key[:200]}: {_NOT_A_FILE}")
    return f


def _no_link(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))


def _no_wait(path: str, flags: int) -> int:
    """Open without waiting: a FIFO's open for reading would wait for a writer."""
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))


def _resolves_inside(root: str, path: str) -> bool:
    """Whether ``path`` (relative to the store's folder ``root``) resolves to a place inside it."""
    base = os.path.realpath(root)
    real = os.path.realpath(os.path.join(root, path))
    # Path components, not a string's prefix: data.zarr-private is no folder of data.zarr.
    return os.path.commonpath([base, real]) == base


#: (store folder, folder of keys) -> whether it stays inside the store, per run (a store opened afresh clears it).
_FOLDERS: dict[tuple[str, str], bool] = {}
#: Folders remembered, at most: a chunk's folder is looked up by the chunks around it, in the same batch, so a
#: store of a folder per chunk (100 000 of them in a 200 000-chunk store) need not hold them all in memory.
_FOLDERS_MAX = 1 << 12


def _inside(root: str, folder: str) -> bool:
    """Whether a folder of keys stays inside the store: each folder on the way is looked at once (one
    ``lstat``), and resolved only when it is a symbolic link."""
    known = _FOLDERS.get((root, folder))
    if known is not None:
        return known
    if len(_FOLDERS) > _FOLDERS_MAX:
        _FOLDERS.clear()
    todo = [folder]
    parent = folder.rpartition("/")[0]
    while parent and (root, parent) not in _FOLDERS:
        todo.append(parent)
        parent = parent.rpartition("/")[0]
    ok = _FOLDERS.get((root, parent), True) if parent else True
    for path in reversed(todo):
        if ok and path and _is_link(root, path):
            ok = _resolves_inside(root, path)
        _FOLDERS[(root, path)] = ok
    return ok


#: Keys of one folder read in a row from which the folder is listed once rather than each file looked at once open.
_LISTED = 16
#: (store folder, folder) -> the names in it that are no regular file and no folder (symbolic links, named pipes,
#: devices, sockets), per run (cleared with _FOLDERS).
_ODD: dict[tuple[str, str], frozenset[str]] = {}


def _odd(root: str, folder: str) -> frozenset[str]:
    """The names in ``folder`` (relative to the store's folder ``root``) that are no regular file and no folder.

    The folder is listed once (``scandir``, whose entries say what they are without a ``stat``
    each), rather than one ``lstat`` per key or folder: a grid of one folder per chunk (the
    colour array of a zarr v3 store with a ``/`` separator) has as many folders as chunks.
    A folder that cannot be listed has none: opening its keys says what is wrong.
    """
    odd = _ODD.get((root, folder))
    if odd is None:
        try:
            with os.scandir(os.path.join(root, folder) if folder else root) as entries:
                odd = frozenset(e.name for e in entries if not (e.is_file(follow_symlinks=False) or e.is_dir(follow_symlinks=False)))
        except OSError:
            odd = frozenset()
        if len(_ODD) > _FOLDERS_MAX:
            _ODD.clear()
        _ODD[(root, folder)] = odd
    return odd


def _is_link(root: str, path: str) -> bool:
    """Whether ``path`` (relative to the store's folder ``root``), a folder on a key's way, may be a symbolic link
    (it is no plain folder: it is resolved)."""
    parent, _, name = path.rpartition("/")
    return name in _odd(root, parent)


#: O_NONBLOCK: opening a FIFO (a named pipe) for reading waits for a writer, forever in a hostile store. What its
#: folder's listing shows is no regular file is not opened at all; with O_NONBLOCK, one made since is opened
#: without waiting (a regular file's reads are not changed by it), and refused when its first read comes back short.
_NO_FOLLOW = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)


def read_ends(root: str, keys: Sequence[str], head: int, tail: int) -> list[tuple[bytes, bytes] | Literal[False] | None]:
    """The first ``head`` bytes and the last ``tail`` bytes (``head >= tail``) of each key of ``keys`` in
    the folder ``root`` of a ``LocalStore``: None for a key that does not exist, False for a key
    left to :func:`read_ranges`.

    What :func:`read_ranges` gives for ``RangeByteRequest(0, head)`` and
    ``SuffixByteRequest(tail)``, by an open and two plain reads of each file, without a file
    object, in one loop: a header scan's per-chunk cost beyond the read. A file shorter than
    ``head`` is read whole and its tail cut from it. A key that is not a plain case (one that
    could leave the store, a folder or file that is a symbolic link, a failed read) is False,
    for ``read_ranges`` to read or refuse.
    """
    out: list[tuple[bytes, bytes] | Literal[False] | None] = []
    add = out.append
    prefix = f"{root}{os.sep}"
    read, seek, close, fstat, isreg = os.read, os.lseek, os.close, os.fstat, stat.S_ISREG
    known = None  # the folder of the last key, when it stays inside the store
    # What in that folder is no regular file (a link, a pipe, a device, a socket: never opened here, left to
    # read_ranges), from one listing of it when the batch reads many of its keys; else None, and each file is
    # looked at once open (fstat), before it is read: a listing costs more than ten fstats, and a grid of a
    # folder per chunk would list each chunk's.
    odd: frozenset[str] | None = None
    for at, key in enumerate(keys):
        if suspect(key):
            add(False)
            continue
        folder, _, name = key.rpartition("/")
        if folder != known:
            if not _inside(root, folder):
                add(False)
                continue
            known = folder
            ahead = keys[at + _LISTED] if at + _LISTED < len(keys) else ""
            odd = _odd(root, folder) if ahead.rpartition("/")[0] == folder else None
        if odd is not None and name in odd:
            add(False)
            continue
        try:
            fd = os.open(prefix + key, _NO_FOLLOW)
        except (FileNotFoundError, NotADirectoryError):
            add(None)
            continue
        except OSError:
            add(False)
            continue
        try:
            if odd is None:
                mode = fstat(fd).st_mode
                if not isreg(mode):
                    add(None if stat.S_ISDIR(mode) else False)  # a folder: no such key; else read_ranges says what
                    continue
            first = read(fd, head)
            if len(first) == head:
                seek(fd, -tail, os.SEEK_END)
                add((first, read(fd, tail)))
            elif not stat.S_ISREG(os.fstat(fd).st_mode):
                add(False)  # what changed into no regular file since its folder was listed: read_ranges says what
            else:
                add(_short(fd, first, head, tail))
        except IsADirectoryError:
            add(None)
        except OSError:
            add(False)
        finally:
            close(fd)
    return out


def _short(fd: int, first: bytes, head: int, tail: int) -> tuple[bytes, bytes]:
    """The ends of a file whose first read gave less than ``head`` bytes: read on to the end or to ``head`` bytes."""
    parts = [first]
    while (n := sum(map(len, parts))) < head and (more := os.read(fd, head - n)):
        parts.append(more)
    whole = b"".join(parts)
    if len(whole) == head:  # a read cut short, not the end of the file
        os.lseek(fd, -tail, os.SEEK_END)
        return whole, os.read(fd, tail)
    return whole, whole[-tail:] if tail else b""


def _read_open(f: Any, request: ByteRequest) -> bytes:
    if isinstance(request, RangeByteRequest):
        end = request.end
        if end - request.start > _LARGE_READ:
            # Never more than the file holds: read(n) allocates n bytes first, and a corrupt
            # shard index (or a cap of a whole read) can ask for far more than a file holds.
            end = min(end, os.fstat(f.fileno()).st_size)
        f.seek(request.start)
        return bytes(f.read(max(0, end - request.start)))
    if isinstance(request, SuffixByteRequest):
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - request.suffix))
        return bytes(f.read())
    raise TypeError(f"unexpected byte range {request!r}")
