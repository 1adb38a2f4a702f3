"""Every shipped harness speaks the protocol: one smoke session per row of ``harnesses.HARNESSES``.

Generic on purpose: a row added to the table is tested here with no edit. Each harness is
started as ``python -m zarr_jpeg_conformance.harnesses NAME`` starts it, and spoken to in
raw JSON lines, so that requests the client never sends (an op before ``start``, a line that
is not JSON) can be sent too. A harness that is not built or whose toolchain is missing is
skipped with its own reason (``python -m zarr_jpeg_conformance.harnesses install`` builds
them). What the harness's library does with pixels is the suites' business, not this file's.
"""

from __future__ import annotations

import base64
import json
import resource
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any, BinaryIO

import jsonschema
import numpy as np
import pytest

from zarr_jpeg_conformance.adapters.process import DEFAULT_MEMORY_LIMIT
from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.registry import load_json
from zarr_jpeg_conformance.corpus.streams import cases_of
from zarr_jpeg_conformance.harnesses import HARNESSES, Harness, Unavailable

#: Seconds for one reply, a JVM's first start included.
TIMEOUT = 30.0
# subsampling written out (its default, valid by JPEG-SUB-06): zarrs_jpeg 0.2.0 refuses a
# configuration without it, and this test is about the protocol, not that deviation. The
# invalid one is invalid for every parser under test (zarrs_jpeg and the zarr codecs accept
# quality 0, imagecodecs_jpeg -1).
GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale", "subsampling": [[1, 1]]}}
INVALID = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "cmyk", "subsampling": [[1, 1]]}}
REFERENCE = "stream.reference.gray.q75.32x96"


@cache
def _validator(definition: str) -> jsonschema.Draft202012Validator:
    schema = load_json("schema", "protocol", "v1.schema.json")
    return jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"})


def _valid(message: dict[str, Any], definition: str) -> dict[str, Any]:
    errors = [e.message for e in _validator(definition).iter_errors(message)]
    assert not errors, f"{definition} does not validate {json.dumps(message)[:300]}: {errors[:3]}"
    return message


class Session:
    """One harness process, spoken to message by message; a read that takes too long kills it.

    Started as the client starts it: under the client's memory limit, unless the harness's
    row says it cannot run under one (a browser), in which case the client sets none either.
    """

    def __init__(self, argv: list[str], stderr: BinaryIO, memory: int | None = DEFAULT_MEMORY_LIMIT) -> None:
        def limits() -> None:
            if memory:
                resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

        self.stderr = stderr
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                     preexec_fn=limits)
        assert self.proc.stdin and self.proc.stdout
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.seq = 0

    def _read(self, read: Callable[[], bytes]) -> bytes:
        watchdog = threading.Timer(TIMEOUT, self.proc.kill)
        watchdog.start()
        try:
            return read()
        finally:
            watchdog.cancel()

    def send(self, raw: bytes) -> dict[str, Any]:
        """Send raw bytes, read one reply line."""
        self.stdin.write(raw)
        self.stdin.flush()
        reply = self._read(self.stdout.readline)
        if not reply:
            self.stderr.seek(0)
            pytest.fail(f"the harness replied nothing to {raw[:100]!r}; its stderr: {self.stderr.read()[-2000:]!r}")
        message = json.loads(reply)
        assert isinstance(message, dict), f"a reply must be a JSON object: {reply[:200]!r}"
        return message

    def call(self, op: str, payload: bytes | None = None, **members: Any) -> dict[str, Any]:
        """One request and its reply header (with ``payload``: a binary frame)."""
        self.seq += 1
        request = {"seq": self.seq, "op": op, **members}
        if payload is not None:
            request["payload"] = len(payload)
        reply = self.send(json.dumps(request).encode() + b"\n" + (payload or b""))
        assert reply.get("seq") == self.seq, f"reply to {op} has seq {reply.get('seq')!r}, not {self.seq}"
        return reply

    def payload(self, reply: dict[str, Any]) -> bytes:
        """The bytes a binary frame's header announces."""
        n = reply.get("payload")
        assert isinstance(n, int) and n >= 0, f"a frame that carries bytes says how many: {reply}"
        data = self._read(lambda: self.stdout.read(n))
        assert len(data) == n, f"the frame announced {n} bytes and sent {len(data)}"
        return data

    def end_input(self) -> int | None:
        self.stdin.close()
        return self.exit_code()

    def exit_code(self) -> int | None:
        try:
            return self.proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            return None


@pytest.fixture(params=sorted(HARNESSES))
def harness(request: pytest.FixtureRequest) -> Iterator[tuple[Harness, Session]]:
    row = HARNESSES[request.param]
    try:
        argv = row.command()
    except Unavailable as exc:
        pytest.skip(str(exc))
    with tempfile.TemporaryFile() as stderr:
        session = Session(argv, stderr, None if row.unlimited_address_space else DEFAULT_MEMORY_LIMIT)
        try:
            yield row, session
        finally:
            session.proc.kill()
            session.proc.wait()


# Big enough that every encoder's stream is smaller than the samples: cornerstone's WASM encoder
# overruns its heap on a stream longer than the raw chunk (a library defect the matrix reports on
# the small chunks); this test is about the protocol, not that defect.
_SMOKE_IMAGE = make_image("natural", 64, 96, channels=1)[..., 0]


def test_a_session_follows_the_protocol(harness: tuple[Harness, Session]) -> None:
    row, session = harness
    hello = _valid(session.call("start", protocol=1), "start-reply")
    assert hello["status"] == "ok", hello
    assert (hello["name"], hello.get("kind", "codec"), hello.get("language")) == (row.name, row.kind, row.language)
    assert hello["versions"], "versions of the libraries under test, from the build"

    handle = _valid(session.call("parse", codec=GRAY), "parse-reply")
    assert handle["status"] == "ok" and handle["handle"], handle
    rejected = _valid(session.call("parse", codec=INVALID), "parse-reply")
    assert rejected["status"] == "rejected", rejected

    if "decode" in hello["roles"]:
        case = next(c for c in cases_of("reference") if c.id == REFERENCE)
        codec = {**case.codec, "configuration": {"subsampling": [[1, 1]], **case.codec["configuration"]}}
        parsed = session.call("parse", codec=codec)
        reply = _valid(session.call("decode", handle=parsed["handle"], data=base64.b64encode(case.data()).decode(),
                                    chunk_shape=list(case.chunk_shape)), "decode-reply")
        assert reply["status"] == "ok", reply
        chunk = reply["chunk"]
        assert (chunk["shape"], chunk["dtype"]) == (list(case.chunk_shape), "uint8")
        samples = np.frombuffer(base64.b64decode(chunk["data"]), np.uint8).reshape(case.chunk_shape)
        assert psnr(case.expected(), samples) > 30, "the decode is nowhere near the reference: samples mixed up?"
    if "encode" in hello["roles"]:
        image = _SMOKE_IMAGE
        wire = {"shape": list(image.shape), "dtype": "uint8", "data": base64.b64encode(image.tobytes()).decode()}
        reply = _valid(session.call("encode", handle=handle["handle"], chunk=wire), "encode-reply")
        assert reply["status"] == "ok", reply
        stream = base64.b64decode(reply["data"])
        assert stream[:2] == b"\xff\xd8" and stream[-2:] == b"\xff\xd9", f"not a JPEG stream: {stream[:8]!r}...{stream[-4:]!r}"

    assert _valid(session.call("stop"), "stop-reply")["status"] == "ok"
    assert session.exit_code() == 0, "a harness exits with status 0 after stop"


def test_bad_requests_get_errors_and_the_harness_lives_on(harness: tuple[Harness, Session]) -> None:
    _, session = harness
    early = _valid(session.call("parse", codec=GRAY), "error-reply")
    assert early["status"] == "error", f"parse before start must be an error: {early}"
    garbled = _valid(session.send(b"{this is not JSON\n"), "error-reply")
    assert (garbled["status"], garbled["seq"]) == ("error", None), garbled
    assert session.call("start", protocol=1)["status"] == "ok", "alive after bad requests"
    assert _valid(session.call("frobnicate"), "error-reply")["status"] == "error"
    assert session.call("parse", codec=GRAY)["status"] == "ok", "alive after an unknown op"
    assert session.end_input() == 0, "a harness exits with status 0 at end of input"


def test_binary_framing_where_the_harness_chooses_it(harness: tuple[Harness, Session]) -> None:
    """A start that offers the binary framing may be answered with it: from then on every message is a frame."""
    row, session = harness
    hello = session.call("start", protocol=1, framings=["json", "binary"])
    assert hello["status"] == "ok", hello
    if hello.get("framing", "json") == "json":
        pytest.skip(f"{row.name} speaks JSON lines only (the binary framing is optional)")
    assert hello["framing"] == "binary", hello
    handle = session.call("parse", codec=GRAY)
    assert handle["status"] == "ok" and "payload" not in handle, f"a parse reply carries no bytes: {handle}"
    rejected = session.call("parse", codec=INVALID)
    assert rejected["status"] == "rejected" and "payload" not in rejected, rejected

    if "decode" in hello["roles"]:
        case = next(c for c in cases_of("reference") if c.id == REFERENCE)
        codec = {**case.codec, "configuration": {"subsampling": [[1, 1]], **case.codec["configuration"]}}
        parsed = session.call("parse", codec=codec)
        reply = session.call("decode", payload=case.data(), handle=parsed["handle"], chunk_shape=list(case.chunk_shape))
        assert reply["status"] == "ok" and reply["chunk"] == {"shape": list(case.chunk_shape), "dtype": "uint8"}, reply
        samples = np.frombuffer(session.payload(reply), np.uint8).reshape(case.chunk_shape)
        assert psnr(case.expected(), samples) > 30, "the decode is nowhere near the reference: samples mixed up?"
    if "encode" in hello["roles"]:
        image = _SMOKE_IMAGE
        reply = session.call("encode", payload=image.tobytes(), handle=handle["handle"],
                             chunk={"shape": list(image.shape), "dtype": "uint8"})
        assert reply["status"] == "ok" and "data" not in reply, reply
        stream = session.payload(reply)
        assert stream[:2] == b"\xff\xd8" and stream[-2:] == b"\xff\xd9", f"not a JPEG stream: {stream[:8]!r}...{stream[-4:]!r}"

    assert session.call("stop") == {"seq": session.seq, "status": "ok"}
    assert session.exit_code() == 0, "a harness exits with status 0 after stop"
