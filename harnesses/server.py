"""Serve any Python adapter over the harness protocol: ``python -m zarr_jpeg_conformance.harnesses.server SPEC``.

SPEC is anything ``--impl`` takes (a built-in name, an entry point, ``module:attr``). The
process reads requests on stdin and writes replies on stdout (``docs/protocol.md``): JSON
lines, switching to binary framing when the client's ``start`` offers it (or to shared framing, its payloads in a memory
region, when that is offered). ``--isolate``
runs every implementation this way, so a segfault or a hang in a native library ends this
process, not the test session.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import json
import math
import mmap
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import IO, Any, BinaryIO, TypeGuard

import numpy as np

from .. import __version__
from ..adapters.labels import kind_of, language_of
from ..protocol import shared
from ..protocol.framing import (
    BINARY,
    JSON_LINES,
    SHARED,
    FrameError,
    FrameReader,
    MessageTooLarge,
    encode_message,
    encode_placed,
    placed_frame,
)
from ..protocol.wire import PROTOCOL_VERSION, TEXT_CAP, array_from_wire, array_to_wire, field_bytes, is_shape

#: Bounds a bench request: a client's slip must not hold the harness for hours.
MAX_REPEAT = 100_000
#: The largest request this server reads, a frame's payload included, as the kits allow one: the suites send a few MiB
#: at most, and a header that declares more is answered with an error, not a MemoryError that ends the process.
MAX_REQUEST = 1 << 30


class BadRequest(Exception):
    """A request this server cannot act on (unknown op or handle, malformed fields)."""


def _rejected(exc: BaseException) -> dict[str, Any]:
    # A codec's own exception type, where an adapter re-raised it as a rejection (adapters.zarr_codecs).
    name = getattr(exc, "exception", None)
    reply: dict[str, Any] = {"status": "rejected", "message": str(exc),
                             "exception": name if isinstance(name, str) else type(exc).__name__}
    requirement = getattr(exc, "requirement", None)
    if isinstance(requirement, str):
        reply["requirement"] = requirement
    return reply


def _error(exc: BaseException) -> dict[str, Any]:
    trace = "".join(traceback.format_exception(exc))
    return {"status": "error", "message": str(exc), "exception": type(exc).__name__, "trace": trace[-TEXT_CAP:]}


def _returned(value: object) -> dict[str, Any]:
    """The reply for an encode or decode whose value the Adapter contract does not allow (a decode that returned a
    memoryview, an encode that returned an array): its type's name, which the client hands the suites as a stand-in.
    Converted here, it passed under --isolate where the same adapter in process failed."""
    return {"status": "ok", "returned": type(value).__name__[:100] or "object"}


class Server:
    """The protocol state of one harness process: the adapter and the handles it parsed."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.adapter: Any = None
        self.parsed: dict[str, object] = {}
        self.stopped = False
        #: The framing from the request after ``start`` on: shared or binary when the client offers it.
        self.framing = JSON_LINES
        #: The client's memory region, mapped (shared framing).
        self.region: memoryview | None = None
        #: The payload of the reply being made, where it lies in the region already: (offset, bytes), a chunk decoded
        #: into its room.
        self.placed: tuple[int, int] | None = None

    def handle(self, request: object) -> dict[str, Any]:
        """The reply to one request, ``seq`` included; never raises for a bad request."""
        self.placed = None
        seq = request.get("seq") if isinstance(request, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool):
            seq = None
        try:
            if seq is None:
                raise BadRequest("request has no integer 'seq'")
            reply = self._dispatch(request)  # type: ignore[arg-type]
        except BadRequest as exc:
            reply = {"status": "error", "message": str(exc), "exception": "BadRequest"}
        except (ValueError, TypeError) as exc:
            reply = _rejected(exc)
        except Exception as exc:  # noqa: BLE001 - every other exception (MemoryError too) is the implementation's error
            reply = _error(exc)
        return {"seq": seq, **reply}

    def _dispatch(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "start":
            return self._start(request)
        if op == "stop":
            self.stopped = True
            return {"status": "ok"}
        if self.adapter is None:
            raise BadRequest(f"{op!r} before 'start'")
        if op == "parse":
            if "codec" not in request:
                raise BadRequest("parse request has no 'codec'")
            log = getattr(self.adapter, "given_log", None)
            start = log.count if log is not None else 0
            parsed = self.adapter.parse(request["codec"])
            handle = str(len(self.parsed) + 1)
            self.parsed[handle] = parsed
            # An adapter that gives its codec a configuration of its own (adapters.zarr_codecs) says what it gave.
            given = [e["given"] for e in log.since(start) if isinstance(e.get("given"), dict)] if log is not None else []
            return {"status": "ok", "handle": handle, **({"given": given[-1]} if given else {})}
        if op == "encode":
            return self._encode(request)
        if op == "decode":
            return self._decode(request)
        if op == "bench":
            return self._bench(request)
        if op == "build":
            return self._build(request)
        raise BadRequest(f"unknown op {op!r}")

    def _encode(self, request: dict[str, Any]) -> dict[str, Any]:
        parsed = self._parsed(request)
        chunk = request.get("chunk")
        try:
            # A chunk in the shared region is read where it lies: the client leaves it alone until the reply.
            array = array_from_wire(chunk if isinstance(chunk, dict) else {}, borrow=True)
        except ValueError as exc:
            raise BadRequest(f"encode request: 'chunk': {exc}") from exc
        data = self.adapter.encode(parsed, array)
        if not isinstance(data, bytes | bytearray | memoryview):
            return _returned(data)
        return {"status": "ok", "data": bytes(data)}

    def _decode(self, request: dict[str, Any], spare: np.ndarray | None = None) -> dict[str, Any]:
        parsed = self._parsed(request)
        shape = request.get("chunk_shape")
        if not is_shape(shape):
            raise BadRequest(f"decode request: 'chunk_shape' must be a list of non-negative integers, got {shape!r}")
        try:
            data = field_bytes(request.get("data"))
        except ValueError as exc:
            raise BadRequest(f"decode request: 'data': {exc}") from exc
        room = self._room(request, shape)
        into = getattr(self.adapter, "decode_into", None)
        if room is not None and callable(into):
            into(parsed, data, tuple(shape), room)
            self.placed = request["reply_at"], room.nbytes
            return {"status": "ok", "chunk": {"shape": shape, "dtype": "uint8"}}
        if spare is not None and callable(into) and spare.size == math.prod(shape):  # a bench without a room
            into(parsed, data, tuple(shape), spare.reshape(shape))
            return {"status": "ok"}
        out = self.adapter.decode(parsed, data, tuple(shape))
        if not isinstance(out, np.ndarray):
            return _returned(out)
        try:
            return {"status": "ok", "chunk": array_to_wire(out, raw=True)}
        except TypeError as exc:
            # Not a rejection: the implementation returned something no chunk can be.
            raise RuntimeError(f"decode returned an array the protocol cannot carry: {exc}") from exc

    def _room(self, request: dict[str, Any], shape: list[int]) -> np.ndarray | None:
        """The room a decode request offers for its reply (shared framing) as the chunk's array, where the chunk fits.

        Its samples are decoded straight into it: no copy of the chunk in this process. (The request's stream was
        copied out of the region before, so a room that overlaps it, which the client never offers, changes nothing.)
        """
        at, room = request.get("reply_at"), request.get("reply_room")
        if self.region is None or self.framing != SHARED or not _is_count(at) or not _is_count(room):
            return None
        size = math.prod(shape)
        if size == 0 or size > room or at + size > len(self.region):
            return None
        return np.ndarray(shape, np.uint8, self.region, at)

    def _bench(self, request: dict[str, Any]) -> dict[str, Any]:
        """The seconds each of ``repeat`` runs of the encode or decode request ``of`` takes here, in a row."""
        of, repeat = request.get("of"), request.get("repeat")
        if not isinstance(repeat, int) or isinstance(repeat, bool) or not 1 <= repeat <= MAX_REPEAT:
            raise BadRequest(f"bench: repeat must be 1 to {MAX_REPEAT}, got {repeat!r}")
        if of not in ("encode", "decode"):
            raise BadRequest(f"bench: of must be 'encode' or 'decode', got {of!r}")
        into = of == "decode" and callable(getattr(self.adapter, "decode_into", None))
        spare: np.ndarray | None = None
        seconds = []
        for _ in range(repeat):
            start = time.perf_counter()
            reply = self._encode(request) if of == "encode" else self._decode(request, spare)
            seconds.append(time.perf_counter() - start)
            chunk = reply.get("chunk")
            if into and spare is None and isinstance(chunk, dict) and "data" in chunk:
                # A decode is timed as the protocol path runs it, into a room: without one, after a first decode (its
                # size what the stream holds, not what the request says), into memory that lies as a room would (the
                # library's speed depends on where its output lies).
                spare = shared.room_like(memoryview(chunk["data"]).nbytes)
        self.placed = None  # a decode's chunk in the room is not this reply's
        return {"status": "ok", "seconds": seconds}

    def _start(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("protocol") != PROTOCOL_VERSION:
            raise BadRequest(f"this harness speaks protocol {PROTOCOL_VERSION}, not {request.get('protocol')!r}")
        if self.adapter is None:
            from ..adapters import AdapterLoadError, load_adapter

            try:
                self.adapter = load_adapter(self.spec)
            except AdapterLoadError as exc:
                raise BadRequest(f"cannot load adapter {self.spec!r}: {exc}") from exc
        try:
            versions = {str(k): str(v) for k, v in self.adapter.versions().items()}
        except Exception as exc:  # noqa: BLE001 - a broken versions() must not hide the implementation
            versions = {"versions()": f"raised {type(exc).__name__}: {exc}"}
        reply = {
            "status": "ok",
            "protocol": PROTOCOL_VERSION,
            "name": self.adapter.name,
            "version": __version__,
            "roles": sorted(self.adapter.roles),
            "versions": versions,
            "kind": kind_of(self.adapter),
            "language": language_of(self.adapter),
        }
        framings = request.get("framings")
        if isinstance(framings, list) and SHARED in framings and self.region is None:
            self.region = _map_region(request.get("region"))
        if isinstance(framings, list) and SHARED in framings and self.region is not None:
            # Payloads in memory both processes map: no pipe copies (the headers still go through the pipes).
            self.framing = reply["framing"] = SHARED
        elif isinstance(framings, list) and BINARY in framings:
            # Raw bytes instead of base64 inside JSON: no encoding, no escaping, a third less to move.
            self.framing = reply["framing"] = BINARY
        return reply

    def reply_parts(self, reply: dict[str, Any], framing: str, request: object) -> list[bytes | bytearray | memoryview]:
        """What goes on the wire for ``reply``: in shared framing, its payload in the room the request offered, if it fits."""
        if framing == SHARED and self.region is not None and isinstance(request, dict):
            if self.placed is not None:
                return placed_frame(reply, self.placed[1], self.placed[0])
            at, room = request.get("reply_at"), request.get("reply_room")
            if _is_count(at) and _is_count(room) and at + room <= len(self.region):
                return encode_placed(reply, self.region, at, room=room)
        return encode_message(reply, framing)

    def _build(self, request: dict[str, Any]) -> dict[str, Any]:
        if "build" not in self.adapter.roles:
            raise BadRequest(f"{self.adapter.name} has no role 'build' (its roles: {', '.join(sorted(self.adapter.roles))})")
        options = request.get("options")
        if not isinstance(options, dict):
            raise BadRequest(f"build request: 'options' must be an object, got {options!r}")
        codec = self.adapter.build(options)
        try:
            # The reply carries JSON, as zarr.json does: a tuple is an array, a numpy integer is no number.
            codec = json.loads(json.dumps(codec, allow_nan=False))
        except (TypeError, ValueError) as exc:
            # Not a rejection: the implementation returned something no codec object can be.
            raise RuntimeError(f"build returned a codec object the protocol cannot carry: {exc}") from exc
        return {"status": "ok", "codec": codec}

    def _parsed(self, request: dict[str, Any]) -> object:
        handle = request.get("handle")
        if handle not in self.parsed:
            raise BadRequest(f"unknown handle {handle!r}")
        return self.parsed[handle]


def _is_count(value: object) -> TypeGuard[int]:
    return type(value) is int and value >= 0  # JSON's integers are exactly int (a bool is not one)


def _map_region(region: object) -> memoryview | None:
    """The client's region of shared framing, mapped; None if the start request names none this process can map."""
    if not isinstance(region, dict) or not isinstance(region.get("path"), str) or not _is_count(region.get("size")):
        return None
    with contextlib.suppress(OSError, ValueError), open(region["path"], "r+b") as f:  # the mapping outlives the file
        return memoryview(mmap.mmap(f.fileno(), region["size"]))
    return None


def _watch_parent(parent: int, interval: float = 0.5) -> None:
    """Exit when the test session that started us is gone, even in the middle of a hang."""
    while True:
        time.sleep(interval)
        if os.getppid() != parent:
            os._exit(3)


def _writer(replies: IO[bytes]) -> Callable[[list[bytes | bytearray | memoryview]], None]:
    """A function that writes a message's parts to ``replies`` and flushes them.

    On a file descriptor, one ``writev``: a header and its payload go out in one system
    call, with no copy and no wake-up of the client between them.
    """
    try:
        fd = replies.fileno()
    except (AttributeError, OSError, ValueError):  # io.BytesIO and the like
        fd = -1
    if fd < 0:

        def write_parts(parts: list[bytes | bytearray | memoryview]) -> None:
            for part in parts:
                replies.write(part)
            replies.flush()

        return write_parts
    replies.flush()

    def writev(parts: list[bytes | bytearray | memoryview]) -> None:
        if len(parts) == 1 and type(parts[0]) is bytes:  # a header alone, as most frames of shared framing are
            n = os.write(fd, parts[0])
            if n == len(parts[0]):
                return
            parts = [memoryview(parts[0])[n:]]  # cut short by a signal: the rest as below
        views = [memoryview(p).cast("B") for p in parts]
        while views:
            n = os.writev(fd, views)  # a blocking pipe takes it all, unless a signal cuts it short
            while views and n >= len(views[0]):
                n -= len(views.pop(0))
            if n:
                views[0] = views[0][n:]

    return writev


def serve(spec: str, requests: BinaryIO, replies: IO[bytes], *, log: Callable[[str], None] | None = None) -> int:
    """Answer requests until ``stop`` or end of input; return the process exit code.

    One request at a time, in order, however many the client has sent ahead. (Reading the
    next request in a thread while the adapter works was measured and dropped: handing
    frames and the GIL between threads cost more than the reading it moved off the path.)
    """
    server = Server(spec)
    write = _writer(replies)
    reader = FrameReader(JSON_LINES, cap=MAX_REQUEST, skip_blank=True)
    while True:
        try:
            frame = reader.pop_from(requests)
        except (FrameError, MemoryError) as exc:
            # A line that is no request was taken whole: the next one is read as ever. A payload that is not read (over
            # the cap, or more than this process can hold) leaves the next frame unfound: the session ends after this.
            lost = isinstance(exc, MessageTooLarge | MemoryError)
            why = str(exc) if isinstance(exc, FrameError) else "no memory to read it"
            if log:
                log(f"harnesses.server: unreadable request: {why}")
            reply = {"seq": None, "status": "error", "message": f"unreadable request: {why}" + ("; the session ends" if lost else ""),
                     "exception": "BadRequest"}
            write(encode_message(reply, server.framing))
            if lost:
                return 0  # as the kits do: the session is over, not failed
            continue
        if frame is None:
            break
        request = frame.message
        framing = server.framing
        reply = server.handle(request)
        # The start reply goes out in the framing it was asked in; what follows, in the chosen one.
        write(server.reply_parts(reply, framing, request))
        reader.framing, reader.region = server.framing, server.region
        if server.stopped:
            break
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m zarr_jpeg_conformance.harnesses.server",
        description="Serve one adapter over the zarr-jpeg-conformance harness protocol on stdin/stdout.",
    )
    parser.add_argument("spec", help="adapter to serve: a built-in name, an entry point name, or module:attr")
    args = parser.parse_args(argv)
    # Protocol lines go to a private copy of stdout; fd 1 itself becomes stderr, so a print()
    # in an adapter or a native library writing to stdout cannot corrupt the protocol.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # A segfault leaves the crashing thread's Python traceback in the captured stderr.
    faulthandler.enable(sys.stderr, all_threads=False)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    # Unbuffered: the frame reader reads into its own buffers (a payload straight into its own).
    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    return serve(args.spec, requests, replies, log=lambda m: print(m, file=sys.stderr))


if __name__ == "__main__":
    raise SystemExit(main())
