"""The harness protocol: its schema, both framings, the Python server (harnesses.server) and the Node harness.

Every message of real sessions, in JSON lines and in binary framing, is validated against
``schema/protocol/v1.schema.json``; the two recorded sessions in ``docs/protocol.md`` are
validated too and replayed byte for byte through the server, so the documentation cannot
drift from the schema or the code. The Node harness tests need ``node`` and the
harness's npm packages (``python -m zarr_jpeg_conformance.harnesses install``) and say so
when they are missing.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr_jpeg_conformance.adapters import AdapterLoadError, available_builtins, load_adapter
from zarr_jpeg_conformance.adapters.process import StderrTail
from zarr_jpeg_conformance.adapters.remote import (
    ExecAdapter,
    HarnessError,
    HarnessProtocolError,
    HarnessRejection,
    RemoteCodec,
)
from zarr_jpeg_conformance.corpus.cases import config_cases
from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.modes import MODE, codec
from zarr_jpeg_conformance.corpus.registry import load_json
from zarr_jpeg_conformance.harnesses.server import Server, serve
from zarr_jpeg_conformance.protocol import framing as framing_module
from zarr_jpeg_conformance.protocol.framing import (
    BINARY,
    JSON_LINES,
    FrameError,
    FrameReader,
    MessageTooLarge,
    encode_message,
    on_the_wire,
    split_payload,
)
from zarr_jpeg_conformance.protocol.wire import array_from_wire, array_to_wire

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server"]
GRAY = codec(90, "grayscale")


@cache
def _schema() -> dict[str, Any]:
    return load_json("schema", "protocol", "v1.schema.json")


def _validator(definition: str) -> jsonschema.Draft202012Validator:
    schema = _schema()
    return jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"})


def _check(message: dict[str, Any], definition: str) -> None:
    errors = sorted(_validator(definition).iter_errors(message), key=lambda e: e.path)
    assert not errors, f"{definition} does not validate {json.dumps(message)[:300]}: {[e.message for e in errors][:3]}"


#: Requests and replies whose bytes travel as a payload in binary framing, and so have a header form.
_WITH_PAYLOAD = {"encode", "decode", "bench"}
_REPLY_PAYLOAD = {"encode", "decode"}


class Transcript:
    """Records a session's messages (as on the wire) and validates each against its definition.

    After a start reply that chooses binary framing, encode and decode messages are
    checked against their header forms, everything else against the JSON-lines forms.
    """

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, direction: str, message: dict[str, Any]) -> None:
        self.messages.append((direction, message))

    def validate(self) -> list[str]:
        """Validate every pair; return the ops seen (in order)."""
        ops, pending = [], {}
        framing = JSON_LINES
        for direction, message in self.messages:
            if direction == "->":
                op = message["op"]
                if op == "start":
                    framing = JSON_LINES
                header = framing == BINARY and op in _WITH_PAYLOAD
                _check(message, f"{op}-request-header" if header else f"{op}-request")
                _check(message, "frame-request" if framing == BINARY else "request")
                pending[message["seq"]] = op
                ops.append(op)
            else:
                op = pending.pop(message["seq"])
                header = framing == BINARY and op in _REPLY_PAYLOAD
                _check(message, f"{op}-reply-header" if header else f"{op}-reply")
                _check(message, "frame-reply" if framing == BINARY else "reply")
                if op == "start":
                    framing = message.get("framing", JSON_LINES)
        assert not pending, f"requests without replies: {pending}"
        return ops


def _backend() -> str:
    """A built-in adapter that loads, imagecodecs first (the documented session used it)."""
    loaded = {name: a for name, a in available_builtins().items() if not isinstance(a, AdapterLoadError)}
    for name in ("imagecodecs", *loaded):
        if name in loaded:
            return name
    pytest.skip("no built-in backend is installed (pip install 'zarr-jpeg-conformance[imagecodecs]')")


# ------------------------------------------------------------------ the schema and the doc


def test_schema_is_valid_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(_schema())
    for name in _schema()["$defs"]:
        _validator(name)  # every definition resolves


def test_schema_rejects_what_the_protocol_forbids() -> None:
    bad = [
        ({"seq": 1, "op": "start", "protocol": 1, "framings": []}, "start-request"),
        ({"seq": 1, "op": "start", "protocol": 1, "framings": ["json", "msgpack"]}, "start-request"),
        (
            {"seq": 1, "status": "ok", "protocol": 1, "name": "x", "version": "1", "roles": ["decode"], "versions": {}, "framing": "raw"},
            "start-reply",
        ),
        # Binary framing: the bytes are the payload, never base64 in the header as well.
        ({"seq": 3, "op": "encode", "handle": "1", "chunk": {"shape": [1], "dtype": "uint8", "data": "AA=="}, "payload": 1}, "encode-request-header"),
        ({"seq": 3, "op": "encode", "handle": "1", "chunk": {"shape": [1], "dtype": "uint8"}}, "encode-request-header"),  # no payload
        ({"seq": 3, "status": "ok", "payload": -1}, "encode-reply-header"),
        ({"seq": 3, "status": "ok", "data": "AA=="}, "encode-reply-header"),
        ({"seq": 4, "op": "decode", "handle": "1", "chunk_shape": [1, 1], "payload": 1.5}, "decode-request-header"),
        ({"seq": 4, "status": "ok", "chunk": {"shape": [1], "dtype": "uint8"}}, "decode-reply-header"),  # no payload
        ({"seq": 4, "op": "decode", "handle": "1", "chunk_shape": [1, 1], "payload": 4}, "request"),  # a header is no JSON-lines message
        ({"seq": 1, "op": "start"}, "start-request"),  # no protocol version
        ({"seq": 1, "op": "start", "protocol": 2}, "start-request"),
        ({"seq": -1, "op": "stop"}, "stop-request"),
        ({"seq": 1, "op": "parse"}, "parse-request"),  # no codec
        ({"seq": 1, "op": "decode", "handle": "1", "data": "not base64!", "chunk_shape": [1, 1]}, "decode-request"),
        ({"seq": 1, "op": "encode", "handle": "1", "chunk": {"shape": [1], "dtype": "uint9", "data": ""}}, "encode-request"),
        ({"seq": 1, "status": "ok", "handle": ""}, "parse-reply"),
        ({"seq": 1, "status": "maybe", "message": "?"}, "parse-reply"),
        ({"seq": 1, "status": "rejected", "message": "x", "requirement": "Q-01"}, "parse-reply"),
        ({"seq": 1, "status": "ok", "protocol": 1, "name": "has space", "version": "1", "roles": ["decode"], "versions": {}}, "start-reply"),
        ({"seq": 1, "status": "ok", "protocol": 1, "name": "x", "version": "1", "roles": [], "versions": {}}, "start-reply"),
        ({"seq": 1, "status": "ok", "chunk": {"shape": [1], "dtype": "uint8", "data": "AA==", "order": "F"}}, "decode-reply"),
        # bench: what it times is one of the two requests, whole, and it says how often.
        ({"seq": 5, "op": "bench", "handle": "1", "of": "encode", "repeat": 3, "data": "AA==", "chunk_shape": [1]}, "bench-request"),
        ({"seq": 5, "op": "bench", "handle": "1", "of": "decode", "repeat": 3, "chunk_shape": [1]}, "bench-request"),
        ({"seq": 5, "op": "bench", "handle": "1", "of": "parse", "repeat": 3}, "bench-request"),
        ({"seq": 5, "op": "bench", "handle": "1", "of": "decode", "repeat": 0, "data": "AA==", "chunk_shape": [1]}, "bench-request"),
        ({"seq": 5, "op": "bench", "handle": "1", "of": "decode", "repeat": 2, "chunk_shape": [1], "payload": 1}, "request"),
        ({"seq": 5, "op": "bench", "handle": "1", "of": "decode", "repeat": 2, "chunk_shape": [1]}, "bench-request-header"),
        ({"seq": 5, "status": "ok", "seconds": []}, "bench-reply"),
        ({"seq": 5, "status": "ok", "seconds": [0.1, -0.1]}, "bench-reply"),
    ]
    for message, definition in bad:
        assert list(_validator(definition).iter_errors(message)), f"{definition} accepts {message}"


#: The recorded sessions of docs/protocol.md: the section that holds each, and its framing.
DOC_SESSIONS = {"## A full exchange": JSON_LINES, "### A binary exchange": BINARY}


def _doc_session(section: str) -> list[tuple[str, dict[str, Any], bytes | None]]:
    """(direction, header, payload) of each message of a recorded session.

    A line ``[N bytes] HEX`` is the payload of the header line before it.
    """
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    block = text.split(section + "\n", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    messages: list[tuple[str, dict[str, Any], bytes | None]] = []
    for line in filter(str.strip, block.splitlines()):
        direction, body = ("->" if line[0] == ">" else "<-"), line[2:]
        if body.startswith("["):
            size, hexdigits = body[1:].split(" bytes] ")
            payload = bytes.fromhex(hexdigits)
            assert len(payload) == int(size) == messages[-1][1]["payload"], line[:80]
            messages[-1] = (*messages[-1][:2], payload)
        else:
            messages.append((direction, json.loads(body), None))
    return messages


def _doc_transcript(section: str = "## A full exchange") -> list[tuple[str, dict[str, Any]]]:
    return [(d, m) for d, m, _ in _doc_session(section)]


@pytest.mark.parametrize("section", DOC_SESSIONS)
def test_doc_example_follows_the_schema(section: str) -> None:
    transcript = Transcript()
    transcript.messages = _doc_transcript(section)
    ops = transcript.validate()
    assert ops[0] == "start" and ops[-1] == "stop"
    assert {"parse", "encode", "decode"} <= set(ops), "the example must show every request"
    statuses = {m["status"] for d, m in transcript.messages if d == "<-"}
    assert {"ok", "rejected"} <= statuses
    start_reply = transcript.messages[1][1]
    assert start_reply.get("framing", JSON_LINES) == DOC_SESSIONS[section]


def _wire_bytes(messages: list[tuple[dict[str, Any], bytes | None]]) -> bytes:
    return b"".join(json.dumps(m, separators=(",", ":")).encode() + b"\n" + (p or b"") for m, p in messages)


@pytest.mark.parametrize("section", DOC_SESSIONS)
def test_doc_example_is_what_the_server_says(section: str) -> None:
    """The doc's requests, byte for byte into the server, give the doc's replies (modulo versions and JPEG bytes)."""
    name = _backend()
    if name != "imagecodecs":
        pytest.skip("the documented sessions were recorded with imagecodecs")
    session = _doc_session(section)
    out = io.BytesIO()
    serve(name, io.BytesIO(_wire_bytes([(m, p) for d, m, p in session if d == "->"])), out)
    expected = [(m, p) for d, m, p in session if d == "<-"]
    reader = FrameReader(JSON_LINES, cap=None)
    reader.feed(out.getvalue())
    for message, payload in expected:
        frame = reader.pop()
        assert frame is not None, f"the server said nothing where the doc has {message}"
        header, got = split_payload(frame.message) if reader.framing == BINARY else (frame.message, None)
        if message.get("versions"):
            message = {**message, "version": header["version"], "versions": header["versions"]}
            reader.framing = message.get("framing", JSON_LINES)
        if message["status"] == "ok" and ("data" in message or (payload and "chunk" not in message)):
            # An encoded stream: JPEG bytes may differ across libjpeg-turbo versions.
            assert header["status"] == "ok" and bytes(got or b"")[:2] in (b"", b"\xff\xd8"), header
            continue
        assert header == message
        assert (None if got is None else bytes(got)) == payload
    assert reader.pop() is None and reader.buffered == 0


# ------------------------------------------------------------------ wire arrays


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "uint32", "float16", "float64", "complex64"])
def test_wire_arrays_round_trip(dtype: str) -> None:
    a = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    for view in (a, a.transpose(1, 0, 2), a.astype(a.dtype.newbyteorder(">"))):
        wire = array_to_wire(view)
        _check(wire, "array")
        back = array_from_wire(wire)
        assert back.dtype == np.dtype(dtype) and back.shape == view.shape and np.array_equal(back, view)
        # Raw (for binary framing): the same little-endian bytes, and back through a payload.
        raw = array_to_wire(view, raw=True)
        assert bytes(raw["data"]) == base64.b64decode(wire["data"])
        back = array_from_wire({**raw, "data": bytearray(raw["data"])})
        assert back.dtype == np.dtype(dtype) and back.shape == view.shape and np.array_equal(back, view)


# ------------------------------------------------------------------ framing


def _messages() -> list[dict[str, Any]]:
    """One message of each shape: without bytes, with a stream, with an array (raw and empty)."""
    samples = np.arange(12, dtype=np.uint16).reshape(2, 3, 2)
    return [
        {"seq": 1, "op": "start", "protocol": 1, "framings": ["json", "binary"]},
        {"seq": 2, "status": "rejected", "message": "line\nbreak \u00e9", "requirement": "JPEG-Q-01"},
        {"seq": 3, "op": "decode", "handle": "1", "data": b"\xff\xd8\n\n\xff\xd9", "chunk_shape": [2, 3]},
        {"seq": 4, "status": "ok", "chunk": array_to_wire(samples, raw=True)},
        {"seq": 5, "status": "ok", "data": b""},
        # A member that looks like the placeholder the JSON-lines writer splices base64 into.
        {"seq": 6, "status": "error", "message": "\x00", "chunk": {"shape": [2], "dtype": "uint8", "data": b"\x00\x01"}},
    ]


def _as_json_lines(message: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(on_the_wire(message, JSON_LINES)))


@pytest.mark.parametrize("framing", [JSON_LINES, BINARY])
def test_frames_survive_any_split_of_the_stream(framing: str) -> None:
    """Whatever sizes the pipe delivers (here: every byte alone, then all at once), the same messages come out."""
    messages = _messages()
    stream = b"".join(bytes(part) for m in messages for part in encode_message(m, framing))
    expected = messages if framing == BINARY else [_as_json_lines(m) for m in messages]
    if framing == JSON_LINES:  # base64 text where the bytes were, the same as the JSON encoder writes it
        assert expected[5] == {**messages[5], "chunk": {"shape": [2], "dtype": "uint8", "data": "AAE="}}
        by_the_encoder = {**messages[3], "chunk": array_to_wire(np.arange(12, dtype=np.uint16).reshape(2, 3, 2))}
        assert stream.splitlines()[3] == json.dumps(by_the_encoder, separators=(",", ":")).encode()
    for pieces in ([stream[i : i + 1] for i in range(len(stream))], [stream]):
        reader = FrameReader(framing)
        got = []
        for piece in pieces:
            reader.feed(piece)
            while (frame := reader.pop()) is not None:
                got.append(frame.message)
        assert got == expected and reader.buffered == 0
    # A frame carries exactly its bytes; the header says how many.
    if framing == BINARY:
        header, payload = split_payload(messages[3])
        assert payload is not None and bytes(payload) == np.arange(12, dtype="<u2").tobytes()
        assert header["payload"] == 24 and header["chunk"] == {"shape": [2, 3, 2], "dtype": "uint16"}
        assert array_from_wire(messages[3]["chunk"]).tolist() == np.arange(12).reshape(2, 3, 2).tolist()
        assert split_payload(messages[0]) == (messages[0], None)


def test_frame_errors_are_specific() -> None:
    for framing, stream, match in (
        (JSON_LINES, b"hello\n", "not JSON: b'hello'"),
        (BINARY, b'{"seq":1,"status":"ok","payload":-2}\n', "'payload': -2, not a byte count"),
        (BINARY, b'{"seq":1,"status":"ok","payload":true}\n', "'payload': True, not a byte count"),
        (BINARY, b'{"seq":1,"status":"ok","data":"AA==","payload":1}\n\x00', "must not also carry 'data'"),
        (BINARY, b'{"seq":1,"status":"ok","chunk":{"shape":[1],"dtype":"uint8","data":"AA=="},"payload":1}\n\x00', "'chunk.data'"),
    ):
        reader = FrameReader(framing)
        reader.feed(stream)
        with pytest.raises(FrameError, match=match):
            reader.pop()
    # A payload that is not yet all there is waited for, not misread.
    reader = FrameReader(BINARY)
    reader.feed(b'{"seq":1,"status":"ok","payload":3}\nab')
    assert reader.pop() is None
    reader.feed(b"c")
    frame = reader.pop()
    assert frame is not None and frame.message == {"seq": 1, "status": "ok", "data": b"abc"}


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(message=st.dictionaries(st.text(max_size=8), _JSON, max_size=5), pad=st.sampled_from(["", " ", "\t ", "\r"]))
def test_a_line_is_written_and_read_as_the_json_module_does(message: dict[str, Any], pad: str) -> None:
    """The encoder made once and the scanner called directly (framing's fast paths) agree with json.dumps and json.loads."""
    line = framing_module._dumps(message)
    assert line == json.dumps(message, separators=(",", ":")).encode() + b"\n"
    assert framing_module._loads(bytearray(line[:-1])) == message
    padded = pad.encode() + line[:-1] + pad.encode()  # around the value: the long way, with the same result
    assert framing_module._loads(bytearray(padded)) == json.loads(padded)
    assert framing_module._loads(bytearray(b"12")) == 12, "a line that is not an object is read whole too (and refused by its reader)"
    with pytest.raises(FrameError, match="not JSON"):
        framing_module._loads(bytearray(pad.encode()))  # nothing but blanks (the server skips blank lines; the client does not)
    for broken in (line[:-2], line[:-1] + b"x", b"x" + line[:-1]):
        try:
            expected = json.loads(broken)
        except ValueError:
            with pytest.raises(FrameError, match="not JSON"):
                framing_module._loads(bytearray(broken))
        else:
            assert framing_module._loads(bytearray(broken)) == expected


def test_frame_reader_caps_a_message() -> None:
    # JSON lines: refused as soon as the unfinished line passes the cap, not at its end.
    reader = FrameReader(JSON_LINES, cap=100)
    reader.feed(b'{"seq":1,"data":"' + b"A" * 83)  # 100 bytes
    assert reader.pop() is None
    reader.feed(b"A" * 10)
    with pytest.raises(MessageTooLarge, match="over 110 bytes long and not finished, more than the cap of 100 bytes"):
        reader.pop()
    # Binary framing: refused from the header alone, before any of the payload is read.
    reader = FrameReader(BINARY, cap=1 << 20)
    reader.feed(b'{"seq":1,"status":"ok","payload":1048577}\n')
    with pytest.raises(MessageTooLarge, match=r"declares a payload .* more than the cap of 1 MiB"):
        reader.pop()
    # At the cap is fine; None means no cap.
    reader = FrameReader(BINARY, cap=40)
    reader.feed(b'{"seq":1,"status":"ok","payload":4}\nabcd')
    assert reader.pop() is not None
    reader = FrameReader(JSON_LINES, cap=None)
    reader.feed(b" " * 1000 + b"1\n")
    frame = reader.pop()
    assert frame is not None and frame.message == 1


def test_wire_arrays_are_checked() -> None:
    with pytest.raises(TypeError):
        array_to_wire(np.array([object()]))
    with pytest.raises(ValueError, match="bytes"):
        array_from_wire({"shape": [2], "dtype": "uint16", "data": "AAA="})
    with pytest.raises(ValueError, match="base64"):
        array_from_wire({"shape": [1], "dtype": "uint8", "data": "A"})
    for shape in ([True], [2, -1], (2,), [2.0], "2"):
        with pytest.raises(ValueError, match="shape"):
            array_from_wire({"shape": shape, "dtype": "uint8", "data": bytearray(2)})


def test_a_wire_array_owns_or_borrows_its_memory_as_documented() -> None:
    payload = bytearray(range(6))
    assert np.shares_memory(array_from_wire({"shape": [2, 3], "dtype": "uint8", "data": payload}), np.frombuffer(payload, np.uint8)), \
        "a binary frame's payload, which nobody else holds, becomes the array's memory"
    region = bytearray(range(8))
    view = memoryview(region)[2:8]
    borrowed = array_from_wire({"shape": [3], "dtype": "uint16", "data": view}, borrow=True)
    copied = array_from_wire({"shape": [3], "dtype": "uint16", "data": view})
    assert borrowed.tolist() == copied.tolist() == np.frombuffer(view, "<u2").tolist()
    assert np.shares_memory(borrowed, np.frombuffer(region, np.uint8)), "borrowed: the region's memory"
    assert not np.shares_memory(copied, np.frombuffer(region, np.uint8)), "not borrowed: a copy the caller owns"
    assert array_from_wire({"shape": [2], "dtype": "uint8", "data": b"\x01\x02"}).flags.writeable, "bytes are copied"


def test_the_server_writes_every_byte_of_a_reply_that_a_signal_cuts_short(monkeypatch: pytest.MonkeyPatch) -> None:
    from zarr_jpeg_conformance.harnesses import server as server_module

    def short(write: Any) -> Any:  # at most 5 bytes a call, as a write cut short by a signal returns
        return lambda fd, data: write(fd, data[:5] if isinstance(data, bytes | memoryview) else [memoryview(data[0])[:5]])

    monkeypatch.setattr(server_module, "os", type("os", (), {"write": staticmethod(short(os.write)),
                                                             "writev": staticmethod(short(os.writev))}))
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as incoming, os.fdopen(write_end, "wb") as outgoing:
        write = server_module._writer(outgoing)
        parts: list[list[bytes | bytearray | memoryview]] = [[b'{"seq":1}\n'], [b'{"seq":2,"payload":11}\n', b"hello world"],
                                                            [bytearray(b"x" * 12), memoryview(b"y" * 3)]]
        for message in parts:
            write(message)
        outgoing.close()
        assert incoming.read() == b"".join(bytes(p) for message in parts for p in message)


# ------------------------------------------------------------------ the Python server (harnesses.server)


#: What the client offers in start, and the framing the server must then choose.
OFFERS = {"json-only": ([JSON_LINES], JSON_LINES), "json+binary": ([JSON_LINES, BINARY], BINARY)}


@pytest.fixture(scope="module", params=OFFERS)
def served(request: pytest.FixtureRequest) -> Iterator[tuple[ExecAdapter, Transcript]]:
    offered, chosen = OFFERS[request.param]
    transcript = Transcript()
    adapter = ExecAdapter([*SERVER, _backend()], framings=offered, on_message=transcript)
    assert adapter.framing == chosen
    yield adapter, transcript
    adapter.close()


def test_server_session_follows_the_schema(served: tuple[ExecAdapter, Transcript]) -> None:
    adapter, transcript = served
    for case in config_cases():
        with contextlib.suppress(HarnessRejection):
            adapter.parse(case.codec)
    parsed = adapter.parse(codec(90, "ycbcr", None, [(2, 2), (1, 1), (1, 1)]))
    chunk = make_image("natural", 24, 40, channels=3)
    data = adapter.encode(parsed, chunk)
    out = adapter.decode(parsed, data, chunk.shape)
    assert out.shape == chunk.shape and out.dtype == np.uint8 and psnr(chunk, out) > 25
    for bad_chunk in (np.zeros((4, 4, 3), np.float32), np.zeros(16, np.uint8), np.zeros((4, 4, 2), np.uint8), np.zeros((0, 4, 3), np.uint8)):
        with pytest.raises(HarnessRejection):
            adapter.encode(parsed, bad_chunk)
    for stream, shape in ((b"", (4, 4, 3)), (b"\xff\xd8\xff\xd9", (4, 4, 3)), (data, (40, 24, 3)), (data[: len(data) // 2], chunk.shape)):
        with pytest.raises(HarnessRejection):
            adapter.decode(parsed, stream, shape)
    assert adapter.encode_many(parsed, [chunk, chunk]) == [data, data]  # requests written ahead of replies
    assert len(adapter.bench(parsed, "encode", 2, chunk)) == 2 and len(adapter.bench(parsed, "decode", 3, data, chunk.shape)) == 3
    with pytest.raises(HarnessRejection):
        adapter.bench(parsed, "encode", 2, np.zeros((4, 4, 3), np.float32))
    ops = transcript.validate()
    assert ops[0] == "start" and {"parse", "encode", "decode", "bench"} <= set(ops)
    replies = [m for d, m in transcript.messages if d == "<-"]
    assert any(m["status"] == "rejected" and m.get("requirement") for m in replies)
    # Binary framing moves every chunk and stream as a payload, JSON lines as base64 text.
    sent = [m for d, m in transcript.messages if d == "->" and m["op"] in _WITH_PAYLOAD]
    assert all(("payload" in m) == (adapter.framing == BINARY) for m in sent)


def test_rejections_are_value_errors_with_the_requirement(served: tuple[ExecAdapter, Transcript]) -> None:
    adapter, _ = served
    with pytest.raises(ValueError, match="quality") as info:
        adapter.parse(codec(0, "grayscale"))
    assert isinstance(info.value, HarnessRejection) and info.value.requirement == "JPEG-Q-01"
    with pytest.raises(TypeError):
        adapter.encode(object(), np.zeros((8, 8), np.uint8))  # not a handle of this adapter


def test_parsed_codecs_are_copies(served: tuple[ExecAdapter, Transcript]) -> None:
    adapter, _ = served
    mutable = codec(90, "grayscale")
    parsed = adapter.parse(mutable)
    mutable["configuration"]["quality"] = 0
    assert isinstance(parsed, RemoteCodec) and parsed.codec["configuration"]["quality"] == 90


def test_server_answers_bad_requests_with_errors() -> None:
    server = Server(_backend())
    replies = [
        server.handle(None),
        server.handle({"op": "start", "protocol": 1}),  # no seq
        server.handle({"seq": 1, "op": "parse", "codec": GRAY}),  # before start
        server.handle({"seq": 2, "op": "start", "protocol": 99}),
        server.handle({"seq": 3, "op": "start", "protocol": 1}),
        server.handle({"seq": 4, "op": "frobnicate"}),
        server.handle({"seq": 5, "op": "decode", "handle": "nope", "data": "", "chunk_shape": [1, 1]}),
        server.handle({"seq": 6, "op": "parse", "codec": "jpeg"}),
        server.handle({"seq": 7, "op": "encode", "handle": "x", "chunk": {}}),
    ]
    for reply in replies:
        _check(reply, "reply")
    assert [r["status"] for r in replies] == ["error", "error", "error", "error", "ok", "error", "error", "rejected", "error"]
    assert replies[0]["seq"] is None and replies[1]["seq"] is None and replies[3]["seq"] == 2


def test_server_cannot_load_is_a_load_error() -> None:
    with pytest.raises(AdapterLoadError, match="cannot load adapter"):
        load_adapter(f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses.server no_such_module:Adapter")
    with pytest.raises(AdapterLoadError, match="could not start"):
        load_adapter("exec:/nonexistent/harness --flag")


def test_client_refuses_a_framing_it_did_not_offer() -> None:
    """A harness that switches to binary framing unasked would be misread from the next message on."""
    pushy = (
        "import json, sys\n"
        "req = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'seq': req['seq'], 'status': 'ok', 'protocol': 1, 'name': 'pushy', 'version': '0',"
        " 'roles': ['decode'], 'versions': {}, 'framing': 'binary'}), flush=True)\n"
        "sys.stdin.readline()\n"
    )
    with pytest.raises(HarnessProtocolError, match=r"chooses framing 'binary'; the client offered \['json'\]"):
        ExecAdapter([sys.executable, "-c", pushy], framings=[JSON_LINES], timeout=10)
    with pytest.raises(ValueError, match="framings must include 'json'"):
        ExecAdapter([sys.executable, "-c", pushy], framings=[BINARY])


def test_server_speaks_json_lines_unless_offered_binary() -> None:
    """A client of before binary framing (no ``framings`` in start) gets JSON lines throughout."""
    requests = [
        {"seq": 1, "op": "start", "protocol": 1},
        {"seq": 2, "op": "parse", "codec": GRAY},
        {"seq": 3, "op": "encode", "handle": "1", "chunk": array_to_wire(np.full((8, 8), 9, np.uint8))},
        {"seq": 4, "op": "stop"},
    ]
    out = io.BytesIO()
    serve(_backend(), io.BytesIO(b"".join(json.dumps(r).encode() + b"\n" for r in requests)), out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["status"] for r in replies] == ["ok", "ok", "ok", "ok"] and "framing" not in replies[0]
    assert isinstance(replies[2]["data"], str) and "payload" not in replies[2]
    for reply, definition in zip(replies, ("start-reply", "parse-reply", "encode-reply", "stop-reply"), strict=True):
        _check(reply, definition)


def test_server_keeps_stdout_for_the_protocol() -> None:
    """An adapter that prints (from Python and from below it) cannot corrupt the replies."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "tests"), os.environ.get("PYTHONPATH")]))}
    requests = [{"seq": 1, "op": "start", "protocol": 1}, {"seq": 2, "op": "parse", "codec": GRAY}, {"seq": 3, "op": "stop"}]
    done = subprocess.run(
        [*SERVER, "broken_adapters:Chatty"],
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["status"] for r in replies] == ["ok", "ok", "ok"], done.stderr
    assert done.returncode == 0
    assert "chatty: parsing" in done.stderr and "raw write to fd 1" in done.stderr


# ------------------------------------------------------------------ the Node harness


def _node_harness(name: str, transcript: Transcript | None = None) -> ExecAdapter:
    from zarr_jpeg_conformance.harnesses import Unavailable, command

    try:
        command(name)
    except Unavailable as exc:
        pytest.skip(str(exc))
    return ExecAdapter([sys.executable, "-m", "zarr_jpeg_conformance.harnesses", name], on_message=transcript)


@pytest.fixture(scope="module", params=["node-jpeg-js", "node-pdfjs"])
def node(request: pytest.FixtureRequest) -> Iterator[tuple[ExecAdapter, Transcript]]:
    transcript = Transcript()
    adapter = _node_harness(request.param, transcript)
    yield adapter, transcript
    adapter.close()


def test_node_harness_parses_like_the_spec(node: tuple[ExecAdapter, Transcript]) -> None:
    adapter, transcript = node
    assert adapter.roles == {"decode"} and adapter.name.startswith("node-")
    wrong = []
    for case in config_cases():
        try:
            adapter.parse(case.codec)
            accepted = True
        except HarnessRejection as exc:
            accepted = False
            # Its one capability limit: no YCbCr output (an optional feature).
            if case.valid and exc.requirement == "JPEG-DCS-05":
                continue
        if accepted != case.valid:
            wrong.append(case.id)
    assert not wrong, f"{adapter.name} parse verdicts differ from the corpus: {wrong}"
    transcript.validate()


def _reference_stream(mode_id: str, kind: str, shape: tuple[int, int]) -> tuple[np.ndarray, bytes, np.ndarray]:
    ref = load_adapter(_backend())
    mode = MODE[mode_id]
    chunk = make_image(kind, *shape, channels=mode.channels)
    parsed = ref.parse(mode.codec(90))
    data = ref.encode(parsed, chunk)
    return chunk, data, np.asarray(ref.decode(parsed, data, chunk.shape))


@pytest.mark.parametrize("mode_id", ["gray", "ycbcr-444", "ycbcr-422", "ycbcr-440", "ycbcr-420"])
def test_node_harness_decodes_what_it_must(node: tuple[ExecAdapter, Transcript], mode_id: str) -> None:
    """Gray and YCbCr decode about as well as libjpeg-turbo: right layout, right transform.

    The bound is on fidelity to the source, not on equality with libjpeg-turbo: these
    decoders upsample chroma without interpolation, measured 0.2 dB worse on this image
    at 4:2:0 (35.39 against 35.57 dB) and up to 114 levels apart on a checkerboard; a
    transposed, channel-swapped or untransformed decode loses 10 dB or more.
    """
    adapter, transcript = node
    chunk, data, reference = _reference_stream(mode_id, "natural", (48, 80))
    out = adapter.decode(adapter.parse(MODE[mode_id].codec(90)), data, chunk.shape)
    assert out.shape == chunk.shape and out.dtype == np.uint8
    assert psnr(chunk, out) >= psnr(chunk, reference) - 1.0, f"{adapter.name} {mode_id}: {psnr(chunk, out):.2f} dB"
    transcript.validate()


def test_node_harness_rgb_is_the_decoders_own(node: tuple[ExecAdapter, Transcript]) -> None:
    """rgb streams: pdf.js honors APP14 transform 0, jpeg-js converts as if YCbCr (spec: JPEG-ECS-12).

    The harness adds no color logic, so a suite sees each decoder as it is. Measured on
    64x96 images: pdf.js within 1 level of libjpeg-turbo's raw decode, jpeg-js 133 levels
    off on average.
    """
    adapter, _ = node
    chunk, data, reference = _reference_stream("rgb", "fluorescence", (48, 64))
    out = adapter.decode(adapter.parse(codec(95, "rgb")), data, chunk.shape)
    mean_diff = float(np.mean(np.abs(out.astype(int) - reference.astype(int))))
    if adapter.name == "node-pdfjs":
        assert mean_diff < 1.0
    else:
        assert mean_diff > 20.0, "jpeg-js 0.4.4 is known to ignore APP14: did the harness add a color fix-up?"


def test_node_harness_checks_the_frame_against_the_chunk(node: tuple[ExecAdapter, Transcript]) -> None:
    adapter, transcript = node
    chunk, data, _ = _reference_stream("gray", "natural", (16, 48))
    parsed = adapter.parse(codec(90, "grayscale"))
    for shape, requirement in (((48, 16), "JPEG-X-08"), ((16, 40), "JPEG-DIM-03"), ((16, 48, 3), "JPEG-DIM-03"), ((768,), "JPEG-SHP-01")):
        with pytest.raises(HarnessRejection) as info:
            adapter.decode(parsed, data, shape)
        assert info.value.requirement == requirement, (shape, str(info.value))
    for garbage in (b"", b"\xff\xd8\xff\xd9", bytes(range(256))):
        with pytest.raises(HarnessRejection):
            adapter.decode(parsed, garbage, (16, 48))
    with pytest.raises(HarnessError, match="only decodes"):
        adapter.encode(parsed, chunk)
    transcript.validate()


def test_a_harness_that_dies_at_once_is_reported_with_its_last_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a harness wrote before the client noted where its stderr stood was left out of the error (CI lost
    "node not available" so, on a busy machine): a start's failure is told by all it wrote."""
    real = StderrTail.mark

    def late(self: StderrTail) -> int:
        time.sleep(0.5)  # the harness has written its reason and exited by now
        return real(self)

    monkeypatch.setattr(StderrTail, "mark", late)
    # The words are made at run time: the error echoes the command line, which must not be what matches.
    code = "import sys; print('no toolchain', 'HERE'.lower() * 2, file=sys.stderr); sys.exit(3)"
    with pytest.raises(AdapterLoadError, match="harness stderr:\nno toolchain herehere"):
        load_adapter(f"exec:{sys.executable} -c {shlex.quote(code)}")


def test_node_missing_is_said_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without node on PATH, --impl exec:... of a node harness fails with the reason."""
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(AdapterLoadError, match="node not available"):
        load_adapter(f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses node-jpeg-js")


def test_an_empty_array_crosses_the_wire_and_a_negative_side_does_not() -> None:
    """A side of 0 is a shape (a wrong decoder's empty array reaches the suites as it is, to be judged by its shape);
    a negative side, a float or a bool is not one."""
    empty = array_from_wire(array_to_wire(np.zeros((0, 5), np.uint8)))
    assert empty.shape == (0, 5) and empty.dtype == np.uint8
    for shape in ([-1, 5], [2.0, 5], [True, 5]):
        with pytest.raises(ValueError, match="wire shape must be a list of non-negative integers"):
            array_from_wire({"shape": shape, "dtype": "uint8", "data": ""})
