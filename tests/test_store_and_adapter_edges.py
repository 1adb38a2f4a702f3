"""Edges of check_store/, adapters/ and zarrcodecs/ that the other tests leave open.

check-store reads the real tail of a chunk over 16 KiB that its header scan leaves to
``read_ranges`` (a symbolic link inside the store), and keeps the headers it judged for arrays
of different chunks side by side; the interop table's 4:2:0 arrays are 4:2:0; a rejection zarr
wraps stays a rejection; the ``exec:`` client takes a well-formed build reply, refuses roles
outside the protocol's, drops a late copy of an earlier reply and refuses one that answers no
request, and pipelines requests; the ``reshape`` codec refuses a shape that is no array, writes
its input dimensions as lists and registers itself only where zarr has no implementation.

The ``exec:`` tests run no harness process: a stand-in for ``HarnessProcess`` answers each request
as it is sent, through the real frame reader.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.adapters import remote
from zarr_jpeg_conformance.adapters.remote import ExecAdapter, HarnessProtocolError, HarnessWarning
from zarr_jpeg_conformance.adapters.store_interop import ARRAYS
from zarr_jpeg_conformance.adapters.zarr_arrays import _unwrapped
from zarr_jpeg_conformance.check_store import check, tasks
from zarr_jpeg_conformance.check_store.chunks import FIRST, HEAD
from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.protocol.framing import JSON_LINES, FrameReader
from zarr_jpeg_conformance.zarrcodecs.reshape import ReshapeCodec, parse_shape, register

GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}

# ------------------------------------------------------------------ check_store


def _stream(pixels: np.ndarray) -> bytes:
    pytest.importorskip("imagecodecs")
    from zarr_jpeg_conformance.backends import load_backend

    return load_backend("imagecodecs").encode(parse_codec(GRAY), pixels)


def _array(folder: Path, side: int, keys: dict[str, bytes], columns: int = 1) -> Path:
    """A grayscale array of ``columns`` chunks of ``side`` x ``side`` in a row, its chunk files as given."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [side, side * columns], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [side, side]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [GRAY], "attributes": {}}))
    for key, data in keys.items():
        path = folder.joinpath(*key.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return folder


def test_a_linked_chunk_over_16_kib_is_judged_by_its_own_end(tmp_path: Path) -> None:
    """A chunk file that is a symbolic link inside the store is left by the header scan's fast read; read again, its
    tail is its last bytes, not the last bytes of its first 16 KiB: a whole stream ending in EOI passes."""
    noise = np.random.default_rng(0).integers(0, 256, (256, 256, 1), dtype=np.uint8)
    data = _stream(noise)
    assert len(data) > FIRST and data.endswith(b"\xff\xd9") and not data[:FIRST].endswith(b"\xff\xd9")
    store = _array(tmp_path / "linked.zarr", 256, {"blob": data})
    (store / "c" / "0").mkdir(parents=True)
    (store / "c" / "0" / "0").symlink_to(store / "blob")
    result = check(str(store), scheduler="sync", batch=4)
    assert result.totals()["pass"] == 1 and not result.records, result.records


def test_headers_judged_for_arrays_of_different_chunks_are_kept_side_by_side(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The headers judged without a finding are kept per (image, configuration, boundary), up to 64 such keys: a
    store checked again after another store is not judged header by header again."""
    monkeypatch.setattr(tasks, "_GOOD", {})
    judged: list[int] = []
    real = tasks.check_header

    def counting(*args: Any, **kwargs: Any) -> Any:
        judged.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(tasks, "check_header", counting)
    noise = np.random.default_rng(1).integers(0, 256, (64, 64, 1), dtype=np.uint8)
    streams = {side: _stream(np.ascontiguousarray(noise[:side, :side])) for side in (64, 48)}
    assert all(len(s) > HEAD for s in streams.values())  # the header scan passes a chunk by its first HEAD bytes
    big = _array(tmp_path / "big.zarr", 64, {"c/0/0": streams[64]})
    small = _array(tmp_path / "small.zarr", 48, {"c/0/0": streams[48]})
    counts = []
    for store in (big, small, big):
        judged.clear()
        result = check(str(store), scheduler="sync", batch=4)
        assert result.totals()["pass"] == 1, result.records
        counts.append(len(judged))
    assert counts[0] >= 1 and counts[1] >= 1
    assert counts[2] == 0, "the first store's header was judged again: the second store's made the cache drop it"


def test_the_headers_kept_for_one_configuration_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of one array whose headers all differ (a comment segment of their own) all pass; the headers kept to pass
    later chunks by stop at _GOOD_HEADERS for the array's (image, configuration, boundary), whatever the store holds."""
    monkeypatch.setattr(tasks, "_GOOD", {})
    noise = np.random.default_rng(2).integers(0, 256, (64, 64, 1), dtype=np.uint8)
    data = _stream(noise)
    count = tasks._GOOD_HEADERS + 6
    chunks = {f"c/0/{n}": data[:2] + b"\xff\xfe\x00\x04" + n.to_bytes(2, "big") + data[2:] for n in range(count)}
    assert all(len(c) > HEAD for c in chunks.values())  # the header scan passes a chunk by its first HEAD bytes
    result = check(str(_array(tmp_path / "many.zarr", 64, chunks, columns=count)), scheduler="sync", batch=count)
    assert result.totals()["pass"] == count and not result.records, result.records
    assert [len(headers) for headers in tasks._GOOD.values()] == [tasks._GOOD_HEADERS], list(tasks._GOOD)


# ------------------------------------------------------------------ adapters: store interop, zarr arrays


def test_the_interop_tables_4_2_0_arrays_are_4_2_0() -> None:
    """4:2:0: luma 2x2, each chroma component one sample per 2x2 luma (JPEG-SUB-08)."""
    for name in ("ycbcr-420", "sharded-420"):
        assert parse_codec(ARRAYS[name].codec).subsampling == ((2, 2), (1, 1), (1, 1)), name
    assert parse_codec(ARRAYS["ycbcr-444"].codec).subsampling == ((1, 1), (1, 1), (1, 1))


def test_a_rejection_zarr_wraps_stays_a_rejection() -> None:
    with pytest.raises(ValueError, match="the codec refuses") as exc, _unwrapped():
        try:
            raise ValueError("the codec refuses")
        except ValueError as inner:
            raise RuntimeError("zarr wrapped it") from inner
    assert isinstance(exc.value.__cause__, RuntimeError)
    with pytest.raises(RuntimeError, match="no rejection behind it"), _unwrapped():
        raise RuntimeError("no rejection behind it")


def test_an_empty_chunk_is_refused_as_having_no_elements() -> None:
    pytest.importorskip("zarr")
    from zarr_jpeg_conformance.adapters.zarr import ZarrAdapter

    adapter = ZarrAdapter()
    with pytest.raises(ValueError, match="no elements"):
        adapter.encode(adapter.parse(GRAY), np.zeros((16, 0), dtype=np.uint8))


# ------------------------------------------------------------------ adapters: the exec: client, without a process

Reply = dict[str, Any]
Responder = Callable[[Reply], list[Reply]]


class _QuietStderr:
    def mark(self) -> int:
        return 0

    def since(self, mark: int, *, settle: float = 0.0) -> str:
        return ""


class _FakeProcess:
    """What ExecAdapter uses of HarnessProcess: each request is answered as it is sent, the replies read by a FrameReader."""

    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.reader = FrameReader(JSON_LINES, None)
        self.queued = self.written = 0
        self.stderr = _QuietStderr()
        self.strays: list[int] = []
        self.daemons: list[int] = []
        self.pid = 4242
        self.killed = False

    def send(self, parts: Sequence[bytes | bytearray | memoryview]) -> int:
        data = b"".join(bytes(memoryview(p).cast("B")) for p in parts)
        self.queued += len(data)
        self.written = self.queued
        for line in data.splitlines():
            if line.strip():
                for reply in self.respond(json.loads(line)):
                    self.reader.feed(json.dumps(reply).encode() + b"\n")
        return self.queued

    def receive(self, deadline: float) -> Any:
        return self.reader.pop()

    def exchange(self, parts: Sequence[bytes | bytearray | memoryview], deadline: float) -> Any:
        self.send(parts)
        return self.receive(deadline)

    def unsolicited(self) -> int:
        return self.reader.buffered

    def drain_stdout(self, timeout: float, limit: int = 0) -> str:
        return ""

    def wait(self, timeout: float) -> int | None:
        return 0

    def kill(self) -> int | None:
        self.killed = True
        return 0

    def shutdown(self, grace: float) -> int | None:
        return 0


STREAM = b"\xff\xd8 a stream \xff\xd9"


def _hello(seq: int, roles: list[str]) -> Reply:
    return {"seq": seq, "status": "ok", "protocol": 1, "name": "fake", "roles": roles, "framing": JSON_LINES}


def _harness(roles: list[str] | None = None, after: Callable[[Reply], list[Reply]] | None = None) -> Responder:
    """A well-behaved harness; ``after(request)`` adds messages after each reply but start's and stop's."""

    def respond(request: Reply) -> list[Reply]:
        seq, op = request["seq"], request["op"]
        if op == "start":
            return [_hello(seq, roles if roles is not None else ["encode", "decode", "build"])]
        if op == "stop":
            return [{"seq": seq, "status": "ok"}]
        replies: dict[str, Reply] = {
            "parse": {"handle": "h1"},
            "build": {"codec": {"name": "jpeg", "configuration": request.get("options")}},
            "encode": {"data": base64.b64encode(STREAM).decode("ascii")},
        }
        return [{"seq": seq, "status": "ok", **replies[op]}, *(after(request) if after else [])]

    return respond


@pytest.fixture
def exec_adapter(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Responder], ExecAdapter]]:
    made: list[ExecAdapter] = []

    def make(respond: Responder) -> ExecAdapter:
        monkeypatch.setattr(remote, "HarnessProcess", lambda *args, **kwargs: _FakeProcess(respond))
        adapter = ExecAdapter("fake-harness", framings=[JSON_LINES], timeout=5.0)
        made.append(adapter)
        return adapter

    yield make
    for adapter in made:
        adapter.close()


def test_a_build_reply_with_a_codec_gives_that_codec(exec_adapter: Callable[[Responder], ExecAdapter]) -> None:
    adapter = exec_adapter(_harness())
    assert adapter.build({"quality": 80}) == {"name": "jpeg", "configuration": {"quality": 80}}
    assert not adapter.incidents


@pytest.mark.parametrize("roles", [["encode", "paint"], []])
def test_a_start_reply_with_roles_outside_the_protocols_is_a_violation(roles: list[str],
                                                                       exec_adapter: Callable[[Responder], ExecAdapter]) -> None:
    with pytest.raises(HarnessProtocolError, match="start reply has roles"):
        exec_adapter(_harness(roles=roles))


def test_a_late_copy_of_an_earlier_reply_is_dropped_with_a_warning(exec_adapter: Callable[[Responder], ExecAdapter]) -> None:
    """After its reply to parse (seq 2), the harness repeats its reply to start (seq 1): charged to start, and dropped."""
    adapter = exec_adapter(_harness(after=lambda request: [_hello(1, ["encode", "decode", "build"])]))
    with pytest.warns(HarnessWarning, match=r"a second reply to start \(seq 1\)"):
        parsed = adapter.parse(GRAY)
    assert parsed.handle == "h1"
    assert [type(i) for i in adapter.incidents] == [HarnessProtocolError]


def test_a_message_after_a_reply_that_answers_no_request_is_a_violation(exec_adapter: Callable[[Responder], ExecAdapter]) -> None:
    adapter = exec_adapter(_harness(after=lambda request: [{"seq": 99, "status": "ok", "handle": "h9"}]))
    with pytest.raises(HarnessProtocolError, match=r"after its reply to parse \(seq 2\) it wrote .*a second reply\?"):
        adapter.parse(GRAY)


def test_pipelined_requests_each_get_their_own_reply(exec_adapter: Callable[[Responder], ExecAdapter]) -> None:
    adapter = exec_adapter(_harness())
    parsed = adapter.parse(GRAY)
    chunks = [np.full((8, 8), k, dtype=np.uint8) for k in range(4)]
    assert adapter.encode_many(parsed, chunks, window=2) == [STREAM] * 4
    assert not adapter.incidents


# ------------------------------------------------------------------ zarrcodecs: reshape


@pytest.mark.parametrize("value", [5, "64", None, {"a": 1}])
def test_a_reshape_shape_that_is_no_array_is_refused_as_such(value: object) -> None:
    with pytest.raises(TypeError, match="'shape' must be an array"):
        parse_shape(value)


def test_reshape_writes_input_dimensions_as_lists() -> None:
    codec = ReshapeCodec(shape=[[0, 1], 64, -1])
    written = codec.to_dict()
    assert written == {"name": "reshape", "configuration": {"shape": [[0, 1], 64, -1]}}
    assert json.loads(json.dumps(written)) == written
    assert ReshapeCodec.from_dict(written) == codec


def test_reshape_registers_itself_only_where_zarr_has_no_implementation(monkeypatch: pytest.MonkeyPatch) -> None:
    import zarr.registry

    registered: list[tuple[str, type]] = []
    monkeypatch.setattr(zarr.registry, "register_codec", lambda name, cls: registered.append((name, cls)))

    def unknown(name: str) -> type:
        raise KeyError(name)

    class Other:
        pass

    for found, expected in ((unknown, [("reshape", ReshapeCodec)]), (lambda name: ReshapeCodec, [("reshape", ReshapeCodec)]),
                            (lambda name: Other, [])):
        registered.clear()
        monkeypatch.setattr(zarr.registry, "get_codec_class", found)
        register()
        assert registered == expected, found
