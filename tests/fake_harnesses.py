"""Harnesses that break the protocol itself: ``python -m fake_harnesses MODE [ADAPTER]`` (PYTHONPATH=tests).

``broken_adapters`` misbehave inside a correct server; these are the server misbehaving,
as a harness in another language might:

- ``twice ADAPTER``: serves ADAPTER correctly (``harnesses.server.Server``, either
  framing) but answers the parse of quality 1 twice in one write, the parse of quality
  100 a second time half a second later, after the client has its reply, the parse
  of quality 99 a second time just before its reply to the next request, and the encode
  of a chunk of shape TWICE_SHAPE twice in one write.
- ``bare ADAPTER``: serves ADAPTER correctly but leaves the optional ``exception`` out of its
  rejections and errors, as a harness of a language without exception names may.
- ``hang ADAPTER [K [OPS]]``: serves ADAPTER correctly but hangs (sleeps, answering
  nothing) on every K-th request (default 3: one call in three) among the ops OPS (a
  comma-separated list, default every op but start and stop), counted from the start of
  each process: the client kills it after its timeout and restarts it. With FAKE_HANG_PIDFILE
  set, it appends its pid to that file as it starts to hang.
- ``bloat KIND MIB``: answers start and parse itself (no adapter, no numpy: it starts fast) and
  every other request with a line of MIB MiB: KIND ``garbage`` (no JSON), ``error`` (an error
  reply whose message is that long), ``seq`` (an ok reply with another request's seq and a
  member that long) or ``deep`` (a reply nested 200 000 deep; MIB is ignored).
- ``truncate SIZE ADAPTER``: serves ADAPTER with ``harnesses.server`` (shared framing where
  offered), but right after its start reply it shrinks the client's shared region to SIZE
  bytes (ftruncate), as a hostile harness may; where that is refused it says so on stderr
  and goes on.
- ``jvm-no-heap``: dies at start-up the way HotSpot does under a too small address-space
  limit (its fatal error on stdout, exit 1).
- ``v8-no-code-range``: dies at start-up the way Node.js does there (stderr, SIGTRAP).
- ``missing-library``: dies at start-up for a reason that has nothing to do with memory.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

#: Seconds after the first reply that ``twice`` sends the late copy (quality 100).
LATE = 0.5
#: ``twice`` answers the encode of a chunk of this shape twice.
TWICE_SHAPE = [11, 11]


def _quality(request: object) -> object:
    if not isinstance(request, dict) or request.get("op") != "parse":
        return None
    codec = request.get("codec")
    config = codec.get("configuration") if isinstance(codec, dict) else None
    quality = config.get("quality") if isinstance(config, dict) else None
    return quality if type(quality) is int else None  # True == 1, and the corpus has a quality of true


def twice(spec: str) -> int:
    # Imported here: the modes that die at start-up must start as fast as a real runtime fails.
    from zarr_jpeg_conformance.harnesses.server import Server
    from zarr_jpeg_conformance.protocol.framing import JSON_LINES, FrameReader, encode_message

    server = Server(spec)
    reader = FrameReader(JSON_LINES, cap=None)
    out = sys.stdout.buffer
    lock = threading.Lock()
    held = b""
    while (frame := reader.pop_from(sys.stdin.buffer)) is not None:
        framing = server.framing
        reply = b"".join(encode_message(server.handle(frame.message), framing))
        quality = _quality(frame.message)
        request = frame.message
        chunk = request.get("chunk") if isinstance(request, dict) and request.get("op") == "encode" else None
        doubled = quality == 1 or (isinstance(chunk, dict) and chunk.get("shape") == TWICE_SHAPE)
        with lock:
            out.write(held + (reply * 2 if doubled else reply))
            out.flush()
        held = reply if quality == 99 else b""
        if quality == 100:

            def late(copy: bytes = reply) -> None:
                time.sleep(LATE)
                with lock:
                    out.write(copy)
                    out.flush()

            threading.Thread(target=late, daemon=True).start()
        reader.framing = server.framing
        if server.stopped:
            break
    return 0


def _serve(spec: str, before: Callable[[object], None] = lambda request: None,
           after: Callable[[dict[str, Any]], None] = lambda reply: None) -> int:
    """Serve ADAPTER correctly, with ``before`` run on each request and ``after`` on each reply before it is sent."""
    from zarr_jpeg_conformance.harnesses.server import Server
    from zarr_jpeg_conformance.protocol.framing import JSON_LINES, FrameReader, encode_message

    server = Server(spec)
    reader = FrameReader(JSON_LINES, cap=None)
    out = sys.stdout.buffer
    while (frame := reader.pop_from(sys.stdin.buffer)) is not None:
        before(frame.message)
        framing = server.framing
        reply = server.handle(frame.message)
        after(reply)
        out.write(b"".join(encode_message(reply, framing)))
        out.flush()
        reader.framing = server.framing
        if server.stopped:
            break
    return 0


def bare(spec: str) -> int:
    return _serve(spec, after=lambda reply: reply.pop("exception", None))


#: The ops ``hang`` counts by default: every op a suite asks for (start and stop never hang).
HANG_OPS = ("parse", "build", "encode", "decode", "bench")


def hang(spec: str, every: int = 3, ops: Sequence[str] = HANG_OPS) -> int:
    counted = [0]

    def before(request: object) -> None:
        if isinstance(request, dict) and request.get("op") in ops:
            counted[0] += 1
            if counted[0] % every == 0:
                if os.environ.get("FAKE_HANG_PIDFILE"):  # where a test learns that it hangs, and which process
                    with open(os.environ["FAKE_HANG_PIDFILE"], "a", encoding="ascii") as f:
                        f.write(f"{os.getpid()}\n")
                while True:  # asleep, not spinning: the machine is shared while the client waits
                    time.sleep(3600)

    return _serve(spec, before=before)


def bloat(kind: str, mib: int) -> int:
    import json

    out = sys.stdout.buffer
    size = mib << 20
    for line in sys.stdin.buffer:
        request = json.loads(line)
        seq, op = request["seq"], request["op"]
        if op == "start":
            reply = {"seq": seq, "status": "ok", "protocol": 1, "name": "bloat", "roles": ["encode", "decode"]}
        elif op == "parse":
            reply = {"seq": seq, "status": "ok", "handle": "1"}
        elif op == "stop":
            return 0
        elif kind == "garbage":
            out.write(b"x" * size + b"\n")
            out.flush()
            continue
        elif kind == "deep":
            out.write(b'{"seq": %d, "status": "ok", "chunk": ' % seq + b"[" * 200_000 + b"]" * 200_000 + b"}\n")
            out.flush()
            continue
        else:  # written as bytes: json.dumps takes seconds over a string of 40 MiB
            head = b'{"seq": %d, "status": "error", "message": "' % seq if kind == "error" else \
                b'{"seq": %d, "status": "ok", "padding": "' % (seq + 1000)
            out.write(head + b"x" * size + b'"}\n')
            out.flush()
            continue
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()
    return 0


def truncate(size: int, spec: str) -> int:
    from zarr_jpeg_conformance.harnesses import server

    started = server.Server._start

    def start(self: Any, request: dict[str, Any]) -> dict[str, Any]:
        reply = started(self, request)
        region = request.get("region")
        if isinstance(region, dict):
            try:
                os.truncate(region["path"], size)
            except OSError as exc:
                sys.stderr.write(f"truncate refused: {exc}\n")
        return reply

    server.Server._start = start  # type: ignore[method-assign]
    return server.main([spec])


def main(argv: Sequence[str]) -> int:
    mode = argv[0]
    if mode == "truncate":
        return truncate(int(argv[1]), argv[2])
    if mode == "bloat":
        return bloat(argv[1], int(argv[2]))
    if mode == "twice":
        return twice(argv[1])
    if mode == "bare":
        return bare(argv[1])
    if mode == "hang":
        every = [int(argv[2])] if len(argv) > 2 else []
        return hang(argv[1], *every, *([argv[3].split(",")] if len(argv) > 3 else []))
    sys.stdin.readline()  # the start request
    if mode == "jvm-no-heap":
        # What OpenJDK 17 printed under `ulimit -v 1048576` (measured); HotSpot writes it to stdout.
        sys.stdout.write("Error occurred during initialization of VM\nCould not allocate compressed class space: 1073741824 bytes\n")
        sys.stdout.flush()
        return 1
    if mode == "v8-no-code-range":
        # What Node.js 20 printed under `ulimit -v 300000` (measured), before dying of SIGTRAP.
        sys.stderr.write("\n#\n# Fatal process OOM in Failed to reserve virtual memory for CodeRange\n#\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGTRAP)
        return 1
    if mode == "missing-library":
        sys.stderr.write("harness: error while loading shared libraries: libjpeg.so.62: cannot open shared object file\n")
        return 127
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
