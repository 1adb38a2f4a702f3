"""Pipelining: ``encode_many`` / ``decode_many`` keep requests in flight, and each item gets what a single call gets.

The results must be exactly those of single calls (streams and samples byte-identical,
rejections alike), whatever the window and the framing. A failure in the middle of a
window is charged to the request that caused it (a crash, a timeout, an ``error`` reply,
a rejection, a second reply), and the requests behind one that ended the harness are sent
again to a fresh process. Every shipped harness (the Python server, Node, Java, Go) reads
requests one after another from stdin and answers in order, so it must give the same
answers when the requests are written ahead of its replies.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from zarr_jpeg_conformance.adapters import AdapterLoadError, available_builtins, batch, load_adapter
from zarr_jpeg_conformance.adapters.process import DEFAULT_MEMORY_LIMIT
from zarr_jpeg_conformance.adapters.remote import (
    ExecAdapter,
    HarnessCrashed,
    HarnessError,
    HarnessProtocolError,
    HarnessRejection,
    HarnessTimeout,
)
from zarr_jpeg_conformance.corpus.images import make_image
from zarr_jpeg_conformance.corpus.modes import codec
from zarr_jpeg_conformance.protocol.framing import BINARY, JSON_LINES, SHARED

TESTS = Path(__file__).resolve().parent
SERVER = [sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server"]
GRAY = codec(90, "grayscale")
YCBCR_420 = codec(90, "ycbcr", None, [(2, 2), (1, 1), (1, 1)])
FRAMINGS = {"json-lines": [JSON_LINES], "binary": [JSON_LINES, BINARY]}
#: A hang costs this many seconds.
TIMEOUT = 2.0
#: Shapes that trigger the broken adapters (tests/broken_adapters.py CRASH_SHAPE) and a
#: second reply from ``fake_harnesses twice`` (TWICE_SHAPE).
TRIGGER = np.zeros((13, 13), np.uint8)
DOUBLED = np.full((11, 11), 99, np.uint8)


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Harness processes import ``broken_adapters`` and ``fake_harnesses`` from this folder."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))


def _backend() -> str:
    real = next((n for n, a in available_builtins().items() if not isinstance(a, AdapterLoadError)), None)
    if real is None:
        pytest.skip("no built-in backend is installed to provide pixels")
    return real


def _gray(n: int) -> list[np.ndarray]:
    """n different gray chunks (none of them a trigger shape)."""
    return [make_image("natural", 16 + i, 24, channels=3)[:, :, i % 3] for i in range(n)]


def _singles(call: object, items: Sequence[object]) -> list[object]:
    """What one call per item gives: its value or its exception."""
    out: list[object] = []
    for item in items:
        try:
            out.append(call(item))  # type: ignore[operator]
        except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
            out.append(exc)
    return out


def _same(got: Sequence[object], expected: Sequence[object]) -> None:
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        if isinstance(e, Exception):
            assert type(g) is type(e) and str(g) == str(e), f"item {i}: {g!r} != {e!r}"
            assert getattr(g, "requirement", None) == getattr(e, "requirement", None)
        elif isinstance(e, np.ndarray):
            assert isinstance(g, np.ndarray) and g.dtype == e.dtype and g.shape == e.shape and g.tobytes() == e.tobytes(), f"item {i}"
        else:
            assert g == e, f"item {i}: {g!r:.80} != {e!r:.80}"


# ------------------------------------------------------------------ same results as single calls


@pytest.fixture(scope="module", params=list(FRAMINGS))
def served(request: pytest.FixtureRequest) -> Iterator[ExecAdapter]:
    adapter = ExecAdapter([*SERVER, _backend()], framings=FRAMINGS[request.param])
    yield adapter
    adapter.close()


@pytest.mark.parametrize("window", [1, 3, 8])
def test_pipelined_calls_give_exactly_the_results_of_single_calls(served: ExecAdapter, window: int) -> None:
    parsed = served.parse(YCBCR_420)
    shape = (32, 48, 3)
    valid = [make_image(kind, *shape[:2], channels=3) for kind in ("natural", "noise", "gradient", "edges")]
    chunks: list[object] = [
        valid[0], np.zeros((8, 8, 3), np.float32), valid[1], make_image("natural", 17, 9, channels=3),
        np.zeros((8, 8, 2), np.uint8), "not an array", valid[2], np.zeros((0, 4, 3), np.uint8), valid[3],
    ]
    expected = _singles(lambda c: served.encode(parsed, c), chunks)  # type: ignore[arg-type]
    assert sum(isinstance(e, bytes) for e in expected) == 5 and any(isinstance(e, HarnessRejection) for e in expected)
    assert any(isinstance(e, TypeError) and not isinstance(e, HarnessRejection) for e in expected)
    starts = served.starts
    _same(served.encode_many(parsed, chunks, window=window), expected)  # type: ignore[arg-type]
    streams = [e for c, e in zip(chunks, expected, strict=True) if isinstance(e, bytes) and getattr(c, "shape", None) == shape]
    # Valid streams for this shape, broken ones in between: each decoded (or refused) alone and in a window.
    data = [streams[0], b"", streams[1], b"\xff\xd8\xff\xd9", None, streams[2], streams[0][: len(streams[0]) // 2], streams[3]]
    expected = _singles(lambda d: served.decode(parsed, d, shape), data)  # type: ignore[arg-type]
    assert sum(isinstance(e, np.ndarray) for e in expected) == 4 and sum(isinstance(e, HarnessRejection) for e in expected) == 3
    assert isinstance(expected[4], TypeError)
    _same(served.decode_many(parsed, data, shape, window=window), expected)  # type: ignore[arg-type]
    assert served.starts == starts, "rejections in a window must not restart the harness"


@pytest.mark.parametrize("framings", [*FRAMINGS.values(), [JSON_LINES, BINARY, SHARED]], ids=[*FRAMINGS, "shared"])
def test_run_many_gives_each_outcome_without_its_value(framings: list[str]) -> None:
    """A benchmark's batch: every reply read and checked as encode_many and decode_many do, each value dropped."""
    shape = (16, 24)
    with ExecAdapter([*SERVER, _backend()], framings=framings) as adapter:
        parsed = adapter.parse(GRAY)
        chunks: list[object] = [*_gray(2), np.zeros((4, 4), np.uint16), "not an array", *_gray(2)]
        kept = adapter.encode_many(parsed, chunks, window=3)  # type: ignore[arg-type]
        _same(adapter.run_many("encode", parsed, chunks, window=3), [e if isinstance(e, Exception) else None for e in kept])
        data = [kept[0], b"\xff\xd8", kept[0]]  # the chunks differ in height: only the first is 16 x 24
        kept = adapter.decode_many(parsed, data, shape, window=3)  # type: ignore[arg-type]
        assert [type(e) for e in kept] == [np.ndarray, HarnessRejection, np.ndarray]
        _same(adapter.run_many("decode", parsed, data, shape, window=3), [e if isinstance(e, Exception) else None for e in kept])
        with pytest.raises(ValueError, match="op must be 'encode' or 'decode', got 'bench'"):
            adapter.run_many("bench", parsed, data)


def test_in_process_adapters_get_the_same_calls_as_plain_loops() -> None:
    local = load_adapter(_backend())
    parsed = local.parse(GRAY)
    chunks = [*_gray(3), np.zeros((4, 4), np.uint16)]
    expected = _singles(lambda c: local.encode(parsed, c), chunks)  # type: ignore[arg-type]
    assert isinstance(expected[-1], ValueError)
    assert not batch.pipelined(local)
    _same(batch.encode_many(local, parsed, chunks), expected)
    streams = [e for e in expected if isinstance(e, bytes)]
    _same(batch.decode_many(local, parsed, [*streams, b"\xff\xd8"], (16, 24)),
          _singles(lambda d: local.decode(parsed, d, (16, 24)), [*streams, b"\xff\xd8"]))  # type: ignore[arg-type]
    with ExecAdapter([*SERVER, _backend()]) as remote:
        assert batch.pipelined(remote)
        got = batch.encode_many(remote, remote.parse(GRAY), chunks)
    assert got[:3] == expected[:3] and isinstance(got[3], HarnessRejection)


# ------------------------------------------------------------------ failures charged to their request


def _harness(adapter: str, framings: list[str], **kwargs: object) -> ExecAdapter:
    return ExecAdapter([*SERVER, f"broken_adapters:{adapter}"], framings=framings, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("framings", list(FRAMINGS.values()), ids=list(FRAMINGS))
def test_a_crash_in_a_window_is_charged_to_its_request_and_the_rest_are_sent_again(framings: list[str]) -> None:
    _backend()
    with _harness("Segfaulting", framings) as adapter:
        parsed = adapter.parse(GRAY)
        good = _gray(4)
        expected = [adapter.encode(parsed, c) for c in good]
        adapter.context = "the batch's case"
        got = adapter.encode_many(parsed, [good[0], good[1], TRIGGER, good[2], good[3]], window=8)
        crash = got[2]
        assert isinstance(crash, HarnessCrashed) and "SIGSEGV" in str(crash) and "during encode" in str(crash), crash
        assert crash.context == "the batch's case"  # type: ignore[attr-defined]
        assert [g for i, g in enumerate(got) if i != 2] == expected
        assert adapter.starts == 2 and parsed.generation == 2, "the requests behind the crash go to a fresh process"
        assert adapter.incidents == [crash]
        outcomes = adapter.run_many("encode", parsed, [good[0], good[1], TRIGGER, good[2], good[3]], window=8)
        assert [o is None for o in outcomes] == [True, True, False, True, True] and isinstance(outcomes[2], HarnessCrashed)
        assert adapter.starts == 3


def test_a_timeout_in_a_window_is_charged_to_the_request_the_harness_hangs_on() -> None:
    _backend()
    with _harness("Hanging", [JSON_LINES, BINARY], timeout=TIMEOUT) as adapter:
        parsed = adapter.parse(GRAY)
        good = _gray(3)
        expected = [adapter.encode(parsed, c) for c in good]
        start = time.monotonic()
        got = adapter.encode_many(parsed, [good[0], good[1], TRIGGER, good[2]], window=8)
        assert time.monotonic() - start < TIMEOUT + 10
        assert isinstance(got[2], HarnessTimeout) and "no reply to encode" in str(got[2])
        assert [got[0], got[1], got[3]] == expected and adapter.starts == 2


def test_rejections_and_errors_in_a_window_leave_the_harness_running() -> None:
    _backend()
    with _harness("Failing", [JSON_LINES, BINARY]) as adapter:
        parsed = adapter.parse(GRAY)
        good = _gray(2)
        expected = [adapter.encode(parsed, c) for c in good]
        pid = adapter.pid
        got = adapter.encode_many(parsed, [good[0], np.zeros((4, 4), np.uint16), TRIGGER, good[1]])
        assert isinstance(got[1], HarnessRejection) and got[1].requirement == "JPEG-DT-01"
        assert isinstance(got[2], HarnessError) and "a bug in the implementation" in str(got[2])
        assert [got[0], got[3]] == expected and adapter.pid == pid and adapter.starts == 1


@pytest.mark.parametrize("framings", list(FRAMINGS.values()), ids=list(FRAMINGS))
def test_a_second_reply_in_a_window_fails_the_request_it_repeats(framings: list[str]) -> None:
    """``fake_harnesses twice`` answers the encode of an 11x11 chunk twice, in one write."""
    with ExecAdapter([sys.executable, "-m", "fake_harnesses", "twice", _backend()], framings=framings, timeout=10) as adapter:
        parsed = adapter.parse(GRAY)
        good = _gray(3)
        expected = [adapter.encode(parsed, c) for c in good]
        adapter.context = "the doubled case"
        got = adapter.encode_many(parsed, [good[0], DOUBLED, good[1], good[2]], window=8)
        doubled = got[1]
        assert isinstance(doubled, HarnessProtocolError) and "a second reply to encode" in str(doubled), doubled
        assert doubled.context == "the doubled case"  # type: ignore[attr-defined]
        assert [got[0], got[2], got[3]] == expected and adapter.starts == 2
        # The last request of a window: its second reply comes with it, and is its own failure.
        got = adapter.encode_many(parsed, [good[0], DOUBLED])
        assert got[0] == expected[0] and isinstance(got[1], HarnessProtocolError), got[1]
        assert "after its reply to encode" in str(got[1]) and "a second reply" in str(got[1])
        assert adapter.incidents == [doubled, got[1]]


def test_a_batch_interrupted_with_requests_in_flight_ends_the_harness() -> None:
    """The replies still owed would otherwise be read as answers to the next call."""
    sent: list[object] = []
    armed = True

    def hook(direction: str, message: dict[str, object]) -> None:
        if direction == "->" and message.get("op") == "encode":
            sent.append(message["seq"])
            if armed and len(sent) == 3:  # two requests in flight, the third being sent
                raise KeyboardInterrupt

    with ExecAdapter([*SERVER, _backend()], on_message=hook) as adapter:
        parsed = adapter.parse(GRAY)
        good = _gray(4)
        with pytest.raises(KeyboardInterrupt):
            adapter.encode_many(parsed, good)
        assert adapter.pid is None
        armed = False
        assert adapter.encode_many(parsed, good[:2]) == [adapter.encode(parsed, c) for c in good[:2]]


# ------------------------------------------------------------------ every shipped harness, requests written ahead


SHIPPED = ["go-image-jpeg", "java-imageio", "node-jpeg-js", "rust-zune-jpeg"]


@pytest.mark.parametrize("framings", list(FRAMINGS.values()), ids=list(FRAMINGS))
@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_harnesses_answer_requests_written_ahead(name: str, framings: list[str]) -> None:
    from zarr_jpeg_conformance.harnesses import HARNESSES, Unavailable, command, spec_memory_limit

    try:
        command(name)
    except Unavailable as exc:
        pytest.skip(str(exc))
    spec = f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses {name}"
    memory = spec_memory_limit(spec, DEFAULT_MEMORY_LIMIT)
    local = load_adapter(_backend())
    with ExecAdapter(spec.removeprefix("exec:"), framings=framings, memory_limit=memory) as adapter:
        assert adapter.framing == framings[-1]
        parsed, mine = adapter.parse(YCBCR_420), local.parse(YCBCR_420)
        shape = (40, 56, 3)
        chunks = [make_image(kind, *shape[:2], channels=3) for kind in ("natural", "noise", "gradient", "edges", "natural")]
        if "encode" in adapter.roles:
            expected = _singles(lambda c: adapter.encode(parsed, c), [*chunks[:2], np.zeros((4, 4, 3), np.int16), *chunks[2:]])
            _same(adapter.encode_many(parsed, [*chunks[:2], np.zeros((4, 4, 3), np.int16), *chunks[2:]], window=4), expected)
            assert isinstance(expected[2], HarnessRejection)
        streams = [local.encode(mine, c) for c in chunks]
        data = [*streams[:3], b"\xff\xd8\xff\xd9", *streams[3:]]
        expected = _singles(lambda d: adapter.decode(parsed, d, shape), data)
        assert isinstance(expected[3], HarnessRejection) and sum(isinstance(e, np.ndarray) for e in expected) == 5
        _same(adapter.decode_many(parsed, data, shape, window=4), expected)
        assert adapter.starts == 1
        # The bench request: the library's own time per call, timed by the harness kit each is built on.
        seconds = adapter.bench(parsed, "decode", 3, streams[0], shape)
        assert len(seconds) == 3 and all(t > 0 for t in seconds), HARNESSES[name].language
        with pytest.raises(HarnessError, match="repeat"):
            adapter.bench(parsed, "decode", 0, streams[0], shape)
        with pytest.raises(HarnessRejection):
            adapter.bench(parsed, "decode", 2, b"\xff\xd8\xff\xd9", shape)
