"""A local HTTP server for a store folder, with byte-range requests, for testing remote reads.

``http.server`` answers every GET with the whole file; object stores and web servers answer
``Range: bytes=a-b`` and ``bytes=-n`` with 206 and just those bytes, which is what
check-store's header-only reads rely on. This server does the same (reading just those bytes
of the file, so a sparse 3 GiB file costs what is asked of it), lists folders as
``http.server`` does, and can wait a fixed time before each answer. For tests, ``routes``
answers chosen paths its own way (a redirect, an endless body), and ``log`` collects every
path asked for.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["serve"]

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


class RangeHandler(SimpleHTTPRequestHandler):
    """``SimpleHTTPRequestHandler`` plus single byte ranges and an optional delay, over keep-alive connections."""

    delay = 0.0
    #: Request paths (as sent) answered by a function of the handler, not from the folder.
    routes: Mapping[str, Callable[[RangeHandler], None]] = {}
    #: Where every request's path is written down, when given.
    log: list[str] | None = None
    #: Connections stay open for the next request (every answer says its length), as a web server's do.
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests and benchmarks make thousands of requests

    def do_GET(self) -> None:
        if self.log is not None:
            self.log.append(self.path)
        if self.delay:
            time.sleep(self.delay)
        route = self.routes.get(self.path)
        if route is not None:
            route(self)
            return
        match = _RANGE.match(self.headers.get("Range", ""))
        path = Path(self.translate_path(self.path))
        if match is None or not path.is_file():
            super().do_GET()
            return
        with path.open("rb") as f:
            size = f.seek(0, 2)
            first, last = match.groups()
            if first:
                start, end = int(first), min(int(last) + 1 if last else size, size)
            else:
                start, end = max(0, size - int(last or 0)), size
            if start >= size and size:
                self.send_error(416, "Requested Range Not Satisfiable")
                return
            f.seek(start)
            data = f.read(max(0, end - start))
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    #: Connections waiting to be accepted: a client opens dozens at once (socketserver's 5 drops the rest,
    #: and each dropped one waits a second for the kernel to try again).
    request_queue_size = 1024
    daemon_threads = True


@contextmanager
def serve(folder: Path, delay: float = 0.0, routes: Mapping[str, Callable[[RangeHandler], None]] | None = None,
          log: list[str] | None = None) -> Iterator[str]:
    """Serve ``folder`` on a free localhost port; yields its base URL (no trailing slash)."""
    handler = type("Handler", (RangeHandler,), {"delay": delay, "routes": dict(routes or {}), "log": log})
    server = _Server(("127.0.0.1", 0), partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
