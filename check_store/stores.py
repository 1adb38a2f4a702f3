"""Opening a store from its URL and reading byte ranges of its keys, each read confined, capped and timed.

A local folder is read in place (:mod:`.folder`), a ``.zip`` file by its directory
(:mod:`.zipped`), an ``http(s)://`` URL by check-store's own client (:mod:`.http`), and any
other scheme (``s3://``, ``gs://`` ...) through zarr's ``FsspecStore``. Tasks receive a
:class:`StoreSpec`, never a store or bytes, and open the store themselves (once per process),
so they run the same on local threads, in processes and on a dask cluster.

Every read is of a byte range: a read of a whole value asks for one byte more than its cap
(:class:`~.limits.Limits`), so a value over the cap is seen as such and never read further.
Every key is looked at before it is read (:func:`~.keys.leaves_store`): one that would leave
the store, as written or as a server may decode it, is refused. Every request of a remote
store has a deadline for the whole of it (``--timeout``).

Reads go out a batch at a time: a remote store's requests of a task are made concurrently,
which is what hides its per-request latency. A local folder is read synchronously, with one
open per key (a chunk's header and its tail); a header scan of one reads its chunks' ends
with plain ``os`` calls (:func:`~.folder.read_ends`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from zarr.abc.store import ByteRequest, RangeByteRequest, Store, SuffixByteRequest
from zarr.core.buffer import default_buffer_prototype
from zarr.core.sync import sync
from zarr.storage import FsspecStore, LocalStore, WrapperStore

from .folder import FolderError, forget, read_local
from .http import HttpError, HttpStore
from .keys import leaves_store, suspect
from .limits import DEFAULT, Limits
from .zipped import ZipError, ZipReader

__all__ = ["DEFAULT_TIMEOUT", "Remote", "StoreError", "StoreSpec", "is_remote", "leaves_store", "list_children", "list_keys",
           "open_store", "read_each", "read_key", "read_ranges"]

#: Seconds a request of a remote store has, from connecting to its last byte (``--timeout``).
DEFAULT_TIMEOUT = 60.0


class StoreError(Exception):
    """The store cannot be opened or read: bad input, reported with exit code 2."""


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
    #: Seconds a request of a remote store has, from connecting to its last byte.
    timeout: float = DEFAULT_TIMEOUT
    #: Caps of every read, and of the positions walked where the store cannot list.
    limits: Limits = DEFAULT

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


class Remote:
    """A store read through zarr's store API (fsspec's object stores, a benchmark's slow store): each request
    within ``timeout`` seconds."""

    def __init__(self, store: Store, timeout: float) -> None:
        self.store = store
        self.timeout = timeout
        self.supports_listing = store.supports_listing

    async def get(self, key: str, request: ByteRequest) -> bytes | None:
        try:
            async with asyncio.timeout(self.timeout):
                got = await self.store.get(key, default_buffer_prototype(), request)
        except TimeoutError:
            raise TimeoutError(f"no whole answer in {self.timeout:g} s (--timeout bounds each request)") from None
        return None if got is None else _cut(got.to_bytes(), request)


#: What open_store gives: each kind of store check-store reads.
Opened = LocalStore | ZipReader | HttpStore | Remote


def open_store(spec: StoreSpec) -> Any:
    """The store ``spec`` names, opened read-only (one per process and run)."""
    return _open(json.dumps([spec.url, dict(spec.storage_options), spec.latency, spec.concurrency, spec.token, spec.timeout],
                            sort_keys=True, default=str))


@lru_cache(maxsize=8)
def _open(key: str) -> Opened:
    url, options, latency, concurrency, _token, timeout = json.loads(key)
    spec = StoreSpec(url, options, latency, concurrency)
    if spec.kind == "local":
        path = _local_path(url)
        if not path.is_dir():
            raise StoreError(f"{url}: no such folder" if not path.exists() else f"{url}: not a folder (a Zarr store is a folder, "
                             "a .zip file or a URL)")
        forget()
        local = LocalStore(path, read_only=True)
        return Remote(SlowStore(local, latency=latency, concurrency=concurrency), timeout) if latency else local
    if spec.kind == "zip":
        path = _local_path(url)
        if not path.is_file():
            raise StoreError(f"{url}: no such zip file")
        try:
            return ZipReader(path)
        except Exception as exc:
            raise StoreError(f"{url}: cannot open as a zip store: {type(exc).__name__}: {exc}") from exc
    if spec.kind in ("http", "https"):
        return HttpStore(url, timeout=timeout, headers=_http_headers(url, options))
    try:
        return Remote(FsspecStore.from_url(url, storage_options=options or None, read_only=True), timeout)
    except (ImportError, ValueError, OSError) as exc:
        raise StoreError(f"{url}: cannot open through fsspec: {type(exc).__name__}: {exc}") from exc


def _http_headers(url: str, options: Mapping[str, Any]) -> dict[str, str]:
    """The headers ``--storage-option headers=...`` gives an http store; StoreError for any other option."""
    other = sorted(set(options) - {"headers"})
    headers = options.get("headers", {})
    if other or not (isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values())):
        raise StoreError(f"{url}: --storage-option {(other or ['headers'])[0]}: check-store's http reader takes one option, "
                         'headers (a JSON object of strings: headers=\'{"Authorization": "..."}\')')
    return {str(k): v for k, v in headers.items()}


def _whole(request: ByteRequest | None, limit: int) -> ByteRequest:
    """A read of a whole value is a read of one byte more than its cap: a longer value is then seen, not read."""
    return RangeByteRequest(0, limit + 1) if request is None else request


def _refuse_leaving(requests: Sequence[tuple[str, ByteRequest | None]]) -> None:
    for key, _range in requests:
        if suspect(key):
            why = leaves_store(key)
            if why is not None:
                raise StoreError(f"key {why}: it would leave the store, and is not read")


def read_ranges(store: Any, requests: Sequence[tuple[str, ByteRequest | None]], limit: int | None = None) -> list[bytes | None]:
    """The bytes of each (key, byte range; None: the whole value, up to ``limit`` + 1 bytes); None for a key that
    does not exist.

    A server that ignores range requests answers with the whole value; the range is cut
    from it, so callers always get what they asked for. Errors other than a missing key
    (a dropped connection, a refused request, a key that would leave the store) raise StoreError.
    """
    if not requests:
        return []
    _refuse_leaving(requests)
    cap = DEFAULT.chunk if limit is None else limit
    ranged = [(key, _whole(r, cap)) for key, r in requests]
    try:
        if isinstance(store, LocalStore):
            return read_local(store.root, ranged)
        if isinstance(store, ZipReader):
            return [store.read(key, r, cap) for key, r in ranged]
        return sync(_gather([_get(store, key, r, cap) for key, r in ranged]))
    except StoreError:
        raise
    except (FolderError, ZipError, HttpError) as exc:  # their messages name the key and say why
        raise StoreError(str(exc)) from exc
    except Exception as exc:
        more = f" and {len(requests) - 1} more keys" if len(requests) > 1 else ""
        raise StoreError(f"reading {requests[0][0][:200]}{more} failed: {_failure(exc)}") from exc


def is_remote(store: Any) -> bool:
    """Whether reads of the store are requests (concurrent, each with a deadline) rather than reads of local files."""
    return not isinstance(store, LocalStore | ZipReader)


def read_each(store: Any, plans: Sequence[Sequence[tuple[str, ByteRequest | None]]],
              limit: int | None = None) -> list[list[bytes | None] | str]:
    """Each list of (key, byte range) read on its own: its values, or why it could not be read.

    A remote store's lists are read concurrently, so a batch of failing requests (a server
    that drips, one that never answers) costs one deadline, not one each.
    """
    if not is_remote(store):
        out: list[list[bytes | None] | str] = []
        for plan in plans:
            try:
                out.append(read_ranges(store, plan, limit))
            except StoreError as exc:
                out.append(str(exc))
        return out

    async def one(plan: Sequence[tuple[str, ByteRequest | None]]) -> list[bytes | None] | str:
        try:
            _refuse_leaving(plan)
            cap = DEFAULT.chunk if limit is None else limit
            if len(plan) == 1:  # most lists: a chunk's first bytes, or a shard's index (no gather of one)
                return [await _get(store, plan[0][0], _whole(plan[0][1], cap), cap)]
            return list(await asyncio.gather(*(_get(store, key, _whole(r, cap), cap) for key, r in plan)))
        except (StoreError, HttpError) as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - a failed read is this list's outcome, not the batch's
            more = f" and {len(plan) - 1} more ranges" if len(plan) > 1 else ""
            return f"reading {plan[0][0][:200]}{more} failed: {_failure(exc)}"

    return list(sync(_gather([one(p) for p in plans])))


async def _gather(reads: list[Awaitable[Any]]) -> list[Any]:
    return list(await asyncio.gather(*reads))


def _get(store: Any, key: str, request: ByteRequest, cap: int) -> Awaitable[bytes | None]:
    if isinstance(store, HttpStore):
        return store.get(key, request, cap)
    return store.get(key, request)


def _failure(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):  # asyncio's and aiohttp's timeouts are TimeoutErrors
        why = str(exc) or "no answer in time (--timeout SECONDS bounds each request of a remote store)"
        return f"{type(exc).__name__}: {why[:500]}"
    return f"{type(exc).__name__}: {str(exc)[:500]}"


def _cut(value: bytes, request: ByteRequest) -> bytes:
    if isinstance(request, RangeByteRequest) and len(value) > request.end - request.start:
        return value[request.start : request.end]
    if isinstance(request, SuffixByteRequest) and len(value) > request.suffix:
        return value[-request.suffix :]
    return value


def read_key(store: Any, key: str, limit: int | None = None) -> bytes | None:
    """The whole value of ``key`` (up to ``limit`` + 1 bytes: a longer one is longer than that), or None if it
    does not exist."""
    (value,) = read_ranges(store, [(key, None)], limit)
    return value


def _listing(store: Any, listing: Any, what: str) -> list[str] | None:
    """What a listing of the store gives, or None if the store cannot list; StoreError if it fails."""
    if not store.supports_listing:
        return None
    try:
        return listing()
    except (NotImplementedError, FileNotFoundError):
        return None
    except Exception as exc:
        raise StoreError(f"listing {what[:200]}{'...' if len(what) > 200 else ''} failed: {_failure(exc)}") from exc


def _zarr_listing(store: Any, method: str, prefix: str) -> Any:
    """A listing of a store read through zarr's API, each name within ``--timeout`` seconds of the one before (a
    listing is as many requests as it has pages: a deadline for the whole would cut a large store's short)."""
    timeout = store.timeout if isinstance(store, Remote) else None

    async def names() -> list[str]:
        found: list[str] = []
        loop = asyncio.get_running_loop()
        async with asyncio.timeout_at(None if timeout is None else loop.time() + timeout) as deadline:
            async for name in getattr(_zarr(store), method)(prefix):
                found.append(name)
                if timeout is not None:
                    deadline.reschedule(loop.time() + timeout)
        return found

    return lambda: sync(names())


def list_children(store: Any, prefix: str, limit: int | None = None) -> list[str] | None:
    """The names directly under ``prefix`` (a node path, '' for the root), or None if the store cannot list.

    ``limit``: the most bytes of a listing page read (http).
    """
    what = prefix or "the root"
    if isinstance(store, HttpStore):
        found = _listing(store, lambda: sync(store.list_dir(prefix, DEFAULT.metadata if limit is None else limit)), what)
    elif isinstance(store, ZipReader):
        start = f"{prefix}/" if prefix else ""
        found = [name[len(start):] for name in store.names(start)]
    else:
        found = _listing(store, _zarr_listing(store, "list_dir", prefix), what)
    if found is None:
        return None
    # A name that would lead out of the store (an http listing's "../" link, a zip's "../x") is no child.
    return sorted({n for n in (name.rstrip("/").split("/")[0] for name in found if name) if leaves_store(n) is None})


def list_keys(store: Any, prefix: str) -> Iterator[str] | None:
    """Every key under ``prefix`` (a node path), relative to it; None if the store cannot list.

    An http server's folder pages are never taken for the keys a store holds: a page that
    shows no index, or a partial one, would pass for an array without those chunks.
    """
    start = f"{prefix}/" if prefix else ""
    if isinstance(store, HttpStore):
        return None
    if isinstance(store, ZipReader):
        found: list[str] | None = store.names(start)
    else:
        found = _listing(store, _zarr_listing(store, "list_prefix", start), f"the keys of {prefix or 'the root'}")
    if found is None:
        return None
    return (key[len(start):] for key in found if key.startswith(start))


def _zarr(store: Any) -> Store:
    return store.store if isinstance(store, Remote) else store


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
