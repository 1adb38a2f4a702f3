"""Edges of suites/ that the whole-suite runs reach only in minutes: each suite's helpers, driven directly.

The build suite charges a refused valid build to the capability model, reads a written codec
object for its name and its parse rules, and judges a builder's own round trip (its parse alone
when it does not encode, the read-back of its stream when it does). The bitstream suite takes
every optional factor set of the corpus and writes it at odd sides; the chunk suite tells a
chunk taken channels-first from its own rule. The decode-stream suite sends a rejection and an
acceptance each its own way, charges a refused valid stream to its rule (or to the optional
feature accepted at parse), finds a decode that follows the configuration, and names the
second decoder of a span. The store suite charges a refused chunk as a refusal and holds the
array to its expected shape; the fidelity case records the PSNR of the decode to the millidecibel.
Implementations are small stand-ins (``SimpleNamespace`` or classes here) and judges are plain
:class:`Judge` objects, so each test takes a fraction of a second.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.core import color
from zarr_jpeg_conformance.core.config import JpegConfig, parse_codec
from zarr_jpeg_conformance.core.scans import quant_tables
from zarr_jpeg_conformance.corpus.cases import BuildCase, build_cases, chunk_cases, config_cases
from zarr_jpeg_conformance.corpus.images import make_image, psnr
from zarr_jpeg_conformance.corpus.modes import MODE
from zarr_jpeg_conformance.corpus.streams import StreamCase, cases_of, reference_decode
from zarr_jpeg_conformance.judging.own_tables import encode_with_tables
from zarr_jpeg_conformance.judging.verdict import Attempt, Judge, Outcome
from zarr_jpeg_conformance.suites import test_bitstream as bitstream_suite
from zarr_jpeg_conformance.suites import test_build as build_suite
from zarr_jpeg_conformance.suites import test_chunks as chunk_suite
from zarr_jpeg_conformance.suites import test_decode_streams as stream_suite
from zarr_jpeg_conformance.suites import test_roundtrip as roundtrip_suite


def _judge(case: str = "case", requirements: tuple[str, ...] = (), level: str = "MUST") -> Judge:
    return Judge("stand-in", case, list(requirements), level, roots={})


def _judged(check: Callable[[Judge], object], judge: Judge | None = None) -> Judge:
    """The judge a check left (a failed or skipped check ends its test; the verdict is what it left)."""
    judge = judge if judge is not None else _judge()
    with contextlib.suppress(pytest.fail.Exception, pytest.skip.Exception):
        check(judge)
    return judge


def _tables(config: JpegConfig) -> list[np.ndarray]:
    luma, chroma = quant_tables(config.quality)
    return [luma] if config.encoded_color_space == "grayscale" else [luma, chroma, chroma]


# ------------------------------------------------------------------ build


def _build_case(case_id: str) -> BuildCase:
    return next(c for c in build_cases() if c.id == case_id)


def test_a_refused_build_of_valid_options_with_a_quality_fails_the_rule_that_makes_them_required() -> None:
    """Only a build without quality may be refused as 'no default offered'; otherwise the capability model decides."""
    case = _build_case("build.quality.min")
    refused: Attempt[Any] = Attempt(rejection=ValueError("not today"))
    judge = _judged(lambda j: build_suite._judge_refusal(j, case, refused, "build"), _judge(case.id, case.requirements))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-ECS-08"), judge.messages
    passthrough = _build_case("build.decoded.passthrough")
    judge = _judged(lambda j: build_suite._judge_refusal(j, passthrough, refused, "build"), _judge(passthrough.id))
    assert judge.outcome is Outcome.UNSUPPORTED and "JPEG-DCS-05" in judge.requirements, judge.messages


GRAY_90: dict[str, Any] = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}


def test_a_written_codec_object_is_named_jpeg_and_no_other_name() -> None:
    codec, config = build_suite._written(_judge(), GRAY_90, "build")
    assert codec == GRAY_90 and config.quality == 90
    judge = _judge()
    build_suite._written(judge, GRAY_90, "build")
    assert "JPEG-NAME-01" in judge.requirements  # a right name is evidence for the rule too
    judge = _judged(lambda j: build_suite._written(j, {**GRAY_90, "name": "imagecodecs_jpeg"}, "build"))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-NAME-01"), judge.messages
    assert any("build wrote the name 'imagecodecs_jpeg'" in m for m in judge.messages), judge.messages


@pytest.mark.parametrize(("case_id", "outcome", "rule"), [("build.quality.min", Outcome.FAIL, "JPEG-Q-01"),
                                                        ("build.quality.default-grayscale", Outcome.WARN, "JPEG-Q-06")])
def test_a_quality_written_other_than_asked_breaks_the_rule_of_a_given_or_a_default_quality(case_id: str, outcome: Outcome,
                                                                                          rule: str) -> None:
    """Quality given in the options and written otherwise fails JPEG-Q-01 (the value means what was asked); quality
    left to its default and written otherwise warns under JPEG-Q-06 (a default SHOULD be 95)."""
    case = _build_case(case_id)
    assert case.configuration is not None
    written = {"name": "jpeg", "configuration": {**case.configuration, "quality": 50}}
    del written["configuration"]["subsampling"]  # grayscale: its default, left out
    judge = _judged(lambda j: build_suite._judge_members(j, case, written, parse_codec(written), "build"),
                    _judge(case.id, case.requirements))
    assert judge.outcome == outcome and [m.split(" ", 1)[1].split(" ", 1)[0] for m in judge.messages] == [f"[{rule}"], \
        judge.messages


def test_a_written_configuration_the_parse_rules_reject_fails_the_rule_it_breaks() -> None:
    """Quality 0 written: a fail of JPEG-Q-01 (and JPEG-CFG-01 cited), not the suite's own error."""
    written = {"name": "jpeg", "configuration": {"quality": 0, "encoded_color_space": "grayscale"}}
    judge = _judged(lambda j: build_suite._written(j, written, "build"))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-Q-01"), judge.messages
    assert "JPEG-CFG-01" in judge.requirements


class _Builder:
    """Builds what it is asked and parses by the spec's rules; no encoder."""

    name = "stand-in-builder"
    roles = frozenset({"build"})

    def parse(self, codec: dict[str, Any]) -> JpegConfig:
        return parse_codec(codec)


class _BuilderWritingTheNegative(_Builder):
    """Also encodes: a well-formed baseline stream, of the chunk's negative."""

    roles = frozenset({"build", "encode"})

    def encode(self, parsed: JpegConfig, chunk: np.ndarray) -> bytes:
        return encode_with_tables(parsed, 255 - chunk, _tables(parsed))


def test_a_builder_that_does_not_encode_is_judged_by_its_own_parse_alone() -> None:
    judge = _judge()
    build_suite._judge_round_trip(judge, _Builder(), GRAY_90, parse_codec(GRAY_90), "build")
    assert judge.outcome is Outcome.PASS and "round_trip_encode" not in judge.metrics, judge.messages


def test_a_builder_that_encodes_has_its_stream_read_back() -> None:
    """The stream written under its own parse is well formed but holds another image: its read-back fails the kept rule."""
    judge = _judged(lambda j: build_suite._judge_round_trip(j, _BuilderWritingTheNegative(), GRAY_90, parse_codec(GRAY_90), "build"))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-ECS-03"), judge.messages


# ------------------------------------------------------------------ bitstream: optional factor sets


def test_every_optional_factor_set_of_the_corpus_is_written_by_the_bitstream_suite() -> None:
    optional = {c.id for c in config_cases() if c.valid and not parse_codec(c.codec).is_required_scheme}
    assert optional and {c.id for c in bitstream_suite.OPTIONAL_FACTORS} == optional


def _optional_case(case_id: str) -> Any:
    return next(c for c in bitstream_suite.OPTIONAL_FACTORS if c.id == case_id)


def test_an_optional_factor_set_refused_at_parse_is_unsupported_on_the_cases_own_rules() -> None:
    """The record rests on what the case cites (JPEG-X-04 first) and on no rule of another colour space."""
    case = _optional_case("config.optional.luma-2x3")

    def parse(codec: dict[str, Any]) -> JpegConfig:
        config = parse_codec(codec)
        if not config.is_required_scheme:
            raise ValueError("only the four required schemes")
        return config

    impl = SimpleNamespace(name="required-schemes-only", roles=frozenset({"encode"}), parse=parse)
    judge = _judged(lambda j: bitstream_suite.test_optional_factors_written_exactly(impl, case, j), _judge(case.id, case.requirements))
    assert judge.outcome is Outcome.UNSUPPORTED, judge.messages
    assert judge.requirements == list(case.requirements) and case.requirements[0] == "JPEG-X-04"


class _PairsColumns:
    """Where luma is sampled 2:1 across, pairs columns for chroma and drops the unpaired last one: the frame is a column narrow."""

    name = "pairs-columns"
    roles = frozenset({"encode"})

    def parse(self, codec: dict[str, Any]) -> JpegConfig:
        return parse_codec(codec)

    def encode(self, parsed: JpegConfig, chunk: np.ndarray) -> bytes:
        if max(h for h, _ in parsed.subsampling) == 2:
            chunk = chunk[:, : chunk.shape[1] // 2 * 2]
        return encode_with_tables(parsed, np.ascontiguousarray(chunk), _tables(parsed))


def test_optional_factor_sets_are_written_at_odd_sides() -> None:
    """A side odd in both directions leaves a 2:1 subsampler an unpaired column: the cropped frame is caught (JPEG-DIM-01)."""
    case = _optional_case("config.optional.luma-2x3")
    judge = _judged(lambda j: bitstream_suite.test_optional_factors_written_exactly(_PairsColumns(), case, j), _judge(case.id))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-DIM-01"), judge.messages
    # The same encoder at a set without 2:1 across writes what it was given.
    whole = _optional_case("config.optional.luma-3x2")
    judge = _judged(lambda j: bitstream_suite.test_optional_factors_written_exactly(_PairsColumns(), whole, j), _judge(whole.id))
    assert judge.outcome is Outcome.PASS, judge.messages


# ------------------------------------------------------------------ chunks


def test_a_channels_first_chunk_encoded_as_its_last_two_axes_is_said_to_take_channels_first() -> None:
    """A (3, 16, 48) chunk written as a 16x48 colour image: the message says which axes the stream holds (JPEG-SHP-07)."""
    case = next(c for c in chunk_cases() if c.id == "chunk.shape.channels-first-ycbcr")
    config = parse_codec(case.codec)
    data = encode_with_tables(config, make_image("natural", 16, 48, channels=3), _tables(config))
    assert chunk_suite._accepted_as(data, case) == (
        "JPEG-SHP-07", ": its stream is a 16x48 image, the chunk's last two axes (channels taken first)")
    # Not a stream at all: nothing to tell from it, so the case's own rule, unexplained.
    assert chunk_suite._accepted_as("not a stream", case) == (case.requirements[0], "")


def test_a_chunk_of_two_channels_written_with_another_count_breaks_the_channel_rule_and_one_of_three_its_own() -> None:
    """Grayscale written for a (32, 48, 2) chunk: channels dropped (JPEG-SHP-05, said so); for a (32, 48, 3) chunk under
    a grayscale configuration, three channels are a colour chunk the configuration cannot take: the case's own rule."""
    gray = parse_codec(GRAY_90)
    data = encode_with_tables(gray, make_image("natural", 32, 48, channels=1), _tables(gray))
    two = next(c for c in chunk_cases() if c.id == "chunk.shape.hw2-gray")
    assert chunk_suite._accepted_as(data, two) == (
        "JPEG-SHP-05", ": its stream is a 32x48 image of 1 component(s), not the chunk's 2 channels")
    three = next(c for c in chunk_cases() if c.id == "chunk.components.hw3-under-gray")
    assert chunk_suite._accepted_as(data, three) == (three.requirements[0], "")


# ------------------------------------------------------------------ decode streams


def _stream(case_id: str) -> StreamCase:
    return next(c for category in ("reference", "foreign", "malformed") for c in cases_of(category) if c.id == case_id)


def _case_judge(case: StreamCase) -> Judge:
    return _judge(case.id, case.requirements, case.level)


def _refuses(parsed: object, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
    raise ValueError("no stream today")


def _decoder(decode: Callable[[JpegConfig, bytes, tuple[int, ...]], object]) -> Any:
    """A decoder that parses by the spec's rules and decodes by ``decode``."""
    return SimpleNamespace(name="stand-in-decoder", roles=frozenset({"decode"}), parse=parse_codec, decode=decode)


def test_a_stream_rejected_where_a_rejection_is_expected_passes() -> None:
    case = _stream("stream.malformed.empty")
    judge = _judged(lambda j: stream_suite._judge_stream(_decoder(_refuses), case, j), _case_judge(case))
    assert judge.outcome is Outcome.PASS, judge.messages
    assert str(judge.metrics["rejection"]).startswith("ValueError: no stream today")


def test_a_refused_valid_stream_fails_the_first_rule_of_its_case() -> None:
    case = _stream("stream.reference.gray.q75.48x80")
    refused: Attempt[Any] = Attempt(rejection=ValueError("no stream today"))
    judge = _judged(lambda j: stream_suite._rejected(case, j, refused, _decoder(_refuses), parse_codec(case.codec)), _case_judge(case))
    # Grayscale support is what every decoder owes (JPEG-ECS-08, the case's first rule); the rest are the stream's details.
    assert case.requirements[:2] == ("JPEG-ECS-08", "JPEG-ECS-03")
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-ECS-08"), judge.messages
    assert "decode refused: ValueError: no stream today" in judge.messages[-1]


def test_a_stream_that_may_be_refused_is_not_once_its_configuration_was_accepted() -> None:
    """rgb read under a ycbcr configuration may be refused, unless the implementation accepts rgb when parsing (JPEG-ECS-11)."""
    case = _stream("stream.foreign.rgb-under-ycbcr-configuration")
    assert case.expect == "decode-or-reject" and case.decode_if_parsed is not None
    refused: Attempt[Any] = Attempt(rejection=ValueError("no stream today"))
    judge = _judged(lambda j: stream_suite._rejected(case, j, refused, _decoder(_refuses), parse_codec(case.codec)), _case_judge(case))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, case.requirements[0]), judge.messages
    assert "so it claims to decode such streams (JPEG-ECS-11)" in judge.messages[-1]


def test_a_passthrough_refused_at_decode_after_it_was_accepted_is_charged_to_the_feature() -> None:
    """It decodes the same YCbCr stream under a plain 4:4:4 configuration: the refusal is of the configuration (JPEG-DCS-06)."""
    case = _stream("stream.reference.passthrough-444.q75.48x80")

    def decode(parsed: JpegConfig, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
        if parsed.decoded_color_space == "ycbcr":
            raise ValueError("no passthrough at decode")
        return np.zeros(shape, np.uint8)

    refused: Attempt[Any] = Attempt(rejection=ValueError("no passthrough at decode"))
    judge = _judged(lambda j: stream_suite._rejected(case, j, refused, _decoder(decode), parse_codec(case.codec)), _case_judge(case))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-DCS-06"), judge.messages
    assert "the refusal is of the configuration, which decoding ignores" in judge.messages[-1]


def test_a_wrong_decode_that_looks_like_a_classic_fault_cites_that_faults_rule() -> None:
    """Components reversed: JPEG-DEC-02, not the catch-all JPEG-DEC-01."""
    case = _stream("stream.reference.ycbcr-444.q75.48x80")
    expected = case.references()[0]
    reversed_ = _decoder(lambda parsed, data, shape: np.ascontiguousarray(expected[..., ::-1]))
    judge = _judged(lambda j: stream_suite._accepted(case, j, expected[..., ::-1], case.data(), reversed_), _case_judge(case))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-DEC-02"), judge.messages


def test_a_decode_that_follows_the_configuration_is_said_to() -> None:
    """An rgb stream read under a ycbcr configuration through the inverse transform, right under an rgb one: JPEG-DEC-01."""
    case = _stream("stream.foreign.rgb-under-ycbcr-configuration")
    expected = case.references()[0]

    def decode(parsed: JpegConfig, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
        return expected.copy() if parsed.encoded_color_space == "rgb" else color.ycbcr_to_rgb(expected)

    impl = _decoder(decode)
    judge = _judged(lambda j: stream_suite._accepted(case, j, decode(parse_codec(case.codec), b"", expected.shape), case.data(), impl),
                    _case_judge(case))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-DEC-01"), judge.messages
    assert "it looks like a decode that follows the configuration" in judge.messages[-1]


def test_a_stream_whose_coefficients_cannot_be_read_is_judged_by_the_span_of_its_expected_decodes() -> None:
    from zarr_jpeg_conformance.judging.decode_tolerances import judge_reconstruction

    progressive = _stream("stream.foreign.progressive-gray")
    config = parse_codec(progressive.codec)
    expected = progressive.references()
    wrong = np.clip(expected[0].astype(np.int16) + 20, 0, 255).astype(np.uint8)
    judged = judge_reconstruction(wrong, progressive.data(), config, expected, str(progressive.tolerance))
    assert not judged.ok and "outside the span of the expected decodes" in judged.observed, judged
    assert "cannot be read here" in judged.observed and "outside_max" in judged.metrics
    baseline = _stream("stream.reference.gray.q75.48x80")
    exact = judge_reconstruction(np.clip(baseline.expected().astype(np.int16) + 20, 0, 255).astype(np.uint8),
                                 baseline.data(), parse_codec(baseline.codec), baseline.references())
    assert not exact.ok and "exact reconstruction" in exact.observed and "acc_component" in exact.metrics, exact


# ------------------------------------------------------------------ stores


def _store_suite() -> Any:
    pytest.importorskip("zarr")
    from zarr_jpeg_conformance.suites import test_stores

    return test_stores


def _store(name: str) -> Any:
    return next(s for s in _store_suite().STORES if s.name == name)


def test_a_store_chunk_refused_at_decode_is_judged_as_a_refusal() -> None:
    """A ycbcr chunk refused: the rule that makes ycbcr required (JPEG-SUB-08), not a malformed decode result (JPEG-DEC-03)."""
    case = _store("ng-cloudvolume-rgb")  # one chunk: the refusal ends the read with no other decode under way
    judge = _judged(lambda j: _store_suite()._read(_decoder(_refuses), case, j), _judge(case.id, case.requirements, case.level))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-SUB-08"), judge.messages
    assert f"decode of chunk (128, 48, 3) of {case.store} refused: ValueError: no stream today" in judge.messages[-1]


def test_a_store_read_into_another_shape_than_its_expected_array_fails_jpeg_dec_03() -> None:
    """Every chunk decoded right, yet the array is not of the expected array's shape: a fail, not a PSNR of mismatched arrays.

    The shipped stores agree with their arrays (test_store_holds_its_data), so here a store is paired with another's."""
    suite = _store_suite()
    case = _store("gray-2d")
    paired = dataclasses.replace(case, expected=_store("gray-hw1").expected)
    right = _decoder(lambda parsed, data, shape: reference_decode(data, parsed, shape))
    judge = _judged(lambda j: suite.test_read_store(right, paired, j), _judge(case.id, case.requirements))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-DEC-03"), judge.messages
    assert "gave uint8 (64, 96), expected uint8 (64, 96, 1)" in judge.messages[-1]
    judge = _judged(lambda j: suite.test_read_store(right, case, j), _judge(case.id, case.requirements))
    assert judge.outcome is Outcome.PASS and judge.metrics["chunks"] == 4, judge.messages


# ------------------------------------------------------------------ round trip


class _Recorder:
    """A right implementation (tables of its quality, libjpeg-turbo's decode) that keeps what it decoded."""

    name = "recorder"
    roles = frozenset({"encode", "decode"})

    def __init__(self) -> None:
        self.decoded: list[np.ndarray] = []

    def parse(self, codec: dict[str, Any]) -> JpegConfig:
        return parse_codec(codec)

    def encode(self, parsed: JpegConfig, chunk: np.ndarray) -> bytes:
        return encode_with_tables(parsed, chunk, _tables(parsed))

    def decode(self, parsed: JpegConfig, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
        self.decoded.append(reference_decode(data, parsed, shape))
        return self.decoded[-1].copy()


def test_fidelity_records_the_psnr_of_the_decode_to_the_millidecibel() -> None:
    """As every suite does: the PSNR of the implementation's decode against the chunk, rounded to 0.001 dB."""
    impl, judge = _Recorder(), _judge("fidelity")
    roundtrip_suite.test_fidelity(impl, MODE["gray"], "natural", 90, judge)
    assert judge.outcome is Outcome.PASS, judge.messages
    (out,) = impl.decoded
    value = psnr(make_image("natural", 64, 96, channels=1), out)
    assert round(value, 3) != round(value, 2), f"{value}: its third decimal is 0, so this case cannot show the rounding"
    assert judge.metrics["psnr"] == round(value, 3)
