"""Opening a store from its URL and reading byte ranges of its keys, through zarr's store classes.

A local folder is a ``LocalStore``, a ``.zip`` file a ``ZipStore``, anything with a scheme
(``http://``, ``s3://``, ``gs://`` ...) zarr's ``FsspecStore``. Tasks receive a
:class:`StoreSpec`, never a store or bytes, and open the store themselves (once per process),
so they run the same on local threads, in processes and on a dask cluster.

Reads go out a batch at a time: ``get_partial_values`` lets an fsspec store fetch a task's
ranges concurrently, which is what hides a remote store's per-request latency. A
``LocalStore`` is read in place, synchronously and with one open per key (a chunk's header and
its tail), since zarr's thread hop and second open per read cost more than the read; a header
scan of one reads its chunks' ends with plain ``os`` calls (:func:`read_ends`), and its folders
are each looked at once, from one listing of the folder they are in.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import stat
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from zarr.abc.store import ByteRequest, RangeByteRequest, Store, SuffixByteRequest
from zarr.core.buffer import default_buffer_prototype
from zarr.core.sync import sync
from zarr.storage import FsspecStore, LocalStore, WrapperStore, ZipStore

__all__ = ["DEFAULT_TIMEOUT", "StoreError", "StoreSpec", "leaves_store", "list_children", "list_keys", "open_store",
           "read_ends", "read_key", "read_ranges"]

#: A range read longer than this is first cut to the file's size.
_LARGE_READ = 1 << 20
#: Seconds a remote store has to connect and to send each piece of an answer (``--timeout``).
DEFAULT_TIMEOUT = 60.0


class StoreError(Exception):
    """The store cannot be opened or read: bad input, reported with exit code 2."""


def leaves_store(path: str) -> str | None:
    """Why a key or node path would leave the store (or name no place in it); None when it stays inside.

    Keys are joined to a folder or a URL as they are: ``..``, an absolute path or a drive
    would read what is not the store's, so they are refused before any read.
    """
    if path.startswith("/") or "\\" in path or "\x00" in path:
        return f"{path[:200]!r} is an absolute path, or holds a backslash or NUL"
    parts = path.split("/")
    bad = next((p for p in parts if p in ("", ".", "..")), None)
    if bad is not None:
        return f"{path[:200]!r} has a {bad!r} segment" if bad else f"{path[:200]!r} has an empty segment"
    if ":" in parts[0]:
        return f"{path[:200]!r} starts with a scheme or a drive"
    return None


@dataclass(frozen=True)
class StoreSpec:
    """Everything a task needs to open a store: plain, picklable values."""

    url: str
    storage_options: Mapping[str, Any] = field(default_factory=dict)
    #: Simulated latency per read in seconds, with at most ``concurrency`` reads in flight per
    #: process: for benchmarks that stand in for a remote store. 0 for real use.
    latency: float = 0.0
    concurrency: int = 32
    #: Distinguishes runs, so that a process that checked a store before opens it afresh.
    token: str = ""
    #: Seconds a remote store has to connect and to send each piece of an answer.
    timeout: float = DEFAULT_TIMEOUT

    @property
    def kind(self) -> str:
        """``local``, ``zip`` or the URL scheme."""
        scheme = urlparse(self.url).scheme
        if scheme in ("", "file") or _is_windows_drive(scheme):
            return "zip" if self.url.lower().endswith(".zip") else "local"
        return scheme


def _is_windows_drive(scheme: str) -> bool:
    return len(scheme) == 1


def _local_path(url: str) -> Path:
    parsed = urlparse(url)
    return Path(parsed.path if parsed.scheme == "file" else url)


def open_store(spec: StoreSpec) -> Store:
    """The store ``spec`` names, opened read-only (one per process and run)."""
    return _open(json.dumps([spec.url, dict(spec.storage_options), spec.latency, spec.concurrency, spec.token, spec.timeout],
                            sort_keys=True, default=str))


def _with_timeout(kind: str, options: dict[str, Any], timeout: float) -> dict[str, Any]:
    """fsspec options with a bound on every network wait (aiohttp's own default is 300 s per request)."""
    if kind not in ("http", "https") or "timeout" in (options.get("client_kwargs") or {}):
        return options
    import aiohttp

    client = dict(options.get("client_kwargs") or {})
    client["timeout"] = aiohttp.ClientTimeout(total=None, connect=timeout, sock_connect=timeout, sock_read=timeout)
    return {**options, "client_kwargs": client}


@lru_cache(maxsize=8)
def _open(key: str) -> Store:
    url, options, latency, concurrency, _token, timeout = json.loads(key)
    spec = StoreSpec(url, options, latency, concurrency)
    store: Store
    if spec.kind == "local":
        path = _local_path(url)
        if not path.is_dir():
            raise StoreError(f"{url}: no such folder" if not path.exists() else f"{url}: not a folder (a Zarr store is a folder, "
                             "a .zip file or a URL)")
        store = LocalStore(path, read_only=True)
        _FOLDERS.clear()
        _LINKS.clear()
    elif spec.kind == "zip":
        path = _local_path(url)
        if not path.is_file():
            raise StoreError(f"{url}: no such zip file")
        try:
            store = ZipStore(path, mode="r")
            sync(store._open())
        except Exception as exc:
            raise StoreError(f"{url}: cannot open as a zip store: {type(exc).__name__}: {exc}") from exc
    else:
        try:
            store = FsspecStore.from_url(url, storage_options=_with_timeout(spec.kind, dict(options), timeout) or None,
                                         read_only=True)
        except (ImportError, ValueError, OSError) as exc:
            raise StoreError(f"{url}: cannot open through fsspec: {type(exc).__name__}: {exc}") from exc
    if latency:
        store = SlowStore(store, latency=latency, concurrency=concurrency)
    return store


def read_ranges(store: Store, requests: Sequence[tuple[str, ByteRequest | None]]) -> list[bytes | None]:
    """The bytes of each (key, byte range); None for a key that does not exist.

    A server that ignores range requests answers with the whole value; the range is cut
    from it here, so callers always get what they asked for. Errors other than a missing key
    (a dropped connection, a refused request) raise StoreError.
    """
    if not requests:
        return []
    for key, _range in requests:
        if _suspect(key):
            why = leaves_store(key)
            if why is not None:
                raise StoreError(f"key {why}: it would leave the store, and is not read")
    try:
        if isinstance(store, LocalStore):
            return _read_local(store.root, requests)
        else:
            got = sync(store.get_partial_values(default_buffer_prototype(), list(requests)))
    except StoreError:
        raise
    except Exception as exc:
        more = f" and {len(requests) - 1} more keys" if len(requests) > 1 else ""
        raise StoreError(f"reading {requests[0][0]}{more} failed: {_failure(exc)}") from exc
    return [None if b is None else _cut(b.to_bytes(), r) for b, (_key, r) in zip(got, requests, strict=True)]


def _suspect(key: str) -> bool:
    """Whether a key could leave the store (a cheap look at every key read; :func:`leaves_store` decides)."""
    return (key[:1] in ("/", ".", "") or "/." in key or "//" in key or "\\" in key or "\x00" in key or ":" in key)


def _failure(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):  # asyncio's and aiohttp's timeouts are TimeoutErrors
        return f"{type(exc).__name__}: no answer in time (--timeout SECONDS bounds each wait of a remote store)"
    return f"{type(exc).__name__}: {str(exc)[:500]}"


def _read_local(root: Path, requests: Sequence[tuple[str, ByteRequest | None]]) -> list[bytes | None]:
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


def _open_inside(root: str, key: str) -> Any:
    """The file of ``key``, opened for reading; StoreError when a symbolic link takes it out of the store.

    Its folder is resolved once per folder; the file itself is opened without following a
    link, and only a link that stays inside the store is then followed.
    """
    folder = key.rpartition("/")[0]
    if not _inside(root, folder):
        raise StoreError(f"key {key[:200]}: its folder is a symbolic link out of the store: not read")
    path = os.path.join(root, key)
    try:
        f = open(path, "rb", opener=_no_link)  # noqa: SIM115 - returned to the caller's with-block
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        if not _resolves_inside(root, key):
            raise StoreError(f"key {key[:200]}: a symbolic link out of the store: not read") from None
        f = open(path, "rb", opener=_no_wait)  # noqa: SIM115 - returned to the caller's with-block
    mode = os.fstat(f.fileno()).st_mode
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        f.close()
        raise StoreError(f"key {key[:200]}: not a regular file (a named pipe, a device or a socket): not read")
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
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


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


#: (store folder, folder of folders) -> the names in it that are symbolic links, per run (cleared with _FOLDERS).
_LINKS: dict[tuple[str, str], frozenset[str]] = {}


def _is_link(root: str, path: str) -> bool:
    """Whether ``path`` (relative to the store's folder ``root``) is a symbolic link.

    The folder it is in is listed once (``scandir``, whose entries say what they are without a
    ``stat`` each), rather than one ``lstat`` per folder: a grid of one folder per chunk (the
    colour array of a zarr v3 store with a ``/`` separator) has as many folders as chunks.
    """
    parent, _, name = path.rpartition("/")
    links = _LINKS.get((root, parent))
    if links is None:
        try:
            with os.scandir(os.path.join(root, parent)) as entries:
                links = frozenset(e.name for e in entries if e.is_symlink())
        except OSError:
            return os.path.islink(os.path.join(root, path))
        if len(_LINKS) > _FOLDERS_MAX:
            _LINKS.clear()
        _LINKS[(root, parent)] = links
    return name in links


#: O_NONBLOCK: opening a FIFO (a named pipe) for reading waits for a writer, forever in a hostile store; with it
#: the open returns at once (a regular file's reads are not changed by it), and the file is then refused as
#: not a regular file (its first read comes back short, which is when that is looked at).
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
    read, seek, close = os.read, os.lseek, os.close
    known = None  # the folder of the last key, when it stays inside the store
    for key in keys:
        if _suspect(key):
            add(False)
            continue
        folder = key.rpartition("/")[0]
        if folder != known:
            if not _inside(root, folder):
                add(False)
                continue
            known = folder
        try:
            fd = os.open(prefix + key, _NO_FOLLOW)
        except (FileNotFoundError, NotADirectoryError):
            add(None)
            continue
        except OSError:
            add(False)
            continue
        try:
            first = read(fd, head)
            if len(first) == head:
                seek(fd, -tail, os.SEEK_END)
                add((first, read(fd, tail)))
            elif not stat.S_ISREG(os.fstat(fd).st_mode):
                add(False)  # a FIFO, a device, a socket: read_ranges refuses it with the reason
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


def _read_open(f: Any, request: ByteRequest | None) -> bytes:
    if request is None:
        return bytes(f.read())
    if isinstance(request, RangeByteRequest):
        end = request.end
        if end - request.start > _LARGE_READ:
            # Never more than the file holds: read(n) allocates n bytes first, and a corrupt
            # shard index can ask for exabytes.
            end = min(end, os.fstat(f.fileno()).st_size)
        f.seek(request.start)
        return bytes(f.read(max(0, end - request.start)))
    if isinstance(request, SuffixByteRequest):
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - request.suffix))
        return bytes(f.read())
    raise TypeError(f"unexpected byte range {request!r}")


def _cut(value: bytes, request: ByteRequest | None) -> bytes:
    if isinstance(request, RangeByteRequest) and len(value) > request.end - request.start:
        return value[request.start : request.end]
    if isinstance(request, SuffixByteRequest) and len(value) > request.suffix:
        return value[-request.suffix :]
    return value


def read_key(store: Store, key: str) -> bytes | None:
    """The whole value of ``key``, or None if it does not exist."""
    (value,) = read_ranges(store, [(key, None)])
    return value


def _listing(store: Store, listing: Callable[[], AsyncIterator[str]], what: str) -> list[str] | None:
    """What an async listing of the store yields, or None if the store cannot list; StoreError if it fails."""
    if not store.supports_listing:
        return None

    async def names() -> list[str]:
        return [name async for name in listing()]

    try:
        return sync(names())
    except (NotImplementedError, FileNotFoundError):
        return None
    except Exception as exc:
        raise StoreError(f"listing {what[:200]}{'...' if len(what) > 200 else ''} failed: {_failure(exc)}") from exc


def list_children(store: Store, prefix: str) -> list[str] | None:
    """The names directly under ``prefix`` (a node path, '' for the root), or None if the store cannot list."""
    found = _listing(store, lambda: store.list_dir(prefix), prefix or "the root")
    if found is None:
        return None
    # A name that would lead out of the store (an http listing's "../" link) is no child.
    return sorted({n for n in (name.rstrip("/").split("/")[0] for name in found if name) if leaves_store(n) is None})


def list_keys(store: Store, prefix: str) -> Iterator[str] | None:
    """Every key under ``prefix`` (a node path), relative to it; None if the store cannot list."""
    start = f"{prefix}/" if prefix else ""
    found = _listing(store, lambda: store.list_prefix(start), f"the keys of {prefix or 'the root'}")
    if found is None:
        return None
    return (key[len(start):] for key in found if key.startswith(start))


class SlowStore(WrapperStore[Store]):
    """A store whose reads each wait ``latency`` seconds, at most ``concurrency`` at a time.

    Stands in for a remote object store in benchmarks: a connection pool of a fixed size,
    and a round trip per request.
    """

    def __init__(self, store: Store, *, latency: float, concurrency: int) -> None:
        super().__init__(store)
        self.latency = latency
        self.concurrency = concurrency
        self._gate: asyncio.Semaphore | None = None

    def _with_store(self, store: Store) -> SlowStore:
        return type(self)(store, latency=self.latency, concurrency=self.concurrency)

    async def get(self, key: str, prototype: Any, byte_range: ByteRequest | None = None) -> Any:
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.concurrency)
        async with self._gate:
            await asyncio.sleep(self.latency)
            return await self._store.get(key, prototype, byte_range)

    async def get_partial_values(self, prototype: Any, key_ranges: Any) -> list[Any]:
        return list(await asyncio.gather(*(self.get(key, prototype, r) for key, r in key_ranges)))


def display(url: str) -> str:
    """The URL as the user gave it, so that a shared report shows no more of their machine than they typed."""
    return url
