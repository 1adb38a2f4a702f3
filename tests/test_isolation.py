"""Crash isolation: a segfault, a hang or runaway memory costs one case, never the session.

The broken adapters (``tests/broken_adapters.py``) run behind ``harnesses.server`` in child
processes. First the client on its own (exceptions, restarts, replayed handles), then the
whole plugin: a real suite run with ``--isolate`` must record ``crash`` / ``timeout`` for
the sabotaged cases and ``pass`` for every case after them.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from zarr_jpeg_conformance.adapters import AdapterLoadError, available_builtins, load_adapter
from zarr_jpeg_conformance.adapters.remote import (
    ExecAdapter,
    HarnessCrashed,
    HarnessError,
    HarnessProtocolError,
    HarnessTimeout,
)
from zarr_jpeg_conformance.corpus.modes import codec
from zarr_jpeg_conformance.judging.verdict import attempt
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
    with pytest.raises(AdapterLoadError, match="seq"):
        load_adapter(f"exec:{sys.executable} -c {json.dumps(wrong_seq)}")
    silent_exit = "import sys; sys.stderr.write('no node here\\n'); sys.exit(3)"
    with pytest.raises(HarnessCrashed, match=r"exited with code 3 before replying to start[\s\S]*no node here"):
        ExecAdapter([sys.executable, "-c", silent_exit], timeout=10)


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


# ------------------------------------------------------------------ the whole plugin


def _records(path: Path) -> dict[tuple[str, str], dict[str, object]]:
    return {(r["implementation"], r["case"]): r for r in map(json.loads, path.read_text().splitlines())}


def test_isolate_turns_crashes_into_outcomes_and_the_run_goes_on(pytester: pytest.Pytester) -> None:
    """The parse suite over the quality cases, with three saboteurs and (if any) a real backend."""
    impls = ["broken_adapters:Segfaulting", "broken_adapters:Hanging", "broken_adapters:Hungry"]
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
    }
    for key, allowed in sabotaged.items():
        assert key in records, f"{key} did not run: {result.stdout.str()[-2000:]}"
        assert records[key]["outcome"] in allowed, records[key]
    assert "SIGSEGV" in records["segfaulting", "config.quality.min"]["message"]
    assert "MemoryError" in records["hungry", "config.quality.mid"]["message"]
    others = {k: r["outcome"] for k, r in records.items() if k not in sabotaged}
    cases = {case for _, case in records}
    assert len(cases) >= 15 and len(records) == len(cases) * len(impls), sorted(records)
    assert set(others.values()) == {"pass"}, {k: v for k, v in others.items() if v != "pass"}
    # The implementations keep their names, and the session reports each outcome.
    assert {impl for impl, _ in records} == {"segfaulting", "hanging", "hungry", *([real] if real else [])}
    result.stdout.fnmatch_lines(["*segfaulting*1 crash*", "*hanging*1 timeout*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes()["failed"] == 3


def test_exec_impl_without_a_harness_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(str(PARSE_SUITE), "-p", "no:cacheprovider", "--impl=exec:/nonexistent/harness")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--impl=exec:/nonexistent/harness*could not start its harness*"])
