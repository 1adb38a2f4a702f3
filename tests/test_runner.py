"""The suites' runner (the pytest plugin) under attack: giant messages, bad adapter attributes
and options, Ctrl-C and an implementation's own KeyboardInterrupt, and the outcome line
against pytest's totals. The adapters are in tests/hostile_adapters.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from zarr_jpeg_conformance.adapters import AdapterLoadError, load_adapter
from zarr_jpeg_conformance.corpus.registry import load_json
from zarr_jpeg_conformance.judging import verdict
from zarr_jpeg_conformance.judging.verdict import Attempt, Judge

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent
SUITES = TESTS.parent / "suites"
RESULTS = jsonschema.Draft202012Validator(load_json("schema", "results.schema.json"))


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))


def _lines(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        RESULTS.validate(record)
    return records


def _parse_suite(pytester: pytest.Pytester, impl: str, *args: str, k: str = "quality") -> pytest.RunResult:
    return pytester.runpytest(str(SUITES / "test_parse.py"), "-p", "no:cacheprovider", "-k", k, f"--impl={impl}",
                              "--results=results.jsonl", *args)


# ---------------------------------------------------------------- messages


def test_clip_keeps_both_ends_and_says_how_much_was_cut() -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"
    short = verdict.clip(text, 100)
    assert short.startswith("HEAD") and short.endswith("TAIL") and len(short) < 200
    assert f"[... {len(text) - 100:,} characters cut ...]" in short
    assert verdict.clip("small", 100) == "small"


def test_messages_of_an_attempt_and_a_judge_are_capped() -> None:
    giant = ValueError("A" + "v" * 1_000_000 + "Z")
    said = Attempt(rejection=giant).describe()
    assert len(said) < 5000 and said.startswith("rejected: ValueError: A") and said.endswith("Z") and "characters cut" in said
    judge = Judge("impl", "case", [], "SHOULD")
    with pytest.warns(UserWarning):
        for _ in range(50):  # many warnings of one case: the record is capped as a whole
            judge.finish(judge.outcome.WARN, "w" * 100_000)
    assert len(judge.record()["message"]) < verdict.MAX_RECORD + 200


def test_a_must_failure_leads_the_record_before_an_earlier_should_warning() -> None:
    """The warning was found first, but the failure decides the outcome: it is read first."""
    judge = Judge("impl", "case", [], "MUST")
    with pytest.warns(UserWarning):
        judge.require(False, "JPEG-X-07", "returned a partial chunk")
    judge.messages.append("note: a remark without an outcome")
    with pytest.raises(pytest.fail.Exception):
        judge.require(False, "JPEG-DIM-03", "wrong shape")
    lines = judge.record()["message"].splitlines()
    starts = [line.split(":", 1)[0] for line in lines if not line.startswith(" ")]
    assert starts == ["fail", "warn", "note"], lines
    only_warn = Judge("impl", "case", [], "SHOULD")
    with pytest.warns(UserWarning):
        only_warn.require(False, "JPEG-X-07", "returned a partial chunk")
    assert only_warn.record()["message"].startswith("warn: [JPEG-X-07")


def test_giant_implementation_messages_are_capped_in_results_and_terminal(pytester: pytest.Pytester) -> None:
    """A 5 MB rejection text and a 5 MB exception used to go verbatim into both (10 MB each)."""
    result = _parse_suite(pytester, "hostile_adapters:GiantMessages", "-rA")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    records = {r["case"]: r for r in _lines(pytester.path / "results.jsonl")}
    rejected, raised = records["config.quality.min"], records["config.quality.max"]
    assert rejected["outcome"] == "fail" and raised["outcome"] == "error"
    for record, start, end in ((rejected, "START-OF-REJECTION", "END-OF-REJECTION"), (raised, "START-OF-ERROR", "END-OF-ERROR")):
        assert start in record["message"] and end in record["message"] and "characters cut" in record["message"]
    assert (pytester.path / "results.jsonl").stat().st_size < 100_000
    terminal = "\n".join(result.outlines + result.errlines)
    assert len(terminal) < 200_000 and "characters cut" in terminal


def test_an_exception_escaping_a_test_is_capped_too(pytester: pytest.Pytester) -> None:
    """An exception the suite does not catch becomes pytest's failure text: capped as well."""
    pytester.makepyfile(test_escape="""
        def test_escape(impl, judge):
            raise RuntimeError("START " + "e" * 5_000_000 + " END")
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "--impl=hostile_adapters:GiantMessages", "--results=results.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    (record,) = _lines(pytester.path / "results.jsonl")
    assert record["outcome"] == "error" and "START" in record["message"] and " END" in record["message"]
    assert len(record["message"]) < 10_000
    terminal = "\n".join(result.outlines)
    assert len(terminal) < 100_000 and "characters cut" in terminal


# ---------------------------------------------------------------- adapter attributes and options


@pytest.mark.parametrize(
    ("attr", "reason"),
    [
        ("GeneratorRoles", "has roles generator .*: they must be a set of strings"),
        ("NoneRoles", "has roles NoneType None: they must be a set of strings"),
        ("ListRoles", "has roles list .*: they must be a set of strings"),
        ("IntRoles", "has roles frozenset .*: they must be a set of strings"),
        ("IntName", "has name int 5: it must be a non-empty printable string"),
        ("BlankName", "has name str '  ': it must be a non-empty printable string"),
        ("HugeName", "has name str 'nnn.*\\.\\.\\.: it must be a non-empty printable string of at most 100"),
        ("NewlineName", "has name str 'two\\\\nlines': it must be a non-empty printable string"),
        ("VersionsNotCallable", "versions must be methods"),
    ],
)
def test_adapter_attributes_are_checked_when_loading(attr: str, reason: str) -> None:
    """A generator of roles used to be consumed by the check and every test then skipped (exit 0);
    None was an INTERNALERROR; a non-string name passed the loader."""
    with pytest.raises(AdapterLoadError, match=reason):
        load_adapter(f"hostile_adapters:{attr}")


def test_generator_roles_are_a_usage_error_not_silent_skips(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(str(SUITES / "test_roundtrip.py"), "-p", "no:cacheprovider",
                                "--impl=hostile_adapters:GeneratorRoles")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--impl=hostile_adapters:GeneratorRoles:*has roles generator*must be a set of strings*"])


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--harness-timeout=nan", "must be a finite number of seconds above 0, got 'nan'"),
        ("--harness-timeout=inf", "must be a finite number of seconds above 0, got 'inf'"),
        ("--harness-timeout=0", "must be a finite number of seconds above 0, got '0'"),
        ("--harness-timeout=-3", "must be a finite number of seconds above 0, got '-3'"),
        ("--harness-timeout=soon", "expected a number of seconds, got 'soon'"),
        ("--harness-memory=-5", "must be 0 (no limit) or a positive number of MiB, got '-5'"),
        ("--harness-memory=1.5", "expected a whole number of MiB (0 for no limit), got '1.5'"),
    ],
)
def test_harness_options_are_checked(pytester: pytest.Pytester, option: str, message: str) -> None:
    """nan was an INTERNALERROR, 0 silently meant 60 s and -5 silently meant no limit."""
    result = _parse_suite(pytester, "hostile_adapters:Slow", option, k="quality.mid")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument {option.split('=')[0]}: {message}*"])


def test_harness_options_in_range_are_taken(pytester: pytest.Pytester) -> None:
    result = _parse_suite(pytester, "hostile_adapters:GiantMessages", "--harness-timeout=0.5", "--harness-memory=0",
                          k="quality.mid")
    assert result.ret == pytest.ExitCode.OK


# ---------------------------------------------------------------- Ctrl-C and KeyboardInterrupt


def _pytest_child(impl: str, results: Path, cwd: Path, k: str = "quality") -> subprocess.Popen[str]:
    """pytest in a child whose SIGINT is as in a terminal (a background job's would be ignored)."""
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", str(SUITES / "test_parse.py"), "-p", "no:cacheprovider", "-k", k,
         f"--impl={impl}", f"--results={results}", "-q"],
        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _ctrl_c_after(proc: subprocess.Popen[str], results: Path, lines: int) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if results.is_file() and len(results.read_text(encoding="utf-8").splitlines()) >= lines:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    return out


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("adapter", ["Slow", "SwallowsCtrlC"])
def test_ctrl_c_stops_the_run_and_keeps_its_results(tmp_path: Path, adapter: str) -> None:
    """Ctrl-C ends the session (exit 2), the summary says so, every line written so far stays valid.
    An implementation that swallows the KeyboardInterrupt does not keep the run going."""
    results = tmp_path / "results.jsonl"
    proc = _pytest_child(f"hostile_adapters:{adapter}", results, tmp_path)
    out = _ctrl_c_after(proc, results, 3)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out[-3000:]
    records = _lines(results)
    assert 3 <= len(records) < 23  # -k quality selects 23 cases
    assert not [r for r in records if r["outcome"] != "pass"], records  # the user's Ctrl-C is charged to no case
    assert f"run interrupted (Ctrl-C): the outcomes below are the {len(records)} cases that finished" in out
    assert f"all kept in {results}" in out


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_an_implementations_own_keyboard_interrupt_is_its_error(tmp_path: Path) -> None:
    """Nobody pressed Ctrl-C: the case is an error of the implementation and the run goes on
    (it used to end the session there, dropping every later case)."""
    results = tmp_path / "results.jsonl"
    proc = _pytest_child("hostile_adapters:RaisesKeyboardInterrupt", results, tmp_path)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, out[-3000:]
    records = {r["case"]: r for r in _lines(results)}
    assert len(records) == 23 and "run interrupted" not in out
    mid = records["config.quality.mid"]
    assert mid["outcome"] == "error" and "KeyboardInterrupt raised by the code under test, not by a Ctrl-C" in mid["message"]


# ---------------------------------------------------------------- the outcome line and pytest's totals


def test_outcome_line_explains_pytests_totals(pytester: pytest.Pytester) -> None:
    """Known failures are xfails, an unexpected pass is a failure, skips without an outcome are named."""
    listed = ["config.quality.zero", "config.quality.above-max", "config.quality.negative", "config.quality.min"]
    (pytester.path / "known.json").write_text(json.dumps({"implementation": "lax-quality", "known_failures": [
        {"case": c, "reason": "accepts any integer quality"} for c in listed]}))
    result = _parse_suite(pytester, "broken_adapters:LaxQuality", "--known-failures=known.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    passed = result.parseoutcomes()["passed"]
    result.assert_outcomes(failed=2, passed=passed, xfailed=3)
    result.stdout.fnmatch_lines([
        f"lax-quality: {passed + 1} pass, 4 fail (known failures: 3, unexpected passes: 1)",
        f"pytest's totals: 2 failed (1 fail, 1 unexpected pass of a known failure); {passed} passed ({passed} pass); "
        "3 xfailed (3 known failures)",
    ])


def test_tests_without_an_outcome_are_named_on_the_line(pytester: pytest.Pytester) -> None:
    """A reader has no encoder: the round-trip cases skip without an implementation and without an outcome;
    a test the suite skips itself records no outcome (it used to be recorded as a pass)."""
    pytester.makepyfile(test_own_skip="""
        import pytest

        def test_skipped_by_the_suite(impl, judge):
            pytest.skip("no data for this case")

        def test_not_a_conformance_case():
            pass
    """)
    result = pytester.runpytest("test_own_skip.py", str(SUITES / "test_roundtrip.py"), "-p", "no:cacheprovider",
                                "-k", "own_skip or not_a_conformance or shape_roundtrip",
                                "--impl=hostile_adapters:DecodeOnly", "--results=results.jsonl")
    assert result.ret == pytest.ExitCode.OK
    skipped = result.parseoutcomes()["skipped"]
    result.stdout.fnmatch_lines([
        "decode-only: no outcomes",
        f"pytest's totals: 1 passed (1 not a conformance case); {skipped} skipped ({skipped - 1} with no implementation "
        "that has the roles they need, 1 skipped by the suite, no outcome)",
    ])
    assert _lines(pytester.path / "results.jsonl") == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_the_report_and_keeps_what_ran(tmp_path: Path) -> None:
    """The report passes Ctrl-C on to its pytest child, keeps the results so far and renders them as incomplete."""
    out = tmp_path / "matrix"
    proc = subprocess.Popen(
        [sys.executable, "-m", "zarr_jpeg_conformance.report", "--out", str(out), "--impl", "hostile_adapters:Slow",
         "--suites", "parse", "--no-throughput"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    log = _ctrl_c_after(proc, out / "results" / "slow.jsonl", 3)
    assert proc.returncode == 130, log[-3000:]
    assert "interrupted (Ctrl-C): the results so far stay in" in log
    doc = json.loads((out / "matrix.json").read_text())
    (impl,) = doc["implementations"]
    assert impl["run_problem"].startswith("the suite run was interrupted (Ctrl-C)") and impl["run"]["interrupted"]
    assert 3 <= len(doc["cases"]["slow"]) < 162


def test_who_sent_a_keyboard_interrupt_when_the_runner_is_not_watching() -> None:
    """Not watching SIGINT: under someone else's handler a KeyboardInterrupt may be the user's
    (the run stops); with SIGINT ignored or fatal no Ctrl-C can raise one (the code's error)."""
    from zarr_jpeg_conformance.judging.plugin import _Interrupts

    interrupts = _Interrupts()  # never installed
    previous = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, lambda *_: None)
        assert interrupts.users()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        assert not interrupts.users()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        assert not interrupts.users()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_module_skipped_at_collection_is_named_on_the_line(pytester: pytest.Pytester) -> None:
    """A suite module that cannot run here (a missing package) skips at collection: the totals say so."""
    pytester.makepyfile(test_needs_more="""
        import pytest

        pytest.importorskip("no_such_package_for_this_suite")
    """, test_plain="def test_plain():\n    pass\n\n\ndef test_case(impl, judge):\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--impl=pillow")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["pytest's totals: 2 passed (1 pass, 1 not a conformance case); 1 skipped (1 module skipped at collection)"])


def test_two_implementations_of_one_name_are_a_usage_error(pytester: pytest.Pytester) -> None:
    """Their results would share every case ID: the report could not tell them apart."""
    result = _parse_suite(pytester, "pillow", "--impl=pillow", k="quality.mid")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--impl names must be unique, got pillow twice*"])


def test_a_long_skip_reason_is_left_as_pytest_made_it(pytester: pytest.Pytester) -> None:
    """Only failures are clipped: a skip's report is a (path, line, reason) triple that pytest's summary takes apart."""
    pytester.makepyfile(test_long_skip="""
        import pytest

        def test_skipped():
            pytest.skip("because " * 2000 + "END")
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "--impl=pillow", "-rs")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] test_long_skip.py:4: because because*"])


@pytest.mark.parametrize(("memory", "said"), [("512", "address space 512 MiB"), ("0", "address space unlimited")])
def test_the_header_gives_each_harness_its_limits(pytester: pytest.Pytester, memory: str, said: str) -> None:
    server = f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses.server pillow"
    result = _parse_suite(pytester, server, f"--harness-memory={memory}", "--harness-timeout=30", k="quality.mid")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    result.stdout.fnmatch_lines([f"  harness processes: pillow (timeout 30 s per call, {said})"])


def test_a_session_of_other_tests_gets_no_header(pytester: pytest.Pytester) -> None:
    """Installed, the plugin loads in every pytest session: it speaks only when its suites or --impl are in it."""
    pytester.makepyfile(test_theirs="def test_theirs():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    assert "implementations under test" not in result.stdout.str()
    result = pytester.runpytest("-p", "no:cacheprovider", "--impl=pillow")
    result.stdout.fnmatch_lines(["zarr-jpeg-conformance *: implementations under test"])


def test_one_mib_is_a_limit_not_unlimited(pytester: pytest.Pytester) -> None:
    """--harness-memory=1 is the smallest limit there is (no harness starts in it); only 0 means none."""
    server = f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses.server pillow"
    result = _parse_suite(pytester, server, "--harness-memory=1", k="quality.mid")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*could not start its harness*"])


def test_the_runner_gives_ctrl_c_back_as_it_found_it(pytester: pytest.Pytester) -> None:
    previous = signal.getsignal(signal.SIGINT)
    pytester.makepyfile(test_plain="def test_case(impl, judge):\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--impl=pillow")
    assert result.ret == pytest.ExitCode.OK
    assert signal.getsignal(signal.SIGINT) is previous


def test_a_handler_installed_over_the_runners_is_no_longer_the_runners() -> None:
    """Once someone else handles SIGINT, a KeyboardInterrupt may be theirs: no telling, so it counts as the user's."""
    from zarr_jpeg_conformance.judging.plugin import _Interrupts

    interrupts, previous = _Interrupts(), signal.getsignal(signal.SIGINT)
    try:
        interrupts.install()
        assert not interrupts.users()  # the runner's own handler, not pressed: not the user's
        signal.signal(signal.SIGINT, lambda signum, frame: None)
        assert interrupts.users()
        interrupts.uninstall()
        assert signal.getsignal(signal.SIGINT) is not previous  # the other handler is left in place
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_crash_escaping_a_test_is_a_crash(pytester: pytest.Pytester) -> None:
    """An exception that says its process died is a crash even where the adapter keeps no incident log."""
    pytester.makepyfile(test_escape="""
        class Died(Exception):
            outcome = "crash"

        def test_escape(impl, judge):
            raise Died("the process died")
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "--impl=pillow", "--results=results.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    (record,) = _lines(pytester.path / "results.jsonl")
    assert record["outcome"] == "crash" and "Died: the process died" in record["message"], record
