"""tools/coverage counts corpus citations and what a report run reached, per requirement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zarr_jpeg_conformance.tools import coverage


def _record(impl: str, case: str, outcome: str, reqs: list[str]) -> str:
    return json.dumps({"format_version": 1, "implementation": impl, "case": case, "outcome": outcome, "level": "MUST",
                       "requirements": reqs, "message": "", "metrics": {}, "test": "t"})


def test_counts_cases_and_implementations_reached(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "a.jsonl").write_text("\n".join([
        _record("a", "c1", "pass", ["JPEG-GEN-01"]),
        _record("a", "c2", "unsupported", ["JPEG-ECS-06"]),
    ]))
    (tmp_path / "results" / "b.jsonl").write_text(_record("b", "c1", "fail", ["JPEG-GEN-01"]))
    (tmp_path / "results" / "corpus.jsonl").write_text(_record("-", "c3", "pass", ["JPEG-FMT-01"]))
    cases, reached, impls = coverage.run_citations(tmp_path)
    assert impls == {"a", "b"}
    assert cases["JPEG-GEN-01"] == {"c1"} and reached["JPEG-GEN-01"] == {"a", "b"}
    assert cases["JPEG-ECS-06"] == {"c2"} and not reached.get("JPEG-ECS-06"), "unsupported reaches nobody"
    assert cases["JPEG-FMT-01"] == {"c3"} and not reached.get("JPEG-FMT-01"), "the corpus's own checks are no implementation"
    assert coverage.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "JPEG-GEN-01" in out and "implementations reached (of 2)" in out and "cited by no result:" in out


def test_corpus_citations_cover_the_corpus() -> None:
    counted = coverage.corpus_citations()
    assert counted["JPEG-DEC-01"] > 100 and counted["JPEG-Q-01"] > 0


def test_a_folder_without_results_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        coverage.main([str(tmp_path)])
