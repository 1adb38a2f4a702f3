"""Edges of judging/ that the other tests leave open: read-back numbers, refusal diagnoses, the plugin's hooks.

The read-back charges a loss to the rule the configuration keeps and prints PSNR against 255;
a chunk under 8 samples a side has the 8 dB margin; a refused omitted default is diagnosed as
such; a crash outranks a fail; the timeout budget names no root for a timeout outside any case;
a known-failure file is held to its format. The plugin's hooks are driven directly, with
stand-ins for pytest's item, call, report and config: the SIGINT watch is installed at
configure, a harness's crash is found behind a ``raise ... from``, a suite's passing case is
recorded with the harness's own timeout line first, corpus checks are the suites' tests that
take no implementation, and a case with no implementation is counted as such.
"""

from __future__ import annotations

import contextlib
import json
import math
import signal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.core.config import JpegConfig, parse_codec
from zarr_jpeg_conformance.core.scans import quant_tables
from zarr_jpeg_conformance.corpus.images import make_image
from zarr_jpeg_conformance.judging import plugin, roots
from zarr_jpeg_conformance.judging.checks import Calls
from zarr_jpeg_conformance.judging.known_failures import load_known_failures
from zarr_jpeg_conformance.judging.legal_decoders import expected_decodes
from zarr_jpeg_conformance.judging.own_tables import encode_with_tables
from zarr_jpeg_conformance.judging.read_back import check_read_back, kept_requirement
from zarr_jpeg_conformance.judging.timeout_budget import NotTried, TimeoutBudget
from zarr_jpeg_conformance.judging.verdict import Judge, Outcome

GRAY: dict[str, Any] = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}


def _config(configuration: dict[str, Any]) -> JpegConfig:
    return parse_codec({"name": "jpeg", "configuration": {"quality": 90, **configuration}})


def _judge(case: str = "case") -> Judge:
    return Judge("impl", case, [], "MUST", roots={})


def _judged(check: Any, case: str = "case") -> Judge:
    """The judge a check left (a failed or skipped check ends its test; the verdict is what it left)."""
    judge = _judge(case)
    with contextlib.suppress(pytest.fail.Exception, pytest.skip.Exception):
        check(judge)
    return judge


# ------------------------------------------------------------------ read_back, tolerances


def test_each_configuration_keeps_what_its_rule_says() -> None:
    assert kept_requirement(_config({"encoded_color_space": "grayscale"})) == "JPEG-ECS-03"
    assert kept_requirement(_config({"encoded_color_space": "rgb"})) == "JPEG-ECS-05"
    factors = [[2, 2], [1, 1], [1, 1]]
    assert kept_requirement(_config({"encoded_color_space": "ycbcr", "subsampling": factors})) == "JPEG-ECS-04"
    passthrough = {"encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": factors}
    assert kept_requirement(_config(passthrough)) == "JPEG-DCS-03"


def _written(config: JpegConfig, chunk: np.ndarray, quality: int = 90) -> bytes:
    luma, _chroma = quant_tables(quality)
    return encode_with_tables(config, chunk, [luma])


def test_a_wrong_stream_is_said_to_lie_at_its_psnr_against_255() -> None:
    pytest.importorskip("imagecodecs")
    config = _config({"encoded_color_space": "grayscale"})
    chunk = make_image("natural", 48, 48, channels=1)
    data = _written(config, np.ascontiguousarray(chunk.swapaxes(0, 1)))
    mse = min(float(np.mean((chunk.astype(np.float64) - d.astype(np.float64)) ** 2)) for d in expected_decodes(data, config, chunk.shape))
    psnr = 10 * math.log10(255.0**2 / mse)
    judge = _judged(lambda j: check_read_back(j, data, config, chunk))
    assert judge.outcome is Outcome.FAIL
    assert f"lies {psnr:.2f} dB from the chunk" in "\n".join(judge.messages), judge.messages


def test_a_chunk_under_an_mcu_a_side_is_judged_by_its_coefficients_not_its_read_back() -> None:
    """A 5x7 chunk is all partial block: its samples depend on the encoder's padding as much as on its tables (mozjpeg
    lost 6.2 dB under its own tables there), so no fidelity is asked; its coefficients are judged, padding free."""
    pytest.importorskip("imagecodecs")
    config = _config({"encoded_color_space": "grayscale"})
    chunk = make_image("natural", 5, 7, channels=1)
    data = _written(config, np.clip(chunk.astype(np.int16) + 4, 0, 255).astype(np.uint8))
    judge = _judged(lambda j: check_read_back(j, data, config, chunk))
    assert judge.outcome is Outcome.PASS and str(judge.metrics["read_back"]).startswith("not judged"), judge.metrics
    wide = make_image("natural", 40, 56, channels=1)
    shifted = _written(config, np.clip(wide.astype(np.int16) + 8, 0, 255).astype(np.uint8))
    assert _judged(lambda j: check_read_back(j, shifted, config, wide)).outcome is Outcome.FAIL


# ------------------------------------------------------------------ roots, checks: a refused default


def _wants(member: str) -> Any:
    """A parse that refuses a configuration without ``member`` and parses the rest as the spec does."""

    def parse(codec: dict[str, Any]) -> object:
        if member not in codec["configuration"]:
            raise ValueError(f"{member} is required here")
        return parse_codec(codec)

    return parse


def test_a_refused_omitted_subsampling_is_diagnosed_by_writing_the_default_out() -> None:
    diagnosis = roots.parse_diagnosis(_wants("subsampling"), GRAY)
    assert diagnosis is not None and diagnosis[0] == "JPEG-SUB-05", diagnosis


def test_a_refused_omitted_decoded_color_space_is_diagnosed_by_writing_the_default_out() -> None:
    codec = {"name": "jpeg", "configuration": {**GRAY["configuration"], "subsampling": [[1, 1]]}}
    diagnosis = roots.parse_diagnosis(_wants("decoded_color_space"), codec)
    assert diagnosis is not None and diagnosis[0] == "JPEG-DCS-02", diagnosis


def test_a_parse_refusal_is_charged_to_what_the_probe_found() -> None:
    """Calls.parse diagnoses a rejection: refused without subsampling, accepted with it, the finding is JPEG-SUB-05."""
    impl = SimpleNamespace(name="picky", parse=_wants("subsampling"))
    case = roots.own_parse_case(GRAY) or "parse.case"
    judge = _judged(lambda j: Calls(j, impl, GRAY).parse(), case=case)
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-SUB-05"), judge.messages


# ------------------------------------------------------------------ verdict, timeout budget, known failures


def test_a_crash_outranks_a_fail_and_leads_the_record() -> None:
    judge = _judge()
    with contextlib.suppress(pytest.fail.Exception):
        judge.finish(Outcome.FAIL, "a check broke")
    with contextlib.suppress(pytest.fail.Exception):
        judge.finish(Outcome.CRASH, "the process died")
    assert judge.outcome is Outcome.CRASH
    assert judge.record()["message"].splitlines()[0] == "crash: the process died"
    with contextlib.suppress(pytest.fail.Exception):
        judge.finish(Outcome.ERROR, "the suite raised")
    assert judge.record()["outcome"] == "error"  # worst first: an error outranks a crash


def test_a_spent_budget_whose_timeouts_were_in_no_known_case_names_no_root() -> None:
    timeout = SimpleNamespace(outcome="timeout", op="encode", context="suites/test_x.py::test_without_a_judge")
    adapter = SimpleNamespace(name="slow", incidents=[timeout])
    budget = TimeoutBudget(1, lambda: None, {"suites/test_x.py::test_y": "case-y"})
    with pytest.raises(NotTried, match=r"after 1 timeouts of encode \(the first outside any case\), not tried"):
        budget.gate(adapter, "encode")


def _known(tmp_path: Path, doc: object) -> list[str]:
    path = tmp_path / "known.json"
    path.write_text(json.dumps(doc))
    return [str(path)]


def test_a_known_failure_file_with_another_member_is_refused(tmp_path: Path) -> None:
    doc = {"implementation": "x", "known_failures": [], "notes": "members beyond the two are a typo"}
    with pytest.raises(pytest.UsageError, match='exactly "implementation" and "known_failures"'):
        load_known_failures(_known(tmp_path, doc))


@pytest.mark.parametrize("entry", [{"case": "a", "reason": "r", "url": "u"}, {"case": "a"}, "a"])
def test_a_known_failure_entry_outside_the_format_is_refused(tmp_path: Path, entry: object) -> None:
    doc = {"implementation": "x", "known_failures": [entry]}
    with pytest.raises(pytest.UsageError, match=r'known_failures\[0\] must be an object with "case" and "reason"'):
        load_known_failures(_known(tmp_path, doc))


# ------------------------------------------------------------------ plugin hooks, with stand-ins for pytest's objects

OPTIONS: dict[str, Any] = {"impl": [], "results": None, "isolate": False, "harness_timeout": None, "harness_memory": 0, "max_timeouts": 0,
           "known_failures": []}


class _Config:
    def __init__(self, args: list[str] | None = None, rootpath: Path | None = None) -> None:
        self.stash: dict[Any, Any] = {}
        self.args = args or []
        self.rootpath = rootpath or Path("/")
        self.lines: list[tuple[str, str]] = []

    def addinivalue_line(self, name: str, line: str) -> None:
        self.lines.append((name, line))

    def getoption(self, name: str, default: Any = None) -> Any:
        return OPTIONS.get(name, default)


def test_configure_watches_ctrl_c() -> None:
    """A KeyboardInterrupt raised by the code under test is told from a Ctrl-C by the SIGINT handler configure installs."""
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    config = _Config()
    try:
        plugin.pytest_configure(config)  # type: ignore[arg-type]
        try:
            state = config.stash[plugin._STATE]
            assert signal.getsignal(signal.SIGINT) == state.interrupts._handler
            assert not state.interrupts.users()
        finally:
            plugin.pytest_unconfigure(config)  # type: ignore[arg-type]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_session_without_arguments_runs_our_suites_from_the_root() -> None:
    package = plugin._PACKAGE_DIR.parent
    assert plugin._runs_our_suites(_Config([], package))  # type: ignore[arg-type]
    assert not plugin._runs_our_suites(_Config(["/nowhere/else/tests"], package))  # type: ignore[arg-type]


class _Crash(RuntimeError):
    outcome = "crash"


class _Timeout(RuntimeError):
    outcome = "timeout"


def test_a_crash_behind_a_raise_from_is_the_harness_outcome() -> None:
    crash = _Crash("the harness died")
    seen = ValueError("the suite saw a bad reply")
    seen.__cause__ = crash  # raise ... from crash, outside the except block: no __context__
    item = SimpleNamespace(funcargs={}, stash={}, nodeid="suites/test_x.py::test_y[impl-case]")
    call = SimpleNamespace(excinfo=SimpleNamespace(value=seen))
    assert plugin._harness_outcome(item, call) == (Outcome.CRASH, "_Crash: the harness died")  # type: ignore[arg-type]


def test_outside_a_session_of_the_plugin_a_test_runs_unguarded() -> None:
    item = SimpleNamespace(config=SimpleNamespace(stash={}))
    guard = plugin._guard_interrupts(item)  # type: ignore[arg-type]
    next(guard)
    with pytest.raises(StopIteration) as stop:
        guard.send("the test's result")
    assert stop.value.value == "the test's result"


def _report(item: Any, report: Any, call: Any | None = None) -> None:
    """Drive the makereport hookwrapper around ``report``."""
    the_call: Any = call if call is not None else SimpleNamespace(excinfo=None)
    result: Any = SimpleNamespace(get_result=lambda: report)
    wrapper = plugin.pytest_runtest_makereport(item, the_call)
    next(wrapper)
    with pytest.raises(StopIteration):
        wrapper.send(result)


def _item(judge: Judge, written: list[dict[str, Any]], incidents: list[BaseException] | None = None) -> Any:
    state = SimpleNamespace(write=written.append, known={})
    return SimpleNamespace(stash={plugin._JUDGE: judge}, config=SimpleNamespace(stash={plugin._STATE: state}),
                           funcargs={"impl": SimpleNamespace(incidents=incidents or [])}, nodeid=f"suites/test_x.py::test_y[{judge.case}]")


def _call_report(**kwargs: Any) -> Any:
    return SimpleNamespace(**{"failed": False, "skipped": False, "when": "call", "longreprtext": "", "outcome": "passed",
                              "longrepr": None, **kwargs})


def test_a_case_judged_pass_is_recorded_and_a_suites_own_skip_is_not() -> None:
    written: list[dict[str, Any]] = []
    _report(_item(_judge("case-pass"), written), _call_report())
    assert [(r["case"], r["outcome"]) for r in written] == [("case-pass", "pass")]
    written.clear()
    _report(_item(_judge("case-skip"), written), _call_report(skipped=True, outcome="skipped"))
    assert written == []


def test_the_harness_timeout_leads_the_record_of_a_case_that_timed_out_itself() -> None:
    """A suite that gave up on a decode records a timeout; the harness's own timeout (the cause) is the record's first line."""
    judge = _judge("case-hang")
    with contextlib.suppress(pytest.fail.Exception):
        judge.finish(Outcome.TIMEOUT, "decode of the stream did not return; it was left running")
    written: list[dict[str, Any]] = []
    item = _item(judge, written, [_Timeout("no reply to decode within 5 s; killed")])
    report = _call_report(failed=True, outcome="failed", longreprtext="the suite's text")
    _report(item, report)
    (record,) = written
    assert record["outcome"] == "timeout"
    assert record["message"].splitlines()[0] == "timeout: _Timeout: no reply to decode within 5 s; killed"
    assert report.outcome == "failed"


def test_corpus_checks_are_the_suites_tests_that_take_no_implementation() -> None:
    suite = SimpleNamespace(fixturenames=("tmp_path",), path=plugin._SUITES_DIR / "test_parse.py")
    assert plugin._corpus_check(suite)  # type: ignore[arg-type]
    assert not plugin._corpus_check(SimpleNamespace(fixturenames=("impl",), path=suite.path))  # type: ignore[arg-type]
    ours = SimpleNamespace(fixturenames=(), path=plugin._PACKAGE_DIR.parent / "tests" / "test_core_edges.py")
    assert not plugin._corpus_check(ours)  # type: ignore[arg-type]


def test_a_case_with_no_implementation_is_counted_as_such() -> None:
    no_impl = SimpleNamespace(nodeid="suites/test_parse.py::test_parse[no-implementation]", when="setup")
    skipped = SimpleNamespace(nodeid="suites/test_parse.py::test_parse[impl-case]", when="call")
    line = plugin.reconcile({"skipped": [no_impl, skipped]}, [], {no_impl.nodeid, skipped.nodeid})
    assert line == ("pytest's totals: 2 skipped (1 with no implementation that has the roles it needs, "
                    "1 skipped by the suite, no outcome)")
