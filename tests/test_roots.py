"""One deviation, one finding: blocked cases, valid twins, diagnosed refusals and the report's root findings, unit by unit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.corpus.cases import differing_places
from zarr_jpeg_conformance.judging import roots
from zarr_jpeg_conformance.judging.verdict import Attempt, Judge, Outcome, attempt
from zarr_jpeg_conformance.report import model, wording
from zarr_jpeg_conformance.report.roots import root_findings, roots_text

GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}


def _refuse_without_subsampling(codec: Any) -> object:
    if "subsampling" not in codec["configuration"]:
        raise ValueError("missing field 'subsampling'")
    return codec


def test_a_refusal_of_an_omitted_subsampling_is_charged_to_its_default() -> None:
    assert roots.parse_diagnosis(_refuse_without_subsampling, GRAY)[0] == "JPEG-SUB-05"
    # One that refuses everything gets no diagnosis: its case's own rule is cited.
    assert roots.parse_diagnosis(lambda c: (_ for _ in ()).throw(ValueError("no")), GRAY) is None


def test_a_refusal_of_quality_is_charged_to_the_range() -> None:
    def picky(codec: Any) -> object:
        if codec["configuration"]["quality"] != 90:
            raise ValueError("quality")
        return codec

    codec = {"name": "jpeg", "configuration": {**GRAY["configuration"], "quality": 1}}
    assert roots.parse_diagnosis(picky, codec)[0] == "JPEG-Q-01"


def test_a_refusal_of_a_large_chunk_is_charged_to_the_size_limit() -> None:
    def small_only(parsed: object, chunk: np.ndarray) -> bytes:
        if max(chunk.shape[:2]) > 60000 or chunk.shape[0] % 8 or chunk.shape[1] % 8:
            raise ValueError("too large, or not whole blocks")
        return b"\xff\xd8"

    assert roots.encode_diagnosis(small_only, None, np.zeros((8, 65500), np.uint8), (8, 8))[0] == "JPEG-DIM-02"
    assert roots.encode_diagnosis(small_only, None, np.zeros((5, 7), np.uint8), (8, 8))[0] == "JPEG-MCU-01"

    def nothing(parsed: object, chunk: np.ndarray) -> bytes:
        raise ValueError("no")

    assert roots.encode_diagnosis(nothing, None, np.zeros((32, 32), np.uint8), (8, 8)) is None

    def flat_only(parsed: object, chunk: np.ndarray) -> bytes:
        if chunk.ndim == 3 and chunk.shape[2] == 1:
            raise ValueError("no channel axis, please")
        return b"\xff\xd8"

    assert roots.encode_diagnosis(flat_only, None, np.zeros((32, 32, 1), np.uint8), (8, 8))[0] == "JPEG-SHP-03"


def test_the_first_case_meeting_a_failure_is_its_root_and_the_next_is_blocked() -> None:
    registry: dict[tuple[str, ...], str] = {}
    refused: Attempt[Any] = attempt(lambda: (_ for _ in ()).throw(ValueError("no")))
    first = Judge("impl", "case.a", ["JPEG-ECS-08"], "MUST", roots=registry)
    roots.block_or_root(first, ("parse", "impl", "x"), None, "parse", refused)  # returns: the root
    second = Judge("impl", "case.b", ["JPEG-ECS-08"], "MUST", roots=registry)
    with pytest.raises(pytest.skip.Exception, match=r"blocked by case\.a"):
        roots.block_or_root(second, ("parse", "impl", "x"), None, "parse", refused)
    assert second.outcome is Outcome.BLOCKED and second.record()["blocked_by"] == "case.a"
    # A case of the corpus that judges the precondition itself is the root, whoever met it first.
    third = Judge("impl", "case.c", [], "MUST", roots={})
    with pytest.raises(pytest.skip.Exception, match=r"blocked by config\.own"):
        roots.block_or_root(third, ("parse", "impl", "y"), "config.own", "parse", refused)


def test_a_rejection_counts_only_where_the_twin_is_accepted() -> None:
    class Twin:
        id, level, requirements = "config.twin", "MUST", ("JPEG-Q-01",)

    accepted = Judge("impl", "config.bad", ["JPEG-Q-01"], "MUST")
    roots.judge_twin(accepted, Twin(), lambda: Attempt(value=1), "impl")  # returns: the rejection counts
    assert accepted.outcome is Outcome.PASS
    refused = Judge("impl", "config.bad", ["JPEG-Q-01"], "MUST")
    with pytest.raises(pytest.skip.Exception, match=r"valid twin config\.twin as well"):
        roots.judge_twin(refused, Twin(), lambda: Attempt(rejection=ValueError("no")), "impl")
    assert refused.outcome is Outcome.BLOCKED


def test_a_twin_is_one_place_away() -> None:
    assert differing_places(GRAY, {**GRAY, "configuration": {**GRAY["configuration"], "quality": 0}}) == ["configuration.quality"]
    assert differing_places(GRAY, {"id": "jpeg", "configuration": GRAY["configuration"]}) == ["name -> id"]
    assert differing_places(GRAY, {"name": "jpeg", "configuration": {}}) == ["configuration"]
    assert len(differing_places(GRAY, {"name": "jpeg", "configuration": {"quality": 1}})) == 2


def _result(case: str, outcome: str, **kw: Any) -> model.CaseResult:
    return model.CaseResult("impl", case, outcome, "MUST", tuple(kw.pop("requirements", ("JPEG-Q-01",))),
                            kw.pop("message", f"{outcome}: x"), {}, **kw)


def test_root_findings_count_a_deviation_once_and_the_cases_it_blocks() -> None:
    cases = {c.case: c for c in [
        _result("config.a", "fail", finding="JPEG-SUB-05"),
        _result("config.b", "fail", finding="JPEG-SUB-05"),
        _result("round.c", "blocked", blocked_by="config.a"),
        _result("round.d", "blocked", blocked_by="round.g"),
        _result("round.g", "blocked", blocked_by="config.b"),  # a chain: counted under its root
        _result("chunk.e", "error", finding="encode: RuntimeError"),
        _result("chunk.f", "pass"),
    ]}
    found = root_findings(cases)
    assert [(f.label, f.cases, f.blocked) for f in found] == [
        ("JPEG-SUB-05", ["config.a", "config.b"], 3), ("error (encode: RuntimeError)", ["chunk.e"], 0)]
    assert roots_text(found, 3) == "2 root findings (JPEG-SUB-05, error (encode: RuntimeError)); 3 cases blocked"


def test_the_verdict_names_the_roots_and_a_blocked_case_is_no_failure() -> None:
    results = [_result("config.a", "fail", finding="JPEG-SUB-05"), _result("round.c", "blocked", blocked_by="config.a")]
    m = model.build(results)
    impl = m.implementations[0]
    assert wording.verdict(m, impl) == "1 root finding (JPEG-SUB-05); 1 case blocked; does not conform: 1 fail"
    doc = model.to_json(m)["implementations"][0]["root_findings"]
    assert doc[0]["requirement"] == "JPEG-SUB-05" and doc[0]["blocked"] == 1
