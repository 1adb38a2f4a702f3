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
                                          "--import-mode=importlib", "-k", "test_schema_verdict_matches_case")
    result.assert_outcomes(passed=len(cases))
