"""Hostile harnesses, round 2: what a lying or runaway harness can do to the client, and what it cannot.

The client frees what a failed call held (a harness's 200 MiB line lives on in no failure), caps what it reads
and says so by name instead of dying of a MemoryError, refuses a reply nested 200 000 deep with a clear error,
and is never killed by a SIGBUS from a shared region the harness shrank. Memory is checked under an
address-space limit (``prlimit --as``) set on a child process once it is ready, so the limit bounds what the
calls take, whatever the interpreter itself needs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from zarr_jpeg_conformance.adapters.remote import ExecAdapter, HarnessProtocolError
from zarr_jpeg_conformance.corpus.modes import codec

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent
GRAY = codec(90, "grayscale")
FAKE = [sys.executable, "-m", "fake_harnesses"]


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Harness processes (and the clients run in children) import the fakes from this folder."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))


def _vm_size(pid: int) -> int:
    """Bytes of address space process ``pid`` has now."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) << 10
    raise AssertionError(f"no VmSize for {pid}")


def limited_run(code: str, budget_mib: int, timeout: float = 120) -> list[str]:
    """Run ``code`` in a child Python, which prints ``ready`` once set up and waits; then limit its address space to
    what it has plus ``budget_mib`` MiB (``prlimit --as``), let it go on, and return the lines it printed after."""
    prlimit = shutil.which("prlimit")
    if prlimit is None or not Path("/proc/self/status").is_file():
        pytest.skip("needs prlimit and /proc (Linux)")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdin is not None
        ready = child.stdout.readline()
        assert ready.strip() == "ready", f"{ready!r}; stderr: {child.stderr.read() if child.stderr else ''}"
        limit = _vm_size(child.pid) + (budget_mib << 20)
        subprocess.run([prlimit, "--pid", str(child.pid), f"--as={limit}:{limit}"], check=True, timeout=30)
        out, err = child.communicate("go\n", timeout=timeout)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, f"exit {child.returncode}; stderr: {err[-3000:]}"
    return out.splitlines()


#: A client that makes CALLS failed decodes through ``fake_harnesses bloat KIND MIB`` and prints each outcome.
CALLS = 8
_CLIENT = """
import json, sys
from zarr_jpeg_conformance.adapters.remote import ExecAdapter
adapter = ExecAdapter([sys.executable, "-m", "fake_harnesses", "bloat", {kind!r}, "{mib}"], max_reply={cap}, memory_limit=None)
parsed = adapter.parse({gray!r})
print("ready", flush=True)
sys.stdin.readline()
outcomes = []
for _ in range({calls}):
    try:
        adapter.decode(parsed, b"x", (8, 8))
        outcomes.append(["ok", ""])
    except BaseException as exc:
        outcomes.append([type(exc).__name__, str(exc)])
print(json.dumps({{"outcomes": outcomes, "incidents": len(adapter.incidents),
                  "longest": max([len(str(i)) for i in adapter.incidents], default=0)}}))
adapter.close()
"""


def _client(kind: str, mib: int, cap: int | None = 256 << 20, calls: int = CALLS) -> str:
    return _CLIENT.format(kind=kind, mib=mib, cap=cap, gray=GRAY, calls=calls)


@pytest.mark.parametrize(("kind", "failure"), [
    ("garbage", "HarnessProtocolError"),  # a line that is no JSON
    ("error", "HarnessError"),  # an error reply whose message is the size of the line
    ("seq", "HarnessProtocolError"),  # a reply to another request, with a large member
])
def test_a_failed_call_keeps_nothing_of_a_large_reply(kind: str, failure: str) -> None:
    """Eight failed calls on 40 MiB lines under 300 MiB of address space: each failure keeps an excerpt, not the
    line (kept, they held 40 MiB or more each, and the calls after the sixth were MemoryErrors)."""
    (line,) = limited_run(_client(kind, 40), budget_mib=300)
    got = json.loads(line)
    assert [name for name, _ in got["outcomes"]] == [failure] * CALLS, got["outcomes"]
    assert all(len(text) < 10_000 for _, text in got["outcomes"]), "a failure's message is an excerpt of what was sent"
    assert got["incidents"] == (0 if kind == "error" else CALLS) and got["longest"] < 10_000


def test_a_reply_over_the_cap_is_refused_and_freed() -> None:
    """The neighbour over the cap: 40 MiB lines against a 24 MiB cap, eight times, in 200 MiB."""
    (line,) = limited_run(_client("garbage", 40, cap=24 << 20), budget_mib=200)
    outcomes = json.loads(line)["outcomes"]
    assert {name for name, _ in outcomes} == {"HarnessProtocolError"}, outcomes
    assert all("more than the cap of 24 MiB" in text for _, text in outcomes), outcomes[0]


def test_a_reply_the_client_cannot_hold_names_the_cap() -> None:
    """A 100 MiB line under the default cap of 256 MiB, in a client with 150 MiB to spare: no MemoryError, but a
    failure that says the client ran out of memory and names max_reply; the next call gets the same, not worse."""
    (line,) = limited_run(_client("garbage", 100, calls=2), budget_mib=150)
    outcomes = json.loads(line)["outcomes"]
    assert [name for name, _ in outcomes] == ["HarnessFailure"] * 2, outcomes
    assert all("ran out of memory reading the reply to decode" in text and "max_reply" in text and "256 MiB" in text
               for _, text in outcomes), outcomes[0]


@pytest.mark.parametrize("depth", [65, 200_000])
def test_a_reply_nested_too_deep_is_a_clear_protocol_error(depth: int) -> None:
    """200 000 levels were a RecursionError out of the client; 65, one past what a message may nest, the neighbour
    that JSON's parser still takes."""
    from zarr_jpeg_conformance.protocol.framing import MAX_DEPTH, FrameError, FrameReader

    assert MAX_DEPTH == 64
    reader = FrameReader()
    reader.feed(b'{"seq": 1, "chunk": ' + b"[" * depth + b"]" * depth + b'}\n{"seq": 2}\n')
    with pytest.raises(FrameError, match=r"nested (more than 64|deeper than JSON.s reader follows)"):
        reader.pop()
    frame = reader.pop()
    assert frame is not None and frame.message == {"seq": 2}, "the next line is read as ever"
    with ExecAdapter([*FAKE, "bloat", "deep", "0"], memory_limit=None) as adapter:
        parsed = adapter.parse(GRAY)
        with pytest.raises(HarnessProtocolError, match=r"reply to decode: a message nested deeper"):
            adapter.decode(parsed, b"x", (8, 8))
        assert len(str(adapter.incidents[0])) < 2000


def _real_backend() -> str:
    from zarr_jpeg_conformance.adapters import AdapterLoadError, available_builtins

    real = next((n for n, a in available_builtins().items() if not isinstance(a, AdapterLoadError)), None)
    if real is None:
        pytest.skip("no built-in backend is installed to provide pixels")
    return real


#: A client in shared framing against ``fake_harnesses truncate SIZE BACKEND``: an encode and a decode, each checked.
_SHRUNK = """
import sys
import numpy as np
from zarr_jpeg_conformance.adapters.remote import ExecAdapter
with ExecAdapter([sys.executable, "-m", "fake_harnesses", "truncate", "{size}", "{backend}"],
                 framings=["json", "binary", "shared"]) as adapter:
    parsed = adapter.parse({gray!r})
    chunk = np.full((64, 64), 77, np.uint8)
    out = adapter.decode(parsed, adapter.encode(parsed, chunk), chunk.shape)
    print(adapter.framing, abs(int(out.mean()) - 77) <= 2)
"""


@pytest.mark.parametrize("size", [0, 4096])
def test_a_harness_cannot_shrink_the_shared_region_under_the_client(size: int) -> None:
    """Shrunk to nothing (or to a page, the neighbour), the region made every access of the client past the new end a
    SIGBUS: the client died, and a report lost the throughput of every row. The region's size is sealed now."""
    from zarr_jpeg_conformance.protocol import shared

    if not shared.available():
        pytest.skip("shared framing needs memfd, its seals and /proc (Linux)")
    done = subprocess.run([sys.executable, "-c", _SHRUNK.format(size=size, backend=_real_backend(), gray=GRAY)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"the client exited with {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.split() == ["shared", "True"], done.stdout


#: Frames no harness can act on, in JSON lines: each must get an ``error`` reply, and the harness must read on.
MALFORMED_LINES = [
    b"garbage",
    b"\xff\xfe",  # not UTF-8
    b"[" * 200_000 + b"]" * 200_000,  # the Python server died of a RecursionError here
    b'{"seq": 2, "op": "parse", "codec": ' + b"[" * 5_000 + b"]" * 5_000 + b"}",
    b"[1, 2]",
    b"null",
    b'{"seq": 1.5, "op": "parse", "codec": {}}',
    b'{"seq": 2, "op": 5}',
]
#: The same in binary framing: headers whose payload is no byte count, or doubled.
MALFORMED_FRAMES = [
    b'{"seq": 2, "op": "decode", "handle": "1", "chunk_shape": [8, 8], "payload": -1}',
    b'{"seq": 2, "op": "decode", "handle": "1", "chunk_shape": [8, 8], "payload": "7"}',
    b'{"seq": 2, "op": "decode", "handle": "1", "chunk_shape": [8, 8], "payload": 1.5}',
    b"[1]",
]
#: One of each kit (Rust, Go, Node.js, Java) and the Python server; a kit whose harness is not built is skipped.
KITS = ["server", "rust-zune-jpeg", "go-image-jpeg", "node-jpeg-js", "java-imageio"]


def _session(kit: str, lines: list[bytes], *, binary: bool) -> tuple[int, list[dict[str, object]]]:
    """Feed a harness a start, ``lines`` and a stop; its exit status and its replies after the start's."""
    if kit == "server":
        argv = [sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server", _real_backend()]
    else:
        from zarr_jpeg_conformance.harnesses import Unavailable, command

        try:
            command(kit)
        except Unavailable as exc:
            pytest.skip(str(exc))
        argv = [sys.executable, "-m", "zarr_jpeg_conformance.harnesses", kit]
    start = {"seq": 1, "op": "start", "protocol": 1, **({"framings": ["json", "binary"]} if binary else {})}
    data = b"".join([json.dumps(start).encode() + b"\n", *(line + b"\n" for line in lines), b'{"seq": 9, "op": "stop"}\n'])
    done = subprocess.run(argv, input=data, capture_output=True, timeout=120, check=False)
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert replies and replies[0].get("status") == "ok", (replies[:1], done.stderr[-2000:])
    return done.returncode, replies[1:]


@pytest.mark.parametrize("kit", KITS)
@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_a_malformed_frame_gets_an_error_reply_and_the_harness_reads_on(kit: str, binary: bool) -> None:
    lines = MALFORMED_FRAMES if binary else MALFORMED_LINES
    code, replies = _session(kit, lines, binary=binary)
    assert code == 0 and len(replies) == len(lines) + 1, (code, replies)
    assert all(r["status"] in ("error", "rejected") for r in replies[:-1]), replies
    assert replies[-1] == {"seq": 9, "status": "ok"}


@pytest.mark.parametrize("kit", KITS)
@pytest.mark.parametrize("payload", [10**15, 2**31 - 1])
def test_a_payload_over_the_harness_limit_is_an_error_reply_and_the_end(kit: str, payload: int) -> None:
    """10^15 bytes made Go panic and Node.js throw, the Python server a MemoryError; 2^31 - 1 (an int to Java) made the
    JVM run out of heap. Its bytes are not read, so no frame after it can be found: the harness replies and ends."""
    header = b'{"seq": 2, "op": "decode", "handle": "1", "chunk_shape": [8, 8], "payload": %d}' % payload
    code, replies = _session(kit, [header], binary=True)
    assert code == 0 and len(replies) == 1, (code, replies)
    message = str(replies[0].get("message"))
    assert replies[0]["status"] == "error" and ("limit of" in message or "cap of" in message), replies


def test_a_value_the_contract_forbids_has_the_same_verdict_in_process_and_isolated(pytester: pytest.Pytester) -> None:
    """A decode that returns a memoryview failed in process (JPEG-DEC-03: not an array) but passed under --isolate,
    where the server made an array of it; its neighbour, an encode that returns an array of the stream's bytes, failed
    in process (JPEG-FMT-01) and was an error under --isolate. The same verdict, and the same words, both ways."""
    _real_backend()
    impls = ["--impl=broken_adapters:ReturnsMemoryview", "--impl=broken_adapters:EncodesToArray"]
    records = {}
    for how in ([], ["--isolate"]):
        results = pytester.path / f"results{len(how)}.jsonl"
        pytester.runpytest_subprocess("--pyargs", "zarr_jpeg_conformance.suites.test_roundtrip", "-p", "no:cacheprovider",
                                      "-k", "shape_roundtrip and gray-16x48", *impls, *how, f"--results={results}")
        records[bool(how)] = {(r["implementation"], r["case"]): (r["outcome"], r["message"])
                              for r in map(json.loads, results.read_text().splitlines())}
    assert records[False] == records[True] and len(records[False]) == 4, records
    outcomes = {impl: outcome for (impl, _), (outcome, _) in records[True].items()}
    assert outcomes == {"returns-memoryview": "fail", "encodes-to-array": "fail"}, records[True]
    messages = " ".join(message for _, message in records[True].values())
    assert "returned memoryview, not an array" in messages and "returned ndarray, not the bytes" in messages, messages


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
@pytest.mark.parametrize("end", ["close", "crash"])
def test_a_daemon_the_harness_started_ends_with_it(end: str, running: Callable[[int], bool], gone: Callable[..., bool]) -> None:
    """A daemon forked twice, in a session of its own, its descriptors on /dev/null: neither the harness's process group
    nor the pipes find it, and it outlived the --isolate session. Ended now when the harness is closed (the session's
    end) and, the neighbour, when the harness dies on its own (a segfault), which leaves the daemon to init."""
    _real_backend()
    adapter = ExecAdapter([sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server", "broken_adapters:Daemonizing"])
    daemon = int(adapter.versions()["daemon_pid"])
    try:
        assert running(daemon)
        if end == "crash":
            from zarr_jpeg_conformance.adapters.remote import HarnessCrashed

            with pytest.raises(HarnessCrashed, match=rf"SIGSEGV during parse; it left 1 process\(es\) running outside its "
                                                     rf"process group \(pid {daemon}: daemons\?\), killed too"):
                adapter.parse(codec(1, "grayscale"))
        adapter.close()
        assert gone(daemon), f"the daemon of a harness ended by {end} is still running"
    finally:
        if running(daemon):
            os.kill(daemon, 9)
