"""A decode written where the caller says: ``BackendAdapter.decode_into`` and the Python server's reply rooms.

In shared framing a decode request offers room in the memory region for its reply's chunk
(docs/protocol.md). ``harnesses.server`` has the adapter decode straight into that room where the
adapter offers ``decode_into`` (the built-in backends do; imagecodecs writes its scanlines there
itself), and says so in the reply's header, with no copy of the chunk in its process. The client
lays out the region so that every payload starts at a multiple of ``shared.ALIGN`` and every room
``shared.ROOM_SKEW`` bytes past one (libjpeg-turbo 2.x writes 32-byte-aligned rows with
non-temporal stores, past the caches: slower here, where the client reads the rows right after).

Each check is shown to bite: a backend that ignores ``out`` is caught by the copy it then needs,
a server that copies instead of decoding into the room by an adapter whose ``decode`` fails, and a
placed reply that outlives its request by the next request's reply.
"""

from __future__ import annotations

import mmap
import sys
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.adapters import remote
from zarr_jpeg_conformance.adapters.remote import ExecAdapter
from zarr_jpeg_conformance.backends import BACKENDS, BackendUnavailable, load_backend
from zarr_jpeg_conformance.backends.base import BackendAdapter
from zarr_jpeg_conformance.corpus.images import make_image
from zarr_jpeg_conformance.harnesses import server as server_module
from zarr_jpeg_conformance.harnesses.server import Server
from zarr_jpeg_conformance.protocol import shared
from zarr_jpeg_conformance.protocol.framing import BINARY, JSON_LINES, SHARED, FrameReader, encode_placed

GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}
C420 = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}
RAW = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr",
                                       "subsampling": [[1, 1], [1, 1], [1, 1]]}}
RGB = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "rgb"}}
#: Each case: the codec that writes the stream, the one that reads it, the chunk shape. A stream that stores rgb read
#: by a codec that returns YCbCr is the one case where a conversion follows the library's decode.
CODECS = {"gray 2-d": (GRAY, GRAY, (24, 40)), "gray 3-d": (GRAY, GRAY, (24, 40, 1)), "ycbcr 4:2:0": (C420, C420, (24, 40, 3)),
          "ycbcr kept": (RAW, RAW, (24, 40, 3)), "rgb": (RGB, RGB, (24, 40, 3)), "rgb as ycbcr": (RGB, RAW, (24, 40, 3))}


def _backend(name: str) -> BackendAdapter:
    try:
        return load_backend(name)
    except BackendUnavailable as exc:
        pytest.skip(str(exc))


def _chunk(shape: tuple[int, ...]) -> np.ndarray:
    image = make_image("natural", shape[0], shape[1], channels=1 if len(shape) == 2 else shape[2])
    return image.reshape(shape)


def _placed(shape: tuple[int, ...]) -> np.ndarray:
    """A buffer that lies as a reply's room does: ROOM_SKEW past a multiple of ALIGN."""
    out = shared.room_like(int(np.prod(shape))).reshape(shape)
    assert out.ctypes.data % shared.ALIGN == shared.ROOM_SKEW
    return out


@pytest.mark.parametrize("case", list(CODECS))
@pytest.mark.parametrize("name", list(BACKENDS))
def test_decode_into_writes_what_decode_returns(name: str, case: str) -> None:
    backend = _backend(name)
    writer, reader, shape = CODECS[case]
    try:
        parsed = backend.parse(reader)
        stream = backend.encode(backend.parse(writer), _chunk(shape))
    except ValueError as exc:  # a configuration this backend refuses (JPEG-DCS-05, JPEG-X-04), as the suites expect of it
        assert case not in ("gray 2-d", "ycbcr 4:2:0"), f"{name} refused {case}: {exc}"
        pytest.skip(f"{name} refuses {case}: {exc}")
    out = _placed(shape)
    out[...] = 7
    assert backend.decode_into(parsed, stream, shape, out) is None
    assert np.array_equal(out, backend.decode(parsed, stream, shape)), f"{name}, {case}: decode_into wrote other samples"


def test_imagecodecs_writes_its_scanlines_into_the_buffer_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = _backend("imagecodecs")
    copies: list[str] = []
    real = np.copyto
    monkeypatch.setattr(np, "copyto", lambda dst, src, **kw: (copies.append("copy"), real(dst, src, **kw)))
    for case in ("gray 2-d", "gray 3-d", "ycbcr 4:2:0", "ycbcr kept", "rgb"):
        writer, reader, shape = CODECS[case]
        parsed = backend.parse(reader)
        stream = backend.encode(backend.parse(writer), _chunk(shape))
        out = _placed(shape)
        backend.decode_into(parsed, stream, shape, out)
        assert not copies, f"{case}: the samples were decoded elsewhere and copied, not decoded into the buffer"
        assert np.array_equal(out, backend.decode(parsed, stream, shape))
    # A conversion after the library's decode makes new samples: those are copied in.
    writer, reader, shape = CODECS["rgb as ycbcr"]
    parsed = backend.parse(reader)
    stream = backend.encode(backend.parse(writer), _chunk(shape))
    out = _placed(shape)
    backend.decode_into(parsed, stream, shape, out)
    assert copies == ["copy"] and np.array_equal(out, backend.decode(parsed, stream, shape))


@pytest.mark.parametrize("name", ["imagecodecs", "turbojpeg"])
def test_a_subclass_whose_decode_pixels_takes_no_out_decodes_into_what_it_decodes(name: str) -> None:
    """A subclass that overrides ``_decode_pixels`` without ``out`` (as tests/wrong_adapters.py's do) is called as
    before, by decode and decode_into alike: decode_into copies what it returns, its own samples, not its parent's."""
    parent = type(_backend(name))

    class Brighter(parent):  # type: ignore[valid-type, misc]
        def _decode_pixels(self, data: bytes, plan: Any, mode: Any) -> np.ndarray:
            return np.asarray(super()._decode_pixels(data, plan, mode)) // 2 + 100

    backend = Brighter()
    parsed = backend.parse(C420)
    shape = (24, 40, 3)
    stream = backend.encode(parsed, _chunk(shape))
    out = _placed(shape)
    backend.decode_into(parsed, stream, shape, out)
    decoded = backend.decode(parsed, stream, shape)
    assert np.array_equal(out, decoded) and decoded.min() >= 100


@pytest.mark.parametrize("wrong", ["dtype", "shape", "strided", "read-only"])
def test_decode_into_refuses_a_buffer_it_cannot_fill_as_the_callers_error_not_a_rejection(wrong: str) -> None:
    backend = _backend("imagecodecs")
    parsed = backend.parse(C420)
    shape = (24, 40, 3)
    stream = backend.encode(parsed, _chunk(shape))
    out = {"dtype": np.zeros(shape, np.uint16), "shape": np.zeros((24, 40, 1), np.uint8),
           "strided": np.zeros((24, 80, 3), np.uint8)[:, ::2], "read-only": np.zeros(shape, np.uint8)}[wrong]
    out.flags.writeable = wrong != "read-only"
    with pytest.raises(RuntimeError, match="decode_into needs a writable C-order uint8 array") as info:
        backend.decode_into(parsed, stream, shape, out)
    assert not isinstance(info.value, ValueError | TypeError)


def test_a_stream_decode_rejects_is_rejected_by_decode_into_alike() -> None:
    backend = _backend("imagecodecs")
    parsed = backend.parse(C420)
    shape = (24, 40, 3)
    stream = backend.encode(parsed, _chunk(shape))[:-40]  # truncated: no EOI
    with pytest.raises(ValueError) as by_decode:
        backend.decode(parsed, stream, shape)
    with pytest.raises(ValueError) as by_into:
        backend.decode_into(parsed, stream, shape, _placed(shape))
    assert (type(by_into.value), str(by_into.value)) == (type(by_decode.value), str(by_decode.value))


# ----------------------------------------------------------------------------- the server's reply rooms


class _IntoOnly:
    """Decodes only into the room (its ``decode`` fails): a reply with the right samples came from the room."""

    name = "into-only"
    roles = frozenset({"encode", "decode"})

    def __init__(self) -> None:
        self.real = load_backend("imagecodecs")

    def parse(self, codec: dict[str, Any]) -> object:
        return self.real.parse(codec)

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        return self.real.encode(parsed, chunk)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        raise AssertionError("decode called where the room was offered")

    def decode_into(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...], out: np.ndarray) -> None:
        self.real.decode_into(parsed, data, chunk_shape, out)


def _server(adapter: object) -> tuple[Server, memoryview]:
    region = memoryview(mmap.mmap(-1, 1 << 20))
    server = Server("test")
    server.adapter, server.framing, server.region = adapter, SHARED, region
    server.parsed["1"] = adapter.parse(C420)  # type: ignore[attr-defined]
    return server, region


def _exchange(server: Server, region: memoryview, message: dict[str, Any], reply_at: int, room: int) -> tuple[dict[str, Any], list[Any]]:
    """One request as the client sends it in shared framing (its payload at 0), read back by the server; its reply."""
    header = b"".join(bytes(p) for p in encode_placed(message, region, 0, reply_at, room))
    reader = FrameReader(SHARED, cap=None)
    reader.region = region
    reader.feed(header)
    frame = reader.pop()
    assert frame is not None
    reply = server.handle(frame.message)
    return reply, server.reply_parts(reply, SHARED, frame.message)


def test_the_server_decodes_into_the_room_its_request_offered_and_copies_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    _backend("imagecodecs")
    copied: list[bool] = []
    copy, place = server_module.encode_placed, server_module.placed_frame
    monkeypatch.setattr(server_module, "encode_placed", lambda *a, **kw: (copied.append(True), copy(*a, **kw))[1])
    monkeypatch.setattr(server_module, "placed_frame", lambda *a, **kw: (copied.append(False), place(*a, **kw))[1])
    server, region = _server(_IntoOnly())
    shape = (24, 40, 3)
    stream = server.adapter.encode(server.parsed["1"], _chunk(shape))
    expected = load_backend("imagecodecs").decode(server.parsed["1"], stream, shape)
    reply_at = shared.layout(len(stream), expected.nbytes)[1]
    reply, parts = _exchange(server, region, {"seq": 2, "op": "decode", "handle": "1", "chunk_shape": list(shape), "data": stream},
                             reply_at, expected.nbytes)
    assert reply["status"] == "ok", reply
    assert len(parts) == 1 and b'"at":%d' % reply_at in parts[0], "the header says where the chunk lies, and nothing follows it"
    assert bytes(region[reply_at : reply_at + expected.nbytes]) == expected.tobytes()
    assert copied == [False], "the decoded chunk was copied onto itself"
    # The next request's reply goes to its own room, copied there: the decode's placement ended with its reply.
    chunk = _chunk(shape)
    reply, parts = _exchange(server, region, {"seq": 3, "op": "encode", "handle": "1", "chunk": {"shape": list(shape), "dtype": "uint8",
                             "data": chunk.tobytes()}}, 4096, 1 << 16)
    assert len(parts) == 1 and b'"at":4096' in parts[0]
    assert bytes(region[4096 : 4096 + len(reply["data"])]) == reply["data"] and copied == [False, True]


def test_the_server_decodes_into_no_room_that_is_missing_too_small_or_outside_the_region() -> None:
    _backend("imagecodecs")
    server, region = _server(_IntoOnly())
    shape = (24, 40, 3)
    stream = server.adapter.encode(server.parsed["1"], _chunk(shape))
    message = {"seq": 2, "op": "decode", "handle": "1", "chunk_shape": list(shape), "data": stream}
    for reply_at, room in ((16400, 24 * 40 * 3 - 1), (len(region) - 100, 24 * 40 * 3)):
        reply, parts = _exchange(server, region, message, reply_at, room)
        assert reply["status"] == "error" and "decode called where the room was offered" in reply["message"], (reply_at, room)
    # A bench of decodes into a room that fits (the adapter's decode would fail) replies with its seconds alone.
    reply, parts = _exchange(server, region, {**message, "op": "bench", "of": "decode", "repeat": 2}, 16400, 24 * 40 * 3)
    assert reply["status"] == "ok" and len(reply["seconds"]) == 2 and b'"at"' not in parts[0] and b'"payload"' not in parts[0], parts
    # A rejected stream leaves nothing placed: the reply is the rejection, on the pipe.
    reply, parts = _exchange(server, region, {**message, "data": stream[:-40]}, 16400, 24 * 40 * 3)
    assert reply["status"] == "rejected" and len(parts) == 1 and b'"at"' not in parts[0]


def test_a_bench_of_decodes_without_a_room_times_decode_into_memory_laid_out_as_a_room() -> None:
    real = _backend("imagecodecs")
    calls: list[str] = []

    class Counting:
        name, roles = "counting", frozenset({"encode", "decode"})
        parse, encode = staticmethod(real.parse), staticmethod(real.encode)

        def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
            calls.append("decode")
            return real.decode(parsed, data, chunk_shape)

        def decode_into(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...], out: np.ndarray) -> None:
            calls.append(f"into at {out.ctypes.data % shared.ALIGN}")
            real.decode_into(parsed, data, chunk_shape, out)

    server, _ = _server(Counting())
    shape = (24, 40, 3)
    stream = real.encode(server.parsed["1"], _chunk(shape))
    reply = server.handle({"seq": 2, "op": "bench", "of": "decode", "repeat": 3, "handle": "1", "chunk_shape": list(shape), "data": stream})
    assert reply["status"] == "ok" and len(reply["seconds"]) == 3
    assert calls == ["decode", f"into at {shared.ROOM_SKEW}", f"into at {shared.ROOM_SKEW}"], "sized by a first decode, then into"
    # A chunk shape the stream does not fill is refused by that first decode: nothing is allocated for what it says.
    reply = server.handle({"seq": 3, "op": "bench", "of": "decode", "repeat": 3, "handle": "1", "chunk_shape": [1 << 20, 1 << 20, 3],
                           "data": stream})
    assert reply["status"] == "rejected" and calls[3:] == ["decode"], reply


def test_an_adapter_without_decode_into_is_served_as_before() -> None:
    real = _backend("imagecodecs")

    class DecodeOnly:
        name, roles = "decode-only", frozenset({"encode", "decode"})
        parse, encode, decode = staticmethod(real.parse), staticmethod(real.encode), staticmethod(real.decode)

    server, region = _server(DecodeOnly())
    shape = (24, 40, 3)
    stream = real.encode(server.parsed["1"], _chunk(shape))
    reply, parts = _exchange(server, region, {"seq": 2, "op": "decode", "handle": "1", "chunk_shape": list(shape), "data": stream},
                             16400, 24 * 40 * 3)
    assert reply["status"] == "ok" and len(parts) == 1 and b'"at":16400' in parts[0]
    assert bytes(region[16400 : 16400 + 24 * 40 * 3]) == real.decode(server.parsed["1"], stream, shape).tobytes()


@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 15656, 196608])
@pytest.mark.parametrize("room", [0, 1, 196608])
def test_the_layout_aligns_every_payload_and_skews_every_room(size: int, room: int) -> None:
    span, room_at = shared.layout(size, room)
    assert span % shared.ALIGN == 0 and room_at >= size and room_at + room <= span < room_at + room + shared.ALIGN
    assert room_at % shared.ALIGN == (shared.ROOM_SKEW if room else size % shared.ALIGN)
    assert shared.ROOM_SKEW % 16 == 0 and shared.ROOM_SKEW % 32, "aligned for complex128, not for libjpeg-turbo's non-temporal stores"


@pytest.mark.skipif(not shared.available(), reason="shared framing needs memfd and /proc (Linux)")
def test_the_client_places_payloads_at_multiples_of_align_and_rooms_skewed(monkeypatch: pytest.MonkeyPatch) -> None:
    _backend("imagecodecs")
    places: list[tuple[int | None, int]] = []
    real = remote.encode_placed

    def recorded(message: dict[str, Any], region: memoryview, at: int | None, reply_at: int = 0, reply_room: int = 0,
                 **kw: Any) -> list[Any]:
        places.append((at, reply_at))
        return real(message, region, at, reply_at, reply_room, **kw)

    monkeypatch.setattr(remote, "encode_placed", recorded)
    command = [sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server", "imagecodecs"]
    with ExecAdapter(command, framings=[JSON_LINES, BINARY, SHARED]) as adapter:
        assert adapter.framing == SHARED
        parsed = adapter.parse(C420)
        chunks = [_chunk((24, 40 + 8 * i, 3)) for i in range(5)]
        streams = adapter.encode_many(parsed, chunks)
        decoded = [adapter.decode_many(parsed, [s], c.shape)[0] for s, c in zip(streams, chunks, strict=True)]
    local = load_backend("imagecodecs")
    for stream, chunk, got in zip(streams, chunks, decoded, strict=True):
        assert isinstance(stream, bytes) and np.array_equal(got, local.decode(local.parse(C420), stream, chunk.shape))
    assert len(places) == 10
    assert all(at is not None and at % shared.ALIGN == 0 and reply_at % shared.ALIGN == shared.ROOM_SKEW for at, reply_at in places), places
