"""An implementation in another process, in any language, over the harness protocol.

:class:`ExecAdapter` starts a harness command, speaks protocol version 1 with it
(``schema/protocol/v1.schema.json``, described in ``docs/protocol.md``) in JSON lines, or
in binary framing when the harness chooses it, and presents it to the suites as an
ordinary :class:`~zarr_jpeg_conformance.adapters.Adapter`. A harness that segfaults, hangs
or runs out of memory takes only the current call down with it: the call raises
:class:`HarnessCrashed` or :class:`HarnessTimeout` (neither a rejection), and the next
call starts a fresh process, replaying ``start`` and the ``parse`` of every handle it is
given. POSIX only (process groups, resource limits).
"""

from __future__ import annotations

import atexit
import functools
import json
import math
import re
import reprlib
import shlex
import threading
import time
import traceback
import warnings
import weakref
from collections import deque
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, ParamSpec, TypeVar

import numpy as np

from ..protocol import framing, shared
from ..protocol.framing import (
    FRAMINGS,
    JSON_LINES,
    OFFERED,
    SHARED,
    Frame,
    FrameError,
    MessageTooLarge,
    encode_message,
    encode_placed,
    on_the_wire,
)
from ..protocol.wire import PROTOCOL_VERSION, TEXT_CAP, array_from_wire, array_to_wire, field_bytes
from .labels import KINDS, ROLES
from .process import DEFAULT_MEMORY_LIMIT, HarnessProcess, describe_exit
from .zarr_codecs import GivenLog

#: Seconds a call may take. Measured over every suite with --isolate and the node
#: harnesses: the slowest call took 77 ms (an encode of the 65500-wide chunk), a harness
#: start 240 ms. A minute leaves room for slow machines and debug builds, and still ends a hang.
DEFAULT_TIMEOUT = 60.0
#: Seconds a harness has to exit after ``stop`` before it is killed.
STOP_GRACE = 5.0

#: Requests ``encode_many`` and ``decode_many`` keep in flight by default. One waiting
#: request is enough to keep a harness busy while the client reads the reply before it;
#: a few more ride out the client being descheduled on a busy machine.
WINDOW = 8

#: How many answered requests of a process are remembered to charge a late second reply to.
_ANSWERED_KEPT = 256

#: What a runtime writes when it cannot get the address space it wants at start-up: HotSpot
#: (heap, class space, code cache, thread stacks), V8 (code range, heap), Go, Rust, C++,
#: Python, and the C library's ENOMEM text.
_OUT_OF_ADDRESS_SPACE = re.compile(
    r"could not reserve enough space|could not allocate compressed class space|insufficient memory for the java runtime"
    r"|cannot allocate memory|out of memory|fatal process oom|failed to reserve virtual memory"
    r"|memory allocation of \d+ bytes failed|std::bad_alloc|\bMemoryError\b",
    re.IGNORECASE,
)


#: How a value a harness sent is shown in a message: a few levels and items of it, each cut short (reprlib), however
#: large or deeply nested the value is.
_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxdict, _SHOWN.maxlist, _SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlong = 3, 8, 8, 200, 200, 60


_repr = _SHOWN.repr


def _excerpt(value: object, limit: int = TEXT_CAP) -> str:
    """Text a harness sent as one message may carry it: at most ``limit`` characters of it (another value: its repr)."""
    if not isinstance(value, str):
        return _repr(value)
    return value if len(value) <= limit else f"{value[:limit]}... ({len(value):,} characters in all)"


def _json_copy(value: Mapping[str, Any], what: str) -> Any:
    """``value`` through a JSON round trip: exactly what zarr.json could hold, and a copy that
    later edits of the caller's dict cannot change. TypeError names ``what`` if it is not JSON."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} is not JSON: {exc}") from exc


class HarnessFailure(RuntimeError):
    """The harness process failed as a whole; the next call starts a new one.

    ``outcome`` names the verdict the plugin records for the case ("crash", "timeout" or
    "error"). Deliberately not a ValueError or TypeError: this is never a rejection.
    """

    outcome = "error"
    #: The request it is charged to, by seq, when that is not the call it was raised in: a
    #: second reply fails the request it repeats (see ExecAdapter.encode_many).
    seq: int | None = None
    #: The op of the request that got no reply (a timeout): what the plugin's timeout budget counts.
    op: str | None = None


class HarnessCrashed(HarnessFailure):
    """The harness process died (signal, exit, closed stdout) before replying."""

    outcome = "crash"


class HarnessTimeout(HarnessFailure):
    """The harness did not reply within the timeout and was killed."""

    outcome = "timeout"


class HarnessProtocolError(HarnessFailure):
    """The harness wrote something that is not a protocol version 1 reply; it was killed."""


class HarnessError(RuntimeError):
    """The harness replied ``error``: the implementation failed on this call, the process lives on."""


class HarnessWarning(RuntimeWarning):
    """Something a harness did that no current call can be charged with (see ExecAdapter.incidents)."""


class HarnessRejection(ValueError):
    """The harness replied ``rejected``: a clean rejection, as the Adapter contract defines it (``exception``: the type
    its reply names)."""

    def __init__(self, message: str, requirement: str | None = None, exception: str | None = None) -> None:
        super().__init__(message)
        self.requirement = requirement
        self.exception = exception


class RemoteCodec:
    """A configuration parsed by a harness: the codec object and its handle in one process."""

    __slots__ = ("__weakref__", "codec", "generation", "handle", "owner")

    def __init__(self, owner: ExecAdapter, codec: Any, handle: str, generation: int) -> None:
        self.owner = weakref.ref(owner)
        self.codec = codec
        self.handle = handle
        self.generation = generation

    def __repr__(self) -> str:
        return f"RemoteCodec(handle={self.handle!r}, generation={self.generation}, codec={self.codec!r})"


T = TypeVar("T")
E = TypeVar("E", bound=BaseException)


def _detached(exc: E) -> E:
    """``exc`` without what the calls it went through held: each finished frame of its traceback, and of the
    exceptions it was raised from, is cleared (a reply of 200 MiB, a reader's buffer), and a context it was raised
    without (``from None``) is dropped. Failures are kept (``incidents``), and a session may see hundreds."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        traceback.clear_frames(link.__traceback__)  # a frame still running (the caller's) is left as it is
        if link.__suppress_context__:
            link.__context__ = None
        link = link.__cause__ or link.__context__
    return exc


P = ParamSpec("P")
R = TypeVar("R")


def _frees(method: Callable[P, R]) -> Callable[P, R]:
    """A call of the adapter whose failure holds none of what the call held (:func:`_detached`)."""

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except (HarnessFailure, HarnessError, HarnessRejection) as exc:
            failure: Exception = exc
        raise _detached(failure)  # outside the except: nothing more is chained to it

    return call


@dataclass(frozen=True, slots=True)
class _Sent:
    """A request queued for the running harness, whose reply is not read yet."""

    seq: int
    op: str
    #: Where the request ends in the byte stream to the harness (HarnessProcess.send).
    end: int
    #: The harness's stderr when it was sent: what it writes from there on belongs to it.
    mark: int
    #: In shared framing, the request's space in the region: where it starts, and the room offered for the reply's payload.
    place: tuple[int, int, int] | None = None


class Returned:
    """What an implementation behind harnesses.server returned where the Adapter contract wants bytes (encode) or a
    numpy array (decode), standing in for it: of the same type name, neither bytes nor an array, so a suite judges
    it as it judges the value itself in process ("decode returned memoryview, not an array")."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<a {type(self).__name__} the implementation returned>"


@functools.lru_cache(maxsize=64)  # names come from a harness: a bounded cache
def _stand_in_type(name: str) -> type[Returned]:
    return type(name, (Returned,), {"__slots__": ()})


def _raised(outcome: T | Exception) -> T:
    """The value of one call's outcome, or its exception raised."""
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def _encode_body(chunk: np.ndarray) -> dict[str, Any]:
    """What an encode request says besides its op and handle (TypeError for what no chunk can be)."""
    if not isinstance(chunk, np.ndarray):
        raise TypeError(f"chunk must be a numpy array, got {type(chunk).__name__}")
    return {"chunk": array_to_wire(chunk, raw=True)}


def _decode_body(data: bytes, chunk_shape: tuple[int, ...]) -> dict[str, Any]:
    """What a decode request says besides its op and handle."""
    return {"data": bytes(data), "chunk_shape": [int(n) for n in chunk_shape]}


def _bodies(body: Callable[..., dict[str, Any]], items: Sequence[Any], *rest: Any) -> list[dict[str, Any] | Exception]:
    """The request body of each item, or the TypeError that says why it can be none (that item's outcome)."""
    out: list[dict[str, Any] | Exception] = []
    for item in items:
        try:
            out.append(body(item, *rest))
        except TypeError as exc:
            out.append(exc)
    return out


#: Room offered for an encode reply's stream beyond the chunk's own size: a tiny chunk's stream is mostly its headers.
STREAM_ROOM = 64 << 10


def _reply_room(request: Mapping[str, Any], size: int) -> int:
    """Bytes of the region offered for the payload of the reply to ``request`` (whose own payload is ``size`` bytes)."""
    if request.get("op") == "encode":
        return size + STREAM_ROOM
    shape = request.get("chunk_shape")
    if request.get("op") == "decode" and isinstance(shape, list) and all(isinstance(n, int) and n >= 0 for n in shape):
        return math.prod(shape)  # samples of one byte: a reply that is more goes on the pipe
    return 0


def _seq_of(frame: Frame | None) -> int | None:
    """The integer ``seq`` of a message read from a harness, if it has one."""
    seq = frame.message.get("seq") if frame is not None and isinstance(frame.message, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


_LIVE: weakref.WeakSet[ExecAdapter] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for adapter in list(_LIVE):
        adapter.close()


class ExecAdapter:
    """An Adapter whose implementation is a harness command speaking protocol version 1.

    ``command`` is a shell-like string (split with :func:`shlex.split`, never run by a
    shell) or an argument list. The constructor starts the harness and raises
    :class:`HarnessFailure` / :class:`HarnessError` (RuntimeError) or OSError if it
    cannot, with the harness's stderr in the message. ``timeout`` bounds every call in
    seconds; ``memory_limit`` is the address-space limit of the process in bytes (None:
    unlimited); ``max_reply`` caps one message from the harness in bytes (default
    :data:`~zarr_jpeg_conformance.protocol.framing.MAX_MESSAGE`, 256 MiB; None: no cap).
    ``framings`` are the framings offered in ``start`` (JSON lines always; binary framing
    if the harness chooses it; shared framing, a memory region for the payloads, only where asked for and on Linux).
    ``on_message(direction, message)`` sees every message sent ("->") and received ("<-") as it is on the wire (base64 text in JSON lines, the
    header in binary framing), for logs and protocol tests. ``gate``, if set, is called with
    the op of every request before it is sent, and with "start" before a process is started;
    whatever it raises, the request is not sent (the plugin's timeout budget, --max-timeouts).
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        name: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
        max_reply: int | EllipsisType | None = ...,
        framings: Sequence[str] = OFFERED,
        on_message: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise RuntimeError("empty harness command")
        #: What the harness says it gave its codec for each codec object (a parse reply's ``given``), if anything.
        self.given_log = GivenLog()
        self.command = command if isinstance(command, str) else shlex.join(self.argv)
        self.timeout = timeout
        self.memory_limit = memory_limit
        # Read when the adapter is made, so that assigning framing.MAX_MESSAGE changes the default.
        self.max_reply: int | None = framing.MAX_MESSAGE if isinstance(max_reply, EllipsisType) else max_reply
        if JSON_LINES not in framings or not set(framings) <= set(FRAMINGS):
            raise ValueError(f"framings must include {JSON_LINES!r} and be among {FRAMINGS}, got {list(framings)}")
        # Shared framing needs a region the harness inherits: where the platform cannot make one, it is not offered.
        self.framings = [f for f in framings if f != SHARED or shared.available()]
        #: The memory region of shared framing, made at the first start that offers it and kept across restarts.
        self._region: shared.Region | None = None
        #: The framing of the running process (JSON lines until its start reply chooses).
        self.framing = JSON_LINES
        self.on_message = on_message
        #: Called with an op before a request of it is sent (see the class docstring); None: every request is sent.
        self.gate: Callable[[str], None] | None = None
        #: Every crash, timeout and protocol failure so far, oldest first (the plugin reads it).
        self.incidents: list[HarnessFailure] = []
        #: A label stamped (as ``.context``) on the incidents of calls started while it is set;
        #: the plugin sets the test's node ID, so a late failure of a call abandoned by an
        #: earlier test (a worker thread that gave up on it) is not blamed on the current one.
        self.context: object = None
        self._call_context: object = None
        #: How many processes were started (1 + restarts).
        self.starts = 0
        self._lock = threading.RLock()
        self._proc: HarnessProcess | None = None
        self._seq = 0
        #: The requests answered by the running process, seq -> (op, context), newest last:
        #: output that follows a reply is charged to the request whose seq it carries.
        self._answered: dict[int, tuple[str, object]] = {}
        self._hello: dict[str, Any] = {}
        self._start()
        self.name: str = name or self._hello["name"]
        self.roles: frozenset[str] = frozenset(self._hello["roles"])
        #: What the harness says it puts under test (see the Adapter contract); "codec" unless it says.
        kind = self._hello.get("kind")
        self.kind: str = kind if isinstance(kind, str) and kind in KINDS else "codec"
        self.language: str = str(self._hello.get("language") or "unknown")

    def __repr__(self) -> str:
        return f"ExecAdapter({self.command!r}, name={getattr(self, 'name', None)!r})"

    # ---------------------------------------------------------------- Adapter protocol

    def versions(self) -> dict[str, str]:
        """The harness's library versions, plus its own version under "harness"."""
        return {"harness": str(self._hello.get("version", "?")), **{k: str(v) for k, v in self._hello.get("versions", {}).items()}}

    @_frees
    def parse(self, codec: Mapping[str, Any]) -> RemoteCodec:
        doc = _json_copy(codec, "the codec object")
        with self._lock:
            self._begin()
            try:
                reply = self._call({"op": "parse", "codec": doc})
            except HarnessRejection as exc:
                if exc.exception == "NoEquivalent":  # the harness's adapter had nothing to give its codec
                    self.given_log.add(doc, None, str(exc))
                raise
            given = reply.get("given")
            if isinstance(given, dict):
                self.given_log.add(doc, given)
            return RemoteCodec(self, doc, self._expect_str(reply, "handle"), self.starts)

    @_frees
    def build(self, options: Mapping[str, Any]) -> Any:
        """The codec object the harness's builder writes for ``options`` (the role ``build``)."""
        doc = _json_copy(options, "the build options")
        with self._lock:
            self._begin()
            reply = self._call({"op": "build", "options": doc})
            if "codec" not in reply:
                raise self._violation(f"reply to build has no 'codec': {_repr(reply)}")
            return reply["codec"]

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        return _raised(self.encode_many(parsed, [chunk], window=1)[0])

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        return _raised(self.decode_many(parsed, [data], chunk_shape, window=1)[0])

    def encode_many(self, parsed: object, chunks: Sequence[np.ndarray], *, window: int = WINDOW) -> list[bytes | Exception]:
        """:meth:`encode` of each chunk, with up to ``window`` requests in flight (pipelining).

        Item i is what ``encode(parsed, chunks[i])`` would return, or the exception it would
        raise (a rejection is a ValueError): see :meth:`_many` for how failures are charged.
        The chunks must not change until this returns (their samples are sent without a copy).
        """
        return self._many("encode", parsed, _bodies(_encode_body, chunks), self._stream_of, window)

    def decode_many(
        self, parsed: object, streams: Sequence[bytes], chunk_shape: tuple[int, ...], *, window: int = WINDOW
    ) -> list[np.ndarray | Exception]:
        """:meth:`decode` of each stream to a chunk of ``chunk_shape``, with up to ``window`` requests in flight."""
        return self._many("decode", parsed, _bodies(_decode_body, streams, chunk_shape), self._chunk_of, window)

    def run_many(self, op: str, parsed: object, items: Sequence[Any], *rest: Any, window: int = WINDOW) -> list[Exception | None]:
        """Each item's outcome of :meth:`encode_many` (``op`` "encode") or :meth:`decode_many` ("decode", ``rest``: the
        chunk shape), without its value: None where the call succeeded.

        Every reply is read, checked and unpacked as there, and its value freed at once. For a caller that needs only
        whether each call succeeded, as a benchmark does: a batch that held its results would take fresh memory for
        each (600 decoded 256x256x3 chunks, 118 MB: 47 page faults a call), where a caller in its steady state frees
        each result and its memory is used again. Measured, shared framing, batches of 600: the client's CPU per decode
        fell from 293-322 us to 118-131 us.
        """
        if op == "encode":
            return self._many(op, parsed, _bodies(_encode_body, items), self._stream_of, window, keep=False)
        if op == "decode":
            return self._many(op, parsed, _bodies(_decode_body, items, *rest), self._chunk_of, window, keep=False)
        raise ValueError(f"op must be 'encode' or 'decode', got {op!r}")

    @_frees
    def bench(self, parsed: object, of: str, repeat: int, *args: Any) -> list[float]:
        """Seconds each of ``repeat`` runs of an encode (``args``: the chunk) or a decode (the stream
        and the chunk shape) takes inside the harness, one after another: the library's own speed
        in its process, with no protocol in between (the optional ``bench`` request).

        A harness without it replies ``error`` (HarnessError); a rejection of the chunk or the
        stream is a HarnessRejection, as for the call itself.
        """
        body = _encode_body(*args) if of == "encode" else _decode_body(*args)
        with self._lock:
            self._begin()
            reply = self._call({"op": "bench", "handle": self._handle(parsed), "of": of, "repeat": repeat, **body})
        seconds = reply.get("seconds")
        if not isinstance(seconds, list) or len(seconds) != repeat or not all(
            isinstance(t, int | float) and not isinstance(t, bool) and t >= 0 for t in seconds
        ):
            raise self._violation(f"bench reply: 'seconds' must be {repeat} durations in seconds, got {_repr(seconds)}")
        return [float(t) for t in seconds]

    def _stream_of(self, reply: dict[str, Any]) -> bytes:
        if "returned" in reply:
            return self._stand_in(reply)  # what the contract forbids, as it came
        try:
            return field_bytes(reply.get("data"))
        except ValueError as exc:
            raise self._violation(f"encode reply: {exc}") from exc

    def _stand_in(self, reply: dict[str, Any]) -> Any:
        """A ``returned`` reply (harnesses.server's): a stand-in of the type the implementation returned."""
        name = reply["returned"]
        if type(name) is not str or not 0 < len(name) <= 100 or not name.isprintable():
            raise self._violation(f"'returned' must name a type in 1 to 100 printable characters, got {_repr(name)}")
        return _stand_in_type(name)()

    def _chunk_of(self, reply: dict[str, Any]) -> np.ndarray:
        if "returned" in reply:
            return self._stand_in(reply)
        chunk = reply.get("chunk")
        try:
            if not isinstance(chunk, dict):
                raise ValueError(f"'chunk' must be an object, got {type(chunk).__name__}")
            return array_from_wire(chunk)
        except ValueError as exc:
            raise self._violation(f"decode reply: {exc}") from exc

    def _many(
        self, op: str, parsed: object, bodies: Sequence[dict[str, Any] | Exception], unpack: Callable[[dict[str, Any]], T], window: int,
        *, keep: bool = True,
    ) -> list[Any]:
        """Send ``op`` with each body, up to ``window`` requests ahead of the replies, and read the replies in order.

        Each item's outcome is what a call of its own would give: the value, a
        HarnessRejection (ValueError), a HarnessError, or a HarnessFailure charged to the
        request that caused it (it carries the case's context as any call's does). A
        request's timeout counts from the reply before it (when the harness turned to it).
        After a failure that ends the process (crash, timeout, protocol violation), the
        requests that were in flight behind the failed one are sent again to a fresh
        process, so each gets its own outcome. A second reply to a request of this batch
        that comes before the batch's last reply fails that request (the harness is killed,
        as for any second reply that comes with the first). A body that is an exception is
        that item's outcome, and nothing is sent for it. Without ``keep``, a value is unpacked and dropped: None stands
        for it.
        """
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        results: list[Any] = [body if isinstance(body, Exception) else None for body in bodies]
        todo = deque(i for i, body in enumerate(bodies) if not isinstance(body, Exception))
        in_flight: deque[tuple[int, _Sent]] = deque()
        #: Requests of this batch answered by the running process: seq -> item.
        answered: dict[int, int] = {}
        with self._lock:
            self._begin()
            try:
                while todo or in_flight:
                    while todo and len(in_flight) < window:
                        i = todo.popleft()
                        try:
                            handle = self._handle(parsed)  # starts (and re-parses in) a fresh process when needed
                        except Exception as exc:  # noqa: BLE001 - a start that failed, a wrong parsed codec: this item's outcome
                            results[i] = exc
                            answered.clear()
                            continue
                        body = bodies[i]
                        assert isinstance(body, dict)
                        in_flight.append((i, self._send({"op": op, "handle": handle, **body})))
                    if not in_flight:
                        continue
                    i, sent = in_flight[0]
                    try:
                        try:
                            value = unpack(self._receive(sent, batch=answered, last=len(in_flight) == 1))
                        except MemoryError:
                            raise self._out_of_memory(sent) from None
                        results[i] = value if keep else None
                    except (HarnessRejection, HarnessError) as exc:  # a reply: the process goes on
                        results[i] = _detached(exc)
                    except HarnessFailure as exc:  # the process is gone, with the replies it owed
                        charged = answered.get(exc.seq, i) if exc.seq is not None else i
                        results[charged] = _detached(exc)
                        todo.extendleft(reversed([j for j, _ in in_flight if j != charged]))
                        in_flight.clear()
                        answered.clear()
                        continue
                    in_flight.popleft()
                    answered[sent.seq] = i
            finally:
                if in_flight and self._proc is not None:
                    # Interrupted with replies still owed: they would confuse the next call.
                    self._proc.kill()
                    self._proc = None
        return results

    # ---------------------------------------------------------------- lifecycle

    @property
    def pid(self) -> int | None:
        """Process ID of the running harness, if one runs."""
        return self._proc.pid if self._proc else None

    def close(self) -> None:
        """Send ``stop`` and wait for the harness to exit; kill it if it does not."""
        with self._lock:
            _LIVE.discard(self)
            self._check_quiet()
            proc, self._proc = self._proc, None
            if proc is None:
                self._drop_region()
                return
            self._seq += 1
            message = {"seq": self._seq, "op": "stop"}
            if self.on_message:
                self.on_message("->", message)
            try:
                frame = proc.exchange(encode_message(message, self.framing), time.monotonic() + STOP_GRACE)
                if frame is not None and self.on_message and isinstance(frame.message, dict):
                    self.on_message("<-", on_the_wire(frame.message, self.framing))
            except (OSError, TimeoutError, ValueError):
                pass  # it is going away either way
            proc.shutdown(STOP_GRACE)
            self._drop_region()

    def _drop_region(self) -> None:
        if self._region is not None:  # the process that mapped it is gone; a later start makes another
            self._region.close()
            self._region = None

    def __enter__(self) -> ExecAdapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- internals

    def _start(self) -> None:
        if self.gate is not None:
            self.gate("start")  # before a process exists: a refused start leaves none half-started
        region = self._shared_region()
        self._proc = HarnessProcess(self.argv, self.memory_limit, self.max_reply, pass_fds=(region.fd,) if region else ())
        self.starts += 1
        self._seq = 0
        self._answered = {}
        self.framing = JSON_LINES
        request: dict[str, Any] = {"op": "start", "protocol": PROTOCOL_VERSION}
        if self.framings != [JSON_LINES]:
            request["framings"] = self.framings
        if region is not None:
            request["region"] = {"path": region.path, "size": region.size}
        hello = self._call(request, starting=True)
        chosen = hello.get("framing", JSON_LINES)
        if chosen not in self.framings:
            raise self._violation(f"start reply chooses framing {_repr(chosen)}; the client offered {self.framings}")
        if hello.get("protocol") != PROTOCOL_VERSION:
            raise self._violation(f"harness speaks protocol {_repr(hello.get('protocol'))}, not {PROTOCOL_VERSION}")
        roles = hello.get("roles")
        if not isinstance(roles, list) or not roles or not all(type(r) is str for r in roles) or not set(roles) <= ROLES:
            raise self._violation(f"start reply has roles {_repr(roles)}: a non-empty subset of {', '.join(sorted(ROLES))}")
        if not isinstance(hello.get("name"), str) or not hello["name"]:
            raise self._violation(f"start reply has no name: {_repr(hello)}")
        if self._hello and (hello["name"], sorted(roles)) != (self._hello["name"], sorted(self._hello["roles"])):
            raise self._violation(f"restarted harness is {_excerpt(hello['name'], 200)} {_repr(roles)}, was {self._hello['name']} "
                                  f"{self._hello['roles']}")
        self._hello = hello
        # From the next request on, both directions use the chosen framing.
        self.framing = chosen
        assert self._proc is not None
        self._proc.reader.framing = chosen
        if chosen == SHARED:
            assert region is not None  # offered only with one
            self._proc.reader.region = region.view
        _LIVE.add(self)  # closed at exit, also after a restart

    def _handle(self, parsed: object) -> str:
        """The handle of ``parsed`` in the running process, replaying its ``parse`` after a restart."""
        if not isinstance(parsed, RemoteCodec) or parsed.owner() is not self:
            raise TypeError(f"{self.name}: expected a parsed codec from {self.name}.parse, got {type(parsed).__name__}")
        if self._proc is None:
            self._start()
        if parsed.generation != self.starts:
            try:
                reply = self._call({"op": "parse", "codec": parsed.codec})
            except HarnessRejection as exc:
                raise HarnessError(f"the restarted harness rejected a configuration it had accepted: {exc}") from exc
            parsed.handle, parsed.generation = self._expect_str(reply, "handle"), self.starts
        return parsed.handle

    def _begin(self) -> None:
        """Start a call: note whose it is, and charge output nobody asked for to the call before."""
        self._call_context = self.context
        self._check_quiet()

    def _check_quiet(self) -> None:
        """Deal with output that arrived after the last reply, before this call can be confused by it.

        A whole message that repeats the reply to an answered request (a second reply, a
        late one) is charged to that request (see :meth:`_late_copy`) and dropped: the
        harness goes on. Anything else (bytes that are no message, or not a whole one by
        now) is charged to the last request answered; the harness is killed and the next
        call restarts it. Either way this call, and its case, are not touched.
        """
        proc = self._proc
        if proc is None or not self._answered or not proc.unsolicited():
            return
        leftover = self._drop_late_copies(proc, ())
        if leftover is None:
            return
        seq = next(reversed(self._answered))
        op, context = self._answered[seq]
        exc = self._fail(
            HarnessProtocolError,
            f"protocol violation: after its reply to {op} (seq {seq}) it wrote {leftover[0]} that no request asked "
            "for; killed, the next call restarts it",
            proc,
            proc.stderr.mark(),
            context=context,
        )
        warnings.warn(f"{exc} [the call was made during {context}]", HarnessWarning, stacklevel=4)

    def _drop_late_copies(self, proc: HarnessProcess, batch: Container[int]) -> tuple[str, int | None] | None:
        """Take whole messages that repeat the reply to an earlier request off the stream.

        None when nothing else is buffered; otherwise what is, described for an error
        message, with the seq of the request in ``batch`` it repeats, if it does: the
        requests of the call just answered count as no late copy (that call takes the blame
        itself), nor does a message that answers no request, nor bytes that are no message
        or not a whole one yet.
        """
        while proc.reader.buffered:
            shown, count = proc.reader.peek(), proc.reader.buffered
            try:
                frame = proc.reader.pop()
            except FrameError:
                return f"{count} more bytes ({shown!r})", None
            if frame is None:
                return f"{count} more bytes ({shown!r}), not a whole message", None
            seq = _seq_of(frame)
            if seq in batch or seq not in self._answered:
                return f"{count} more bytes ({shown!r}; a second reply?)", seq if seq in batch else None
            self._late_copy(seq, shown)
        return None

    def _late_copy(self, seq: int, shown: bytes) -> None:
        """A reply to request ``seq`` came after that call returned: charge it there and warn, since its case is reported."""
        op, context = self._answered[seq]
        exc = HarnessProtocolError(
            f"{self._label()} (pid {self.pid}): protocol violation: a second reply to {op} (seq {seq}) came after "
            f"that call had returned ({shown!r}); dropped"
        )
        exc.context = context  # type: ignore[attr-defined]
        self.incidents.append(exc)
        warnings.warn(f"{exc} [the call was made during {context}]", HarnessWarning, stacklevel=5)

    def _shared_region(self) -> shared.Region | None:
        """The region for a process about to start, nothing in use in it; None where shared framing is not offered."""
        if SHARED not in self.framings:
            return None
        if self._region is None:
            try:
                self._region = shared.Region()
            except OSError as exc:  # no memfd here (a seccomp filter, an old kernel): binary framing will do
                warnings.warn(f"{self._label()}: shared framing not offered, no memory region: {exc}", HarnessWarning,
                              stacklevel=3)
                self.framings.remove(SHARED)
                return None
        self._region.reset()
        return self._region

    def _placed(self, message: dict[str, Any]) -> tuple[list[bytes | bytearray | memoryview], tuple[int, int, int] | None]:
        """A request's frame in shared framing: its payload, and room for its reply's, in the region where they fit."""
        assert self._region is not None
        holder = message["chunk"] if isinstance(message.get("chunk"), dict) else message
        data = holder.get("data")
        size = memoryview(data).nbytes if isinstance(data, bytes | bytearray | memoryview) else 0
        room = _reply_room(message, size)
        span, room_at = shared.layout(size, room)
        start = self._region.take(span) if size + room else None
        if start is None:  # nothing to place, or no space free now: on the pipe, as in binary framing
            return encode_message(message, SHARED), None
        reply_at = start + room_at
        return encode_placed(message, self._region.view, start if size else None, reply_at, room), (start, reply_at, room)

    def _from_region(self, sent: _Sent, frame: Frame, proc: HarnessProcess, mark: int) -> None:
        """Copy a reply's payload out of the room its request offered, and give the request's space back."""
        reply, place = frame.message, sent.place
        if place is not None:
            assert self._region is not None
            self._region.release(place[0])
        if frame.at is None:
            return
        holder = reply["chunk"] if isinstance(reply.get("chunk"), dict) else reply
        view = holder["data"]
        if place is None or frame.at != place[1] or len(view) > place[2]:
            offered = f"the room its request offered (at {place[1]}, {place[2]} bytes)" if place and place[2] else "no room its request offered"
            raise self._violation(f"reply to {sent.op} puts {len(view)} bytes at {frame.at} of the region, outside {offered}", proc, mark)
        holder["data"] = bytearray(view)  # the room is the next request's once given back

    def _call(self, request: dict[str, Any], *, starting: bool = False) -> dict[str, Any]:
        sent = self._send(request)
        try:
            return self._receive(sent, starting=starting)
        except MemoryError:
            pass
        except (HarnessFailure, HarnessError, HarnessRejection):
            raise
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM) with the reply still owed: it would confuse the next call, and a harness
            # that hangs would hold close() for its grace periods. It is ended, as an interrupted batch's is.
            if self._proc is not None:
                self._proc.kill()
                self._proc = None
            raise
        raise self._out_of_memory(sent, starting=starting)

    def _out_of_memory(self, sent: _Sent, *, starting: bool = False) -> HarnessFailure:
        """The client could not hold a reply: the harness is ended (what it sent is lost with its buffers) and the call
        fails, naming the cap that bounds one message, never with a bare MemoryError."""
        proc = self._proc
        size = f" (it had sent {proc.reader.buffered:,} bytes of it)" if proc is not None and proc.reader.buffered else ""
        if proc is not None:
            proc.reader.clear()  # before anything more is asked of the memory
        cap = f"{self.max_reply / (1 << 20):g} MiB" if self.max_reply else "none"
        return self._fail(HarnessFailure, f"the client ran out of memory reading the reply to {sent.op}{size}; one message may be "
                          f"up to max_reply bytes ({cap}): lower it with ExecAdapter(..., max_reply=N) or by assigning "
                          "zarr_jpeg_conformance.protocol.framing.MAX_MESSAGE, or give the client more memory; killed",
                          proc, sent.mark, starting=starting)

    def _send(self, request: dict[str, Any]) -> _Sent:
        """Number ``request`` and queue it for the harness (starting one if none runs); its reply is not awaited."""
        if self.gate is not None and request["op"] != "start":  # _start asked the gate before it started the process
            self.gate(request["op"])
        if self._proc is None:
            self._start()
        proc = self._proc
        assert proc is not None
        self._seq += 1
        message = {"seq": self._seq, **request}
        if self.on_message:
            self.on_message("->", on_the_wire(message, self.framing))
        # A start's failure is told by everything the new process wrote: one that dies at once may have
        # said why before this line runs (its words were lost so on a busy machine).
        mark = 0 if request["op"] == "start" else proc.stderr.mark()
        if self.framing == SHARED:
            parts, place = self._placed(message)
            return _Sent(self._seq, request["op"], proc.send(parts), mark, place)
        return _Sent(self._seq, request["op"], proc.send(encode_message(message, self.framing)), mark)

    def _receive(
        self, sent: _Sent, *, starting: bool = False, batch: Mapping[int, object] | None = None, last: bool = True
    ) -> dict[str, Any]:
        """The reply to ``sent``, the oldest request in flight, within the timeout from now.

        ``batch`` holds the requests of the same batch answered before it (a second reply
        to one of them fails that one: the exception's ``seq`` names it); ``last`` says
        that no request is in flight behind this one, so that any other output that came
        with the reply is a second reply.
        """
        proc = self._proc
        assert proc is not None
        op, mark = sent.op, sent.mark
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                frame = proc.receive(deadline)
            except TimeoutError:
                timeout = self._fail(HarnessTimeout, f"no reply to {op} within {self.timeout:g} s; killed", proc, mark)
                timeout.op = op
                raise timeout from None
            except MessageTooLarge as exc:
                raise self._violation(
                    f"reply to {op}: {exc}. A harness may send at most max_reply bytes in one message: raise it with "
                    "ExecAdapter(..., max_reply=N) or by assigning zarr_jpeg_conformance.protocol.framing.MAX_MESSAGE",
                    proc, mark,
                ) from None
            except FrameError as exc:
                raise self._violation(f"reply to {op}: {exc}", proc, mark, starting=starting) from None
            got = _seq_of(frame)
            if batch and got is not None and got in batch:
                failure = self._violation(
                    f"a second reply to {self._answered[got][0]} (seq {got}) came before the reply to {op} (seq {sent.seq}); "
                    "one request, one reply", proc, mark,
                )
                failure.seq = got
                raise failure
            if frame is None or got == sent.seq or got not in self._answered:
                break
            # A late copy of an earlier reply, ahead of this one: charged there, and this call goes on.
            self._late_copy(got, json.dumps(on_the_wire(frame.message, self.framing)).encode()[:200])
        if frame is None:
            # It closed stdout: normally it is dying. One that lingers is killed.
            code = proc.wait(2.0)
            if code is None:
                code = proc.kill()
            when = "before replying to start" if starting else f"during {op}"
            raise self._fail(HarnessCrashed, f"{describe_exit(code)} {when}", proc, mark, starting=starting)
        reply = frame.message
        if got != sent.seq:
            shown = reply.get("seq") if isinstance(reply, dict) else reply
            raise self._violation(f"reply to {op} (seq {sent.seq}) has seq {_repr(shown)}", proc, mark, starting=starting)
        if isinstance(reply, dict) and (sent.place is not None or frame.at is not None):
            self._from_region(sent, frame, proc, mark)
        if proc.written < sent.end:
            # It cannot have read what it has not been sent.
            raise self._violation(f"reply to {op} came with {sent.end - proc.written} bytes of the request still unread", proc, mark)
        if self.on_message:
            self.on_message("<-", on_the_wire(reply, self.framing))
        if last:
            leftover = self._drop_late_copies(proc, {**(batch or {}), sent.seq: None})
            if leftover is not None and "not a whole message" not in leftover[0]:
                # More than one message for one request: the request it repeats (else this one) is to blame.
                text, seq = leftover
                failure = self._violation(f"after its reply to {op} (seq {sent.seq}) it wrote {text}; one request, one reply", proc, mark)
                failure.seq = seq
                raise failure
        self._answered[sent.seq] = (op, self._call_context)
        if len(self._answered) > _ANSWERED_KEPT:
            del self._answered[next(iter(self._answered))]
        status = reply.get("status")
        if status == "ok":
            return reply
        # A harness's words are kept as an excerpt: a 200 MiB message must not live on in every failure it causes.
        message_text = _excerpt(reply.get("message", ""))
        exception = _excerpt(reply["exception"], 200) if reply.get("exception") else None
        if exception:
            message_text = f"{exception}: {message_text}" if message_text else exception
        if status == "rejected" and not starting:
            requirement = reply.get("requirement")
            raise HarnessRejection(message_text, _excerpt(requirement, 200) if isinstance(requirement, str) else None,
                                   exception)
        if status == "error" or (status == "rejected" and starting):
            trace = reply.get("trace")
            detail = f"\nharness trace:\n{trace[-TEXT_CAP:] if isinstance(trace, str) else _excerpt(trace)}" if trace else ""
            stderr = proc.stderr.since(mark)
            if stderr:
                detail += f"\nharness stderr:\n{stderr}"
            if starting:
                proc.kill()
                self._proc = None
            raise HarnessError(f"{self._label()} {op}: {message_text}{detail}")
        raise self._violation(f"reply to {op} has status {_repr(status)}", proc, mark)

    def _expect_str(self, reply: dict[str, Any], key: str) -> str:
        value = reply.get(key)
        if not isinstance(value, str) or not value:
            raise self._violation(f"reply to {reply.get('seq')} has no string {key!r}: {_repr(reply)}")
        return value

    def _label(self) -> str:
        return f"harness {getattr(self, 'name', None) or self.command!r}"

    def _violation(
        self, message: str, proc: HarnessProcess | None = None, mark: int = 0, *, starting: bool = False
    ) -> HarnessFailure:
        return self._fail(HarnessProtocolError, f"protocol violation: {message}; killed", proc or self._proc, mark, starting=starting)

    def _fail(
        self,
        kind: type[HarnessFailure],
        message: str,
        proc: HarnessProcess | None,
        mark: int,
        *,
        starting: bool = False,
        context: object = ...,
    ) -> HarnessFailure:
        # A harness that fails to start often says why on stdout (HotSpot writes its fatal
        # start-up errors there): read its last words before they are gone with it.
        stdout = proc.drain_stdout(1.0) if proc is not None and starting else ""
        if proc is not None:
            proc.kill()  # already dead or not, it is finished: reap it and close its pipes
        stderr = proc.stderr.since(mark, settle=1.0) if proc is not None else ""
        text = f"{self._label()} (pid {proc.pid if proc else '?'}): {message}"
        if proc is not None and proc.strays:
            text += (f"; it left {len(proc.strays)} process(es) outside its process group holding its stdout or stderr open "
                     f"(pid {', '.join(map(str, proc.strays[:10]))}: started with setsid?), killed too")
        daemons = [pid for pid in proc.daemons if pid not in proc.strays] if proc is not None else []
        if daemons:
            text += (f"; it left {len(daemons)} process(es) running outside its process group (pid "
                     f"{', '.join(map(str, daemons[:10]))}: daemons?), killed too")
        if starting and self.memory_limit and _OUT_OF_ADDRESS_SPACE.search(f"{stdout}\n{stderr}"):
            text += f"\n{self._memory_hint()}"
        if stdout:
            text += f"\nharness stdout:\n{stdout}"
        if stderr:
            text += f"\nharness stderr:\n{stderr}"
        exc = kind(text)
        self._proc = None
        exc.context = self._call_context if context is ... else context  # type: ignore[attr-defined]
        self.incidents.append(exc)
        return exc

    def _memory_hint(self) -> str:
        limit = f"{(self.memory_limit or 0) >> 20} MiB"
        return (
            f"The harness ran out of address space while starting: it exceeded --harness-memory ({limit}, the "
            "RLIMIT_AS of the harness process; ExecAdapter(memory_limit=...)). Runtimes reserve address space up "
            "front: raise --harness-memory (0 for no limit), or cap the runtime's reservations in the harness "
            "command (JVM: -Xmx512m -XX:ReservedCodeCacheSize=64m -XX:CompressedClassSpaceSize=64m; "
            "Node.js: --max-old-space-size=512)."
        )


__all__ = [
    "DEFAULT_TIMEOUT",
    "ExecAdapter",
    "HarnessCrashed",
    "HarnessError",
    "HarnessFailure",
    "HarnessProtocolError",
    "HarnessRejection",
    "HarnessTimeout",
    "HarnessWarning",
    "RemoteCodec",
]
