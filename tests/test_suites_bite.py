"""Proof that the suites bite: each deliberately wrong adapter is caught, citing the rule it breaks."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SUITES = Path(__file__).resolve().parents[1] / "suites"
TESTS = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Fault:
    adapter: str
    suite: str
    select: str
    outcome: str
    requirement: str


FAULTS = [
    Fault("LenientParse", "test_parse.py", "quality", "fail", "JPEG-Q-01"),
    Fault("NoApp14", "test_bitstream.py", "rgb", "fail", "JPEG-ECS-06"),
    Fault("WrongFactors", "test_bitstream.py", "ycbcr-422 or ycbcr-440", "fail", "JPEG-SUB-02"),
    Fault("TransposedAxes", "test_bitstream.py", "gray-q90", "fail", "JPEG-DIM-01"),
    Fault("TransposedAxes", "test_roundtrip.py", "shape_roundtrip and 64x64", "fail", "JPEG-SHP-07"),
    Fault("ChannelSwap", "test_roundtrip.py", "fidelity and ycbcr-444", "fail", "JPEG-DCS-03"),
    Fault("IgnoresQuality", "test_roundtrip.py", "quality_sweep", "fail", "JPEG-Q-02"),
    Fault("CastsDtype", "test_chunks.py", "dtype", "fail", "JPEG-DT-01"),
    Fault("AnyShape", "test_chunks.py", "shape", "fail", "JPEG-SHP-01"),
    Fault("ConvertsRgb", "test_colorspace.py", "rgb", "fail", "JPEG-ECS-05"),
    Fault("Progressive", "test_bitstream.py", "gray", "fail", "JPEG-GEN-01"),
    Fault("PassthroughConverts", "test_colorspace.py", "passthrough", "fail", "JPEG-DCS-03"),
    Fault("DecodeFollowsConfig", "test_colorspace.py", "rgb", "fail", "JPEG-DEC-01"),
    Fault("NoJfif", "test_bitstream.py", "gray", "warn", "JPEG-X-06"),
    Fault("RejectsRequired", "test_parse.py", "440", "fail", "JPEG-SUB-08"),
    Fault("CrashesOnParse", "test_parse.py", "quality", "error", ""),
]


def _run(pytester: pytest.Pytester, impl: str, suite: str, select: str) -> list[dict]:
    results = pytester.path / "results.jsonl"
    pytester.syspathinsert(TESTS)
    pytester.runpytest_inprocess(
        str(SUITES / suite), f"--impl={impl}", "-k", select, "--results", str(results),
        "--import-mode=importlib", "-p", "no:cacheprovider", "-q", "-W", "ignore::UserWarning",
    )
    return [json.loads(line) for line in results.read_text().splitlines()]


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f"{f.adapter}-{f.suite.removesuffix('.py')}")
def test_wrong_adapter_is_caught(pytester: pytest.Pytester, fault: Fault) -> None:
    """The wrong adapter gets the expected outcome on at least one case, citing the broken requirement."""
    records = _run(pytester, f"wrong_adapters:{fault.adapter}", fault.suite, fault.select)
    assert records, f"no case ran for {fault}"
    hits = [r for r in records if r["outcome"] == fault.outcome and fault.requirement in r["message"]]
    outcomes = sorted({(r["case"], r["outcome"]) for r in records if r["outcome"] != "pass"})
    assert hits, f"{fault.adapter} was not caught with {fault.outcome} citing {fault.requirement!r}; non-pass outcomes: {outcomes}"


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f"{f.adapter}-{f.suite.removesuffix('.py')}")
def test_correct_adapter_passes_the_same_cases(pytester: pytest.Pytester, fault: Fault) -> None:
    """The same selection run against the correct imagecodecs adapter has no fail, warn or error."""
    records = _run(pytester, "imagecodecs", fault.suite, fault.select)
    bad = [(r["case"], r["outcome"], r["message"][:200]) for r in records if r["outcome"] in ("fail", "warn", "error")]
    assert records and not bad, bad
