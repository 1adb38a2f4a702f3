"""How protocol messages sit on the byte stream: JSON lines, or binary frames.

Both framings carry the same messages (``docs/protocol.md``). In **JSON lines**, the
default every harness speaks, a message is one line of JSON and its one field of bytes
(an array's ``data``, or a stream's ``data``) is base64 text. In **binary framing**,
which a harness may choose in its ``start`` reply, a message is a *frame*: one JSON
header line, the same message without that field, plus ``"payload": N``, followed by
exactly N raw bytes that are the field. A message without bytes is the same line in
both framings.

In memory, on both sides, a message is a dict whose bytes field holds ``bytes``:
:func:`encode_message` turns it into what goes on the wire for a framing, and
:class:`FrameReader` turns a byte stream back into such dicts (in JSON lines the field
stays base64 text; :func:`~zarr_jpeg_conformance.protocol.wire.field_bytes` reads either).
Reading is linear in the bytes read, and bounded by a cap on one message's size.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO, NamedTuple

JSON_LINES = "json"
BINARY = "binary"
#: Binary frames whose payloads may lie in a memory region both processes map (``protocol.shared``).
SHARED = "shared"
#: Framings in the order a client prefers them least to most; JSON lines is always spoken.
FRAMINGS = (JSON_LINES, BINARY, SHARED)
#: What a client offers unless told otherwise: shared framing is asked for where payload copies are what is measured.
OFFERED = (JSON_LINES, BINARY)

#: The largest message a client accepts from a harness, in bytes (a JSON line, or a frame's
#: header line plus its payload; newlines not counted). The biggest reply the suites cause is a decoded chunk of
#: about 3 MB; 256 MiB leaves room for any real chunk and stops a runaway harness before
#: it exhausts the test session's memory. ``ExecAdapter(max_reply=...)`` overrides it per
#: harness; assigning this constant (e.g. in a conftest.py) changes the default.
MAX_MESSAGE = 256 << 20

_BYTES = (bytes, bytearray, memoryview)


class FrameError(ValueError):
    """The stream holds something that is not a message of this framing."""


class MessageTooLarge(FrameError):
    """A message exceeds the reader's cap; the stream cannot be trusted after it."""

    def __init__(self, size: int, cap: int, declared: bool) -> None:
        how = f"declares a payload that makes it {size} bytes" if declared else f"is over {size} bytes long and not finished"
        super().__init__(f"the message {how}, more than the cap of {_mib(cap)}")
        self.size = size
        self.cap = cap


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n} bytes"


#: One encoder and one decoder for every message: json.dumps and json.loads build or look up
#: theirs on every call, which costs as much as a small header itself (measured: 5.8 against
#: 4.2 us to write one, 6.2 against 3.9 us to read one).
_ENCODER = json.JSONEncoder(separators=(",", ":"))
_DECODER = json.JSONDecoder()
#: The C encoder that ``_ENCODER.encode`` makes anew for every message, made once (1.9 against 3.2 us for a decode
#: reply's header); no check for cycles, which a message of JSON values and of this module's own dicts cannot have.
_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)  # CPython's C accelerator; not typeshed's
_C_ENCODE = (
    _MAKE_ENCODER(None, _ENCODER.default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
    if _MAKE_ENCODER is not None else None
)


def _dumps(message: Mapping[str, Any]) -> bytes:
    text = "".join(_C_ENCODE(message, 0)) if _C_ENCODE is not None else _ENCODER.encode(message)
    return text.encode() + b"\n"


def _with_bytes_field(message: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], bytes | bytearray | memoryview | None]:
    """A copy of ``message`` (and of its chunk), the dict of the two that holds the bytes field, and the bytes.

    The bytes are ``chunk.data`` when the message has a ``chunk`` object, else ``data``;
    None when that member holds no bytes.
    """
    copy = dict(message)
    chunk = copy.get("chunk")
    holder = copy
    if chunk is not None and (type(chunk) is dict or isinstance(chunk, Mapping)):
        holder = copy["chunk"] = dict(chunk)
    data = holder.get("data")
    return copy, holder, data if isinstance(data, _BYTES) else None


def split_payload(message: Mapping[str, Any]) -> tuple[dict[str, Any], bytes | bytearray | memoryview | None]:
    """A message's binary frame: its header (``"payload": N`` in place of the bytes) and the bytes.

    A message without bytes is its own header, with no payload.
    """
    header, holder, data = _with_bytes_field(message)
    if data is None:
        return header, None
    del holder["data"]
    header["payload"] = memoryview(data).nbytes
    return header, data


#: Stands for the base64 text while the rest of a JSON line is written (JSON writes it as \u0000).
_PLACE = "\x00"


def _json_line(message: Mapping[str, Any]) -> bytes:
    """The JSON line of ``message``, its bytes as base64 text.

    The base64 text is spliced into the line rather than handed to the JSON encoder, which
    would scan it for characters to escape (it has none): for a 256x256x3 chunk, 1.5 ms of
    the JSON encoder against 0.1 ms for the splice.
    """
    copy, holder, data = _with_bytes_field(message)
    if data is None:
        return _dumps(message)
    holder["data"] = _PLACE
    parts = _dumps(copy).split(b'"\\u0000"')
    if len(parts) != 2:  # some other member is the placeholder too: the slow, sure way
        holder["data"] = base64.b64encode(data).decode("ascii")
        return _dumps(copy)
    return b"".join((parts[0], b'"', base64.b64encode(data), b'"', parts[1]))


def encode_message(message: Mapping[str, Any], framing: str = JSON_LINES) -> list[bytes | bytearray | memoryview]:
    """What goes on the wire for ``message``: one line, plus the payload in binary framing."""
    if framing != JSON_LINES:
        header, payload = split_payload(message)
        return [_dumps(header)] if payload is None else [_dumps(header), payload]
    return [_json_line(message)]


def encode_placed(message: Mapping[str, Any], region: memoryview, at: int | None, reply_at: int = 0,
                  reply_room: int = 0, *, room: int | None = None) -> list[bytes | bytearray | memoryview]:
    """A frame of shared framing: the payload written into ``region`` at ``at`` (None, or more than ``room`` bytes:
    after the header, as in binary framing), and, with ``reply_room``, the room at ``reply_at`` offered for the reply's
    payload."""
    header, payload = split_payload(message)
    if reply_room:
        header["reply_at"], header["reply_room"] = reply_at, reply_room
    if payload is None:
        return [_dumps(header)]
    if at is None or (room is not None and header["payload"] > room):
        return [_dumps(header), payload]
    region[at : at + header["payload"]] = memoryview(payload).cast("B")
    header["at"] = at
    return [_dumps(header)]


def placed_frame(message: Mapping[str, Any], size: int, at: int) -> list[bytes | bytearray | memoryview]:
    """The frame of shared framing of ``message``, which holds no bytes, whose payload of ``size`` bytes lies in the region
    at ``at`` already (a harness that decoded into the room its request offered)."""
    return [_dumps({**message, "payload": size, "at": at})]


def on_the_wire(message: Mapping[str, Any], framing: str = JSON_LINES) -> dict[str, Any]:
    """The JSON part of ``message`` as sent: base64 text in JSON lines, the header in binary framing.

    For logs and transcripts (the protocol schema validates these), not for the hot path.
    """
    if framing != JSON_LINES:
        return split_payload(message)[0]
    return json.loads(_json_line(message))


def attach_payload(header: dict[str, Any], payload: bytes | bytearray | memoryview) -> dict[str, Any]:
    """The message of a binary frame: ``payload`` back in the place :func:`split_payload` took it from."""
    del header["payload"]
    chunk = header.get("chunk")
    holder = chunk if isinstance(chunk, dict) else header
    if "data" in holder:
        where = "chunk.data" if holder is chunk else "data"
        raise FrameError(f"a frame with a payload must not also carry {where!r}: the payload is the bytes")
    holder["data"] = payload
    return header


class Frame(NamedTuple):
    """One message read from the stream (any JSON value; a dict for every valid message).

    A named tuple, not a frozen dataclass: one is made per message, and a frozen dataclass's fields are set one by one
    through ``object.__setattr__`` (0.65 against 0.2 us).
    """

    message: Any
    #: Bytes it took on the wire, newline and payload included (a payload in the shared region: not).
    size: int
    #: Where its payload lies in the shared region (shared framing), if it lies there.
    at: int | None = None


class FrameReader:
    """Cuts a byte stream into messages, in time linear in its length.

    Give it whatever arrives, either by :meth:`fill` (it reads straight into its own
    buffers: a payload lands where it will stay, with no copy) or by :meth:`feed`, and
    take messages out with :meth:`pop` (None until one is complete). ``framing`` may
    change between messages: a client switches after the ``start`` reply, a harness after
    sending it. ``cap`` bounds one message (None: unbounded): :class:`MessageTooLarge` as
    soon as a line grows past it or a header declares a payload beyond it, before that
    payload is read. Payloads come out as ``bytearray`` (writable, owned by the message).
    """

    def __init__(self, framing: str = JSON_LINES, cap: int | None = MAX_MESSAGE, *, skip_blank: bool = False) -> None:
        self.framing = framing
        self.cap = cap
        self.skip_blank = skip_blank
        #: Bytes received and not yet part of a message: the start of the next line.
        self._buf = bytearray()
        #: Where the search for the next newline resumes: bytes before it hold none.
        self._scanned = 0
        #: A binary header whose payload is arriving, the payload so far, how much of it is there.
        self._header: dict[str, Any] | None = None
        self._payload = bytearray()
        self._have = 0
        self._line_size = 0
        self._scratch: memoryview | None = None
        #: The shared region (shared framing): where a header's ``"at"`` points.
        self.region: memoryview | None = None

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        data = memoryview(data).cast("B")
        if self._header is not None:
            take = min(len(data), len(self._payload) - self._have)
            self._payload[self._have : self._have + take] = data[:take]
            self._have += take
            data = data[take:]
        self._buf += data

    def fill(self, readinto: Callable[[memoryview], int | None]) -> int | None:
        """Read once through ``readinto(buffer)``, which returns the count read (0: end of input) or None (nothing yet).

        A payload being read is read straight into its own buffer. Otherwise the read is
        small at first (a header line, or a short message, with the start of what follows)
        and doubles while the line it reads is not finished: a large payload behind a header
        then lands in its own buffer with no copy, and a long JSON line takes few reads.
        """
        if self._header is not None and self._have < len(self._payload):
            n = readinto(memoryview(self._payload)[self._have :])
            self._have += n or 0
            return n
        if self._scratch is None:
            self._scratch = memoryview(bytearray(_READ_SIZE))
        size = min(_READ_SIZE, max(_FIRST_READ, len(self._buf)))
        n = readinto(self._scratch[:size])
        if n:
            self._buf += self._scratch[:n]
        return n

    def _consume(self, n: int) -> None:
        if n >= len(self._buf):
            # A fresh buffer: one whose start was moved copies itself whole each time it grows,
            # where a fresh one is extended in place (measured: a 128 MiB JSON line 1.5x faster).
            self._buf = bytearray()
        else:
            del self._buf[:n]  # O(1): bytearray drops a prefix by moving its start

    def pop_from(self, stream: BinaryIO) -> Frame | None:
        """The next whole message, reading a blocking stream as needed; None at its end."""
        frame = self.pop()  # pipelined, the next request is often here already
        if frame is not None:
            return frame
        # readinto1 of a buffered stream reads a large message straight into these buffers.
        readinto = getattr(stream, "readinto1", None) or stream.readinto  # type: ignore[attr-defined]  # typeshed omits it
        while (frame := self.pop()) is None:
            if not self.fill(readinto):
                return None
        return frame

    @property
    def buffered(self) -> int:
        """Bytes received and not yet part of a message taken out."""
        return len(self._buf) + (self._line_size + self._have if self._header is not None else 0)

    def peek(self, n: int = 200) -> bytes:
        """The first ``n`` bytes of the next line not yet taken out, for error messages."""
        return bytes(self._buf[:n])

    def _in_region(self, message: dict[str, Any], size: int, line_size: int) -> Frame:
        """The frame of a header whose payload lies in the shared region, at ``"at"``: a view of it, not a copy."""
        at = message.pop("at")
        if type(at) is not int or at < 0:  # JSON's integers are exactly int
            raise FrameError(f"the frame header has 'at': {at!r}, not an offset (an integer >= 0)")
        if self.region is None or at + size > len(self.region):
            where = "no shared region" if self.region is None else f"a region of {len(self.region)} bytes"
            raise FrameError(f"the frame's payload of {size} bytes at {at} is outside {where}")
        return Frame(attach_payload(message, self.region[at : at + size]), line_size, at)

    def _line(self, end: int) -> bytearray | str:
        """The line that ends at ``end``, taken out of the buffer.

        A long one (a JSON line with a large payload) comes out as its text, decoded straight from the buffer, which is
        freed before the text is parsed: the line is never held three times (bytes, text, and the parsed message), and
        a reply near the cap needs twice its size, not three times.
        """
        if end < _LONG_LINE:
            line = self._buf[:end]
            self._consume(end + 1)
            return line
        with memoryview(self._buf) as whole, whole[:end] as view:
            try:
                text = str(view, "utf-8")
            except UnicodeDecodeError:
                text = None
            shown = bytes(view[:_SHOWN])
        self._consume(end + 1)
        if text is None:
            raise FrameError(f"not JSON (not UTF-8 text): {shown!r}...")
        return text

    def clear(self) -> None:
        """Drop whatever is buffered (the stream it came from is finished): its memory is freed now, not when the
        reader is."""
        self._buf, self._payload, self._header, self._have, self._scanned = bytearray(), bytearray(), None, 0, 0
        self._scratch = None

    def pop(self) -> Frame | None:
        """The next whole message, or None if more bytes are needed; FrameError if it is not one."""
        while self._header is None:
            end = self._buf.find(b"\n", self._scanned)
            if end < 0:
                self._scanned = len(self._buf)
                if self.cap is not None and len(self._buf) > self.cap:
                    raise MessageTooLarge(len(self._buf), self.cap, declared=False)
                return None
            if self.cap is not None and end > self.cap:
                raise MessageTooLarge(end, self.cap, declared=False)
            line = self._line(end)
            self._scanned = 0
            if self.skip_blank and (not line or line.isspace()):
                continue
            message = _loads(line)
            del line  # a long line's text is not held while its message is used
            if self.framing == JSON_LINES or not isinstance(message, dict) or "payload" not in message:
                return Frame(message, end + 1)
            size = message["payload"]
            if type(size) is not int or size < 0:
                raise FrameError(f"the frame header has 'payload': {size!r}, not a byte count (an integer >= 0)")
            if self.cap is not None and end + size > self.cap:
                raise MessageTooLarge(end + size, self.cap, declared=True)
            if self.framing == SHARED and "at" in message:
                return self._in_region(message, size, end + 1)
            self._header, self._line_size = message, end + 1
            if len(self._buf) >= size:  # all there already (the usual case with wide pipes): one copy
                self._payload, self._have = self._buf[:size], size
            else:  # the rest is read straight into the payload's own buffer
                self._payload, self._have = bytearray(size), len(self._buf)
                self._payload[: self._have] = self._buf
            self._consume(self._have)
        if self._have < len(self._payload):
            return None
        header, payload, self._header, self._payload = self._header, self._payload, None, bytearray()
        return Frame(attach_payload(header, payload), self._line_size + len(payload))


#: Bytes one read asks for when no payload of known size is being read: at first, and at most.
#: The first read takes a header line and the start of its payload (copied twice: into the
#: reader's buffer, then into the payload's own); the rest of a payload is read into its
#: own buffer directly. Measured with pipelined 256x256x3 chunks through harnesses.server
#: (a busy 2-CPU machine, interleaved rounds): reads of 1 MiB, which take whole payloads
#: into the reader's buffer, cost the harness about 70 us more CPU per encode request and
#: the client about 95 us more per decode reply.
_FIRST_READ = 16 << 10
_READ_SIZE = 1 << 20


#: Lines this long or longer are decoded straight from the reader's buffer (FrameReader._line).
_LONG_LINE = 1 << 20
#: Lines shorter than this (bytes) have their brackets counted before their nesting is walked (_loads).
_COUNTED = 4096
#: Bytes of a line quoted in an error message.
_SHOWN = 200
#: How deep a message may nest arrays and objects. A protocol message nests four deep (a reply, its chunk, its
#: shape); a codec object as zarr.json holds it, a few more. JSON's own parsers recurse per level: a line of 200 000
#: brackets must be a FrameError that says so, not a RecursionError (or a crash) in whoever reads it.
MAX_DEPTH = 64
#: Lines no longer than this cannot nest deeper than MAX_DEPTH: each level takes two brackets.
_SHALLOW = 2 * MAX_DEPTH + 1


def _loads(line: bytearray | str) -> Any:
    try:
        text = line if isinstance(line, str) else line.decode()  # the protocol's JSON is UTF-8
        try:
            # The scanner itself, without the decoder's two whitespace matches (2.0 against 2.7 us for a request's
            # header); a line it does not take whole (whitespace around the value, or not JSON) goes the long way.
            value, end = _DECODER.scan_once(text, 0)  # type: ignore[attr-defined]  # set in __init__; typeshed omits it
        except StopIteration:
            end = -1
        value = value if end == len(text) else _DECODER.decode(text)
    except ValueError:  # UnicodeDecodeError included
        raise FrameError(f"not JSON: {_quoted(line)}") from None
    except RecursionError:
        raise FrameError(f"a message nested deeper than JSON's reader follows (the protocol's nest at most {MAX_DEPTH} "
                         f"deep): {_quoted(line)}") from None
    # A line cannot nest deeper than half its length, nor deeper than it has brackets: most headers are told safe by
    # their length (30 ns), the rest of the short ones by a count (0.4 us), where walking a header takes 3 us; a long
    # line (a JSON line with its payload) is walked, which costs what its few containers cost.
    size = len(line)
    if size > _SHALLOW and (isinstance(line, str) or size >= _COUNTED or line.count(b"[") + line.count(b"{") > MAX_DEPTH) \
            and not within_depth(value):
        raise FrameError(f"a message nested more than {MAX_DEPTH} deep (the protocol's nest a few levels): {_quoted(line)}")
    return value


def _quoted(line: bytearray | str) -> str:
    """The start of a line, for an error message."""
    shown = line[:_SHOWN]
    return (repr(shown) if isinstance(shown, str) else repr(bytes(shown))) + ("..." if len(line) > _SHOWN else "")


def within_depth(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON value nests arrays and objects at most ``limit`` deep; walked level by level, without recursion
    (so a value too deep for a recursive reader is told apart safely)."""
    level: list[Any] = [value] if type(value) is dict or type(value) is list else []
    for _ in range(limit):  # after k rounds, level holds the containers k + 1 deep
        if not level:
            return True
        level = [item for node in level for item in (node.values() if type(node) is dict else node)
                 if type(item) is dict or type(item) is list]
    return not level


__all__ = [
    "BINARY",
    "FRAMINGS",
    "JSON_LINES",
    "MAX_DEPTH",
    "MAX_MESSAGE",
    "OFFERED",
    "SHARED",
    "Frame",
    "FrameError",
    "FrameReader",
    "MessageTooLarge",
    "attach_payload",
    "encode_message",
    "encode_placed",
    "on_the_wire",
    "placed_frame",
    "split_payload",
    "within_depth",
]
