"""A finding is a defect (issue 46): the causes the diagnoses name, findings grouped by them, what a root hides.

Each diagnosis is shown on the fault it names and on a legal result, which it must not name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.backends import load_backend
from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.judging import roots
from zarr_jpeg_conformance.judging.checks import squeezed_frame
from zarr_jpeg_conformance.judging.decoder_accuracy import where_wrong
from zarr_jpeg_conformance.judging.diagnoses import by_markers, diagnose_decode, planar, planar_sizes
from zarr_jpeg_conformance.judging.encoder_accuracy import (
    CHROMA_NOT_SUBSAMPLED,
    PLANAR_READ,
    layout_cause,
    planar_image,
)
from zarr_jpeg_conformance.judging.t81.reading import reading
from zarr_jpeg_conformance.judging.verdict import Cause, Judge
from zarr_jpeg_conformance.report.model import CaseResult
from zarr_jpeg_conformance.report.roots import root_findings

STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "streams"
RNG = np.random.default_rng(46)
IMAGE = RNG.integers(0, 256, (24, 40, 3), dtype=np.uint8)
PASSTHROUGH = {"name": "jpeg", "configuration": {"quality": 95, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr",
                                                 "subsampling": [[1, 1], [1, 1], [1, 1]]}}
GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}


def _stream(name: str) -> bytes:
    return next(STREAMS.glob(f"*/{name}.jpg")).read_bytes()


# ------------------------------------------------------------------ findings grouped by cause


def _line(case: str, rule: str, cause: dict[str, str] | None = None, **extra: Any) -> CaseResult:
    return CaseResult("codec", case, extra.pop("outcome", "fail"), "MUST", (rule,), f"fail: [{rule}] observed", {},
                      finding=rule if cause is not False else None, cause=cause, **extra)


PLANAR = {"id": "encode.planar-read", "requirement": "JPEG-ENC-02", "words": "the chunk read as planes"}


def test_cases_with_one_cause_are_one_finding_under_its_rule_with_the_others_as_consequences() -> None:
    cases = {c.case: c for c in [
        _line("a", "JPEG-SUB-02", PLANAR), _line("b", "JPEG-DCS-03", PLANAR), _line("c", "JPEG-DCS-03", PLANAR),
        _line("d", "JPEG-DCS-03"),  # the same rule, no cause named: a finding of its own, by the rule
    ]}
    found = root_findings(cases)
    assert [(f.requirement, f.cause_id, f.cases, f.consequences) for f in found] == [
        ("JPEG-ENC-02", "encode.planar-read", ["a", "b", "c"], ["JPEG-SUB-02", "JPEG-DCS-03"]),
        ("JPEG-DCS-03", "", ["d"], []),
    ]
    assert found[0].cause_text == "the chunk read as planes"
    assert found[1].cause_text == "cause not named: the cases are grouped by the rule they break (JPEG-DCS-03)"


def test_cases_of_the_causes_rule_without_a_cause_join_it_where_the_row_has_one_such_cause() -> None:
    shift = {"id": "decode.level-shift", "requirement": "JPEG-DEC-01", "words": "every sample shifted"}
    one = root_findings({c.case: c for c in [_line("a", "JPEG-DEC-01", shift), _line("b", "JPEG-DEC-01"),
                                             _line("c", "JPEG-DEC-01", outcome="blocked", blocked_by="b")]})
    assert [(f.cases, f.unnamed, f.blocked) for f in one] == [(["a", "b"], 1, 1)]
    assert one[0].cause_text.startswith("every sample shifted (named on 1 of its 2 cases; the other 1 break the same rule")
    zeros = {"id": "decode.all-zero", "requirement": "JPEG-DEC-01", "words": "an all-zero decode"}
    two = root_findings({c.case: c for c in [_line("a", "JPEG-DEC-01", shift), _line("z", "JPEG-DEC-01", zeros),
                                             _line("b", "JPEG-DEC-01")]})
    assert sorted(f.cause_id for f in two) == ["", "decode.all-zero", "decode.level-shift"], "two causes: which one is b's?"


def test_one_defect_named_at_encode_and_at_decode_is_one_finding_and_two_defects_of_a_stage_are_two() -> None:
    words = "takes an omitted decoded_color_space for something else"
    at = [{"id": f"{stage}.default", "requirement": "JPEG-DCS-02", "words": words} for stage in ("encode", "decode")]
    (finding,) = root_findings({c.case: c for c in [_line("e", "JPEG-DCS-02", at[0]), _line("d", "JPEG-DCS-02", at[1])]})
    assert finding.cases == ["e", "d"]
    other = {"id": "decode.planar", "requirement": "JPEG-DCS-02", "words": "planes handed over as if interleaved"}
    assert len(root_findings({c.case: c for c in [_line("d", "JPEG-DCS-02", at[1]), _line("p", "JPEG-DCS-02", other)]})) == 2


def test_a_cause_named_by_markers_joins_the_general_one_where_the_row_shows_that_too() -> None:
    inverse = {"id": "decode.inverse-on-rgb", "requirement": "JPEG-ECS-12", "words": "an inverse transform on RGB"}
    jfif = {"id": "decode.jfif-over-app14", "requirement": "JPEG-ECS-12", "words": "JFIF taken over APP14"}
    both = root_findings({c.case: c for c in [_line("plain", "JPEG-ECS-12", inverse), _line("jfif", "JPEG-ECS-12", jfif)]})
    assert [(f.cause_id, f.cases) for f in both] == [("decode.inverse-on-rgb", ["plain", "jfif"])]
    alone = root_findings({c.case: c for c in [_line("jfif", "JPEG-ECS-12", jfif)]})
    assert [f.cause_id for f in alone] == ["decode.jfif-over-app14"], "only streams with JFIF: the markers explain it"


def test_what_a_blocked_case_shows_once_its_root_is_fixed_is_listed_with_the_root() -> None:
    latent = {"requirement": "JPEG-Q-01", "words": "accepts it once subsampling is written out"}
    cases = {c.case: c for c in [
        _line("root", "JPEG-SUB-05", {"id": "parse.refuses-omitted-subsampling", "requirement": "JPEG-SUB-05", "words": "w"}),
        _line("q0", "JPEG-Q-01", outcome="blocked", blocked_by="root", latent=latent),
        _line("other", "JPEG-Q-01", outcome="blocked", blocked_by="root"),
    ]}
    (finding,) = root_findings(cases)
    assert finding.blocked == 2 and finding.latent == [("q0", "JPEG-Q-01", "accepts it once subsampling is written out")]
    assert finding.latent_text().startswith("latent: shown once JPEG-SUB-05 is fixed: JPEG-Q-01 (q0: ")


def test_latent_asks_the_invalid_case_again_with_the_twins_cause_removed() -> None:
    def parse(codec: Any) -> object:  # refuses subsampling omitted (zarrs_jpeg 0.2.0), accepts quality 0
        if "subsampling" not in codec["configuration"]:
            raise ValueError("missing field `subsampling`")
        return codec

    twin = {"name": "jpeg", "configuration": {"quality": 1, "encoded_color_space": "grayscale"}}
    zero = {"name": "jpeg", "configuration": {"quality": 0, "encoded_color_space": "grayscale"}}
    shown = roots.latent(parse, twin, zero)
    assert shown is not None and shown[0]["configuration"] == {**zero["configuration"], "subsampling": [[1, 1]]}
    assert roots.latent(lambda c: (_ for _ in ()).throw(ValueError("no")), twin, zero) is None, "no probe explains the twin"


# ------------------------------------------------------------------ decode faults


def test_planes_handed_over_as_if_interleaved_are_named() -> None:
    assert diagnose_decode(planar(IMAGE), IMAGE, "ycbcr", "ycbcr") == "planar"
    assert diagnose_decode(IMAGE, IMAGE, "ycbcr", "ycbcr") is None


def test_an_all_zero_decode_is_named_apart_from_a_constant_one() -> None:
    assert diagnose_decode(np.zeros_like(IMAGE), IMAGE, "ycbcr", "rgb") == "all-zero"
    assert diagnose_decode(np.full_like(IMAGE, 9), IMAGE, "ycbcr", "rgb") == "constant"


def test_a_level_shift_is_named_beyond_what_legal_decoders_differ_by() -> None:
    smooth = np.tile(np.linspace(40, 200, 40, dtype=np.uint8), (24, 1))[..., None].repeat(3, axis=2)
    assert diagnose_decode(smooth + 6, smooth, "ycbcr", "rgb") == "level-shift"
    assert diagnose_decode(smooth + 2, smooth, "ycbcr", "rgb") is None


def test_no_shift_is_named_where_a_flat_image_or_samples_moved_by_different_amounts_give_no_evidence_of_one() -> None:
    flat = np.full((8, 8, 3), 120, np.uint8)
    assert diagnose_decode(flat + 20, flat, "ycbcr", "rgb") is None, "a flat image: any wrong value looks shifted"
    smooth = np.tile(np.linspace(40, 200, 40, dtype=np.uint8), (24, 1))[..., None].repeat(3, axis=2)
    moved = np.clip(smooth.astype(np.int16) + np.tile(np.arange(40) % 20, (24, 1))[..., None], 0, 255).astype(np.uint8)
    assert diagnose_decode(moved, smooth, "ycbcr", "rgb") != "level-shift", "moved by 0 to 19 levels: another image"


def test_a_one_pixel_decode_of_zeros_is_named_all_zero() -> None:
    pixel = np.array([[[90, 120, 200]]], np.uint8)
    assert diagnose_decode(np.zeros_like(pixel), pixel, "ycbcr", "rgb") == "all-zero"


def test_a_one_pixel_chunk_gives_no_evidence_of_a_layout_fault() -> None:
    backend, parsed, config = _passthrough([[1, 1], [1, 1], [1, 1]])
    pixel = np.array([[[90, 120, 200]]], np.uint8)
    assert np.array_equal(planar_image(pixel), pixel), "its planes are its interleaved samples"
    assert layout_cause(backend.encode(parsed, pixel[..., ::-1].copy()), config, pixel) is None


def test_the_markers_name_which_marker_won() -> None:
    assert by_markers("inverse-on-rgb", _stream("stream.foreign.jfif-app14-transform0")) == "jfif-over-app14"
    assert by_markers("inverse-on-rgb", _stream("stream.foreign.app14-transform0-ycc-ids")) == "inverse-on-rgb"
    assert by_markers("decode-skipped-ycbcr", _stream("stream.foreign.app14-transform1-rgb-ids")) == "ids-over-app14"


def test_a_refusal_naming_the_planar_buffers_size_is_the_planar_fault() -> None:
    data = _stream("stream.reference.passthrough-420.q20.37x53")
    frame = reading(data).stream.frame
    assert 3192 in planar_sizes(frame)  # 56x38 + 28x19 + 28x19: widths padded to 4, heights to the MCU

    def refuses(size: int) -> Any:
        return lambda parsed, stream, shape: (_ for _ in ()).throw(ValueError(f"size {size}, expected 5883"))

    said = roots.decode_diagnosis(refuses(3192), None, data, (37, 53, 3), ValueError("the size of a decoded chunk is 3192, "
                                                                                       "expected 5883"))
    assert said is not None and said.cause is not None and said.cause.id == "decode.planar" and said.requirement == "JPEG-DEC-02"
    assert roots.decode_diagnosis(refuses(3000), None, data, (37, 53, 3), ValueError("size 3000, expected 5883")) is None


def test_wrong_samples_only_past_the_last_whole_mcu_are_an_edge_fault() -> None:
    wrong = np.zeros((40, 24), bool)
    wrong[3:30, 17:24] = True
    region = where_wrong(wrong, (16, 16))
    assert region is not None and region.edge == "right" and region.columns == (17, 23)
    wrong[5, 3] = True
    region = where_wrong(wrong, (16, 16))
    assert region is not None and region.edge == "" and "columns 3-23" in str(region)


# ------------------------------------------------------------------ encode faults


def _passthrough(factors: list[list[int]]) -> tuple[Any, Any, Any]:
    backend = load_backend("imagecodecs")
    codec = {**PASSTHROUGH, "configuration": {**PASSTHROUGH["configuration"], "subsampling": factors}}
    return backend, backend.parse(codec), parse_codec(codec)


def test_a_chunk_read_as_planes_is_named_and_a_right_stream_is_not() -> None:
    backend, parsed, config = _passthrough([[1, 1], [1, 1], [1, 1]])
    assert layout_cause(backend.encode(parsed, planar_image(IMAGE)), config, IMAGE) is PLANAR_READ
    assert layout_cause(backend.encode(parsed, IMAGE), config, IMAGE) is None


def test_full_resolution_chroma_stored_as_the_subsampled_plane_is_named() -> None:
    backend, parsed, config = _passthrough([[2, 2], [1, 1], [1, 1]])
    smooth = np.clip(np.add.outer(np.arange(24) * 3, np.arange(40) * 2) + 40, 0, 255).astype(np.uint8)
    chunk = np.stack([smooth, smooth[::-1], smooth[:, ::-1]], axis=-1)
    # The stream such an encoder writes: each 12x20 chroma plane is the first 240 samples of the full plane.
    first = [np.repeat(np.repeat(chunk[..., k].reshape(-1)[:240].reshape(12, 20), 2, 0), 2, 1) for k in (1, 2)]
    wrong = backend.encode(parsed, np.ascontiguousarray(np.stack([chunk[..., 0], *first], axis=-1)))
    assert layout_cause(wrong, config, chunk) is CHROMA_NOT_SUBSAMPLED
    assert layout_cause(backend.encode(parsed, chunk), config, chunk) is None


def _squeezing(accepts_all: bool = False) -> Any:
    writer = load_backend("imagecodecs")
    gray = writer.parse(GRAY)

    def encode(parsed: object, chunk: np.ndarray) -> bytes:
        left = [n for n in chunk.shape if n != 1] or [1, 1]
        if len(left) != 2 and not accepts_all:
            raise ValueError(f"invalid data shape {left}")
        return writer.encode(gray, chunk.reshape(left if len(left) == 2 else (1, -1)))
    return encode


def test_an_encoder_that_drops_length_1_axes_is_named_by_a_probe() -> None:
    said = roots.encode_diagnosis(_squeezing(), None, np.zeros((1, 33), np.uint8), (8, 8))
    assert said is not None and said.cause is roots.SQUEEZE
    assert roots.squeezes(_squeezing(), None, ()) and not roots.squeezes(lambda p, c: b"", None, ())
    assert squeezed_frame(_squeezing(True)(None, np.zeros((1, 16, 48), np.uint8)), (1, 16, 48))
    assert not squeezed_frame(_squeezing(True)(None, np.zeros((16, 48), np.uint8)), (16, 48))


def test_a_refusal_that_starts_at_a_size_names_the_size() -> None:
    def capped(parsed: object, chunk: np.ndarray) -> bytes:
        if chunk.shape[1] > 1000:
            raise ValueError("too wide")
        return b"ok"

    said = roots.encode_diagnosis(capped, None, np.zeros((8, 5000), np.uint8), (8, 8))
    assert said is not None and said.cause is not None and said.cause.id == "encode.size-cap-width-1000"
    assert said.cause.words == "refuses widths above 1000 (the spec's limit is 65535)"
    assert roots.encode_diagnosis(lambda p, c: (_ for _ in ()).throw(ValueError("no")), None,
                                  np.zeros((8, 5000), np.uint8), (8, 8)) is None, "refused at every size: no cap"


# ------------------------------------------------------------------ the judge


def test_a_failure_without_a_cause_asks_the_explainer_once_and_a_broken_one_leaves_a_note() -> None:
    cause = Cause("encode", "planar-read", "JPEG-ENC-02", "words")
    asked: list[int] = []
    judge = Judge("codec", "case", ["JPEG-SUB-02"], "MUST")
    with judge.explaining(lambda: asked.append(1) or cause):
        judge.require(True, "JPEG-SUB-02", "holds")
        assert not asked, "asked only once something failed"
        with pytest.raises(pytest.fail.Exception):
            judge.require(False, "JPEG-SUB-02", "factors differ")
    assert asked == [1] and judge.cause is cause and judge.record()["cause"]["id"] == "encode.planar-read"
    broken = Judge("codec", "case", ["JPEG-SUB-02"], "MUST")
    with broken.explaining(lambda: 1 / 0), pytest.raises(pytest.fail.Exception):
        broken.require(False, "JPEG-SUB-02", "factors differ")
    assert broken.cause is None and any("the cause was not looked for: ZeroDivisionError" in m for m in broken.messages)
