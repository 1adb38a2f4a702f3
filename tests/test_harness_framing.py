"""The Java and Go harnesses: both framings of the protocol, their own parse rules, the memory limit.

Each harness runs as ``--impl exec:`` runs it (``python -m zarr_jpeg_conformance.harnesses
NAME``, under the client's default address-space limit), driven here by a minimal client of
its own so that the binary framing is tested from the harness's side: the same requests in
JSON lines and in binary frames must give the same bytes. Skipped, with the reason, where a
harness is not built (``python -m zarr_jpeg_conformance.harnesses install``).
"""

from __future__ import annotations

import base64
import json
import resource
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.adapters.process import DEFAULT_MEMORY_LIMIT
from zarr_jpeg_conformance.corpus.cases import config_cases
from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.modes import codec

HARNESSES = ["java-imageio", "java-twelvemonkeys", "go-image-jpeg"]
YCBCR_420 = codec(90, "ycbcr", None, [(2, 2), (1, 1), (1, 1)])


class Session:
    """One harness process, spoken to in JSON lines or, once started with it, binary frames."""

    def __init__(self, name: str, *, binary: bool) -> None:
        from zarr_jpeg_conformance.harnesses import Unavailable, command

        try:
            command(name)
        except Unavailable as exc:
            pytest.skip(str(exc))

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (DEFAULT_MEMORY_LIMIT, DEFAULT_MEMORY_LIMIT))

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "zarr_jpeg_conformance.harnesses", name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit,
        )
        self.seq = 0
        self.binary = False
        start: dict[str, Any] = {"op": "start", "protocol": 1}
        if binary:
            start["framings"] = ["json", "binary"]
        self.hello, _ = self.call(start)
        assert self.hello["status"] == "ok", self.hello
        self.binary = self.hello.get("framing") == "binary"

    def send(self, header: dict[str, Any], payload: bytes | None = None) -> None:
        assert self.proc.stdin is not None
        if payload is not None:
            header = {**header, "payload": len(payload)}
        self.proc.stdin.write(json.dumps(header).encode() + b"\n" + (payload or b""))
        self.proc.stdin.flush()

    def receive(self) -> tuple[dict[str, Any], bytes | None]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n"), f"no reply; stderr: {self.proc.stderr.read().decode()[-2000:] if self.proc.stderr else ''}"
        reply = json.loads(line)
        n = reply.get("payload")
        if n is None:
            return reply, None
        assert self.binary, f"a payload in JSON-lines framing: {reply}"
        payload = self.proc.stdout.read(n)
        assert len(payload) == n
        return reply, payload

    def call(self, request: dict[str, Any], payload: bytes | None = None) -> tuple[dict[str, Any], bytes | None]:
        self.seq += 1
        self.send({"seq": self.seq, **request}, payload)
        reply, data = self.receive()
        assert reply.get("seq") == self.seq, reply
        return reply, data

    def parse(self, codec_object: object) -> dict[str, Any]:
        return self.call({"op": "parse", "codec": codec_object})[0]

    def encode(self, handle: str, chunk: np.ndarray) -> tuple[dict[str, Any], bytes | None]:
        array = {"shape": list(chunk.shape), "dtype": chunk.dtype.name}
        if self.binary:
            return self.call({"op": "encode", "handle": handle, "chunk": array}, chunk.tobytes())
        reply, _ = self.call({"op": "encode", "handle": handle, "chunk": {**array, "data": base64.b64encode(chunk.tobytes()).decode()}})
        return reply, base64.b64decode(reply["data"]) if reply["status"] == "ok" else None

    def decode(self, handle: str, data: bytes, shape: tuple[int, ...]) -> tuple[dict[str, Any], np.ndarray | None]:
        if self.binary:
            reply, payload = self.call({"op": "decode", "handle": handle, "chunk_shape": list(shape)}, data)
            if reply["status"] == "ok":
                assert "data" not in reply["chunk"] and payload is not None
        else:
            reply, _ = self.call({"op": "decode", "handle": handle, "data": base64.b64encode(data).decode(), "chunk_shape": list(shape)})
            payload = base64.b64decode(reply["chunk"]["data"]) if reply["status"] == "ok" else None
        if payload is None:
            return reply, None
        assert reply["chunk"]["shape"] == list(shape) and reply["chunk"]["dtype"] == "uint8"
        return reply, np.frombuffer(payload, np.uint8).reshape(shape)

    def stop(self) -> int:
        reply, _ = self.call({"op": "stop"})
        assert reply["status"] == "ok"
        return self.proc.wait(30)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(params=HARNESSES)
def name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def sessions(name: str) -> Iterator[tuple[Session, Session]]:
    plain = Session(name, binary=False)
    try:
        framed = Session(name, binary=True)
    except BaseException:
        plain.close()
        raise
    yield plain, framed
    plain.close()
    framed.close()


def test_both_framings_give_the_same_bytes(sessions: tuple[Session, Session]) -> None:
    plain, framed = sessions
    assert "framing" not in plain.hello, "framing announced to a client that offered none"
    assert framed.binary, f"{framed.hello['name']} did not choose the binary framing it was offered"
    for hello in (plain.hello, framed.hello):
        assert hello["kind"] == "library" and hello["language"] in ("Java", "Go") and hello["versions"]
    chunk = make_image("natural", 40, 56, channels=3)
    streams, samples = [], []
    for s in (plain, framed):
        handle = s.parse(YCBCR_420)["handle"]
        reply, stream = s.encode(handle, chunk)
        assert reply["status"] == "ok" and stream is not None and stream[:2] == b"\xff\xd8", reply
        streams.append(stream)
        reply, out = s.decode(handle, stream, chunk.shape)
        assert out is not None, reply
        samples.append(out)
    assert streams[0] == streams[1]
    assert np.array_equal(samples[0], samples[1])
    assert psnr(chunk, samples[1]) > 30


def test_binary_framing_keeps_in_step_after_refusals(sessions: tuple[Session, Session]) -> None:
    """Rejections and errors carry no payload; the frame after them is read whole."""
    _, s = sessions
    gray = s.parse(codec(90, "grayscale"))["handle"]
    assert s.parse(codec(0, "grayscale"))["status"] == "rejected"
    reply, payload = s.encode(gray, np.zeros((4, 4), np.uint16))
    assert (reply["status"], reply.get("requirement"), payload) == ("rejected", "JPEG-DT-01", None)
    reply, out = s.decode(gray, b"\xff\xd8\xff\xd9", (4, 4))
    assert reply["status"] == "rejected" and out is None
    reply, _ = s.call({"op": "decode", "handle": "no-such-handle", "chunk_shape": [4, 4]}, b"\xff\xd8")
    assert reply["status"] == "error"
    chunk = make_image("natural", 16, 24, channels=1)[:, :, 0]
    reply, stream = s.encode(gray, chunk)
    assert reply["status"] == "ok" and stream is not None
    reply, out = s.decode(gray, stream, chunk.shape)
    assert out is not None and psnr(chunk, out) > 30
    assert s.stop() == 0


def test_unreadable_request_gets_an_error_without_seq(name: str) -> None:
    s = Session(name, binary=False)
    try:
        s.proc.stdin.write(b"this is not json\n")  # type: ignore[union-attr]
        s.proc.stdin.flush()  # type: ignore[union-attr]
        reply, _ = s.receive()
        assert reply["status"] == "error" and reply["seq"] is None
        assert s.stop() == 0
    finally:
        s.close()


def test_parse_rules_agree_with_the_corpus(name: str) -> None:
    """The harness's own parse module (Java, Go) gives every configuration case its verdict."""
    s = Session(name, binary=True)
    try:
        wrong = [case.id for case in config_cases() if (s.parse(case.codec)["status"] == "ok") != case.valid]
        assert not wrong, f"{name} parse verdicts differ from the corpus: {wrong}"
    finally:
        s.close()
