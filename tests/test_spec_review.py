"""The spec review: its coverage of the registry, its proposals' checks, the costs and corpus consequences it
computes, the committed docs/spec-review.md against its committed evidence, the command and the pages' section.

Most tests build a matrix from a few hand-written results, so what each cost must be is known exactly.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.corpus import registry
from zarr_jpeg_conformance.corpus.images import EDGE_BAND, edge_errors
from zarr_jpeg_conformance.corpus.streams import stream_cases
from zarr_jpeg_conformance.report import model, render_html, render_md, review_changes, review_evidence, spec_review
from zarr_jpeg_conformance.report.__main__ import main
from zarr_jpeg_conformance.report.review_changes import Change
from zarr_jpeg_conformance.report.saved import ReportFileError

ROOT = Path(__file__).resolve().parents[1]
RANDOM = "stream.malformed.random-bytes"
BOTH = "stream.foreign.jfif-app14-transform0"


def _cite(rid: str, outcome: str, observed: str) -> str:
    req = registry.requirements()[rid]
    return f'{outcome}: [{rid} {req.level}] "{req.text}"\n    observed: {observed}'


def _result(impl: str, case: str, outcome: str, reqs: tuple[str, ...], message: str = "", **metrics: Any) -> model.CaseResult:
    return model.CaseResult(impl, case, outcome, "MUST", reqs, message, metrics, test="test_decode_streams.py::test_x[x]")


def _matrix() -> model.Matrix:
    """Row a returns an array for random bytes (X-22 warn) and lets JFIF win (ECS-12 fail); row b rejects the
    random bytes and fails the JFIF case on another rule (DEC-01); row c passes both; row d only returns an array
    for the random bytes (and so meets every MUST)."""
    results = [
        _result("a", RANDOM, "warn", ("JPEG-X-22", "JPEG-DEC-01"), _cite("JPEG-X-22", "warn", "returned an array")),
        _result("d", RANDOM, "warn", ("JPEG-X-22", "JPEG-DEC-01"), _cite("JPEG-X-22", "warn", "returned an array")),
        _result("b", RANDOM, "pass", ("JPEG-X-22", "JPEG-DEC-01"), "", rejection="ValueError: not a JPEG"),
        _result("c", RANDOM, "pass", ("JPEG-X-22", "JPEG-DEC-01"), "", rejection="ValueError: not a JPEG"),
        _result("a", BOTH, "fail", ("JPEG-ECS-12", "JPEG-DEC-01"), _cite("JPEG-ECS-12", "fail", "converted")),
        _result("b", BOTH, "fail", ("JPEG-ECS-12", "JPEG-DEC-01"), _cite("JPEG-DEC-01", "fail", "follows the configuration")),
        _result("c", BOTH, "pass", ("JPEG-ECS-12", "JPEG-DEC-01")),
        _result("c", "store.boundary", "pass", ("JPEG-MCU-01",), "", edge_mean_error=6.8, interior_mean_error=5.0),
    ]
    impls = [model.Implementation(name=n, spec=n, kind="library", language="Rust", roles=("decode",)) for n in "abcd"]
    return model.build(results, implementations=impls)


@pytest.fixture(scope="module")
def evidence() -> review_evidence.Evidence:
    return review_evidence.from_matrix(_matrix(), spec_review.metric_cases())


# ---------------------------------------------------------------- coverage of the registry


def test_every_note_and_interpretation_has_a_proposal() -> None:
    """A requirement with a spec note, or of kind interpretation, with no entry in report/spec_proposals.json fails here."""
    assert spec_review.missing() == []
    covered = {e.id for e in spec_review.entries()}
    notes = set(model.load_note_texts())
    interpretations = {rid for rid, r in registry.requirements().items() if r.kind == "interpretation"}
    assert notes | interpretations <= covered


def test_a_requirement_added_later_shows_as_missing_and_the_review_still_renders(monkeypatch: pytest.MonkeyPatch,
                                                                                 evidence: review_evidence.Evidence) -> None:
    """An interpretation the lead adds to the registry needs only its proposal text: until then the review says so."""
    reqs = dict(registry.requirements())
    reqs["JPEG-X-99"] = registry.Requirement("JPEG-X-99", "SHOULD", "A decoder SHOULD do the new thing.", "Interpretation",
                                             ("decode",), "interpretation")
    monkeypatch.setattr(spec_review, "requirements", lambda: reqs)
    spec_review.entries.cache_clear()
    try:
        assert spec_review.missing() == ["JPEG-X-99"]
        text = spec_review.render(evidence)
        assert "### JPEG-X-99" in text and "No proposal has been written for JPEG-X-99 yet" in text
    finally:
        spec_review.entries.cache_clear()


def test_entries_follow_the_spec_and_interpretations_follow_the_words_they_read() -> None:
    order = list(registry.requirements())
    entries = spec_review.entries()
    positions = [order.index(e.anchor) for e in entries]
    assert positions == sorted(positions)
    for e in entries:
        if e.interpretation:
            assert registry.requirements()[e.anchor].kind != "interpretation", e.id


# ---------------------------------------------------------------- the proposals' checks

_VALID = {
    "anchor": "JPEG-DEC-01",
    "problem": "p.",
    "reading": {"direction": "stricter", "reason": "r."},
    "options": [{"label": "A", "summary": "s", "changes": []},
                {"label": "B", "summary": "s", "changes": [{"requirement": "JPEG-X-22", "level": "MUST"}]}],
    "proposal": {"option": "B", "action": "insert after", "at": "The JPEG bitstream is decoded to its uint8 samples in raster order.",
                 "text": "A decoder MUST reject it.", "level": "MUST", "why": "w."},
}


def _broken(path: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(_VALID)
    *parents, last = path.split("/")
    node: Any = doc
    for p in parents:
        node = node[int(p)] if p.isdigit() else node[p]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return doc


def test_a_valid_entry_loads() -> None:
    entry = spec_review._entry("JPEG-X-22", {**_VALID, "title": "t"}, None)
    assert entry.proposal is not None and entry.option("B").changes[0].outcomes == {"warn": "fail"}


@pytest.mark.parametrize(("rid", "path", "value", "says"), [
    ("JPEG-X-98", "problem", "p.", "not a requirement of the registry"),
    ("JPEG-X-22", "anchor", None, "needs an anchor"),
    ("JPEG-X-22", "anchor", "JPEG-X-07", "no spec requirement"),
    ("JPEG-X-22", "reading", None, "needs a reading"),
    ("JPEG-X-22", "proposal/at", "Words the spec does not have.", "not the spec's words"),
    ("JPEG-X-22", "proposal/unlisted", True, "drop 'unlisted'"),
    ("JPEG-X-22", "proposal/text", "A decoder should reject it.", "does not say MUST"),
    ("JPEG-X-22", "proposal/option", "C", "not among its options"),
    ("JPEG-X-22", "options/1/label", "A", "given twice"),
    ("JPEG-X-22", "options/1/changes/0/requirement", "JPEG-X-97", "JPEG-X-97 is not in the registry"),
    ("JPEG-X-22", "options/1/changes/0/level", "MAY", "say with 'outcomes'"),
])
def test_an_entry_that_does_not_fit_the_registry_is_refused_naming_the_place(rid: str, path: str, value: Any, says: str) -> None:
    doc = {**_broken(path, value), "title": "t"}
    with pytest.raises(spec_review.ProposalError, match=says) as err:
        spec_review._entry(rid, doc, None)
    assert rid in str(err.value)


def test_the_committed_proposals_fit_their_schema() -> None:
    data = spec_review.load_proposals()
    assert data and all(k.startswith("JPEG-") for k in data)


# ---------------------------------------------------------------- costs and consequences


def test_a_level_raised_to_must_fails_the_rows_it_warned_and_flips_their_verdict(evidence: review_evidence.Evidence) -> None:
    cost = review_changes.cost(evidence, [Change.of({"requirement": "JPEG-X-22", "level": "MUST"}, "t")])
    assert [(m.row, m.key, m.before, m.after) for m in cost.moved] == [("a", RANDOM, "warn", "fail"), ("d", RANDOM, "warn", "fail")]
    assert cost.newly_failing == ["d"] and cost.newly_conforming == []  # a fails already (ECS-12)
    both = review_changes.cost(evidence, [Change.of({"requirement": "JPEG-X-22", "level": "MUST"}, "t"),
                                          Change.of({"requirement": "JPEG-ECS-12", "cases": [BOTH], "outcomes": {"fail": "warn"}}, "t")])
    assert both.newly_failing == ["d"] and both.newly_conforming == []  # a's ECS-12 failure becomes a warning, X-22 fails it


def test_a_change_leaves_a_result_charged_to_another_rule_alone(evidence: review_evidence.Evidence) -> None:
    """Row b fails the JFIF case on DEC-01, not on ECS-12: softening ECS-12 does not lift it."""
    cost = review_changes.cost(evidence, [Change.of({"requirement": "JPEG-ECS-12", "cases": [BOTH], "outcomes": {"fail": "warn"},
                                                     "level": "SHOULD"}, "t")])
    assert [(m.row, m.after) for m in cost.moved] == [("a", "warn")]
    assert cost.newly_conforming == ["a"]


def test_did_selects_refusals_or_returns(evidence: review_evidence.Evidence) -> None:
    both_ways = {"pass": "unsupported", "warn": "fail"}
    rejected = Change.of({"requirement": "JPEG-X-22", "did": "rejected", "outcomes": both_ways}, "t")
    decoded = Change.of({"requirement": "JPEG-X-22", "did": "decoded", "outcomes": both_ways}, "t")
    assert {(m.row, m.after) for m in review_changes.cost(evidence, [rejected]).moved} == {("b", "unsupported"), ("c", "unsupported")}
    assert {(m.row, m.after) for m in review_changes.cost(evidence, [decoded]).moved} == {("a", "fail"), ("d", "fail")}


def test_a_case_named_by_pattern_that_does_not_cite_the_rule_changes_as_a_whole(evidence: review_evidence.Evidence) -> None:
    change = Change.of({"requirement": "JPEG-X-05", "cases": [BOTH], "outcomes": {"fail": "pass"}}, "t")
    assert {(m.row, m.after) for m in review_changes.cost(evidence, [change]).moved} == {("a", "pass"), ("b", "pass")}


def test_the_corpus_cases_a_proposal_changes_come_from_the_corpus() -> None:
    must = [Change.of({"requirement": "JPEG-X-22", "level": "MUST"}, "t")]
    found = review_changes.consequences(must, review_changes.all_cases(None), "t")
    expected = {c.id for c in stream_cases() if "JPEG-X-22" in c.requirements and c.level == "SHOULD"}
    assert expected and {c.case.id for c in found} == expected
    assert {(c.level, c.expect) for c in found} == {("MUST", "reject")}
    reject = [Change.of({"requirement": "JPEG-X-08", "did": "decoded", "outcomes": {"pass": "warn"}, "level": "SHOULD",
                         "expect": "reject"}, "t")]
    moved = review_changes.consequences(reject, review_changes.all_cases(None), "t")
    assert moved and all(c.case.expect == "decode-or-reject" and c.expect == "reject" for c in moved)
    wrong = [Change.of({"requirement": "JPEG-X-22", "expect": "valid"}, "t")]
    with pytest.raises(review_changes.ChangeError, match="does not apply to stream case"):
        review_changes.consequences(wrong, review_changes.all_cases(None), "t")


def test_evidence_shows_what_each_row_got_on_the_entry_rule(evidence: review_evidence.Evidence) -> None:
    cases = evidence.select("JPEG-ECS-12", [], True)
    assert review_evidence.profile(evidence, cases, "JPEG-ECS-12") == {
        "a": {"fail": 1}, "b": {"fail" + review_evidence.ELSEWHERE: 1}, "c": {"pass": 1}}
    assert review_evidence.profile(evidence, cases, None)["b"] == {"fail": 1}


# ---------------------------------------------------------------- the evidence file and the committed review


def test_the_reduced_evidence_reads_back_as_it_was_written(evidence: review_evidence.Evidence) -> None:
    again = review_evidence.from_json(json.loads(review_evidence.dumps(evidence)), "e.json")
    assert again.rows == evidence.rows and again.cases == evidence.cases and len(again.rows) == 4
    assert again.cases["store.boundary"].rows["c"].metrics == {"edge_mean_error": 6.8, "interior_mean_error": 5.0}


@pytest.mark.parametrize(("damage", "says"), [
    (lambda d: d["cases"][RANDOM]["results"].__setitem__(0, "warn JPEG-X-22"), "cases/stream.malformed.random-bytes/results/0"),
    (lambda d: d["cases"][RANDOM]["results"].pop(), "4 rows"),
    (lambda d: d.pop("rows"), "'rows' is a required property"),
])
def test_a_damaged_evidence_file_is_refused_naming_the_place(evidence: review_evidence.Evidence, damage: Any, says: str) -> None:
    doc = json.loads(review_evidence.dumps(evidence))
    damage(doc)
    with pytest.raises(ReportFileError, match=says):
        review_evidence.from_json(doc, "e.json")


def test_docs_spec_review_is_what_the_command_writes_from_the_committed_evidence() -> None:
    """docs/spec-review.md cannot go stale: regenerate it with the command its header names."""
    ev = review_evidence.load(ROOT / spec_review.EVIDENCE)
    written = (ROOT / spec_review.DOC).read_text(encoding="utf-8")
    assert spec_review.render(ev) == written, f"docs/spec-review.md is stale: run {spec_review.REGENERATE}"
    assert spec_review.REGENERATE in written.splitlines()[2]


def test_the_committed_review_quotes_its_evidence_not_typed_numbers() -> None:
    """The issue's numbers come from the evidence: rows failing the JFIF + APP14 case, the boundary store's errors."""
    ev = review_evidence.load(ROOT / spec_review.EVIDENCE)
    both = [c for c in ev.cases.values() if c.case.startswith(BOTH)]
    failing = sorted({n for c in both for n, r in c.rows.items() if r.outcome == "fail"})
    text = (ROOT / spec_review.DOC).read_text(encoding="utf-8")
    section = text[text.index("### JPEG-ECS-12"):text.index("###", text.index("### JPEG-ECS-12") + 4)]
    assert failing and all(n in section for n in failing)
    edges = [r.metrics["edge_mean_error"] for c in ev.cases.values() if c.case == "store.boundary"
             for r in c.rows.values() if "edge_mean_error" in r.metrics]
    assert edges, "the boundary store's edge errors are missing from the evidence"
    commonest = max(set(edges), key=edges.count)
    assert f"| edge_mean_error | {round(commonest, 2):g} (" in text


# ---------------------------------------------------------------- the command


def _matrix_file(tmp_path: Path) -> Path:
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps(model.to_json(_matrix())), encoding="utf-8")
    return path


def test_the_command_writes_the_review_and_evidence_that_regenerates_it(tmp_path: Path) -> None:
    source = _matrix_file(tmp_path)
    out, ev = tmp_path / "review.md", tmp_path / "evidence.json"
    assert main(["spec-review", str(source), "--out", str(out), "--evidence-out", str(ev)]) == 0
    again = tmp_path / "again.md"
    assert main(["spec-review", str(ev), "--out", str(again)]) == 0
    assert out.read_text(encoding="utf-8") == again.read_text(encoding="utf-8")
    text = out.read_text(encoding="utf-8")
    assert "### JPEG-X-22" in text and "a, d: warn → fail ×1" in text and "would no longer meet every MUST: d" in text


@pytest.mark.parametrize("problem", ["missing", "not-json", "same-file", "foreign-json"])
def test_the_command_refuses_bad_input_with_a_message_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 problem: str) -> None:
    source = _matrix_file(tmp_path)
    out = tmp_path / "review.md"
    if problem == "missing":
        source = tmp_path / "nowhere.json"
    elif problem == "not-json":
        source.write_text("{", encoding="utf-8")
    elif problem == "same-file":
        out = source
    else:
        source.write_text(json.dumps({"format_version": 2, "cases": []}), encoding="utf-8")
    before = source.read_bytes() if source.exists() else None
    assert main(["spec-review", str(source), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("spec-review: ") and "Traceback" not in err
    assert (source.read_bytes() if source.exists() else None) == before
    assert problem == "same-file" or not out.exists()


# ---------------------------------------------------------------- the pages


def test_the_matrix_pages_hold_the_review_summary() -> None:
    m = _matrix()
    md, html = render_md.render(m), render_html.render(m)
    assert "## Spec review" in md and spec_review.DOC in md
    for e in spec_review.entries():
        assert f"| {e.id} |" in md, e.id
        assert f"<td>{e.id}</td>" in html, e.id
    assert 'href="#spec-review"' in html and 'id="spec-review"' in html


# ---------------------------------------------------------------- the boundary measurement


def test_edge_errors_measure_the_array_edge_inside_boundary_chunks_apart() -> None:
    expected = np.zeros((20, 30, 3), np.uint8)
    actual = expected.copy()
    actual[-EDGE_BAND:, :, 1] = 8  # the array's last rows, one channel
    found = edge_errors(expected, actual, (16, 16))
    assert found == {"edge_mean_error": round(8 * 30 * EDGE_BAND / (30 * EDGE_BAND + 20 * EDGE_BAND - EDGE_BAND ** 2), 3),
                     "boundary_mean_error": 0.0, "interior_mean_error": 0.0}
    assert edge_errors(expected, actual, (10, 15)) == {}  # the array ends on chunk boundaries: no fill values
    assert edge_errors(expected[..., 0], actual[..., 1], (16, 16))["edge_mean_error"] > 0  # 2D arrays too
