"""Reading an http(s) store: every request confined to the store's URL, bounded in time and in size.

fsspec's HTTP file system joins a key to the URL as a string (``bad#1`` then asks for ``bad``,
and ``%2e%2e`` is normalized away into the parent folder), follows redirects anywhere, reads
a whole answer whatever its length (inflating a gzip-encoded one first), bounds each socket
read rather than each request, and finds a folder's links with a regular expression that
backtracks on a page of ``<a `` and spaces. None of this can be set from outside, so
check-store reads http itself, with aiohttp (as fsspec does):

* a key's URL is the store's URL and the key's segments, each percent-encoded
  (:func:`.keys.quoted`), sent as they are;
* a redirect is followed only to the store's own origin and path, at most
  :data:`MAX_REDIRECTS` times;
* every request has a deadline for the whole of it (connecting, the headers, every byte of
  the answer): ``--timeout``;
* no answer is read past what was asked for, or past the read's cap: a server that ignores
  ``Range`` is read only up to the bytes wanted (a suffix: through a rolling window, up to
  the cap), an endless body is cut, and a body with a ``Content-Encoding`` is inflated only
  up to the cap (and only when it is the whole value: a compressed byte range has no offsets);
* a folder's page is read within the metadata cap, and its links found in one pass
  (:func:`links`), never by a regular expression.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
import zlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import yarl
from zarr.abc.store import ByteRequest, RangeByteRequest, SuffixByteRequest

from .keys import quoted

if TYPE_CHECKING:  # aiohttp itself is imported by the first request (9 MB a process that reads no http store keeps)
    import aiohttp

__all__ = ["MAX_REDIRECTS", "HttpError", "HttpStore", "links"]

#: Redirects followed (each within the store) before a request is given up.
MAX_REDIRECTS = 5
_REDIRECTS = (301, 302, 303, 307, 308)
_MISSING = (404, 410)
#: Bytes taken from the socket at a time.
_PIECE = 1 << 16


class HttpError(OSError):
    """A request that cannot be answered as asked: its message says why, and names the URL."""


class HttpStore:
    """The reads check-store makes of an http(s) store: byte ranges of keys, and the names in a folder.

    One aiohttp session per store object, made on the event loop that first uses it (zarr's
    own loop, through ``zarr.core.sync.sync``) and closed when the store is dropped.
    """

    supports_listing = True

    def __init__(self, url: str, *, timeout: float, headers: Mapping[str, str] | None = None) -> None:
        root = yarl.URL(url)
        self.url = url
        self.timeout = timeout
        self.headers = {**(headers or {}), "Accept-Encoding": "identity"}
        #: The origin and the path every request must stay in; the store URL's query goes with every request.
        self.origin = root.origin()
        self.path = root.raw_path.rstrip("/")
        self.query = root.raw_query_string
        self._held: dict[str, Any] = {}
        weakref.finalize(self, _close, self._held)

    # ------------------------------------------------------------------ URLs

    def key_url(self, key: str, folder: bool = False) -> yarl.URL:
        """The URL of ``key`` (a folder's, with its trailing slash): the store's URL and the key's quoted segments."""
        path = f"{self.path}/{quoted(key)}" if key else self.path
        if folder:
            path += "/"
        return yarl.URL.build(scheme=self.origin.scheme, authority=self.origin.raw_authority, path=path or "/",
                              query_string=self.query, encoded=True)

    def inside(self, url: yarl.URL) -> bool:
        """Whether ``url`` is the store's origin, and its path the store's or under it (segment by segment)."""
        path = url.raw_path
        return url.origin() == self.origin and (path.rstrip("/") == self.path or path.startswith(self.path + "/"))

    # ------------------------------------------------------------------ reads

    async def read(self, requests: Sequence[tuple[str, ByteRequest]], limit: int) -> list[bytes | None]:
        """The bytes of each (key, byte range), None for a key the server does not have; HttpError for the first
        request that fails. ``limit``: the most bytes any answer is read to."""
        return list(await asyncio.gather(*(self.get(key, r, limit) for key, r in requests)))

    async def get(self, key: str, request: ByteRequest, limit: int) -> bytes | None:
        url = self.key_url(key)
        if isinstance(request, RangeByteRequest):
            header = f"bytes={request.start}-{request.end - 1}" if request.end > request.start else None
            if header is None:
                return b""
        elif isinstance(request, SuffixByteRequest):
            header = f"bytes=-{request.suffix}"
        else:
            raise TypeError(f"unexpected byte range {request!r}")
        try:
            async with asyncio.timeout(self.timeout):
                return await self._answer(url, header, request, limit)
        except TimeoutError:
            raise TimeoutError(f"{url}: no whole answer in {self.timeout:g} s (--timeout bounds each request)") from None

    async def _answer(self, url: yarl.URL, range_header: str, request: ByteRequest, limit: int) -> bytes | None:
        session = await self._session()
        for _hop in range(MAX_REDIRECTS + 1):
            async with session.get(url, headers={**self.headers, "Range": range_header}, allow_redirects=False) as resp:
                if resp.status in _REDIRECTS and "Location" in resp.headers:
                    url = self._redirect(url, resp.headers["Location"])
                    continue
                if resp.status in _MISSING:
                    return None
                if resp.status == 416:  # the range starts past the end of the value
                    return b""
                if resp.status not in (200, 206):
                    raise HttpError(f"{url}: HTTP {resp.status} {resp.reason or ''}".rstrip())
                return await _wanted(url, resp, request, limit)
        raise HttpError(f"{url}: more than {MAX_REDIRECTS} redirects")

    def _redirect(self, url: yarl.URL, location: str) -> yarl.URL:
        target = url.join(yarl.URL(location, encoded=True))
        if not self.inside(target):
            raise HttpError(f"{url}: redirected to {str(target)[:300]}, off the store's origin and path: not followed")
        return target

    async def _session(self) -> aiohttp.ClientSession:
        import aiohttp

        session = self._held.get("session")
        if session is None or session.closed:
            # Deadlines are the requests' own (asyncio.timeout); aiohttp's would bound each socket read.
            session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None), auto_decompress=False)
            self._held.update(session=session, loop=asyncio.get_running_loop())
        return session

    # ------------------------------------------------------------------ listing

    async def list_dir(self, prefix: str, limit: int) -> list[str] | None:
        """The names a folder's page links to directly under it; None when the server shows no page for it."""
        url = self.key_url(prefix, folder=True)
        try:
            async with asyncio.timeout(self.timeout):
                page = await self._page(url, limit)
        except TimeoutError:
            raise TimeoutError(f"{url}: no whole answer in {self.timeout:g} s (--timeout bounds each request)") from None
        if page is None:
            return None
        base = url
        names = []
        for href in links(page.decode("utf-8", errors="replace")):
            try:
                target = base.join(yarl.URL(href, encoded=True))
            except ValueError:
                continue
            path = target.raw_path
            if target.origin() != self.origin or not path.startswith(base.raw_path):
                continue
            rest = path[len(base.raw_path):].rstrip("/")
            if rest and "/" not in rest:
                names.append(unquote(rest))
        return names

    async def _page(self, url: yarl.URL, limit: int) -> bytes | None:
        session = await self._session()
        for _hop in range(MAX_REDIRECTS + 1):
            async with session.get(url, headers=self.headers, allow_redirects=False) as resp:
                if resp.status in _REDIRECTS and "Location" in resp.headers:
                    url = self._redirect(url, resp.headers["Location"])
                    continue
                if resp.status in (*_MISSING, 403, 405):  # no page for folders: the store cannot list
                    return None
                if resp.status != 200:
                    raise HttpError(f"{url}: HTTP {resp.status} {resp.reason or ''}".rstrip())
                data = await _wanted(url, resp, RangeByteRequest(0, limit + 1), limit)
                if len(data) > limit:
                    raise HttpError(f"{url}: a folder's page of more than {limit:,} bytes (the metadata cap): not read")
                return data
        raise HttpError(f"{url}: more than {MAX_REDIRECTS} redirects")


def _close(held: dict[str, Any]) -> None:
    """Close a dropped store's session on its loop (or leave it to the process's end when that loop is gone)."""
    session, loop = held.get("session"), held.get("loop")
    if session is None or session.closed or loop is None or loop.is_closed() or not loop.is_running():
        return
    with contextlib.suppress(Exception):  # a session left to the process's end is no failure of the run
        asyncio.run_coroutine_threadsafe(session.close(), loop).result(timeout=2)


async def _body(url: yarl.URL, resp: aiohttp.ClientResponse, cap: int) -> AsyncIterator[bytes]:
    """The pieces of an answer's value, inflated when it has a Content-Encoding; HttpError past ``cap`` bytes."""
    encoding = resp.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding in ("identity", ""):
        async for piece in resp.content.iter_chunked(_PIECE):
            yield piece
        return
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise HttpError(f"{url}: Content-Encoding {encoding[:50]!r} (asked for none): not read")
    if resp.status == 206:
        raise HttpError(f"{url}: a byte range sent with Content-Encoding {encoding}: its offsets are of the "
                        "compressed bytes, which hold no chunk; not read")
    inflate = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib, by its header
    made = 0
    async for piece in resp.content.iter_chunked(_PIECE):
        data = piece
        while data:
            out = inflate.decompress(data, cap + 1 - made)
            made += len(out)
            if made > cap:
                raise HttpError(f"{url}: Content-Encoding {encoding} inflates past {cap:,} bytes (the cap of this read): "
                                "not read further")
            if out:
                yield out
            data = inflate.unconsumed_tail
            if inflate.eof:
                return


async def _wanted(url: yarl.URL, resp: aiohttp.ClientResponse, request: ByteRequest, cap: int) -> bytes:
    """The bytes ``request`` asked for, from an answer (206: those bytes; 200: the whole value, cut here).

    Never more than the request's bytes are kept; a whole value is read only up to where they
    end (a suffix: to its end, through a window of the last bytes, at most ``cap`` bytes).
    """
    whole = resp.status == 200
    if isinstance(request, RangeByteRequest) and not whole:
        answered = resp.headers.get("Content-Range", "")
        if not answered.startswith(f"bytes {request.start}-"):
            raise HttpError(f"{url}: asked for bytes {request.start}-{request.end - 1}, answered with Content-Range "
                            f"{answered[:100]!r}: not read")
    if isinstance(request, RangeByteRequest):
        start, stop = (request.start, request.end) if whole else (0, request.end - request.start)
        if stop > cap + 1 and whole:
            raise HttpError(f"{url}: the server ignores byte ranges, and bytes {request.start}..{request.end} would mean "
                            f"reading {request.end:,} bytes of the whole value, more than the cap ({cap:,})")
        kept = bytearray()
        async for piece in _body(url, resp, cap):
            kept += piece[: stop - len(kept)]
            if len(kept) >= stop:
                break
        return bytes(kept[start:stop])
    assert isinstance(request, SuffixByteRequest)
    window = bytearray()
    seen = 0
    async for piece in _body(url, resp, cap):
        seen += len(piece)
        if seen > cap:
            raise HttpError(f"{url}: the server ignores byte ranges, and the value runs past {cap:,} bytes (the cap of "
                            "this read) before its last bytes: not read")
        window += piece
        if len(window) > 2 * request.suffix + _PIECE:
            del window[: len(window) - request.suffix]
        if not whole and len(window) >= request.suffix:
            break
    return bytes(window[-request.suffix:]) if request.suffix else b""


def links(page: str) -> list[str]:
    """The ``href`` of every ``<a>`` tag of an HTML page, found in one pass over it.

    A tag runs from ``<a`` to the next ``>`` or ``<``, whichever comes first, so tags never
    overlap, and the positions of the next ``>`` and ``<`` are found once each: however the page
    is made (thousands of ``<a `` without a ``>``), each character is looked at a bounded number
    of times.
    """
    low = page.lower()
    n = len(low)
    out: list[str] = []
    gt = lt = -1
    at = low.find("<a")
    while at >= 0:
        start = at + 2
        if start < n and not low[start].isspace():
            at = low.find("<a", start)  # <abbr>, <area>, <aside>
            continue
        if gt < start:
            gt = low.find(">", start)
            gt = n if gt < 0 else gt
        if lt < start:
            lt = low.find("<", start)
            lt = n if lt < 0 else lt
        end = min(gt, lt)
        href = _href(page, low, start, end)
        if href is not None:
            out.append(href)
        at = low.find("<a", end)
    return out


def _href(page: str, low: str, start: int, end: int) -> str | None:
    """The value of the ``href`` attribute between ``start`` and ``end``, if there is one."""
    at = start
    while True:
        at = low.find("href", at, end)
        if at < 0:
            return None
        i = at + 4
        while i < end and low[i].isspace():
            i += 1
        if i >= end or low[i] != "=" or (at > start and not low[at - 1].isspace()):
            at += 4
            continue
        i += 1
        while i < end and low[i].isspace():
            i += 1
        if i < end and low[i] in "\"'":
            close = low.find(low[i], i + 1, end)
            return page[i + 1: close if close >= 0 else end]
        j = i
        while j < end and not low[j].isspace():
            j += 1
        return page[i:j]
