"""Proof that the verdicts rest on invariants: faults nobody listed fail, freedoms nobody listed pass.

The encoders of tests/writer_adapters.py (one choice each, on a numpy baseline writer) and the
adapters of tests/invariant_adapters.py make choices the suites had never met. Each wrong one
must fail under the rule its choice breaks, with the cause named in the message; each legal one
must get no fail, warn or error. The stream syntax, the coefficients and the decodes are judged by
what T.81 and the spec define (judging/t81, judging/encoder_accuracy.py,
judging/decoder_accuracy.py), not by the faults these adapters make.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_suites_bite import _run  # one way of running a suite on an adapter

pytest_plugins = ["pytester"]


@dataclass(frozen=True)
class Wrong:
    adapter: str
    suite: str
    select: str
    requirement: str
    #: Words of the cause the message must name.
    cause: str
    module: str = "writer_adapters"
    #: Modes that must each show it (a part of the case id), where the fault is in every mode.
    modes: tuple[str, ...] = ()
    outcome: str = "fail"


WRONG = [
    # Stream syntax, read from the bytes: libjpeg-turbo accepts each of these streams.
    Wrong("ZeroPadBits", "test_bitstream.py", "gray and q90", "JPEG-FMT-01", "pad bits are 1-bits"),
    Wrong("RestartAfterLast", "test_bitstream.py", "gray and q90", "JPEG-FMT-01", "a restart marker follows the last MCU"),
    Wrong("RestartSlip", "test_bitstream.py", "gray and q90", "JPEG-FMT-01", "restart marker(s) where"),
    Wrong("ThirdHuffmanTable", "test_bitstream.py", "ycbcr-420 and q90", "JPEG-GEN-01", "tables 0 and 1"),
    Wrong("ScanSe64", "test_bitstream.py", "gray and q90", "JPEG-FMT-01", "Se = 64"),
    # Coefficients against the exact DCT of the samples the configuration stores, in every mode.
    Wrong("LevelShift127", "test_roundtrip.py", "gamut_corners and q100", "JPEG-FMT-01", "level-shifted by 127",
          modes=("gray-", "ycbcr-420-", "rgb-", "passthrough-444-")),
    Wrong("Bt709", "test_roundtrip.py", "gamut_corners and (ycbcr-444 or ycbcr-420)", "JPEG-ECS-04", "BT.709",
          modes=("ycbcr-444-", "ycbcr-420-")),
    Wrong("WrapsAt256", "test_roundtrip.py", "gamut_corners and ycbcr-420", "JPEG-ECS-04", "modulo 256"),
    Wrong("SwapsChroma", "test_bitstream.py", "ycbcr-420 and q90", "JPEG-ENC-03", "Cb and Cr"),
    Wrong("NaturalOrderTables", "test_bitstream.py", "(gray or rgb or ycbcr-420) and q90", "JPEG-FMT-01",
          "natural (row-major) order", modes=("gray-", "rgb-", "ycbcr-420-")),
    # Decodes judged on content at every size, and under every configuration.
    Wrong("UpsamplesByQuality", "test_colorspace.py", "decode_ignores_configuration", "JPEG-DEC-01",
          "differs from decoding under the writing configuration", "invariant_adapters"),
    Wrong("GarbageWhenWide", "test_chunks.py", "width-65500-ycbcr", "JPEG-DEC-01", "sample", "invariant_adapters"),
    Wrong("SkipsHeightCheckIn3d", "test_chunks.py", "height-65536-ycbcr", "JPEG-DIM-02", "accepted", "invariant_adapters"),
    Wrong("BoolFactors", "test_parse.py", "factor-bool", "JPEG-SUB-01", "parse accepted it", "invariant_adapters",
          modes=("factor-bool-gray", "factor-bool-rgb")),
    # A refusal of partial MCUs in an optional mode is the padding refused, not the optional feature.
    Wrong("PartialMcusOnlyInRequiredModes", "test_roundtrip.py", "shape_roundtrip and rgb", "JPEG-MCU-01",
          "not a whole number", "invariant_adapters"),
    # libjpeg's fast integer DCT: less accurate than T.83 allows (a SHOULD), no MUST broken.
    Wrong("FastIntegerDct", "test_bitstream.py", "gray and q90", "JPEG-X-23", "less accurate than T.83",
          "legal_adapters", outcome="warn"),
]

LEGAL_WRITERS = {
    # Each legal freedom over the cases that exercise it.
    "Plain": [("test_bitstream.py", "q90"), ("test_roundtrip.py", "gamut_corners and q100")],
    "ZeroPadding": [("test_roundtrip.py", "shape_roundtrip")],
    "MirrorPadding": [("test_roundtrip.py", "shape_roundtrip")],
    "DeadzoneQuantizer": [("test_roundtrip.py", "fidelity and q90"), ("test_bitstream.py", "q90")],
    "OptimizedHuffman": [("test_bitstream.py", "q90")],
    "RestartEveryTwo": [("test_bitstream.py", "q90")],
    "TablesAfterFrame": [("test_bitstream.py", "q90")],
    "SeparateCrTable": [("test_bitstream.py", "ycbcr and q90")],
    "PointChroma": [("test_roundtrip.py", "fidelity and (ycbcr-420 or ycbcr-422) and q90")],
    "TriangleChroma": [("test_roundtrip.py", "fidelity and (ycbcr-420 or ycbcr-422) and q90")],
    "Deringing": [("test_roundtrip.py", "gamut_corners"), ("test_chunks.py", "shape.hw")],
}
LEGAL_OTHERS = {
    "invariant_adapters:RefusesIntegralFloats": [("test_parse.py", "integral or exponent or float")],
}


_RUNS: dict[tuple[str, str, str], list[dict[str, Any]]] = {}


@pytest.fixture
def records(pytester: pytest.Pytester) -> Callable[[str, str, str], list[dict[str, Any]]]:
    def get(impl: str, suite: str, select: str) -> list[dict[str, Any]]:
        if (impl, suite, select) not in _RUNS:
            _RUNS[(impl, suite, select)] = _run(pytester, impl, suite, select)
        return _RUNS[(impl, suite, select)]

    return get


@pytest.mark.parametrize("wrong", WRONG, ids=lambda w: f"{w.adapter}-{w.suite.removesuffix('.py')}")
def test_a_fault_nobody_listed_fails_under_its_rule_and_is_named(records: Any, wrong: Wrong) -> None:
    ran = records(f"{wrong.module}:{wrong.adapter}", wrong.suite, wrong.select)
    assert ran, f"no case ran for {wrong}"
    hits = [r for r in ran if r["outcome"] == wrong.outcome and wrong.requirement in r["message"] and wrong.cause in r["message"]]
    seen = sorted({(r["case"], r["outcome"], r["message"][:300]) for r in ran if r["outcome"] != "pass"})
    assert hits, f"{wrong.adapter}: no {wrong.outcome} citing {wrong.requirement} and naming {wrong.cause!r}; non-pass: {seen}"
    missing = [m for m in wrong.modes if not any(m in r["case"] for r in hits)]
    assert not missing, f"{wrong.adapter} is not caught in {missing}: {seen}"
    if wrong.outcome == "warn":
        assert not [r for r in ran if r["outcome"] in ("fail", "error")], seen


@pytest.mark.parametrize(("adapter", "suite", "select"), [
    *((f"writer_adapters:{a}", suite, select) for a, runs in LEGAL_WRITERS.items() for suite, select in runs),
    *((a, suite, select) for a, runs in LEGAL_OTHERS.items() for suite, select in runs),
], ids=lambda v: str(v).split(":")[-1].removesuffix(".py"))
def test_a_freedom_nobody_listed_passes(records: Any, adapter: str, suite: str, select: str) -> None:
    ran = records(adapter, suite, select)
    bad = [(r["case"], r["outcome"], r["message"][:400]) for r in ran if r["outcome"] in ("fail", "warn", "error", "blocked")]
    assert len(ran) >= 3 and not bad, bad
