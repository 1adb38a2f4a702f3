"""Proof that the decoder suite bites: each wrong decoder of tests/wrong_decoders.py is caught.

Each wrong decoder runs suites/test_decode_streams.py once, on the cases that expose its
fault, and must get the expected outcome citing the requirement it breaks; the correct
imagecodecs adapter, on all those cases, gets no fail, warn, error or timeout.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

SUITE = Path(__file__).resolve().parents[1] / "suites" / "test_decode_streams.py"
TESTS = Path(__file__).resolve().parent

#: Cases each wrong decoder is run on (pytest -k expressions over the stream case ids).
SELECT = {
    "IgnoresApp14": "(reference and (rgb or passthrough-444)) or app14-transform0 or jfif-app14 or rgb-ids-no-app14",
    "ReturnsTruncated": "truncated-10 or truncated-90 or missing-eoi or truncated-after-sos",
    "Transposes": "reference and (ycbcr-444 or gray)",
    "SizesFromHeader": "forged or size-mismatch or gray-into-color or padded-to-mcu or cropped-rows or one-row-fewer",
    "PrefillsHeaderFrame": "forged",
    "AnyFactorization": "transposed or refactorized",
    "RejectsBaselineVariants": "restart or non-interleaved or comment",
    "HangsOnGarbage": "random-bytes",
    "SpinsOnGarbage": "random-bytes",
    "CrashesOnGarbage": "random-bytes or empty",
    # Just outside the bands: realistic decoder faults, and ones placed one step past a bound.
    "LimitedRange": "reference and (ycbcr-444 or ycbcr-420) and q75",
    "ShiftedChroma": "reference and (ycbcr-444 or ycbcr-420) and q75",
    "WrongPhase": "reference and ycbcr-420",
    "EdgeRule": "reference and edges",
    "FastIdct": "reference and gray and q95",
    "PastTheMax": "(reference and q95 and gray) or lossless-8bit",
    "PastTheMean": "reference and q95 and gray",
    "Bt709": "reference and (ycbcr-444 or ycbcr-420) and q75",
    "WrapsAt256": "reference and ycbcr-420",
    "SwapsChroma": "reference and ycbcr-420 and q75",
    "PlusOne": "reference and (gray or ycbcr-420) and q75",
    "App14BeforeFrameOnly": "app14-transform0-after",
    "RgbOnlyUnderRgb": "rgb-under or app14-transform0-ycc-ids or (reference and rgb and q75)",
    "RefusesUnusualIds": "component-ids",
}
#: Wrong decoders kept in another module of tests/ than wrong_decoders.py.
MODULE = {"RefusesUnusualIds": "wrong_adapters_corpus"}
#: Legal decoders on every case that decodes: they must pass all of it (none of them is
#: changed by a colour rule, so the colour-marker cases are left to the other tests).
LEGAL_SELECT = "(reference or foreign) and not cmyk and not precision and not lossless-16bit and not jfif-app14"
LEGAL = ["RepeatsChroma", "FloatIdct", "AtTheBounds", "BicubicChroma", "TruncatesConversion"]
#: Lets the stuck decoders time out after 5 s of wall time or 0.5 s of CPU instead of the suite's bounds, for the inner
#: run only. The inner run can get the very module object of this session's own run of the suite (pytest's importlib
#: mode names it from its path, and finds it imported already), so the suite's bounds are put back when it ends: left
#: short, they timed out a legal decode of the outer run in CI (pillow, 501 progressive scans, past 0.5 s of CPU).
SHORT_WALL, SHORT_CPU = 5.0, 0.5
SHORT_TIMEOUT = f"""
import pytest

_PATCH = pytest.MonkeyPatch()

def pytest_collection_modifyitems(items):
    for item in items:
        _PATCH.setattr(item.module, "DECODE_WALL_LIMIT", {SHORT_WALL})
        _PATCH.setattr(item.module, "DECODE_CPU_LIMIT", {SHORT_CPU})

def pytest_unconfigure(config):
    _PATCH.undo()
"""


@dataclass(frozen=True)
class Fault:
    adapter: str
    case: str  # a part of the case id the fault shows on
    outcome: str
    requirement: str  # text the record's message must contain


FAULTS = [
    Fault("IgnoresApp14", "reference.rgb", "fail", "JPEG-ECS-12"),
    Fault("IgnoresApp14", "app14-transform0-ycc-ids", "fail", "JPEG-ECS-12"),
    Fault("IgnoresApp14", "jfif-app14-transform0", "fail", "JPEG-ECS-12"),
    Fault("IgnoresApp14", "passthrough-444", "fail", "JPEG-DCS-06"),
    Fault("IgnoresApp14", "rgb-ids-no-app14", "warn", "JPEG-X-12"),
    Fault("ReturnsTruncated", "truncated", "warn", "JPEG-X-07"),
    Fault("ReturnsTruncated", "missing-eoi", "warn", "JPEG-X-07"),
    # Diagnosed: "height and width swapped" breaks JPEG-DIM-01 (judging/diagnoses.py).
    Fault("Transposes", "reference.ycbcr-444", "fail", "JPEG-DIM-01"),
    Fault("Transposes", "reference.gray", "fail", "JPEG-DIM-01"),
    Fault("SizesFromHeader", "forged", "fail", "JPEG-DIM-03"),
    Fault("SizesFromHeader", "forged", "fail", "JPEG-X-13"),
    Fault("SizesFromHeader", "size-mismatch", "fail", "JPEG-DIM-03"),
    Fault("SizesFromHeader", "gray-into-color", "warn", "JPEG-X-18"),
    Fault("SizesFromHeader", "padded-to-mcu", "fail", "JPEG-DIM-03"),
    Fault("SizesFromHeader", "cropped-rows", "fail", "JPEG-DIM-03"),
    Fault("SizesFromHeader", "one-row-fewer", "fail", "JPEG-DIM-03"),
    Fault("PrefillsHeaderFrame", "forged-65535", "warn", "JPEG-X-13"),
    Fault("RejectsBaselineVariants", "restart", "fail", "JPEG-FMT-01"),
    Fault("RejectsBaselineVariants", "non-interleaved", "fail", "JPEG-FMT-01"),
    Fault("RejectsBaselineVariants", "comment", "fail", "JPEG-FMT-01"),
    Fault("HangsOnGarbage", "random-bytes", "timeout", "waiting rather than working"),
    Fault("SpinsOnGarbage", "random-bytes", "timeout", "s of CPU"),
    Fault("CrashesOnGarbage", "random-bytes", "error", "IndexError"),
    Fault("LimitedRange", "reference.ycbcr-444", "fail", "studio range"),
    Fault("LimitedRange", "reference.ycbcr-420", "fail", "JPEG-DCS-03"),
    # Judged by the exact reconstruction of the stream's coefficients (judging/decoder_accuracy.py).
    Fault("ShiftedChroma", "reference.ycbcr-444", "fail", "every value the stream's luma and the chroma around it give"),
    Fault("ShiftedChroma", "reference.ycbcr-420", "fail", "chroma is not where the stream stores it"),
    Fault("WrongPhase", "reference.ycbcr-420", "fail", "the neighbour on the wrong side"),
    *(Fault("EdgeRule", f"reference.{mode}.edges", "fail", "chroma is not where the stream stores it")
      for mode in ("ycbcr-420", "ycbcr-422", "ycbcr-440", "ycbcr-411")),
    Fault("FastIdct", "reference.gray", "fail", "T.83's decoder accuracy"),
    Fault("PastTheMax", "reference.gray", "fail", "T.83's decoder accuracy"),
    Fault("PastTheMean", "reference.gray", "fail", "on average"),
    # A stream whose coefficients this project does not decode (lossless) is judged by the span of its expected decodes.
    Fault("PastTheMax", "lossless-8bit", "fail", "slack"),
    Fault("Bt709", "reference.ycbcr-444", "fail", "JPEG-DCS-03"),
    Fault("Bt709", "reference.ycbcr-420", "fail", "JPEG-DCS-03"),
    Fault("WrapsAt256", "reference.ycbcr-420", "fail", "JPEG-DCS-03"),
    Fault("SwapsChroma", "reference.ycbcr-420", "fail", "JPEG-DCS-03"),
    Fault("PlusOne", "reference.gray", "fail", "on average"),
    Fault("PlusOne", "reference.ycbcr-420", "fail", "on average"),
    Fault("App14BeforeFrameOnly", "app14-transform0-after-frame", "fail", "JPEG-ECS-12"),
    Fault("RgbOnlyUnderRgb", "rgb-under-ycbcr-configuration", "fail", "JPEG-ECS-11"),
    Fault("RgbOnlyUnderRgb", "app14-transform0-ycc-ids", "fail", "decoding ignores encoded_color_space"),
    # T.81 allows any component identifier 0-255: where APP14 or one component fixes the colour
    # space a refusal fails; under JFIF (read by some as fixing 1, 2, 3) it is warned.
    Fault("RefusesUnusualIds", "component-ids-0-1-2-app14-transform1", "fail", "[JPEG-DEC-01 MUST]"),
    Fault("RefusesUnusualIds", "component-ids-200-201-202-app14-transform0", "fail", "[JPEG-DEC-01 MUST]"),
    Fault("RefusesUnusualIds", "component-ids-gray-0-no-jfif", "fail", "[JPEG-DEC-01 MUST]"),
    Fault("RefusesUnusualIds", "component-ids-2-3-4-jfif", "warn", "[JPEG-X-21 SHOULD]"),
]


def _run(pytester: pytest.Pytester, impl: str, select: str, *extra: str, short: bool = True) -> list[dict[str, Any]]:
    """The suite's records of ``impl`` on the cases ``select`` picks; ``short``: under SHORT_TIMEOUT's bounds, else the suite's."""
    results = pytester.path / "results.jsonl"
    pytester.syspathinsert(TESTS)
    pytester.makepyfile(short_timeout=SHORT_TIMEOUT)
    pytester.syspathinsert()
    pytester.runpytest_inprocess(
        str(SUITE), f"--impl={impl}", "-k", select, "--results", str(results), *(["-p", "short_timeout"] if short else []), *extra,
        "--import-mode=importlib", "-p", "no:cacheprovider", "-q", "-W", "ignore::UserWarning",
    )
    return [json.loads(line) for line in results.read_text().splitlines()]


#: (impl, select) -> records: one suite run per decoder serves all its faults.
_RUNS: dict[tuple[str, str], list[dict[str, Any]]] = {}


@pytest.fixture
def records(pytester: pytest.Pytester) -> Callable[[str, str], list[dict[str, Any]]]:
    def get(impl: str, select: str) -> list[dict[str, Any]]:
        if (impl, select) not in _RUNS:
            _RUNS[(impl, select)] = _run(pytester, impl, select)
        return _RUNS[(impl, select)]

    return get


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f"{f.adapter}-{f.case}-{f.outcome}")
def test_wrong_decoder_is_caught(records: Any, fault: Fault) -> None:
    """The wrong decoder gets the expected outcome on the case, citing the broken requirement."""
    ran = records(f"{MODULE.get(fault.adapter, 'wrong_decoders')}:{fault.adapter}", SELECT[fault.adapter])
    assert ran, f"no case ran for {fault.adapter}"
    hits = [r for r in ran if fault.case in r["case"] and r["outcome"] == fault.outcome and fault.requirement in r["message"]]
    outcomes = sorted({(r["case"], r["outcome"]) for r in ran if r["outcome"] != "pass"})
    assert hits, f"{fault.adapter} not caught on {fault.case!r} with {fault.outcome} citing {fault.requirement!r}; non-pass: {outcomes}"


def test_another_factorization_decoded_as_the_steps_say_passes(records: Any) -> None:
    """A stream of another H x W with the chunk's sample count, decoded and reshaped in raster order, passes.

    The decoding steps reshape the samples to the chunk shape (JPEG-DEC-03), so a decoder that does so is right; a
    rejection is allowed too (JPEG-X-08, MAY): the correct adapter, which rejects, is 'unsupported' there.
    """
    ran = records("wrong_decoders:AnyFactorization", SELECT["AnyFactorization"])
    assert len(ran) == 2 and all(r["outcome"] == "pass" for r in ran), [(r["case"], r["outcome"], r["message"][:200]) for r in ran]
    refused = records("imagecodecs", SELECT["AnyFactorization"])
    assert len(refused) == 2 and all(r["outcome"] == "unsupported" and "JPEG-X-08" in r["message"] for r in refused), refused


def test_forged_header_allocation_is_measured(records: Any) -> None:
    """The decoder that trusts a forged 65535x65535 header is seen allocating the whole frame."""
    forged = [r for r in records("wrong_decoders:SizesFromHeader", SELECT["SizesFromHeader"]) if "forged-65535" in r["case"]]
    assert forged and all(r["metrics"].get("peak_mib", 0) > 4000 for r in forged), forged


def test_the_memory_bound_holds_in_a_harness_process_too(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under --isolate the decode runs in a harness process: its resident set is measured instead, with the same bound.

    The decoder that fills a buffer sized from the forged header is warned of JPEG-X-13 (a
    SHOULD) there as in process; the correct decoder (libjpeg-turbo through this project's codec) passes both
    forged cases, its growth far under the bound.
    """
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))
    wrong = [r for r in _run(pytester, "wrong_decoders:PrefillsHeaderFrame", "forged-65535", "--isolate") if "forged" in r["case"]]
    assert wrong and all(r["outcome"] == "warn" and "JPEG-X-13" in r["message"] for r in wrong), wrong
    assert all(r["metrics"]["peak_mib"] >= 90 for r in wrong), wrong
    right = [r for r in _run(pytester, "turbojpeg", "forged", "--isolate") if "forged" in r["case"]]
    assert len(right) == 2 and all(r["outcome"] == "pass" for r in right), right
    assert all(r["metrics"]["peak_mib"] < 64 for r in right), right


def test_correct_decoder_passes_the_same_cases(records: Any) -> None:
    """All those cases decoded by the correct imagecodecs adapter: no fail, warn, error or timeout."""
    ran = records("imagecodecs", " or ".join(f"({s})" for s in SELECT.values()))
    bad = [(r["case"], r["outcome"], r["message"][:200]) for r in ran if r["outcome"] in ("fail", "warn", "error", "timeout")]
    assert len(ran) > 50 and not bad, bad


def test_a_timed_out_decode_is_said_in_later_cases_and_does_not_decide_them(pytester: pytest.Pytester) -> None:
    """After a decode ran past its bound, the next cases keep their own outcomes and say a decode was left running."""
    ran = _run(pytester, "wrong_decoders:HangsOnGarbage", "random-bytes or soi-only or transposed or truncated-10")
    by_case = {r["case"].rsplit(".", 1)[-1]: r for r in ran}
    assert by_case["random-bytes"]["outcome"] == "timeout"
    later = [r for name, r in by_case.items() if name != "random-bytes"]
    assert later and all(r["outcome"] != "timeout" for r in later), [(r["case"], r["outcome"]) for r in later]
    # Cases run in id order, so every other selected case comes after random-bytes.
    assert all(r["metrics"].get("runaway") == "stream.malformed.random-bytes" and "may still be running" in r["message"]
               for r in later), later


def test_the_short_bounds_end_with_the_inner_run(pytester: pytest.Pytester) -> None:
    """The inner runs' short bounds do not outlive them: the suite module this session runs has the suite's own bounds.

    Collected with suites/ (as the README's test command and CI do), this session imported the suite before any inner
    run, and an inner run finds that module: the check then sees the very object the short bounds were set on.
    """
    assert _run(pytester, "imagecodecs", "random-bytes")
    mine = [m for m in list(sys.modules.values()) if getattr(m, "__file__", None) and Path(m.__file__).resolve() == SUITE]
    if not mine:
        pytest.skip("suites/test_decode_streams.py is not collected in this session: run with suites/ collected too")
    assert all(m.DECODE_CPU_LIMIT != SHORT_CPU and m.DECODE_WALL_LIMIT != SHORT_WALL for m in mine), [
        (m.__name__, m.DECODE_CPU_LIMIT, m.DECODE_WALL_LIMIT) for m in mine]


@pytest.mark.parametrize("legal", LEGAL)
def test_legal_decoder_passes(pytester: pytest.Pytester, legal: str) -> None:
    """Decoders the spec allows (chroma repeated, a float IDCT, one placed exactly at every bound) pass every case."""
    from zarr_jpeg_conformance.fixturegen.decoder_faults import float_idct

    if legal == "FloatIdct":
        import shutil

        if shutil.which("djpeg") is None:
            pytest.skip(f"djpeg (libjpeg-turbo-progs) is not installed: {float_idct.__doc__ or ''}".strip())
    # Under the suite's own bounds, as a codec author's decoder is judged: the short ones are there to end the stuck
    # wrong decoders soon, and 0.5 s of CPU (the whole process's, in process) timed out this pure-Python decoder of a
    # 48x80 chunk on a slow machine.
    ran = _run(pytester, f"wrong_decoders:{legal}", LEGAL_SELECT, short=False)
    bad = [(r["case"], r["outcome"], r["message"][:300]) for r in ran if r["outcome"] in ("fail", "warn", "error", "timeout")]
    assert len(ran) > 100 and not bad, bad
