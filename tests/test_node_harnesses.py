"""The JavaScript harnesses (harnesses/node): both framings, and what each library module promises.

Every Node harness speaks JSON lines and, when the client offers it, binary framing; the
two sessions here send the same requests and must get the same answers, the bytes moving
from base64 members into payloads. The Python client does not offer binary framing yet,
so this small client of its own is the only one that exercises it. The harnesses need
``node`` and their npm packages (``python -m zarr_jpeg_conformance.harnesses install``),
browser-chromium also Chromium, and each test says what is missing.
"""

from __future__ import annotations

import base64
import json
import resource
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.corpus.images import make_image
from zarr_jpeg_conformance.corpus.modes import codec
from zarr_jpeg_conformance.corpus.streams import cases_of
from zarr_jpeg_conformance.harnesses import HARNESSES, Unavailable, address_space_limit, command

NODE_HARNESSES = [name for name, h in HARNESSES.items() if h.build == "node"]
GRAY = codec(90, "grayscale")
YCBCR_420 = codec(90, "ycbcr", subsampling=[[2, 2], [1, 1], [1, 1]])


class Session:
    """One harness process, spoken to in JSON lines or, after ``start``, in binary frames."""

    def __init__(self, name: str, binary: bool) -> None:
        try:
            command(name)
        except Unavailable as exc:
            pytest.skip(str(exc))
        self.proc = subprocess.Popen([sys.executable, "-m", "zarr_jpeg_conformance.harnesses", name],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.binary = False
        self.seq = 0
        start: dict[str, Any] = {"op": "start", "protocol": 1}
        if binary:
            start["framings"] = ["json", "binary"]
        self.hello, _ = self.call(start)
        assert self.hello["status"] == "ok", self.hello
        self.binary = self.hello.get("framing") == "binary"

    def call(self, request: dict[str, Any], payload: bytes | None = None) -> tuple[dict[str, Any], bytes | None]:
        """Send one request (with its payload in binary framing); the reply and its payload."""
        assert self.proc.stdin and self.proc.stdout
        self.seq += 1
        header = {"seq": self.seq, **request}
        if payload is not None:
            header["payload"] = len(payload)
        self.proc.stdin.write(json.dumps(header).encode() + b"\n" + (payload or b""))
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n"), f"no reply to {request['op']}: {self.stderr()}"
        reply = json.loads(line)
        assert reply["seq"] == self.seq
        size = reply.get("payload")
        return reply, (self.proc.stdout.read(size) if self.binary and size is not None else None)

    def stderr(self) -> str:
        self.proc.kill()
        assert self.proc.stderr
        return self.proc.stderr.read().decode(errors="replace")[-2000:]

    def stop(self) -> None:
        reply, _ = self.call({"op": "stop"})
        assert reply["status"] == "ok"
        assert self.proc.wait(timeout=30) == 0


def _array(chunk: np.ndarray, binary: bool) -> tuple[dict[str, Any], bytes | None]:
    header = {"shape": list(chunk.shape), "dtype": str(chunk.dtype)}
    raw = np.ascontiguousarray(chunk).tobytes()
    return (header, raw) if binary else ({**header, "data": base64.b64encode(raw).decode()}, None)


def _script(session: Session) -> list[tuple[dict[str, Any], bytes | None]]:
    """The same exchange in either framing, each reply with its bytes pulled out of base64."""
    binary = session.binary
    roles = session.hello["roles"]
    replies = []

    def call(request: dict[str, Any], payload: bytes | None = None) -> tuple[dict[str, Any], bytes | None]:
        reply, out = session.call(request, payload)
        reply = dict(reply)
        for holder in (reply, reply.get("chunk") or {}):
            if "data" in holder:
                assert not binary, f"binary framing, yet base64 data in {reply}"
                out = base64.b64decode(holder.pop("data"))
        if binary:
            reply.pop("payload", None)
        replies.append((reply, out))
        return reply, out

    gray, _ = call({"op": "parse", "codec": GRAY})
    color, _ = call({"op": "parse", "codec": YCBCR_420})
    call({"op": "parse", "codec": codec(0, "grayscale")})
    chunk = make_image("natural", 16, 24, channels=3)
    if "encode" in roles:
        wire, raw = _array(chunk, binary)
        call({"op": "encode", "handle": color["handle"], "chunk": wire}, raw)
        wire, raw = _array(chunk.astype(np.uint16), binary)
        call({"op": "encode", "handle": color["handle"], "chunk": wire}, raw)
    for case in (cases_of("reference")[0], next(c for c in cases_of("reference") if len(c.chunk_shape) == 3)):
        handle = (gray if len(case.chunk_shape) == 2 else color)["handle"]
        data = case.data()
        request = {"op": "decode", "handle": handle, "chunk_shape": list(case.chunk_shape)}
        call(request if binary else {**request, "data": base64.b64encode(data).decode()}, data if binary else None)
    request = {"op": "decode", "handle": gray["handle"], "chunk_shape": [2, 2]}
    call(request if binary else {**request, "data": base64.b64encode(b"\xff\xd8\xff\xd9").decode()},
         b"\xff\xd8\xff\xd9" if binary else None)
    return replies


@pytest.mark.parametrize("name", NODE_HARNESSES)
def test_binary_framing_answers_as_json_lines_do(name: str) -> None:
    """Offered binary framing, a harness takes it, moves every base64 member into a payload
    and otherwise answers exactly as in JSON lines; not offered, it never mentions it."""
    sessions = {binary: Session(name, binary) for binary in (False, True)}
    try:
        assert "framing" not in sessions[False].hello
        assert sessions[True].hello["framing"] == "binary"
        hello = {k: v for k, v in sessions[True].hello.items() if k != "framing"}
        assert hello == sessions[False].hello
        assert hello["kind"] == "library" and hello["versions"]["parse"] == "harness shim"
        json_lines, binary = (_script(sessions[b]) for b in (False, True))
    finally:
        for session in sessions.values():
            session.proc.kill()
    statuses = [reply["status"] for reply, _ in json_lines]
    assert statuses == [reply["status"] for reply, _ in binary]
    assert "ok" in statuses[3:] and "rejected" in statuses, statuses
    for (reply_j, bytes_j), (reply_b, bytes_b) in zip(json_lines, binary, strict=True):
        assert reply_j == reply_b
        assert bytes_j == bytes_b


def test_json_lines_stay_the_default() -> None:
    """A binary-framed reply to a client that did not offer it would be a protocol violation."""
    session = Session("node-jpeg-js", binary=False)
    try:
        reply, _ = session.call({"op": "parse", "codec": GRAY})
        assert set(reply) == {"seq", "status", "handle"}
        session.stop()
    finally:
        session.proc.kill()


def _jpeg_session(name: str) -> Session:
    session = Session(name, binary=True)
    assert session.binary
    return session


@pytest.mark.parametrize("name", ["node-jsquash", "node-cornerstone"])
def test_a_wasm_library_that_fails_once_keeps_working(name: str) -> None:
    """After mozjpeg's exit(1) (a refused [[4, 4]]) or TurboJPEG's overrun of cornerstone's
    output buffer (a 1x1 chunk traps), the harness starts a new instance, so the next encode
    is judged on its own. Calling on into the exited jsquash instance traps within 20 such
    rounds (measured: 19); for cornerstone the new instance is a precaution (an overrun
    that does not trap has not been seen to spoil a later call)."""
    session = _jpeg_session(name)
    image = make_image("natural", 64, 96, channels=3)
    try:
        bad_codec, bad_chunk = (codec(90, "ycbcr", subsampling=[[4, 4], [1, 1], [1, 1]]), image) \
            if name == "node-jsquash" else (YCBCR_420, image[:1, :1])
        bad, _ = session.call({"op": "parse", "codec": bad_codec})
        good, _ = session.call({"op": "parse", "codec": YCBCR_420})
        for _ in range(30):
            wire, raw = _array(bad_chunk, True)
            reply, _ = session.call({"op": "encode", "handle": bad["handle"], "chunk": wire}, raw)
            assert reply["status"] in ("rejected", "error"), reply
            wire, raw = _array(image, True)
            reply, stream = session.call({"op": "encode", "handle": good["handle"], "chunk": wire}, raw)
            assert reply["status"] == "ok", reply
            assert stream and stream[:2] == b"\xff\xd8"
        session.stop()
    finally:
        session.proc.kill()


def test_chromium_runs_without_an_address_space_limit() -> None:
    """Chromium aborts under any RLIMIT_AS: the client is told to set none for it, and the
    harness, started under one anyway, says so instead of crashing."""
    assert address_space_limit([sys.executable, "-m", "zarr_jpeg_conformance.harnesses", "browser-chromium"], 2 << 30) is None
    assert address_space_limit([sys.executable, "-m", "zarr_jpeg_conformance.harnesses", "node-sharp"], 2 << 30) == 2 << 30
    assert address_space_limit(["./my-harness", "browser-chromium"], 2 << 30) == 2 << 30

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    done = subprocess.run([sys.executable, "-m", "zarr_jpeg_conformance.harnesses", "browser-chromium"],
                          input=b"", capture_output=True, preexec_fn=limit, timeout=60, check=False)
    assert done.returncode == 3, done.stderr
    assert b"--harness-memory 0" in done.stderr


def test_chromium_missing_is_said_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Chromium the browser row is unavailable and names the package; Node rows still run."""
    import shutil

    which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda program, *a, **k: None if program == "chromium" else which(program, *a, **k))
    with pytest.raises(Unavailable, match=r"chromium not available: install Chromium \(Debian: apt-get install chromium\)"):
        command("browser-chromium")
