"""One deviation, one finding: blocked cases, valid twins, diagnosed refusals and the report's root findings, unit by unit."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.corpus.cases import config_cases, differing_places
from zarr_jpeg_conformance.judging import roots
from zarr_jpeg_conformance.judging.checks import Calls
from zarr_jpeg_conformance.judging.verdict import Attempt, Judge, Outcome, attempt
from zarr_jpeg_conformance.report import model, wording
from zarr_jpeg_conformance.report.roots import root_findings, roots_text
from zarr_jpeg_conformance.suites import test_parse as parse_suite

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


def test_a_root_findings_row_names_six_of_its_cases_and_counts_the_rest() -> None:
    from zarr_jpeg_conformance.report.roots import RootFinding

    def cases_cell(n: int) -> str:
        found = RootFinding("JPEG-Q-01", "fail", "MUST", "words", cases=[f"case.{i}" for i in range(n)])
        return wording.root_rows([found], "impl")[0][4]

    assert cases_cell(1) == "case.0"
    assert cases_cell(6) == ", ".join(f"case.{i}" for i in range(6))
    assert cases_cell(9) == ", ".join(f"case.{i}" for i in range(6)) + " and 3 more"


def test_a_requirement_cell_counts_a_root_once() -> None:
    """Five cases failing under one finding are one root finding in the requirement table, not five."""
    cell = model.Cell()
    for i in range(5):
        cell.counts["fail"] += 1
        cell.cases.append(_result(f"round.{i}", "fail", finding="JPEG-Q-01"))
    cell.counts["pass"] += 3
    assert wording.cell_text(cell) == f"{wording.SYMBOL['fail']} 5 fail, 3 pass = 1 root finding"
    cell.cases.append(_result("round.x", "fail", finding="JPEG-DIM-01"))
    cell.counts["fail"] += 1
    assert wording.cell_text(cell).endswith("= 2 root findings")
    single = model.Cell()
    single.counts["fail"] += 1
    single.cases.append(_result("round.y", "fail", finding="JPEG-Q-01"))
    assert "root" not in wording.cell_text(single)  # one case, one finding: nothing to add


def test_a_default_taken_wrong_is_charged_to_the_default_and_a_flaky_decode_is_not() -> None:
    """JPEG-DCS-02 only where writing decoded_color_space out cures the decode and asking again as before does not."""
    codec = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr"}}
    right = np.full((2, 2, 3), 7, np.uint8)

    class TakesDefaultWrong:
        def parse(self, codec: Any) -> Any:
            return codec["configuration"].get("decoded_color_space", "ycbcr")

        def decode(self, parsed: Any, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
            return right.copy() if parsed == "rgb" else right + 1

    class WrongOnce(TakesDefaultWrong):
        def parse(self, codec: Any) -> Any:
            return "rgb"

    assert roots.default_cure(TakesDefaultWrong(), codec, b"", (2, 2, 3), lambda a: bool(np.array_equal(a, right)))[:2] == \
        roots.DEFAULT_TAKEN_WRONG
    assert roots.default_cure(WrongOnce(), codec, b"", (2, 2, 3), lambda a: bool(np.array_equal(a, right))) is None
    named = {"name": "jpeg", "configuration": {**codec["configuration"], "decoded_color_space": "rgb"}}
    assert roots.default_cure(TakesDefaultWrong(), named, b"", (2, 2, 3), lambda a: True) is None  # nothing omitted


def test_a_refusal_of_an_unaligned_chunk_for_its_size_is_not_charged_to_the_padding() -> None:
    """An encoder that refuses chunks over a size refuses the same samples padded to whole MCUs too: not JPEG-MCU-01."""
    def up_to_3000(parsed: object, chunk: np.ndarray) -> bytes:
        if chunk.size > 3000:
            raise ValueError("too many samples")
        return b"\xff\xd8"

    assert roots.encode_diagnosis(up_to_3000, None, np.zeros((41, 75), np.uint8), (8, 8)) is None


def _left(check: Any, judge: Judge) -> Judge:
    """The judge a check left: a failed, blocked or unsupported case ends its test, and its verdict is what it left."""
    with contextlib.suppress(pytest.fail.Exception, pytest.skip.Exception):
        check(judge)
    return judge


def _config_case(case_id: str) -> Any:
    return next(c for c in config_cases() if c.id == case_id)


def test_a_probe_the_parser_raises_an_error_on_is_not_accepted_so_the_refusal_keeps_the_cases_rule() -> None:
    """A probe counts as accepted only when the parse returns: an error on it (not a refusal) says nothing of what the
    refusal is about, so a refused valid configuration stays charged to its case's own rule."""
    def breaks_when_written_out(codec: Any) -> object:  # wrong: refuses subsampling omitted, errs on it written out
        if "subsampling" not in codec["configuration"]:
            raise ValueError("missing field 'subsampling'")
        raise RuntimeError("internal error")

    assert roots.parse_diagnosis(breaks_when_written_out, GRAY) is None
    case = _config_case("config.quality.min")
    for parse, finding in ((breaks_when_written_out, "JPEG-Q-01"), (_refuse_without_subsampling, "JPEG-SUB-05")):
        impl = SimpleNamespace(name="stand-in", parse=parse)
        judge = _left(lambda j, impl=impl: parse_suite.test_parse(impl, case, j),
                      Judge("stand-in", case.id, list(case.requirements), case.level, roots={}))
        assert (judge.outcome, judge.finding) == (Outcome.FAIL, finding), judge.messages


def _whole_mcus_only(parsed: object, chunk: np.ndarray) -> bytes:
    """Wrong: refuses a chunk that is not a whole number of 8x8 MCUs (the encoder must pad)."""
    if chunk.shape[0] % 8 or chunk.shape[1] % 8:
        raise ValueError("the chunk must be a whole number of MCUs")
    return b"\xff\xd8"


@pytest.mark.parametrize("shape", [(16, 13), (13, 16), (13, 13)])
def test_a_chunk_partial_along_either_axis_alone_refused_is_charged_to_the_padding(shape: tuple[int, int]) -> None:
    """JPEG-MCU-01 for a refusal of a chunk whose height, or width, or both, is no whole number of MCUs, where the
    same samples padded to whole MCUs are encoded; not for an encoder that refuses the padded samples too."""
    chunk = np.zeros(shape, np.uint8)
    assert roots.encode_diagnosis(_whole_mcus_only, None, chunk, (8, 8))[0] == "JPEG-MCU-01"
    assert roots.encode_diagnosis(lambda p, c: (_ for _ in ()).throw(ValueError("no")), None, chunk, (8, 8)) is None
    # Through the calls a suite makes: the refusal is the padding's fail, not the case's own rule.
    impl = SimpleNamespace(name="stand-in", parse=lambda codec: codec, encode=_whole_mcus_only)
    judge = _left(lambda j: Calls(j, impl, GRAY).write(chunk), Judge("stand-in", "round.x", ["JPEG-ECS-08"], "MUST", roots={}))
    assert (judge.outcome, judge.finding) == (Outcome.FAIL, "JPEG-MCU-01"), judge.messages


def test_an_optional_twin_that_raised_an_error_blocks_its_case_and_only_a_refused_one_makes_it_unsupported() -> None:
    """An optional (MAY) twin refused cleanly: the implementation lacks the feature, the invalid case is unsupported.
    One that raised an error (not a refusal) tells nothing of the feature: the case is blocked by the twin."""
    class Twin:
        id, level, requirements = "config.twin", "MAY", ("JPEG-X-02",)

    erred = _left(lambda j: roots.judge_twin(j, Twin(), lambda: Attempt(error=RuntimeError("boom")), "impl"),
                  Judge("impl", "config.bad", ["JPEG-Q-01"], "MUST"))
    assert (erred.outcome, erred.blocked_by) == (Outcome.BLOCKED, "config.twin"), erred.messages
    refused = _left(lambda j: roots.judge_twin(j, Twin(), lambda: Attempt(rejection=ValueError("no")), "impl"),
                    Judge("impl", "config.bad", ["JPEG-Q-01"], "MUST"))
    assert refused.outcome is Outcome.UNSUPPORTED and "JPEG-X-02" in refused.requirements, refused.messages
