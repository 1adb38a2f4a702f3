"""report known-failures: the known-failures file of an implementation, written from a run's results.

What it writes is what --known-failures reads (judging/known_failures.py); the CI recipes' example
repositories carry files it wrote, and tests/test_ci_recipe_runs.py runs them green.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zarr_jpeg_conformance.corpus.registry import requirements
from zarr_jpeg_conformance.judging.known_failures import load_known_failures
from zarr_jpeg_conformance.report.__main__ import main


def _line(impl: str, case: str, outcome: str, test: str = "", **extra: object) -> str:
    message = f"{outcome}: [JPEG-Q-01 MUST] \"quality\"\n    observed: accepted quality {case}" if outcome != "pass" else ""
    return json.dumps({"format_version": 1, "implementation": impl, "case": case, "outcome": outcome, "level": "MUST",
                       "requirements": ["JPEG-Q-01"], "message": message, "metrics": {},
                       "test": test or f"suites/test_parse.py::test_parse[{impl}-{case}]", **extra})


def _results(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _written(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, object]:
    assert main(["known-failures", *argv]) == 0
    doc: dict[str, object] = json.loads(capsys.readouterr().out)
    return doc


def test_every_failing_case_and_nothing_else_is_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _results(
        tmp_path,
        _line("my-codec", "config.quality.zero", "fail", finding="JPEG-Q-01"),
        _line("my-codec", "stream.malformed.soi-only", "error", finding="decode: RuntimeError"),
        _line("my-codec", "stream.malformed.soi-eoi", "crash"),
        _line("my-codec", "stream.malformed.truncated-10", "timeout"),
        _line("my-codec", "config.quality.min", "pass"),
        _line("my-codec", "config.decoded-color-space.rgb-rgb", "unsupported"),
        _line("my-codec", "config.decoded-color-space.rgb-ycbcr", "warn"),
        _line("my-codec", "config.decoded-color-space.rgb-ycbcr-444", "blocked", blocked_by="config.quality.zero"),
        _line("-", "config.decoded-color-space.ycbcr-ycbcr", "fail"),
    )
    doc = _written(capsys, [str(results)])
    assert doc["implementation"] == "my-codec"
    entries = doc["known_failures"]
    assert [e["case"] for e in entries] == [  # type: ignore[attr-defined]
        "config.quality.zero", "stream.malformed.soi-only", "stream.malformed.soi-eoi", "stream.malformed.truncated-10"]
    assert entries[0] == {"case": "config.quality.zero", "reason": "JPEG-Q-01: accepted quality config.quality.zero"}  # type: ignore[index]
    assert entries[1]["reason"].startswith("error (decode: RuntimeError): ")  # type: ignore[index]
    listed = tmp_path / "known.json"
    listed.write_text(json.dumps(doc))
    assert {case for _, case in load_known_failures([str(listed)])} == {e["case"] for e in entries}  # type: ignore[attr-defined]


def test_writing_again_keeps_reasons_and_issues_of_what_still_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "known.json"
    out.write_text(json.dumps({"implementation": "my-codec", "known_failures": [
        {"case": "config.quality.zero", "reason": "our parser takes 0 as 1", "issue": "https://example.org/issues/7"},
        {"case": "config.quality.min", "reason": "fixed since"},
    ]}))
    results = _results(tmp_path, _line("my-codec", "config.quality.zero", "fail"), _line("my-codec", "config.quality.min", "pass"),
                       _line("my-codec", "config.quality.max", "fail"))
    assert main(["known-failures", str(results), "--out", str(out)]) == 0
    assert "2 known failure(s) of my-codec in" in (err := capsys.readouterr().err) and "(1 kept, 1 new, 1 removed)" in err
    assert json.loads(out.read_text())["known_failures"] == [
        {"case": "config.quality.zero", "reason": "our parser takes 0 as 1", "issue": "https://example.org/issues/7"},
        {"case": "config.quality.max", "reason": "JPEG-Q-01: accepted quality config.quality.max"},
    ]


def test_a_case_that_also_passes_is_not_listed_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Listed, its pass in another test would be an unexpected pass and fail the run it was to make green."""
    results = _results(tmp_path, _line("my-codec", "store.ng-cloudvolume-rgb", "fail", test="suites/test_stores.py::test_read[x]"),
                       _line("my-codec", "store.ng-cloudvolume-rgb", "pass", test="suites/test_stores.py::test_write[x]"))
    assert main(["known-failures", str(results)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["known_failures"] == []
    assert ("not listed: store.ng-cloudvolume-rgb: fails in suites/test_stores.py::test_read[x] and holds in "
            "suites/test_stores.py::test_write[x]") in captured.err


def test_which_implementation_is_asked_when_there_are_several(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _results(tmp_path, _line("a", "config.quality.zero", "fail"), _line("b", "config.quality.max", "fail"))
    assert main(["known-failures", str(results)]) == 2
    assert "the results hold 2 implementations (a, b): name one with --impl" in capsys.readouterr().err
    assert [e["case"] for e in _written(capsys, [str(results), "--impl", "b"])["known_failures"]] == ["config.quality.max"]  # type: ignore[attr-defined]
    assert main(["known-failures", str(results), "--impl", "c"]) == 2
    assert "no results of 'c': the results hold a, b" in capsys.readouterr().err


@pytest.mark.parametrize("existing", ['{"implementation": "my-codec"}', "not json",
                                      '{"implementation": "other", "known_failures": []}'])
def test_an_out_file_that_is_not_this_list_is_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str], existing: str) -> None:
    out = tmp_path / "known.json"
    out.write_text(existing)
    results = _results(tmp_path, _line("my-codec", "config.quality.zero", "fail"))
    assert main(["known-failures", str(results), "--out", str(out)]) == 2
    assert "not overwritten" in capsys.readouterr().err
    assert out.read_text() == existing


def test_a_reason_is_the_rule_and_what_was_observed_in_at_most_240_characters(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """One line a reader can take in; where the message says nothing was "observed", its first line of its own."""
    words = requirements()["JPEG-Q-01"].text
    fits = "x" * (240 - len("JPEG-Q-01: "))
    results = _results(
        tmp_path,
        _line("my-codec", "config.quality.zero", "fail", message=f"fail: [JPEG-Q-01 MUST] \"{words}\"\n    observed: {fits}"),
        _line("my-codec", "config.quality.max", "fail", message=f"fail: [JPEG-Q-01 MUST] \"{words}\"\n    observed: {fits}y"),
        _line("my-codec", "config.quality.min", "fail", message=f"fail: [JPEG-Q-01 MUST] \"{words}\"\n    it took quality 0 as 1"),
    )
    reasons = [e["reason"] for e in _written(capsys, [str(results)])["known_failures"]]  # type: ignore[attr-defined]
    assert reasons[0] == f"JPEG-Q-01: {fits}" and len(reasons[0]) == 240
    assert reasons[1] == f"JPEG-Q-01: {fits[:-1]}…" and len(reasons[1]) == 240
    assert reasons[2] == "JPEG-Q-01: it took quality 0 as 1"


def test_the_file_is_written_for_people_to_edit_and_a_failed_write_is_said(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    results = _results(tmp_path, _line("my-codec", "config.quality.zero", "fail"))
    assert main(["known-failures", str(results)]) == 0
    assert capsys.readouterr().out.startswith('{\n  "implementation": "my-codec",\n  "known_failures": [\n    {\n      "case"')
    nowhere = tmp_path / "no-such-folder" / "known.json"
    assert main(["known-failures", str(results), "--out", str(nowhere)]) == 2
    assert f"known-failures: cannot write {nowhere}: " in capsys.readouterr().err and not nowhere.parent.exists()
