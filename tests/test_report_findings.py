"""report.findings: a results file's root findings, each once, as a codec's CI prints them."""

from __future__ import annotations

import json
from pathlib import Path

from zarr_jpeg_conformance.report.findings import main


def _line(impl: str, case: str, outcome: str, **extra: object) -> str:
    return json.dumps({"format_version": 1, "implementation": impl, "case": case, "outcome": outcome, "level": "MUST",
                       "requirements": ["JPEG-SUB-05"], "message": f"{outcome}: [JPEG-SUB-05] observed: refused", "metrics": {},
                       "test": f"suites/test_bitstream.py::test_stream_structure[{case}]", **extra})


def test_findings_name_each_root_once_with_what_it_blocks(tmp_path: Path, capsys: object) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join([
        _line("my-codec", "config.quality.min", "fail", finding="JPEG-SUB-05"),
        _line("my-codec", "bitstream.stream_structure[gray-q1]", "blocked", blocked_by="config.quality.min"),
        _line("my-codec", "bitstream.stream_structure[gray-q50]", "blocked", blocked_by="config.quality.min"),
        _line("my-codec", "bitstream.stream_structure[gray-q100]", "blocked", blocked_by="config.quality.min"),
        _line("my-codec", "bitstream.stream_structure[gray-q90]", "pass"),
        _line("-", "config.quality.max", "pass"),
    ]) + "\n")
    assert main([str(results)]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    lines = out.splitlines()
    assert lines[0] == "my-codec: 1 root finding (JPEG-SUB-05); 3 cases blocked"
    assert lines[1] == "  1. JPEG-SUB-05 MUST: 1 case(s), blocks 3: config.quality.min", "numbered: report repro takes the number"
    assert lines[2].startswith("      With encoded_color_space: rgb or grayscale, no subsampling is applied"), "the spec's words, whole"
    assert lines[3] == "      cause: cause not named: the cases are grouped by the rule they break (JPEG-SUB-05)"
    assert lines[4] == "      [JPEG-SUB-05] observed: refused", "then what was observed"
    assert not any(line.startswith("-:") for line in lines), "the corpus's own checks are no implementation"


def test_an_unreadable_file_is_exit_2(tmp_path: Path, capsys: object) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text('{"implementation": "x"}\n')
    assert main([str(results)]) == 2
    assert "cannot read the results" in capsys.readouterr().err  # type: ignore[attr-defined]


def test_a_finding_shows_three_cases_and_counts_the_rest(tmp_path: Path, capsys: object) -> None:
    results = tmp_path / "results.jsonl"
    cases = ["config.quality.min", "config.quality.max", "config.quality.zero", "config.name.jpeg"]
    for shown in (3, 4):
        results.write_text("\n".join(_line("my-codec", c, "fail", finding="JPEG-SUB-05") for c in cases[:shown]) + "\n")
        assert main([str(results)]) == 0
        lines = capsys.readouterr().out.splitlines()  # type: ignore[attr-defined]
        more = " and 1 more" if shown > 3 else ""
        assert lines[1] == f"  1. JPEG-SUB-05 MUST: {shown} case(s), blocks 0: {', '.join(cases[:3])}{more}"


def test_a_missing_or_empty_results_file_is_said_plainly(tmp_path: Path, capsys: object) -> None:
    """A CI whose suites did not run (the harness did not start, a -k that selects nothing) gets words, not silence."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main([str(tmp_path / "missing.jsonl")]) == 2
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert out.startswith(f"{tmp_path / 'missing.jsonl'}: no results file: the suites did not run"), out
    assert main([str(empty)]) == 2
    assert capsys.readouterr().out.startswith(f"{empty}: empty: no case ran"), "on stdout, which the CI step keeps"  # type: ignore[attr-defined]
    good = tmp_path / "results.jsonl"
    good.write_text(_line("my-codec", "config.quality.min", "fail", finding="JPEG-SUB-05") + "\n")
    assert main([str(good), str(empty)]) == 2, "one unusable file of several is still said, and fails the step"
    lines = capsys.readouterr().out.splitlines()  # type: ignore[attr-defined]
    assert lines[0].startswith("my-codec: 1 root finding") and lines[-1].startswith(f"{empty}: empty"), lines


def test_known_failures_are_marked(tmp_path: Path, capsys: object) -> None:
    """A finding whose every case the run's --known-failures list holds is marked; one that is partly known says how much."""
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join([
        _line("my-codec", "config.quality.min", "fail", finding="JPEG-SUB-05", known=True),
        _line("my-codec", "config.quality.max", "fail", finding="JPEG-Q-01", known=True),
        _line("my-codec", "config.quality.zero", "fail", finding="JPEG-Q-01"),
    ]) + "\n")
    assert main([str(results)]) == 0
    lines = capsys.readouterr().out.splitlines()  # type: ignore[attr-defined]
    assert lines[0] == "my-codec: 2 root findings (JPEG-Q-01, JPEG-SUB-05); 1 of them known failures"
    assert [ln for ln in lines if ln[2:3].isdigit()] == [
        "  1. JPEG-Q-01 MUST [known: 1 of 2 cases]: 2 case(s), blocks 0: config.quality.max, config.quality.zero",
        "  2. JPEG-SUB-05 MUST [known failure]: 1 case(s), blocks 0: config.quality.min",
    ]


def test_the_cases_blocked_are_counted_under_every_kind_of_root(tmp_path: Path, capsys: object) -> None:
    """"N cases blocked" counts the cases blocked under a broken rule, an error, a crash, a timeout and a root these
    results do not hold alike: a CI log that counted only the broken rules' would hide what a crash stops."""
    roots = {"config.quality.min": "fail", "bitstream.stream_structure[gray-q1]": "error",
             "bitstream.stream_structure[gray-q50]": "crash", "bitstream.stream_structure[gray-q100]": "timeout"}
    lines = [_line("my-codec", case, outcome, finding="JPEG-SUB-05" if outcome == "fail" else f"encode: {outcome}")
             for case, outcome in roots.items()]
    lines += [_line("my-codec", f"roundtrip.roundtrip[{i}]", "blocked", blocked_by=root)
              for i, root in enumerate([*roots, "config.quality.max"])]  # the last: a case these results do not hold
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(lines) + "\n")
    assert main([str(results)]) == 0
    out = capsys.readouterr().out.splitlines()  # type: ignore[attr-defined]
    assert out[0].startswith("my-codec: 4 root findings (") and out[0].endswith("); 5 cases blocked"), out[0]
    assert sum(1 for line in out if line.endswith(tuple(f"blocks 1: {root}" for root in roots))) == 4, out
