"""Shared framing: payloads in a memory region both processes map, only the header lines on the pipes.

The client (``ExecAdapter`` offering ``"shared"``) against the Python server and against small
harnesses written here: the same results as binary framing, pipelined and not; a chunk too large
for the region, or a reply too large for its room, on the pipe instead; a harness that does not
choose shared framing served in binary framing; and a reply that puts its payload anywhere but the
room its request offered failed as a protocol violation. The recorded exchange of docs/protocol.md
is validated against the schema.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from zarr_jpeg_conformance.adapters import AdapterLoadError, available_builtins
from zarr_jpeg_conformance.adapters.remote import ExecAdapter, HarnessFailure, HarnessRejection
from zarr_jpeg_conformance.harnesses import Unavailable
from zarr_jpeg_conformance.harnesses import command as harness_command
from zarr_jpeg_conformance.protocol import shared
from zarr_jpeg_conformance.protocol.framing import BINARY, JSON_LINES, SHARED

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server"]
OFFER = [JSON_LINES, BINARY, SHARED]
GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}

pytestmark = pytest.mark.skipif(not shared.available(), reason="shared framing needs memfd and /proc (Linux)")

#: A harness that encodes to the samples reversed and answers in shared framing as MODE says:
#: room (the reply in the room offered), inline (on the pipe), elsewhere (in the region, past the room's start),
#: overflow (more bytes than the room), binary-only (chooses binary framing when offered shared). Shared framing is
#: chosen only where it is offered.
FAKE = textwrap.dedent('''
    import mmap, sys
    from zarr_jpeg_conformance.protocol.framing import BINARY, JSON_LINES, SHARED, FrameReader, encode_message, encode_placed
    mode, reader, out, region = sys.argv[1], FrameReader(JSON_LINES, cap=None), sys.stdout.buffer, None
    while (frame := reader.pop_from(sys.stdin.buffer)) is not None:
        request = frame.message
        reply = {"seq": request["seq"], "status": "ok"}
        parts = None
        if request["op"] == "start":
            reply.update(protocol=1, name="fake-shared", version="0", roles=["encode"], versions={})
            if mode != "binary-only" and SHARED in request.get("framings", []):
                with open(request["region"]["path"], "r+b") as f:
                    region = memoryview(mmap.mmap(f.fileno(), request["region"]["size"]))
            reply["framing"] = BINARY if region is None else SHARED
        elif request["op"] == "parse":
            reply["handle"] = "1"
        elif request["op"] == "encode":
            reply["data"] = bytes(reversed(bytes(request["chunk"]["data"])))
            at, room = request.get("reply_at"), request.get("reply_room")
            if mode == "room":
                parts = encode_placed(reply, region, at)
            elif mode == "elsewhere":
                parts = encode_placed(reply, region, at + 1)
            elif mode == "overflow":
                reply["data"] = bytes(room + 1)
                parts = encode_placed(reply, region, at)
        for part in parts or encode_message(reply, reader.framing):
            out.write(part)
        out.flush()
        if request["op"] == "start":
            reader.framing, reader.region = (BINARY, None) if region is None else (SHARED, region)
        if request["op"] == "stop":
            break
''')


def _fake(mode: str) -> ExecAdapter:
    return ExecAdapter([sys.executable, "-c", FAKE, mode], framings=OFFER, timeout=30)


def _chunks(sizes: list[int]) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.integers(0, 256, (n, n), dtype=np.uint8) for n in sizes]


def test_the_region_hands_out_space_first_in_first_out() -> None:
    region = shared.Region(100)
    try:
        assert [region.take(n) for n in (40, 40)] == [0, 40]
        assert region.take(30) is None, "no room after the newest, none before the oldest"
        region.release(0)
        assert region.take(30) == 0, "wraps to the start once the oldest is given back"
        assert region.take(11) is None, "the free space is [30, 40): 10 bytes"
        assert region.take(10) == 30
        with pytest.raises(ValueError, match="oldest"):
            region.release(0)  # not the oldest: the one at 40 is
        region.release(40)
        region.release(0)
        region.release(30)
        assert region.in_use == 0
        assert region.take(101) is None and region.take(0) is None
        assert region.take(100) == 0
    finally:
        region.close()


@pytest.mark.parametrize("mode", ["room", "inline", "binary-only"])
def test_a_legal_harness_gives_the_same_results_pipelined_or_not(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the room, on the pipe, or in binary framing: all are legal. A small region (64 KiB) makes some requests
    wait for space and one (a 200x200 chunk with its room) go on the pipe."""
    monkeypatch.setattr(shared, "REGION_SIZE", 64 << 10)
    chunks = _chunks([8, 100, 30, 200, 1, 64] * 3)
    with _fake(mode) as adapter:
        assert adapter.framing == (BINARY if mode == "binary-only" else SHARED)
        parsed = adapter.parse(GRAY)
        assert adapter.encode(parsed, chunks[0]) == chunks[0].tobytes()[::-1]
        got = adapter.encode_many(parsed, chunks, window=8)
        assert got == [c.tobytes()[::-1] for c in chunks]
        if adapter._region is not None:
            assert adapter._region.in_use == 0, "every request's space is given back with its reply"


@pytest.mark.parametrize("mode", ["elsewhere", "overflow"])
def test_a_reply_outside_the_room_its_request_offered_is_a_protocol_violation(mode: str) -> None:
    with _fake(mode) as adapter:
        parsed = adapter.parse(GRAY)
        with pytest.raises(HarnessFailure, match="outside the room its request offered"):
            adapter.encode(parsed, _chunks([4])[0])


def test_the_python_server_in_shared_framing_answers_as_in_binary_framing(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = next((n for n, a in available_builtins().items() if not isinstance(a, AdapterLoadError)), None)
    if backend is None:
        pytest.skip("no built-in backend is installed to provide pixels")
    monkeypatch.setattr(shared, "REGION_SIZE", 1 << 20)
    chunks = _chunks([16, 256, 700, 33])  # 700x700 and its room do not fit 1 MiB: on the pipes
    with ExecAdapter([*SERVER, backend], framings=OFFER) as sharing, ExecAdapter([*SERVER, backend]) as binary:
        assert (sharing.framing, binary.framing) == (SHARED, BINARY)
        ps, pb = sharing.parse(GRAY), binary.parse(GRAY)
        streams = sharing.encode_many(ps, chunks)
        assert streams == binary.encode_many(pb, chunks)
        decoded = sharing.decode_many(ps, streams, (700, 700))  # the wrong shape for three: their rejections too
        expected = binary.decode_many(pb, streams, (700, 700))
        assert [type(d) for d in decoded] == [type(e) for e in expected]
        assert np.array_equal(decoded[2], expected[2]) and decoded[2].flags.writeable
        assert [str(d) for d in decoded if isinstance(d, Exception)] == [str(e) for e in expected if isinstance(e, Exception)]
        assert sharing._region is not None and sharing._region.in_use == 0


@pytest.mark.parametrize("name", ["rust-turbojpeg", "java-imageio"])
def test_a_kit_that_speaks_shared_framing_answers_as_in_binary_framing(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Rust and Java kits: the same streams and decodes, with the payloads in the region or (too large) on the pipes."""
    try:
        command = harness_command(name)
    except Unavailable as exc:
        pytest.skip(f"{name} is not built here: {exc}")
    monkeypatch.setattr(shared, "REGION_SIZE", 1 << 20)
    chunks = [np.repeat(c[:, :, None], 3, axis=2) for c in _chunks([16, 256, 700])]
    rgb = {"name": "jpeg", "configuration": {"quality": 80, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}
    with ExecAdapter(command, framings=OFFER) as sharing, ExecAdapter(command) as binary:
        assert (sharing.framing, binary.framing) == (SHARED, BINARY)
        ps, pb = sharing.parse(rgb), binary.parse(rgb)
        streams = sharing.encode_many(ps, chunks)
        assert streams == binary.encode_many(pb, chunks)
        for stream, chunk in zip(streams, chunks, strict=True):
            assert isinstance(stream, bytes)
            assert np.array_equal(sharing.decode(ps, stream, chunk.shape), binary.decode(pb, stream, chunk.shape))
        # A frame that does not fit the chunk is refused before any pixel is decoded, in the room or not.
        wrong = [sharing.decode_many(ps, streams[:1], (256, 256, 3))[0], binary.decode_many(pb, streams[:1], (256, 256, 3))[0]]
        assert all(isinstance(w, HarnessRejection) for w in wrong) and str(wrong[0]) == str(wrong[1]), wrong
        assert sharing._region is not None and sharing._region.in_use == 0


def test_where_shared_framing_cannot_be_had_it_is_not_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared, "available", lambda: False)
    with _fake("room") as adapter:
        assert SHARED not in adapter.framings
        assert adapter.framing == BINARY, "the fake chooses shared only when offered: binary framing it is"


def _exchange() -> list[tuple[str, dict[str, Any]]]:
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    block = text.split("### A shared exchange\n", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    return [(line[0], json.loads(line[2:])) for line in block.splitlines() if line.strip()]


def test_the_documented_exchange_is_valid_and_its_replies_stay_in_their_rooms() -> None:
    schema = json.loads((ROOT / "schema" / "protocol" / "v1.schema.json").read_text(encoding="utf-8"))
    messages = _exchange()
    assert [d for d, _ in messages] == [">", "<"] * 4
    for direction, message in messages:
        kind = "request" if direction == ">" else "reply"
        jsonschema.validate(message, {**schema, "$ref": f"#/$defs/frame-{kind}"})
    for (_, request), (_, reply) in zip(messages[4::2], messages[5::2], strict=True):
        assert reply["at"] == request["reply_at"] and reply["payload"] <= request["reply_room"]
        # Laid out as this project's client lays out a request and its room.
        assert request["reply_at"] == request["at"] + shared.layout(request["payload"], request["reply_room"])[1]
