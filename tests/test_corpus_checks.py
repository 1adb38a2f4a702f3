"""The corpus's own checks (the suites' tests that take no implementation) pass on the shipped corpus.

They run in every pytest session and in the matrix's corpus column; here they run as a
meta-test, so that mutation testing sees a check of suites/test_schema.py that stops
telling valid configurations from invalid ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
SUITES = Path(__file__).resolve().parents[1] / "suites"
CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "configs"


def test_the_schema_gives_every_configuration_case_its_verdict(pytester: pytest.Pytester) -> None:
    cases = [c for p in sorted(CONFIGS.glob("*.json")) for c in json.loads(p.read_text())["cases"]]
    assert {c["valid"] for c in cases} == {True, False}  # both verdicts are at stake
    result = pytester.runpytest_inprocess(str(SUITES / "test_schema.py"), "-p", "no:cacheprovider", "-q",
                                          "--import-mode=importlib", "-k", "test_schema_verdict_matches_case",
                                          "--results=results.jsonl")
    result.assert_outcomes(passed=len(cases))
    # Each check is recorded once, as implementation "-", with the outcome of its call (not of its set-up or tear-down).
    records = [json.loads(line) for line in (pytester.path / "results.jsonl").read_text().splitlines()]
    assert len(records) == len(cases) == len({r["case"] for r in records})
    assert {(r["implementation"], r["outcome"]) for r in records} == {("-", "pass")}
