"""--known-failures: an implementer's list of failing cases, checked strictly.

``LaxQuality`` (tests/broken_adapters.py) accepts out-of-range qualities, so exactly four
quality cases of the configuration corpus fail for it. The parse suite runs in pytester
sessions with known-failure files that list them, list too much, or are malformed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from zarr_jpeg_conformance.adapters import AdapterLoadError, available_builtins

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent
SUITES = TESTS.parent / "suites"
IMPL = "--impl=broken_adapters:LaxQuality"
NAME = "lax-quality"
FAILING = ["config.quality.zero", "config.quality.above-max", "config.quality.negative", "config.quality.byte-max"]


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))


def _file(pytester: pytest.Pytester, entries: list[dict[str, Any]] | str, implementation: str = NAME, name: str = "known.json") -> str:
    doc = entries if isinstance(entries, str) else json.dumps({"implementation": implementation, "known_failures": entries})
    (pytester.path / name).write_text(doc, encoding="utf-8")
    return name


def _entries(cases: list[str]) -> list[dict[str, Any]]:
    return [{"case": c, "reason": "accepts any integer quality", "issue": "https://example.org/lax/1"} for c in cases]


def _run(pytester: pytest.Pytester, *args: str, suite: str = "test_parse.py", k: str = "quality") -> pytest.RunResult:
    return pytester.runpytest(str(SUITES / suite), "-p", "no:cacheprovider", "-k", k, IMPL, "--results=results.jsonl", "-rxX", *args)


def _records(pytester: pytest.Pytester) -> dict[str, dict[str, Any]]:
    lines = (pytester.path / "results.jsonl").read_text().splitlines()
    return {r["case"]: r for r in map(json.loads, lines)}


def test_without_a_file_the_four_cases_fail(pytester: pytest.Pytester) -> None:
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    failed = sorted(case for case, r in _records(pytester).items() if r["outcome"] == "fail")
    assert failed == sorted(FAILING)
    assert not any("known" in r for r in _records(pytester).values())


def test_listed_failures_are_xfail_and_recorded_as_known(pytester: pytest.Pytester) -> None:
    result = _run(pytester, f"--known-failures={_file(pytester, _entries(FAILING))}")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    outcomes = result.parseoutcomes()
    assert outcomes["xfailed"] == 4 and "failed" not in outcomes
    result.stdout.fnmatch_lines(["*XFAIL*config.quality.zero*known failure (known.json): accepts any integer quality*"])
    result.stdout.fnmatch_lines([f"*{NAME}:*4 fail (known failures: 4, unexpected passes: 0)*"])
    records = _records(pytester)
    for case in FAILING:
        assert records[case]["outcome"] == "fail" and records[case]["known"] is True
    assert all("known" not in r for case, r in records.items() if case not in FAILING)


def test_a_listed_case_that_passes_fails_the_run(pytester: pytest.Pytester) -> None:
    listed = [*FAILING[:3], "config.quality.min"]  # byte-max not listed, min passes
    result = _run(pytester, f"--known-failures={_file(pytester, _entries(listed))}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    outcomes = result.parseoutcomes()
    assert outcomes["xfailed"] == 3 and outcomes["failed"] == 2
    result.stdout.fnmatch_lines([
        "*unexpected pass: config.quality.min is listed for lax-quality in known.json*remove it from known.json*",
    ])
    records = _records(pytester)
    assert records["config.quality.min"]["outcome"] == "pass" and records["config.quality.min"]["known"] is True
    assert "unexpected pass" in records["config.quality.min"]["message"]
    assert records["config.quality.byte-max"]["outcome"] == "fail" and "known" not in records["config.quality.byte-max"]


def test_a_listed_case_that_comes_out_unsupported_is_not_an_unexpected_pass(pytester: pytest.Pytester) -> None:
    """A clean refusal of an optional feature is no failure, but no pass either: the entry does
    not fail the run (it used to, as an "unexpected pass"), the case stays a skip, and the
    summary says the entry is not needed."""
    listed = _file(pytester, _entries([*FAILING, "config.optional.luma-1x3"]))
    result = pytester.runpytest(str(SUITES / "test_parse.py"), "-p", "no:cacheprovider", "-k", "quality or luma-1x3",
                                "--impl=hostile_adapters:LaxWithoutLuma13", "--results=results.jsonl", "-rxX",
                                f"--known-failures={listed}")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    outcomes = result.parseoutcomes()
    assert outcomes["xfailed"] == 4 and outcomes["skipped"] == 1 and "failed" not in outcomes
    record = _records(pytester)["config.optional.luma-1x3"]
    assert record["outcome"] == "unsupported" and record["known"] is True and "unexpected pass" not in record["message"]
    result.stdout.fnmatch_lines([f"*{NAME}:*1 unsupported, 4 fail (known failures: 4, unexpected passes: 0, "
                                 "listed but unsupported: 1, a clean refusal, not a failure: the entries are not needed)"])


def test_unknown_case_ids_are_warned_about(pytester: pytest.Pytester) -> None:
    path = _file(pytester, _entries([*FAILING, "config.quality.eleven", "roundtrip.nothing[here]"]))
    result = _run(pytester, f"--known-failures={path}")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*KnownFailuresWarning: known.json: 2 case ID(s) of 'lax-quality' match no collected case*"
                                 "config.quality.eleven, roundtrip.nothing[[]here[]]*"])


def test_a_file_for_another_implementation_is_warned_about(pytester: pytest.Pytester) -> None:
    ours = _file(pytester, _entries(FAILING))
    theirs = _file(pytester, _entries(["config.quality.min"]), implementation="someone-else", name="theirs.json")
    result = _run(pytester, f"--known-failures={ours}", f"--known-failures={theirs}")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*theirs.json: implementation 'someone-else' has no collected case*lax-quality*"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (json.dumps({"implementation": NAME, "known_failures": [{"case": "config.quality.zero"}]}), '*"case" and "reason"*'),
        (json.dumps({"implementation": NAME, "known_failures": [{"case": "config.quality.zero", "reason": "  "}]}), '*needs a "reason"*'),
        (json.dumps({"implementation": NAME, "known_failures": [{"case": "a", "reason": "r", "reasn": "typo"}]}), '*"case" and "reason"*'),
        (json.dumps({"implementation": NAME, "known_failures": _entries(["a", "a"])}), "*listed twice*"),
        (json.dumps({"implementation": NAME}), '*exactly "implementation" and "known_failures"*'),
        ("{not json", "*not JSON*"),
        (json.dumps({"implementation": NAME, "known_failures": {"case": "a", "reason": "r"}}), '*"known_failures" must be a list*'),
        (json.dumps({"implementation": "", "known_failures": []}), '*"implementation" must be the name of an implementation*'),
    ],
    ids=["no-reason", "blank-reason", "unknown-key", "duplicate", "no-list", "not-json", "object-not-list", "no-name"],
)
def test_malformed_files_are_usage_errors(pytester: pytest.Pytester, content: str, message: str) -> None:
    result = _run(pytester, f"--known-failures={_file(pytester, content)}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--known-failures=known.json: {message}"])


def test_missing_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--known-failures=nowhere.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--known-failures=nowhere.json: cannot read it*"])


def test_generated_case_ids_do_not_contain_a_hyphenated_name(pytester: pytest.Pytester) -> None:
    """Case IDs are implementation-free even when the name has '-' in it, so files can name them."""
    if all(isinstance(a, AdapterLoadError) for a in available_builtins().values()):
        pytest.skip("no built-in backend is installed to provide pixels")
    case = "colorspace.decode_ignores_configuration[gray]"
    path = _file(pytester, [{"case": case, "reason": "listed to prove the ID matches"}])
    result = _run(pytester, f"--known-failures={path}", suite="test_colorspace.py", k="decode_ignores and gray")
    records = _records(pytester)
    assert list(records) == [case]
    # It passes, so the entry is an unexpected pass: proof that the ID was matched.
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*unexpected pass: colorspace.decode_ignores_configuration?gray? is listed for lax-quality*"])


@pytest.mark.parametrize(("adapter", "case", "outcome"), [
    ("Hanging", "config.quality.max", "timeout"),
    ("Segfaulting", "config.quality.min", "crash"),
])
def test_a_known_timeout_or_crash_is_expected(pytester: pytest.Pytester, adapter: str, case: str, outcome: str) -> None:
    """A case listed because the implementation hangs or dies on it is an expected failure too, not a new one."""
    known = _file(pytester, [{"case": case, "reason": f"a {outcome} on it"}], implementation=adapter.lower())
    result = pytester.runpytest(str(SUITES / "test_parse.py"), "-p", "no:cacheprovider", "-k", case.removeprefix("config."),
                                f"--impl=broken_adapters:{adapter}", "--isolate", "--harness-timeout=2",
                                "--results=results.jsonl", f"--known-failures={known}")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    record = _records(pytester)[case]
    assert record["outcome"] == outcome and record["known"], record
