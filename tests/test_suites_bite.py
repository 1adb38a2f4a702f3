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
    #: The module of tests/ that holds the adapter.
    module: str = "wrong_adapters"


FAULTS = [
    Fault("LenientParse", "test_parse.py", "quality", "fail", "JPEG-Q-01"),
    Fault("NoApp14", "test_bitstream.py", "rgb", "fail", "JPEG-ECS-06"),
    Fault("WrongFactors", "test_bitstream.py", "ycbcr-422 or ycbcr-440", "fail", "JPEG-SUB-02"),
    Fault("WritesLumaOnly", "test_bitstream.py", "ycbcr-420", "fail", "JPEG-ECS-02"),
    Fault("TransposedAxes", "test_bitstream.py", "gray-q90", "fail", "JPEG-DIM-01"),
    # Only a chunk of two axes: the stream-structure cases must write grayscale as such a chunk, not (H, W, 1).
    Fault("TransposesTwoDimensionalChunks", "test_bitstream.py", "stream_structure and gray-q90", "fail", "JPEG-DIM-01"),
    # Diagnosed (judging/diagnoses.py): the round trip's samples are the chunk transposed, which breaks JPEG-DIM-01.
    Fault("TransposedAxes", "test_roundtrip.py", "shape_roundtrip and 64x64", "fail", "JPEG-DIM-01"),
    # Each party by what it produced: a stream read back by libjpeg-turbo shows the encoder's fault
    # (judging/read_back.py), the decode of a known stream the decoder's.
    Fault("ChannelSwap", "test_roundtrip.py", "fidelity and ycbcr-444", "fail", "JPEG-ENC-03"),
    Fault("DecodesBgr", "test_roundtrip.py", "fidelity and ycbcr-444", "fail", "JPEG-DEC-02"),
    # Encode-only writers: only their streams can show the fault.
    Fault("WritesBgr", "test_bitstream.py", "ycbcr-420 and q90", "fail", "JPEG-ENC-03"),
    Fault("WritesRgbAsYcbcr", "test_bitstream.py", "ycbcr-420 and q90", "fail", "JPEG-ECS-04"),
    Fault("WritesYcbcrAsRgb", "test_bitstream.py", "rgb and q90", "fail", "JPEG-ECS-05"),
    Fault("SubsamplesRgb", "test_bitstream.py", "rgb and q90", "fail", "JPEG-SUB-09"),
    # Asked again with the omitted decoded_color_space written out, it is right: the default is the fault.
    Fault("DefaultsDecodedToYcbcr", "test_bitstream.py", "ycbcr-420 and q90", "fail", "JPEG-DCS-02"),
    Fault("DefaultsDecodedToYcbcr", "test_decode_streams.py", "reference and ycbcr", "fail", "JPEG-DCS-02"),
    Fault("IgnoresQuality", "test_roundtrip.py", "quality_sweep", "fail", "JPEG-Q-02"),
    # Ends of the sweep right, one step down in fidelity and size: a SHOULD NOT (JPEG-X-16), not JPEG-Q-02.
    Fault("NonMonotoneStep", "test_roundtrip.py", "quality_sweep and gray", "warn", "JPEG-X-16"),
    # One step down in fidelity, up in size: X-16 needs both to hold, not either (issue 28's mutants).
    Fault("wrong_adapters_mutation:LosesFidelityGrowsInSize", "test_roundtrip.py", "quality_sweep and gray", "warn", "JPEG-X-16"),
    # Quality ignored, the size grown by padding: JPEG-Q-02 needs more fidelity and more bytes, not either.
    Fault("wrong_adapters_mutation:IgnoresQualityButPads", "test_roundtrip.py", "quality_sweep and gray", "fail", "JPEG-Q-02"),
    # Streams whose two colour-space rules disagree: a JFIF decoder reads YCbCr, the spec's rule does not.
    Fault("wrong_adapters_mutation:YcbcrWithApp14Rgb", "test_bitstream.py", "ycbcr-420", "fail", "JPEG-ECS-04"),
    Fault("wrong_adapters_mutation:YcbcrWithUnknownTransform", "test_bitstream.py", "ycbcr-420", "fail", "JPEG-ECS-04"),
    Fault("CastsDtype", "test_chunks.py", "dtype", "fail", "JPEG-DT-01"),
    Fault("AnyShape", "test_chunks.py", "shape", "fail", "JPEG-SHP-01"),
    Fault("ConvertsRgb", "test_colorspace.py", "rgb", "fail", "JPEG-ECS-05"),
    Fault("Progressive", "test_bitstream.py", "gray", "fail", "JPEG-GEN-01"),
    Fault("PassthroughConverts", "test_colorspace.py", "passthrough", "fail", "JPEG-DCS-03"),
    Fault("DecodeFollowsConfig", "test_colorspace.py", "rgb", "fail", "JPEG-DEC-01"),
    Fault("NoJfif", "test_bitstream.py", "gray", "warn", "JPEG-X-06"),
    Fault("RejectsRequired", "test_parse.py", "440", "fail", "JPEG-SUB-08"),
    # One deviation, one finding: a case standing on a refused parse is blocked by the configuration's parse case.
    Fault("RejectsRequired", "test_roundtrip.py", "shape_roundtrip and ycbcr-440", "blocked", "case config."),
    Fault("CrashesOnParse", "test_parse.py", "quality", "error", "KeyError"),
    # A suite that parses on the way to its own check is blocked by the configuration's parse case, which holds the error.
    Fault("ParseCrashes", "test_roundtrip.py", "shape_roundtrip and gray-16x48", "blocked", "raised an error (RuntimeError"),
    # The capability model: a required scheme refused at encode fails, quoting why it is required;
    # an rgb configuration accepted at parse and then refused at decode breaks JPEG-ECS-11.
    Fault("RejectsRequiredAtEncode", "test_roundtrip.py", "ycbcr-440", "fail", "Implementations MUST support"),
    Fault("RgbDecodeRefused", "test_roundtrip.py", "rgb", "fail", "JPEG-ECS-11"),
    # Every written stream is checked, at every size: faults the bitstream suite's one size misses.
    Fault("ProgressiveWhenLarge", "test_roundtrip.py", "fidelity and gray", "fail", "JPEG-GEN-01"),
    Fault("FactorsWhenTiny", "test_roundtrip.py", "shape_roundtrip and ycbcr-420 and 7x13", "fail", "JPEG-SUB-02"),
    # Copies in, owned arrays out, memory layouts.
    Fault("HidesLowQuality", "test_roundtrip.py", "quality_sweep and gray", "fail", "JPEG-Q-02"),
    Fault("ReusesOutputBuffer", "test_colorspace.py", "decode_ignores", "fail", "JPEG-DEC-01"),
    Fault("ReadsMemoryOrder", "test_roundtrip.py", "memory_layout", "fail", "JPEG-ENC-02"),
    Fault("ReturnsBytes", "test_roundtrip.py", "shape_roundtrip and gray-16x48", "fail", "JPEG-DEC-03"),
    Fault("EncodeReturnsText", "test_roundtrip.py", "shape_roundtrip and gray-16x48", "fail", "JPEG-FMT-01"),
    Fault("SwapsOneColumn", "test_chunks.py", "hx1-gray", "fail", "JPEG-DIM-01"),
    Fault("SwapsOneColumn", "test_chunks.py", "hx1-ycbcr-422", "fail", "JPEG-DIM-01"),
    Fault("FactorsWhenTiny", "test_chunks.py", "sub-mcu-422", "fail", "JPEG-SUB-02"),
    # The chunk suite decodes what it wrote back to the chunk's shape, and an invalid chunk that
    # crashes the encoder is the implementation's error, not an acceptance.
    Fault("ReturnsBytes", "test_chunks.py", "hx1-gray", "fail", "JPEG-DEC-03"),
    Fault("CrashesOnWrongDtype", "test_chunks.py", "dtype", "error", "RuntimeError: no buffer format"),
    Fault("DecodesZeros", "test_roundtrip.py", "fidelity and ycbcr-444-natural-q90", "fail", "an all-zero decode"),
    # A leading axis of 1 or 3 taken for channels: the channel axis must be the innermost.
    Fault("GuessesChannelsFirst", "test_chunks.py", "channels-first", "fail", "JPEG-SHP-07", "wrong_adapters_corpus"),
    # libjpeg's fast integer DCT writes AC coefficients up to 10 steps off at quality 90-95: less accurate than
    # T.83's encoder tests allow (a SHOULD, JPEG-X-23), within what any DCT's arithmetic explains (no MUST broken).
    Fault("FastIntegerDct", "test_bitstream.py", "gray and q90", "warn", "JPEG-X-23", "legal_adapters"),
]


@dataclass(frozen=True)
class Legal:
    """A legal variant that must get no fail, warn or error on a selection (legal_adapters.py)."""

    adapter: str
    suite: str
    select: str


LEGAL = [
    Legal("RestartsAndOptimizedTables", "test_roundtrip.py", "gray"),
    Legal("RestartsAndOptimizedTables", "test_bitstream.py", "gray"),
    Legal("RefusesRgbAtEncode", "test_roundtrip.py", "rgb"),
    Legal("RefusesRgbAtEncode", "test_colorspace.py", "rgb"),
    Legal("RefusesRgbAtEncode", "test_bitstream.py", "rgb"),
    Legal("StrictParseCopy", "test_parse.py", "structure or quality"),
    Legal("StrictParseCopy", "test_chunks.py", "shape"),
    Legal("AtTheFloors", "test_roundtrip.py", "fidelity"),
    # Any quality -> tables mapping (JPEG-Q-03): fidelity under libjpeg's scale is no fault (issue 23).
    Legal("BelowTheFloors", "test_roundtrip.py", "fidelity"),
    *(Legal("QualityMinusTen", suite, select) for suite, select in (
        ("test_roundtrip.py", "fidelity or quality_sweep or shape_roundtrip"), ("test_colorspace.py", "passthrough or rgb"),
        ("test_bitstream.py", "q90"))),
    Legal("PlateauAt80", "test_roundtrip.py", "fidelity or shape_roundtrip"),
    # Fidelity floors and the quality sweep let every legal encoder measured pass (judging/tolerances.py).
    *(Legal(encoder, suite, "fidelity or quality_sweep" if suite == "test_roundtrip.py" else "q90")
      for encoder in ("TablesOfQualityMinusOne", "ChromaTableOnGAndB", "MozjpegAnnexK", "MozjpegImageMagick")
      for suite in ("test_roundtrip.py", "test_bitstream.py")),
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
    impl = fault.adapter if ":" in fault.adapter else f"{fault.module}:{fault.adapter}"
    records = _run(pytester, impl, fault.suite, fault.select)
    assert records, f"no case ran for {fault}"
    hits = [r for r in records if r["outcome"] == fault.outcome and fault.requirement in r["message"]]
    outcomes = sorted({(r["case"], r["outcome"]) for r in records if r["outcome"] != "pass"})
    assert hits, f"{fault.adapter} was not caught with {fault.outcome} citing {fault.requirement!r}; non-pass outcomes: {outcomes}"


@pytest.mark.parametrize("legal", LEGAL, ids=lambda v: f"{v.adapter}-{v.suite.removesuffix('.py')}")
def test_legal_variant_passes(pytester: pytest.Pytester, legal: Legal) -> None:
    """A choice the spec leaves open (tables, restart markers, where an optional feature is refused) is not a fault."""
    from zarr_jpeg_conformance.adapters import AdapterLoadError, load_adapter

    pytester.syspathinsert(TESTS)
    try:
        load_adapter(f"legal_adapters:{legal.adapter}")
    except AdapterLoadError as exc:
        pytest.skip(str(exc))
    records = _run(pytester, f"legal_adapters:{legal.adapter}", legal.suite, legal.select)
    bad = [(r["case"], r["outcome"], r["message"][:300]) for r in records if r["outcome"] in ("fail", "warn", "error")]
    assert records and not bad, bad


def test_an_encoders_fault_is_not_charged_to_decoders(pytester: pytest.Pytester) -> None:
    """Cross decoding: an encoder that writes no stream gives its decoders no case; a poor stream's right decode passes."""
    results = pytester.path / "results.jsonl"
    pytester.syspathinsert(TESTS)
    pytester.runpytest_inprocess(
        str(SUITES / "test_cross.py"), "--impl=imagecodecs", "--impl=wrong_adapters:EncodeReturnsText",
        "--impl=wrong_adapters:QualityTen", "--results", str(results), "--import-mode=importlib", "-p", "no:cacheprovider", "-q",
    )
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(records) >= 20 and all(r["outcome"] in ("pass", "unsupported") for r in records), [
        (r["implementation"], r["case"], r["outcome"], r["message"][:200]) for r in records if r["outcome"] not in ("pass", "unsupported")]
    assert not any("from-wrong-encode-returns-text" in r["case"] for r in records), "returns text, not a stream"
    assert any("from-wrong-quality-ten" in r["case"] and r["outcome"] == "pass" for r in records), (
        "a stream of quality 10's tables is a legal stream: its decoders are judged by it")


def test_a_coarse_encoder_is_charged_by_the_sweep_not_by_fidelity(pytester: pytest.Pytester) -> None:
    """Quality 10 whatever is asked: every stream keeps what its tables allow (fidelity passes); the sweep's ends fail JPEG-Q-02."""
    fidelity = _run(pytester, "wrong_adapters:QualityTen", "test_roundtrip.py", "fidelity and gray")
    assert fidelity and all(r["outcome"] == "pass" for r in fidelity), [(r["case"], r["outcome"]) for r in fidelity]
    sweep = _run(pytester, "wrong_adapters:QualityTen", "test_roundtrip.py", "quality_sweep and gray")
    assert [r["outcome"] for r in sweep] == ["fail"] and "JPEG-Q-02" in sweep[0]["message"], sweep


def test_a_plateau_in_the_quality_scale_only_warns(pytester: pytest.Pytester) -> None:
    """Qualities 86-90 written at 80: the step 85 -> 90 loses, a SHOULD (JPEG-X-16) warning and no MUST fail."""
    records = _run(pytester, "legal_adapters:PlateauAt80", "test_roundtrip.py", "quality_sweep")
    assert records and {r["outcome"] for r in records} == {"warn"}, [(r["case"], r["outcome"]) for r in records]
    assert all("JPEG-X-16" in r["message"] for r in records)


#: Each suite's selections of FAULTS as one: the correct adapter runs each suite once, not once per fault.
SAME_CASES = {suite: " or ".join(dict.fromkeys(f"({f.select})" for f in FAULTS if f.suite == suite))
              for suite in dict.fromkeys(f.suite for f in FAULTS)}


@pytest.mark.parametrize("suite", SAME_CASES, ids=lambda s: s.removesuffix(".py"))
def test_correct_adapter_passes_the_same_cases(pytester: pytest.Pytester, suite: str) -> None:
    """Every selection of FAULTS run against the correct imagecodecs adapter has no fail, warn or error."""
    records = _run(pytester, "imagecodecs", suite, SAME_CASES[suite])
    bad = [(r["case"], r["outcome"], r["message"][:200]) for r in records if r["outcome"] in ("fail", "warn", "error")]
    assert records and not bad, bad


def test_a_side_over_libjpegs_limit_refused_at_encode_is_unsupported(pytester: pytest.Pytester) -> None:
    """The turbojpeg built-in refuses sides of 65501-65535 (libjpeg's JPEG_MAX_DIMENSION is 65500) when
    it encodes: JPEG-X-03 makes them optional, so (H, W) chunks and (H, W, C) chunks alike are unsupported."""
    records = _run(pytester, "turbojpeg", "test_chunks.py", "65501 or 65535")
    outcomes = {(r["case"], r["outcome"]) for r in records}
    assert len(outcomes) == 5 and all(o == "unsupported" for _, o in outcomes), outcomes
    assert {c for c, _ in outcomes} >= {"chunk.dims.height-65535-ycbcr", "chunk.dims.width-65535-ycbcr"}, outcomes
