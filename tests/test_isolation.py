"""Crash isolation: a segfault, a hang, runaway memory or a lying harness costs one case, never the session.

The broken adapters (``tests/broken_adapters.py``) run behind ``harnesses.server`` in child
processes; the fake harnesses (``tests/fake_harnesses.py``) break the protocol itself.
First the client on its own (exceptions, restarts, replayed handles, caps, clean-up),
then the whole plugin: a real suite run with ``--isolate`` must record ``crash`` /
``timeout`` / ``error`` for the sabotaged cases and ``pass`` for every case after them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.adapters import AdapterLoadError, available_builtins, load_adapter
from zarr_jpeg_conformance.adapters.remote import (
    ExecAdapter,
    HarnessCrashed,
    HarnessError,
    HarnessProtocolError,
    HarnessRejection,
    HarnessTimeout,
    HarnessWarning,
)
from zarr_jpeg_conformance.corpus.cases import config_cases
from zarr_jpeg_conformance.corpus.modes import codec
from zarr_jpeg_conformance.judging.verdict import attempt
from zarr_jpeg_conformance.protocol import framing
from zarr_jpeg_conformance.protocol.framing import BINARY, JSON_LINES
from zarr_jpeg_conformance.protocol.wire import TEXT_CAP

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent
PARSE_SUITE = TESTS.parent / "suites" / "test_parse.py"
SERVER = [sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server"]
GRAY = codec(90, "grayscale")
#: Tight limits keep these tests fast: a hang costs TIMEOUT seconds, the hog stops at
#: MEMORY (harnesses.server with numpy and one backend needs about 160 MiB).
TIMEOUT = 2.0
MEMORY_MIB = 512


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Harness processes import ``broken_adapters`` from this folder."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))


def _needs_backend() -> None:
    if all(isinstance(a, AdapterLoadError) for a in available_builtins().values()):
        pytest.skip("no built-in backend is installed to provide pixels")


def _harness(adapter: str, **kwargs: object) -> ExecAdapter:
    return ExecAdapter([*SERVER, f"broken_adapters:{adapter}"], **kwargs)  # type: ignore[arg-type]


def _fake(*args: str, **kwargs: object) -> ExecAdapter:
    return ExecAdapter([sys.executable, "-m", "fake_harnesses", *args], **kwargs)  # type: ignore[arg-type]


def _fakes_module(name: str) -> ModuleType:
    """``broken_adapters`` or ``fake_harnesses``, for their constants (this folder is not on sys.path)."""
    spec = importlib.util.spec_from_file_location(f"_isolation_{name}", TESTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _real_backend() -> str:
    real = next((n for n, a in available_builtins().items() if not isinstance(a, AdapterLoadError)), None)
    if real is None:
        pytest.skip("no built-in backend is installed to provide pixels")
    return real


def test_failures_are_not_rejections() -> None:
    for kind in (HarnessCrashed, HarnessTimeout, HarnessProtocolError, HarnessError):
        assert not issubclass(kind, ValueError | TypeError), kind
        assert issubclass(kind, RuntimeError)  # so load_adapter reports a failed start
    assert (HarnessCrashed.outcome, HarnessTimeout.outcome) == ("crash", "timeout")


def test_segfault_crashes_one_call_and_the_next_call_restarts() -> None:
    _needs_backend()
    with _harness("Segfaulting") as adapter:
        parsed = adapter.parse(GRAY)
        good = np.full((16, 16), 128, np.uint8)
        first = adapter.encode(parsed, good)
        pid = adapter.pid
        got = attempt(adapter.encode, parsed, np.zeros((13, 13), np.uint8))
        assert isinstance(got.error, HarnessCrashed), got.describe()
        assert got.rejection is None
        assert "SIGSEGV" in str(got.error) and "Fatal Python error" in str(got.error), str(got.error)
        assert adapter.pid is None
        # The handle from the dead process is replayed into the new one.
        assert adapter.encode(parsed, good) == first
        assert adapter.pid not in (None, pid) and adapter.starts == 2 and parsed.generation == 2
        assert adapter.incidents == [got.error]


def test_hang_times_out_and_the_next_call_restarts() -> None:
    with _harness("Hanging", timeout=TIMEOUT) as adapter:
        before = adapter.parse(GRAY)
        start = time.monotonic()
        with pytest.raises(HarnessTimeout, match="no reply to parse"):
            adapter.parse(codec(100, "grayscale"))
        assert time.monotonic() - start < TIMEOUT + 5
        assert adapter.parse(GRAY).generation == 2
        with pytest.raises(ValueError):  # the restarted harness still judges configurations
            adapter.parse(codec(0, "grayscale"))
        assert before.generation == 1 and adapter.starts == 2


def test_memory_is_bounded() -> None:
    with _harness("Hungry", memory_limit=MEMORY_MIB << 20) as adapter:
        got = attempt(adapter.parse, codec(50, "grayscale"))
        assert got.error is not None, got.describe()
        assert isinstance(got.error, HarnessCrashed | HarnessError) and "MemoryError" in str(got.error), str(got.error)
        adapter.parse(GRAY)  # alive, or restarted


def test_protocol_violations_kill_the_harness() -> None:
    liar = "import sys; sys.stdin.readline(); print('hello'); sys.stdout.flush(); sys.stdin.readline()"
    with pytest.raises(HarnessProtocolError, match="not JSON"):
        ExecAdapter([sys.executable, "-c", liar], timeout=10)
    wrong_seq = 'import sys; sys.stdin.readline(); print(\'{"seq": 99, "status": "ok"}\'); sys.stdout.flush(); sys.stdin.readline()'
    # The message, not the command line it echoes (which holds "seq" too), names the wrong seq.
    with pytest.raises(AdapterLoadError, match=r"reply to start \(seq 1\) has seq 99"):
        load_adapter(f"exec:{sys.executable} -c {json.dumps(wrong_seq)}")
    silent_exit = "import sys; sys.stderr.write('no node here\\n'); sys.exit(3)"
    with pytest.raises(HarnessCrashed, match=r"exited with code 3 before replying to start[\s\S]*no node here"):
        ExecAdapter([sys.executable, "-c", silent_exit], timeout=10)


@pytest.mark.parametrize(("reply", "message"), [
    ('{"seq": true, "status": "ok", "protocol": 1, "name": "x", "version": "0", "roles": ["decode"], "versions": {}}',
     r"reply to start \(seq 1\) has seq True"),  # a bool is no seq, though True == 1
    ('{"seq": 1, "status": "ok", "protocol": 1, "version": "0", "roles": ["decode"], "versions": {}}', "start reply has no name"),
    ('{"seq": 1, "status": "ok", "protocol": 1, "name": "x", "version": "0", "roles": [], "versions": {}}',
     r"start reply has roles \[\]: a non-empty subset"),
    ('{"seq": 1, "status": "ok", "protocol": 1, "name": "x", "version": "0", "roles": ["decode", "fly"], "versions": {}}',
     r"start reply has roles \['decode', 'fly'\]"),
], ids=["bool-seq", "no-name", "no-roles", "unknown-role"])
def test_a_start_reply_that_breaks_the_protocol_is_refused(reply: str, message: str) -> None:
    harness = f"import sys; sys.stdin.readline(); print({reply!r}); sys.stdout.flush(); sys.stdin.readline()"
    with pytest.raises(HarnessProtocolError, match=message):
        ExecAdapter([sys.executable, "-c", harness], timeout=10)


@pytest.mark.parametrize("seconds", [[True, 0.5], [-1.0, 0.5], ["0.1", 0.5], [0.5]], ids=["bool", "negative", "text", "too-few"])
def test_a_bench_reply_whose_seconds_are_not_durations_is_refused(seconds: list[Any]) -> None:
    harness = (
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    reply = {'start': {'status': 'ok', 'protocol': 1, 'name': 'b', 'version': '0', 'roles': ['decode'],"
        " 'versions': {}}, 'parse': {'status': 'ok', 'handle': 'h'},"
        f" 'bench': {{'status': 'ok', 'seconds': {seconds!r}}}}}.get(req['op'], {{'status': 'ok'}})\n"
        "    print(json.dumps({**reply, 'seq': req['seq']}), flush=True)\n"
    )
    with ExecAdapter([sys.executable, "-c", harness], timeout=10) as adapter:
        parsed = adapter.parse(GRAY)
        with pytest.raises(HarnessProtocolError, match=r"bench reply: 'seconds' must be 2 durations"):
            adapter.bench(parsed, "decode", 2, b"\xff\xd8\xff\xd9", (8, 8))


def test_a_reply_with_the_seq_of_a_request_not_sent_yet_is_refused() -> None:
    """After a right start, a parse reply numbered for a later request is no reply to this parse."""
    ahead = (
        "import json, sys\n"
        "req = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'seq': req['seq'], 'status': 'ok', 'protocol': 1, 'name': 'ahead', 'version': '0',"
        " 'roles': ['decode'], 'versions': {}}), flush=True)\n"
        "req = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'seq': req['seq'] + 5, 'status': 'ok', 'handle': 'h'}), flush=True)\n"
        "sys.stdin.readline()\n"
    )
    adapter = ExecAdapter([sys.executable, "-c", ahead], timeout=10)
    with pytest.raises(HarnessProtocolError, match=r"reply to parse \(seq 2\) has seq 7"):
        adapter.parse(GRAY)


def test_a_harness_left_open_is_sent_stop_when_the_client_exits(tmp_path: Path) -> None:
    """A caller that never closes its adapter: at exit the harness still gets ``stop`` (not only end of input)."""
    harness = (
        "import json, sys\n"
        "req = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'seq': req['seq'], 'status': 'ok', 'protocol': 1, 'name': 'h', 'version': '0',"
        " 'roles': ['decode'], 'versions': {}}), flush=True)\n"
        "line = sys.stdin.readline()\n"
        f"open({str(tmp_path / 'last')!r}, 'w').write(line)\n"
        "if line:\n"
        "    print(json.dumps({'seq': json.loads(line)['seq'], 'status': 'ok'}), flush=True)\n"
    )
    client = ("import sys\nfrom zarr_jpeg_conformance.adapters.remote import ExecAdapter\n"
              f"adapter = ExecAdapter([sys.executable, '-c', {harness!r}], timeout=10)\n")
    done = subprocess.run([sys.executable, "-c", client], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "last").read_text())["op"] == "stop"


def test_stderr_is_drained_and_capped() -> None:
    """A harness may write megabytes to stderr without blocking; messages keep its last 4 KB."""
    flood = (
        "import json, sys\n"
        "req = json.loads(sys.stdin.readline())\n"
        "sys.stderr.write('x' * 1_000_000)\n"
        "print(json.dumps({'seq': req['seq'], 'status': 'ok', 'protocol': 1, 'name': 'flood', 'version': '0',"
        " 'roles': ['decode'], 'versions': {}}), flush=True)\n"
        "sys.stdin.readline()\n"
        "sys.stderr.write('y' * 10000 + 'the end')\n"
        "sys.exit(5)\n"
    )
    adapter = ExecAdapter([sys.executable, "-c", flood], timeout=10)
    adapter.context = "the test"
    with pytest.raises(HarnessCrashed, match="exited with code 5 during parse") as info:
        adapter.parse(GRAY)
    stderr = str(info.value).split("harness stderr:\n", 1)[1]
    assert stderr.endswith("the end") and stderr.startswith("[...]") and len(stderr) <= TEXT_CAP + len("[...]")
    assert "x" not in stderr, "output of earlier requests belongs to them"
    assert info.value.context == "the test"


@pytest.mark.parametrize("framings", [[JSON_LINES], [JSON_LINES, BINARY]])
def test_a_reply_over_the_cap_is_refused_and_the_next_call_works(framings: list[str]) -> None:
    """A 12 MiB decoded chunk against an 8 MiB cap: refused with the cap named, then business as usual."""
    bloat_shape = _fakes_module("broken_adapters").BLOAT_SHAPE
    _needs_backend()
    with _harness("Bloated", max_reply=8 << 20, framings=framings) as adapter:
        parsed = adapter.parse(GRAY)
        chunk = np.full((16, 16), 99, np.uint8)
        data = adapter.encode(parsed, chunk)
        got = attempt(adapter.decode, parsed, data, bloat_shape)
        assert isinstance(got.error, HarnessProtocolError) and got.rejection is None, got.describe()
        message = str(got.error)
        assert "reply to decode" in message and "more than the cap of 8 MiB" in message, message
        assert "max_reply=" in message and "MAX_MESSAGE" in message, "the error must say how to raise the cap"
        # Binary framing knows from the header alone; JSON lines once the line passes the cap.
        assert ("declares a payload" in message) == (adapter.framing == BINARY), message
        assert adapter.pid is None and adapter.incidents == [got.error]
        out = adapter.decode(parsed, data, chunk.shape)
        assert out.shape == chunk.shape and abs(int(out.mean()) - 99) <= 2
        assert adapter.starts == 2


def test_the_cap_defaults_to_max_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """Assigning framing.MAX_MESSAGE (the documented knob) changes the cap of harnesses started after it."""
    _needs_backend()
    monkeypatch.setattr(framing, "MAX_MESSAGE", 1 << 20)
    with _harness("Bloated") as adapter:
        assert adapter.max_reply == 1 << 20
        parsed = adapter.parse(GRAY)
        data = adapter.encode(parsed, np.zeros((8, 8), np.uint8))
        with pytest.raises(HarnessProtocolError, match="more than the cap of 1 MiB"):
            adapter.decode(parsed, data, _fakes_module("broken_adapters").BLOAT_SHAPE)
    with _harness("Bloated", max_reply=None) as unbounded:
        assert unbounded.max_reply is None


@pytest.mark.parametrize("framings", [[JSON_LINES], [JSON_LINES, BINARY]])
def test_a_second_reply_is_charged_to_the_request_that_caused_it(framings: list[str]) -> None:
    """Quality 1 is answered twice at once; 100 once more half a second later; 99 again just before the next reply."""
    with _fake("twice", _real_backend(), framings=framings, timeout=10) as adapter:
        adapter.context = "case quality 1"
        with pytest.raises(HarnessProtocolError, match=r"after its reply to parse \(seq 2\) it wrote \d+ more bytes") as info:
            adapter.parse(codec(1, "grayscale"))
        assert info.value.context == "case quality 1" and adapter.pid is None
        adapter.context = "case quality 2"
        adapter.parse(codec(2, "grayscale"))  # a fresh process: this case is not touched
        # A second reply that comes once its call has returned cannot change that call's
        # result: it is charged to it by its seq (an incident and a warning), and dropped.
        caught = _late_copy_checked(adapter, framings, 100, wait=_fakes_module("fake_harnesses").LATE * 3)
        assert [w.category for w in caught] == [HarnessWarning] and "case quality 100" in str(caught[0].message)
        # The same when the copy arrives while the client waits for the next reply.
        caught = _late_copy_checked(adapter, framings, 99, wait=0.0)
        assert [w.category for w in caught] == [HarnessWarning] and "case quality 99" in str(caught[0].message)
        assert len(adapter.incidents) == 3 and adapter.starts == 2, "late copies do not restart the harness"


def _late_copy_checked(adapter: ExecAdapter, framings: list[str], quality: int, wait: float) -> list[warnings.WarningMessage]:
    """Parse ``quality`` (answered twice, late), another quality in between, wait, then one more: all succeed."""
    adapter.context = f"case quality {quality}"
    adapter.parse(codec(quality, "grayscale"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        adapter.context = "case quality 4"  # a call in between: the copy still names the seq of its request
        adapter.parse(codec(4, "grayscale"))
        time.sleep(wait)
        adapter.context = "case quality 3"
        parsed = adapter.parse(codec(3, "grayscale"))
    assert parsed.generation == adapter.starts and adapter.framing == framings[-1]
    late = adapter.incidents[-1]
    assert isinstance(late, HarnessProtocolError) and late.context == f"case quality {quality}", late  # type: ignore[attr-defined]
    assert "a second reply to parse" in str(late) and "after that call had returned" in str(late)
    return caught


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_closing_ends_the_harness_process_group(running: Callable[[int], bool]) -> None:
    """A helper the adapter forked ends with the harness, on a clean stop as on a timeout."""
    _needs_backend()
    helpers = []
    try:
        for end in ("close", "timeout"):
            adapter = _harness("Forking", timeout=TIMEOUT)
            helper = int(adapter.versions()["helper_pid"])
            helpers.append(helper)
            assert running(helper)
            adapter.parse(GRAY)
            if end == "timeout":
                with pytest.raises(HarnessTimeout):
                    adapter.parse(codec(100, "grayscale"))
            adapter.close()  # stop, and the harness exits 0: its helper must not live on
            deadline = time.monotonic() + 5
            while running(helper) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not running(helper), f"the helper of a harness ended by {end} is still running"
    finally:
        for helper in helpers:
            if running(helper):
                os.kill(helper, 9)


@pytest.mark.parametrize(
    ("mode", "evidence"),
    [("jvm-no-heap", "Could not allocate compressed class space"), ("v8-no-code-range", "Fatal process OOM")],
)
def test_running_out_of_address_space_at_start_says_what_to_do(mode: str, evidence: str) -> None:
    with pytest.raises((HarnessProtocolError, HarnessCrashed)) as info:
        _fake(mode, memory_limit=MEMORY_MIB << 20, timeout=10)
    message = str(info.value)
    assert f"exceeded --harness-memory ({MEMORY_MIB} MiB" in message, message
    assert "raise --harness-memory" in message and "-Xmx" in message and "-XX:ReservedCodeCacheSize" in message
    assert evidence in message, "the harness's own words are shown"
    # The load error the plugin turns into a usage error carries it too.
    with pytest.raises(AdapterLoadError, match="exceeded --harness-memory"):
        load_adapter(f"exec:{sys.executable} -m fake_harnesses {mode}")


def test_other_start_failures_get_no_memory_advice() -> None:
    with pytest.raises(HarnessCrashed, match="exited with code 127 before replying to start") as info:
        _fake("missing-library", timeout=10)
    assert "libjpeg.so.62" in str(info.value) and "--harness-memory" not in str(info.value)
    with pytest.raises(HarnessProtocolError) as no_limit:
        _fake("jvm-no-heap", memory_limit=None, timeout=10)
    assert "--harness-memory" not in str(no_limit.value), "no limit was set: raising it is no advice"


# ------------------------------------------------------------------ the whole plugin


def _records(path: Path) -> dict[tuple[str, str], dict[str, object]]:
    return {(r["implementation"], r["case"]): r for r in map(json.loads, path.read_text().splitlines())}


def test_isolate_turns_crashes_into_outcomes_and_the_run_goes_on(pytester: pytest.Pytester) -> None:
    """The parse suite over the quality cases, with four saboteurs and (if any) a real backend."""
    impls = [
        "broken_adapters:Segfaulting",
        "broken_adapters:Hanging",
        "broken_adapters:Hungry",
        f"exec:{sys.executable} -m fake_harnesses twice broken_adapters:Twice",
    ]
    real = next((n for n, a in available_builtins().items() if not isinstance(a, AdapterLoadError)), None)
    if real:
        impls.append(real)
    result = pytester.runpytest_subprocess(
        str(PARSE_SUITE), "-p", "no:cacheprovider", "-k", "quality", "--isolate",
        f"--harness-timeout={TIMEOUT}", f"--harness-memory={MEMORY_MIB}", "--results=results.jsonl",
        *(f"--impl={i}" for i in impls),
    )
    records = _records(pytester.path / "results.jsonl")
    sabotaged = {
        ("segfaulting", "config.quality.min"): {"crash"},
        ("hanging", "config.quality.max"): {"timeout"},
        ("hungry", "config.quality.mid"): {"crash", "error"},
        # Answered twice at once: the case that asked is charged, not the next one.
        ("twice", "config.quality.min"): {"error"},
    }
    for key, allowed in sabotaged.items():
        assert key in records, f"{key} did not run: {result.stdout.str()[-2000:]}"
        assert records[key]["outcome"] in allowed, records[key]
    assert "SIGSEGV" in records["segfaulting", "config.quality.min"]["message"]
    assert "MemoryError" in records["hungry", "config.quality.mid"]["message"]
    assert "a second reply?" in records["twice", "config.quality.min"]["message"]
    others = {k: r["outcome"] for k, r in records.items() if k not in sabotaged}
    cases = {case for _, case in records}
    assert len(cases) >= 15 and len(records) == len(cases) * len(impls), sorted(records)
    # An invalid case whose valid twin is a sabotaged case cannot be judged: it is blocked by the twin,
    # and the crash or timeout is the twin's own case's, not a second one.
    twins = {c.id: c.twin for c in config_cases()}
    expected = {(impl, case): "blocked" if (impl, twins[case]) in sabotaged else "pass" for impl, case in others}
    assert others == expected, {k: v for k, v in others.items() if v != expected[k]}
    assert all(records[k].get("blocked_by") == twins[k[1]] for k, v in expected.items() if v == "blocked")
    # The implementations keep their names, and the session reports each outcome.
    assert {impl for impl, _ in records} == {"segfaulting", "hanging", "hungry", "twice", *([real] if real else [])}
    result.stdout.fnmatch_lines(["*segfaulting*1 crash*", "*hanging*1 timeout*"])
    # The late second reply to config.quality.max cannot change that case's result, which
    # was already written; whenever it arrives, no other case is charged with it, and a
    # warning names the case it belongs to (if a call came after it: it is timed by the load):
    # config.quality.max, or a case that asked for it as its valid twin.
    asking = {"config.quality.max"} | {case for case, twin in twins.items() if twin == "config.quality.max"}
    late = [line for line in result.outlines + result.errlines if "HarnessWarning" in line]
    assert all(any(f"during suites/test_parse.py::test_parse[twice-{c}]" in line for c in asking) for line in late), late
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes()["failed"] == 4


def test_exec_impl_without_a_harness_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(str(PARSE_SUITE), "-p", "no:cacheprovider", "--impl=exec:/nonexistent/harness")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--impl=exec:/nonexistent/harness*could not start its harness*"])


def test_the_resident_peak_is_unknown_where_it_cannot_be_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only /proc (some containers) leaves no baseline: the peak is None, never a crash or a guess."""
    from zarr_jpeg_conformance.judging.memory import resident_peak

    if not Path(f"/proc/{os.getpid()}/status").exists():
        pytest.skip("no /proc here: resident_peak measures nothing on this system")
    with resident_peak(os.getpid()) as peak:
        grown = bytearray(8 << 20)
    assert peak.bytes is not None and peak.bytes >= 0 and grown

    def refuse(self: Path, *args: object, **kwargs: object) -> int:
        raise PermissionError(f"{self} is read-only")

    monkeypatch.setattr(Path, "write_text", refuse)
    with resident_peak(os.getpid()) as peak:
        pass
    assert peak.bytes is None


def test_a_stderr_tail_marks_a_cut_only_when_text_is_left() -> None:
    """The tail keeps the last TEXT_CAP bytes; "[...]" says text was cut before them, and blank output is no text."""
    import io

    from zarr_jpeg_conformance.adapters.process import StderrTail

    def tail(data: bytes) -> str:
        t = StderrTail(io.BytesIO(data))
        return t.since(0, settle=10)

    assert tail(b"boom\n") == "boom"
    assert tail(b"x" * TEXT_CAP + b"end") == "[...]" + "x" * (TEXT_CAP - 3) + "end"
    assert tail(b"x" * 10 + b" " * (TEXT_CAP + 10)) == ""


@pytest.mark.skipif(sys.platform != "linux", reason="pipe sizes are set on Linux (F_SETPIPE_SZ)")
def test_a_harness_runs_with_a_2_gib_address_space_and_1_mib_pipes() -> None:
    """The limit stops a runaway allocation long before it hurts the machine; wide pipes carry a 192 KiB chunk at once."""
    harness = (
        "import fcntl, json, resource, sys; sys.stdin.readline()\n"
        "name = f'as{resource.getrlimit(resource.RLIMIT_AS)[0]}-in{fcntl.fcntl(0, 1032)}-out{fcntl.fcntl(1, 1032)}'\n"
        "print(json.dumps({'seq': 1, 'status': 'ok', 'protocol': 1, 'name': name, 'version': '0', 'roles': ['decode'],"
        " 'versions': {}}), flush=True)\n"
        "sys.stdin.readline()\n"
    )
    adapter = ExecAdapter([sys.executable, "-c", harness], timeout=10)
    try:
        assert adapter.name == f"as{2 << 30}-in{1 << 20}-out{1 << 20}"
    finally:
        adapter.close()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finds who holds the pipe in /proc")
def test_a_stopped_harness_takes_the_daemon_that_holds_its_stdout_with_it() -> None:
    """A clean stop closes only stdin until the harness is gone: then whoever still holds its stdout is found and killed."""
    harness = (
        "import json, subprocess, sys; sys.stdin.readline()\n"
        "d = subprocess.Popen(['sleep', '300'], start_new_session=True, stdout=sys.stdout, stdin=subprocess.DEVNULL)\n"
        "print(json.dumps({'seq': 1, 'status': 'ok', 'protocol': 1, 'name': f'd{d.pid}', 'version': '0',"
        " 'roles': ['decode'], 'versions': {}}), flush=True)\n"
        "sys.stdin.readline(); print(json.dumps({'seq': 2, 'status': 'ok'}), flush=True); sys.stdin.readline()\n"
    )
    adapter = ExecAdapter([sys.executable, "-c", harness], timeout=10)
    daemon = int(adapter.name[1:])
    adapter.close()
    time.sleep(0.2)
    state = Path(f"/proc/{daemon}/stat")
    try:
        assert not state.exists() or state.read_text().split(")")[-1].split()[0] == "Z", "the daemon still runs"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(daemon, 9)


@pytest.mark.parametrize("bare", [False, True], ids=["with-exception", "without-exception"])
def test_a_rejection_or_an_error_names_its_exception_only_where_the_harness_gave_one(bare: bool) -> None:
    """``exception`` is optional in a reply: where it is given the message leads with it, where it is
    not the message is the harness's words alone (not a KeyError, not "None: ...")."""
    _needs_backend()
    spec = "broken_adapters:Failing"
    with (_fake("bare", spec) if bare else _harness("Failing")) as adapter:
        refused = attempt(adapter.parse, codec(0, "grayscale"))
        assert isinstance(refused.rejection, HarnessRejection), refused.describe()
        failed = attempt(adapter.encode, adapter.parse(GRAY), np.zeros((13, 13), np.uint8))
        assert isinstance(failed.error, HarnessError), failed.describe()
    rejection, error = str(refused.rejection), str(failed.error).splitlines()[0]  # the trace follows
    assert rejection.startswith("ConfigError: ") != bare and "'quality' must be in the range 1-100" in rejection, rejection
    assert ("RuntimeError: failing: a bug" in error) != bare and "failing: a bug in the implementation" in error, error
    assert "None" not in rejection.split(":")[0] and "KeyError" not in error
