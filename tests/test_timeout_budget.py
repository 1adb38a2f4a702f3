"""The timeout budget (--max-timeouts): after N timeouts of one op, later cases that need it are blocked, not tried.

The harness is ``fake_harnesses hang``, serving ``hostile_adapters:_Parsing`` (the shared core's
parse, no pixel library) and hanging on every encode: an encode that is sent times out, so a
case recorded ``blocked`` proves its encode was never sent.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.adapters.remote import ExecAdapter, HarnessTimeout
from zarr_jpeg_conformance.corpus.modes import codec
from zarr_jpeg_conformance.judging.timeout_budget import DEFAULT_MAX_TIMEOUTS, NotTried, TimeoutBudget
from zarr_jpeg_conformance.judging.verdict import Judge, Outcome

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent
SUITES = TESTS.parent / "suites"
#: Seconds a harness call may take: above a harness start on a busy machine (about 0.4 s), and each hang costs it.
TIMEOUT = 1.0
#: Every encode hangs; every other op is answered.
HANGS_ON_ENCODE = [sys.executable, "-m", "fake_harnesses", "hang", "hostile_adapters:_Parsing", "1", "encode"]

#: A module of cases that each encode twice (as a diagnosis asks again), then cases that only parse.
CASES = """
import numpy as np
import pytest

from zarr_jpeg_conformance.corpus.modes import codec
from zarr_jpeg_conformance.judging.verdict import Outcome, attempt


@pytest.mark.parametrize("n", range(5))
def test_encode(impl, judge, n):
    parsed = impl.parse(codec(90, "grayscale"))
    for _ in range(2):
        got = attempt(impl.encode, parsed, np.full((8, 8), n, np.uint8))
    judge.finish(Outcome.ERROR, got.describe())


@pytest.mark.parametrize("n", range(3))
def test_parse(impl, judge, n):
    impl.parse(codec(10 + n, "grayscale"))
"""


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Harness processes import ``fake_harnesses`` and ``hostile_adapters`` from this folder."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, dict[str, Any]]]:
    """pytest on ``args`` against the harness that hangs on encode: its result and its records by case ID."""
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--harness-timeout={TIMEOUT}", "--results=results.jsonl",
        f"--impl=exec:{' '.join(HANGS_ON_ENCODE)}", *args)
    lines = (pytester.path / "results.jsonl").read_text().splitlines()
    return result, {r["case"]: r for r in map(json.loads, lines)}


def test_the_default_budget_blocks_the_rest_of_an_op_by_its_first_timeout(pytester: pytest.Pytester) -> None:
    """3 timeouts of encode (two in the first case, one in the second, which asks no more); the other encode
    cases are blocked by the first, unsent; the cases that only parse still run, after them."""
    assert DEFAULT_MAX_TIMEOUTS == 3
    pytester.makepyfile(test_budget_cases=CASES)
    result, records = _run(pytester)
    outcomes = {case: r["outcome"] for case, r in records.items()}
    first = "budget_cases.encode[0]"
    assert outcomes == {
        first: "timeout", "budget_cases.encode[1]": "timeout",
        **{f"budget_cases.encode[{n}]": "blocked" for n in (2, 3, 4)},
        **{f"budget_cases.parse[{n}]": "pass" for n in (0, 1, 2)},
    }, result.stdout.str()[-3000:]
    # The case whose timeout spent the budget keeps its timeout: its second encode is refused, not blocked by the first.
    assert "not tried" in records["budget_cases.encode[1]"]["message"]
    for n in (2, 3, 4):
        record = records[f"budget_cases.encode[{n}]"]
        assert record["blocked_by"] == first
        assert f"after 3 timeouts of encode, not tried: the first was in case {first}" in record["message"], record
    result.stdout.fnmatch_lines([
        f"parsing: 3 cases blocked after 3 timeouts of encode (the first in case {first}): not tried "
        "(timeout budget, --max-timeouts 3)"])


@pytest.mark.parametrize(("budget", "timeouts"), [("1", 1), ("0", 2)], ids=["one", "none"])
def test_max_timeouts_sets_the_budget_and_0_means_none(pytester: pytest.Pytester, budget: str, timeouts: int) -> None:
    pytester.makepyfile(test_budget_cases=CASES)
    result, records = _run(pytester, f"--max-timeouts={budget}", "-k", "encode and (0 or 1)")
    outcomes = [records[f"budget_cases.encode[{n}]"]["outcome"] for n in (0, 1)]
    assert outcomes == ["timeout"] * timeouts + ["blocked"] * (2 - timeouts), result.stdout.str()[-3000:]
    assert ("timeout budget" in result.stdout.str()) == (budget != "0")


def test_a_real_suite_blocks_encode_and_its_parse_cases_still_run(pytester: pytest.Pytester) -> None:
    """Through the suites' own calls (judging.checks.Calls, twins): chunk cases, then parse cases."""
    result, records = _run(pytester, str(SUITES / "test_chunks.py"), str(SUITES / "test_parse.py"), "--isolate",
                           "--max-timeouts=2", "-k", "dims.zero-h or dims.zero-w or dims.width-655 or quality.m")
    chunks = {case: r for case, r in records.items() if case.startswith("chunk.")}
    assert [chunks[c]["outcome"] for c in ("chunk.dims.zero-height", "chunk.dims.zero-width")] == ["timeout", "timeout"]
    blocked = {c: r for c, r in chunks.items() if c.startswith("chunk.dims.width-655")}
    assert len(blocked) >= 3 and {r["outcome"] for r in blocked.values()} == {"blocked"}, result.stdout.str()[-3000:]
    assert {r["blocked_by"] for r in blocked.values()} == {"chunk.dims.zero-height"}
    parses = [r["outcome"] for case, r in records.items() if case.startswith("config.quality.m")]
    assert len(parses) >= 3 and set(parses) == {"pass"}
    result.stdout.fnmatch_lines([f"parsing: {len(blocked)} cases blocked after 2 timeouts of encode (the first in case "
                                 "chunk.dims.zero-height): not tried (timeout budget, --max-timeouts 2)"])


@pytest.mark.parametrize(("value", "message"), [
    ("-1", "must be 0 (no budget) or a positive number of timeouts, got '-1'"),
    ("2.5", "expected a whole number of timeouts (0 for no budget), got '2.5'"),
    ("many", "expected a whole number of timeouts (0 for no budget), got 'many'"),
])
def test_max_timeouts_is_checked(pytester: pytest.Pytester, value: str, message: str) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", f"--max-timeouts={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument --max-timeouts: {message}*"])


def test_the_default_is_documented(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--help")
    help_text = " ".join(result.stdout.str().split())
    assert "--max-timeouts=N after N timeouts of one op" in help_text
    assert f"0 for no budget (default {DEFAULT_MAX_TIMEOUTS})" in help_text
    page = " ".join((TESTS.parent / "docs" / "codec-authors.md").read_text().split())
    assert f"`--max-timeouts`, default {DEFAULT_MAX_TIMEOUTS}" in page


def test_a_request_the_gate_refuses_is_not_sent() -> None:
    """ExecAdapter.gate: asked with the op before each request, and with "start" before a process is started."""
    sent: list[str] = []
    refused: set[str] = set()

    def gate(op: str) -> None:
        if op in refused:
            raise RuntimeError(f"{op} refused")

    def note(way: str, message: dict[str, Any]) -> None:
        if way == "->":
            sent.append(message["op"])

    with ExecAdapter(HANGS_ON_ENCODE, timeout=TIMEOUT, on_message=note) as adapter:
        adapter.gate = gate
        parsed = adapter.parse(codec(90, "grayscale"))
        with pytest.raises(HarnessTimeout) as info:
            adapter.encode(parsed, np.zeros((8, 8), np.uint8))
        assert info.value.op == "encode" and adapter.pid is None
        refused.add("start")
        with pytest.raises(RuntimeError, match="start refused"):
            adapter.parse(codec(50, "grayscale"))
        assert adapter.pid is None and adapter.starts == 1, "no process is started half-way"
        refused.clear()
        refused.add("encode")
        adapter.parse(codec(50, "grayscale"))
        with pytest.raises(RuntimeError, match="encode refused"):
            adapter.encode(parsed, np.zeros((8, 8), np.uint8))
        assert adapter.starts == 2 and adapter.pid is not None, "a refused request leaves the harness running"
    # After the restart: the parse of quality 50, the replayed parse of ``parsed``; its encode is not sent; the stop.
    assert sent == ["start", "parse", "encode", "start", "parse", "parse", "stop"]


@pytest.mark.parametrize("own", ["crash", "timeout", None])
def test_a_case_whose_own_call_crashed_or_timed_out_is_not_blocked_by_an_earlier_timeouts_root(own: str | None) -> None:
    """A spent budget blocks the next case of its op by the first timeout's case, unless that case's own call crashed
    or timed out: that is its own finding, which being blocked would hide. Its request is not sent either way."""
    first = [f"suites/test_x.py::test_encode[{i}]" for i in range(3)]
    incidents: list[Any] = [SimpleNamespace(outcome="timeout", op="encode", context=node) for node in first]
    running = "suites/test_x.py::test_encode[9]"
    if own is not None:
        incidents.append(SimpleNamespace(outcome=own, op="decode", context=running))
    judge = Judge("slow", "case-9", ["JPEG-ECS-08"], "MUST", roots={})
    budget = TimeoutBudget(3, lambda: (running, judge), {node: f"case-{i}" for i, node in enumerate(first)})
    adapter = SimpleNamespace(name="slow", incidents=incidents)
    if own is None:
        with pytest.raises(pytest.skip.Exception, match="blocked by case-0"):
            budget.gate(adapter, "encode")
        assert judge.outcome is Outcome.BLOCKED and budget.spent[("slow", "encode")].blocked == {running}
        return
    with pytest.raises(NotTried, match=r"after 3 timeouts of encode, not tried: the first was in case case-0"):
        try:
            budget.gate(adapter, "encode")
        except pytest.skip.Exception as blocked:  # a block ends a case as a skip: here it is this test's failure
            pytest.fail(f"a case with a {own} of its own was {blocked}")
    assert judge.outcome is not Outcome.BLOCKED and judge.blocked_by is None and not budget.spent
