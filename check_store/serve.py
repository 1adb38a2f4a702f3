"""A local HTTP server for a store folder, with byte-range requests, for testing remote reads.

``http.server`` answers every GET with the whole file; object stores and web servers answer
``Range: bytes=a-b`` and ``bytes=-n`` with 206 and just those bytes, which is what
check-store's header-only reads rely on. This server does the same, lists folders as
``http.server`` does (fsspec's HTTP filesystem reads those listings), and can wait a fixed
time before each answer.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
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
    #: Connections stay open for the next request (every answer says its length), as a web server's do.
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests and benchmarks make thousands of requests

    def do_GET(self) -> None:
        if self.delay:
            time.sleep(self.delay)
        match = _RANGE.match(self.headers.get("Range", ""))
        path = Path(self.translate_path(self.path))
        if match is None or not path.is_file():
            super().do_GET()
            return
        data = path.read_bytes()
        first, last = match.groups()
        if first:
            start, end = int(first), min(int(last) + 1 if last else len(data), len(data))
        else:
            start, end = max(0, len(data) - int(last or 0)), len(data)
        if start >= len(data) and data:
            self.send_error(416, "Requested Range Not Satisfiable")
            return
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        self.send_header("Content-Length", str(end - start))
        self.end_headers()
        self.wfile.write(data[start:end])


class _Server(ThreadingHTTPServer):
    #: Connections waiting to be accepted: a client opens dozens at once (socketserver's 5 drops the rest,
    #: and each dropped one waits a second for the kernel to try again).
    request_queue_size = 1024
    daemon_threads = True


@contextmanager
def serve(folder: Path, delay: float = 0.0) -> Iterator[str]:
    """Serve ``folder`` on a free localhost port; yields its base URL (no trailing slash)."""
    handler = type("Handler", (RangeHandler,), {"delay": delay})
    server = _Server(("127.0.0.1", 0), partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
