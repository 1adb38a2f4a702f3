"""The compatibility matrix: model, pages, compare, throughput and the real CLI end to end.

Most tests build a matrix from a small hand-written results set, so what each cell must
show is known exactly; one test runs the real command on one implementation and a subset.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.corpus import registry
from zarr_jpeg_conformance.report import (
    compare,
    model,
    protection,
    render_html,
    render_md,
    run,
    saved,
    svg,
    throughput,
    wording,
)
from zarr_jpeg_conformance.report import rows as rows_mod
from zarr_jpeg_conformance.report.__main__ import main

Q01 = '[JPEG-Q-01 MUST] "quality (integer, required): the JPEG encoding quality, in the range 1–100."'


def _rec(impl: str, case: str, outcome: str, reqs: list[str], message: str = "", **metrics: Any) -> dict[str, Any]:
    module = "test_parse.py::test_parse" if case.startswith("config.") else "test_x.py::test_x"
    return {"format_version": 1, "implementation": impl, "case": case, "outcome": outcome, "requirements": reqs,
            "level": "MUST", "message": message, "metrics": metrics, "test": f"{module}[{impl}-{case}]"}


def _records() -> list[dict[str, Any]]:
    sweep = "5:25.00:300;50:31.50:900;100:inf:4000"
    return [
        _rec("alpha", "config.quality.zero", "pass", ["JPEG-Q-01"]),
        _rec("beta", "config.quality.zero", "fail", ["JPEG-Q-01"], f"fail: {Q01}\n    observed: invalid, but parse accepted it"),
        _rec("alpha", "bitstream.stream_structure[rgb-q90]", "warn", ["JPEG-ECS-05", "JPEG-ECS-09", "JPEG-X-05"],
             "warn: [JPEG-X-05 SHOULD] \"An rgb stream SHOULD NOT contain a JFIF APP0 marker.\"\n    observed: JFIF present"),
        _rec("beta", "bitstream.stream_structure[rgb-q90]", "pass", ["JPEG-ECS-05", "JPEG-ECS-09"]),
        _rec("alpha", "roundtrip.fidelity[passthrough-444-natural-q90]", "unsupported", ["JPEG-DCS-03", "JPEG-DCS-05"],
             "unsupported: optional feature rejected when parsing (JPEG-DCS-05): rejected: Unsupported: no [JPEG-DCS-05]"),
        _rec("beta", "roundtrip.fidelity[passthrough-444-natural-q90]", "error", ["JPEG-DCS-03", "JPEG-DCS-05"],
             "error: RuntimeError: backend exploded"),
        _rec("alpha", "roundtrip.quality_sweep[gray]", "pass", ["JPEG-Q-02"], sweep=sweep),
        _rec("beta", "roundtrip.quality_sweep[gray]", "pass", ["JPEG-Q-02"], sweep="5:24.00:280;50:30.00:1000"),
        _rec("alpha", "roundtrip.fidelity[ycbcr-411-natural-q90]", "pass", ["JPEG-X-04"], psnr=35.2, bytes=2000, bpp=2.6042),
        _rec("alpha", "roundtrip.fidelity[ycbcr-411-gradient-q90]", "pass", ["JPEG-X-04"], psnr=28.9, bytes=900, bpp=1.1719),
        _rec("alpha", "chunk.dims.width-65535", "unsupported", ["JPEG-DIM-02", "JPEG-X-03"],
             "unsupported: chunk uint8[8, 65535]: rejected cleanly: Unsupported: width 65535 exceeds 65500 [JPEG-X-03]"),
        _rec("beta", "chunk.dims.width-65535", "pass", ["JPEG-DIM-02", "JPEG-X-03"]),
        {**_rec("beta", "config.name.uppercase", "fail", ["JPEG-NAME-01"], "fail: [JPEG-NAME-01 MUST] \"...\""), "known": True},
        _rec("alpha", "cross.decode[gray]", "pass", ["JPEG-DEC-01"], encoder="alpha", decoder="alpha"),
        _rec("alpha", "cross.decode[gray]", "fail", ["JPEG-DEC-01"], "fail: [JPEG-DEC-01 MUST] \"...\"\n    observed: 40 levels off",
             encoder="beta", decoder="alpha"),
    ]


def _write_folder(folder: Path, records: list[dict[str, Any]], *, with_meta: bool = True) -> Path:
    (folder / "results").mkdir(parents=True)
    by_impl: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_impl.setdefault(r["implementation"], []).append(r)
    for order, (impl, recs) in enumerate(by_impl.items()):
        lines = [json.dumps(r) for r in recs]
        (folder / "results" / f"{impl}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if with_meta:
            meta = {"format_version": 2, "spec": impl, "name": impl, "available": True, "roles": ["decode", "encode"],
                    "versions": {"lib": f"{order + 1}.0", "parse": "shared shim"}, "kind": "library", "language": "Rust",
                    "run": {"order": order, "returncode": 1, "timed_out": False, "seconds": 1.5}}
            (folder / "results" / f"{impl}.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    if with_meta:
        gone = {"format_version": 2, "spec": "gamma", "name": "gamma", "available": False, "reason": "cannot import 'gammajpeg'", "run": {"order": 9}}
        (folder / "results" / "gamma.meta.json").write_text(json.dumps(gone), encoding="utf-8")
        (folder / "environment.json").write_text(json.dumps({"format_version": 2, "generated": "2026-11-30 00:00 UTC", "python": "CPython 3.11"}))
        tp = throughput.measure([_Fake("alpha"), _Fake("beta", rgb=False)], size=32, repeats=3)
        (folder / "throughput.json").write_text(json.dumps(tp))
    return folder


class _Fake:
    """A lossless stand-in codec (raw bytes), enough to exercise the throughput table."""

    def __init__(self, name: str, *, rgb: bool = True) -> None:
        self.name, self.rgb, self.roles = name, rgb, frozenset({"encode", "decode"})

    def versions(self) -> dict[str, str]:
        return {}

    def parse(self, codec: Mapping[str, Any]) -> Mapping[str, Any]:
        if codec["configuration"]["encoded_color_space"] == "rgb" and not self.rgb:
            raise ValueError("rgb is not supported")
        return codec

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        return np.ascontiguousarray(chunk).tobytes()

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        return np.frombuffer(data, dtype=np.uint8).reshape(chunk_shape)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return _write_folder(tmp_path / "run", _records())


@pytest.fixture
def matrix(folder: Path) -> model.Matrix:
    return model.load(folder)


# ---------------------------------------------------------------- model


def test_failure_is_charged_to_the_requirement_it_names(matrix: model.Matrix) -> None:
    alpha, beta = matrix.cells["alpha"], matrix.cells["beta"]
    assert alpha["JPEG-X-05"].counts == {"warn": 1}
    # The warning did not stop the test: the other requirements of the case held.
    assert alpha["JPEG-ECS-05"].counts == {"pass": 1}
    # Configuration cases are the parser's: not in the rows' cells, once in the parser's.
    assert "JPEG-Q-01" not in beta and "JPEG-Q-01" not in alpha
    parsed = matrix.parser_cells["shared shim"]["JPEG-Q-01"]
    assert parsed.outcome == "fail" and [(c.implementation, c.case) for c in parsed.cases] == [("beta", "config.quality.zero")]
    # An optional feature rejected: charged to the MAY it names; DCS-03 was never reached.
    assert alpha["JPEG-DCS-05"].counts == {"unsupported": 1}
    assert "JPEG-DCS-03" not in alpha
    # An error that names no requirement touches every requirement of its case.
    assert beta["JPEG-DCS-03"].outcome == beta["JPEG-DCS-05"].outcome == "error"


def test_implementations_totals_and_availability(matrix: model.Matrix) -> None:
    names = [i.name for i in matrix.implementations]
    assert names == ["alpha", "beta", "gamma"]
    gamma = matrix.implementations[2]
    assert not gamma.available and "gammajpeg" in gamma.run_problem
    assert matrix.totals("alpha") == {"pass": 5, "warn": 1, "unsupported": 2, "fail": 1}
    assert dict(matrix.implementations[0].versions) == {"lib": "1.0", "parse": "shared shim"}
    assert sum(1 for c in matrix.cases["beta"].values() if c.known) == 1


def test_duplicate_case_ids_are_kept_apart(matrix: model.Matrix) -> None:
    keys = [k for k in matrix.cases["alpha"] if k.startswith("cross.decode")]
    assert sorted(keys) == ["cross.decode[gray]", "cross.decode[gray] [beta->alpha]"]


def test_cross_matrix(matrix: model.Matrix) -> None:
    assert matrix.cross is not None
    assert matrix.cross.encoders == ["alpha", "beta"] and matrix.cross.decoders == ["alpha"]
    assert matrix.cross.cells[("alpha", "alpha")].outcome == "pass"
    assert matrix.cross.cells[("beta", "alpha")].outcome == "fail"


def test_rate_distortion_points(matrix: model.Matrix) -> None:
    gray = matrix.rate_distortion["gray"]["alpha"]
    # bpp = 8 * bytes / (64 * 96); the infinite PSNR point is left out.
    assert [(p.quality, p.bpp, p.psnr) for p in gray] == [(5, round(8 * 300 / 6144, 4), 25.0), (50, round(8 * 900 / 6144, 4), 31.5)]
    # Only the natural image: the gradient fidelity case is another image.
    assert [(p.quality, p.bpp) for p in matrix.rate_distortion["ycbcr-411"]["alpha"]] == [(90, 2.6042)]


def test_spec_notes_carry_evidence(matrix: model.Matrix) -> None:
    notes = {n.id: n for n in matrix.notes}
    assert {"JPEG-X-03", "JPEG-X-04", "JPEG-X-05", "JPEG-X-07", "JPEG-X-09"} <= set(notes)
    x03 = notes["JPEG-X-03"].evidence
    assert [c.case for c in x03["alpha"]["unsupported"]] == ["chunk.dims.width-65535"]
    assert [c.case for c in x03["beta"]["pass"]] == ["chunk.dims.width-65535"]
    assert notes["JPEG-X-07"].evidence == {}  # nothing in this results set probes truncation


def test_matrix_json(matrix: model.Matrix) -> None:
    doc = json.loads(json.dumps(model.to_json(matrix)))
    assert doc["format_version"] == model.FORMAT_VERSION
    assert "JPEG-Q-01" not in doc["cells"]["beta"]
    (parser,) = doc["parsers"]
    assert parser["parser"] == "shared shim" and parser["rows"] == ["alpha", "beta"]
    assert parser["cases"]["config.quality.zero"] == {"outcome": "varies", "writer_setting": True, "rows": {"alpha": "pass", "beta": "fail"}}
    assert parser["cells"]["JPEG-Q-01"]["outcome"] == "fail"
    alpha = doc["implementations"][0]
    assert (alpha["kind"], alpha["language"], alpha["group"], alpha["parser"]) == ("library", "Rust", "library", "shared shim")
    assert doc["cases"]["beta"]["config.name.uppercase"]["known"] is True
    assert doc["throughput"]["results"] and doc["cross"]["encoders"] == ["alpha", "beta"]
    assert {t["section"] for t in doc["topics"]} >= {"Codec name", "Interpretation"}


def test_tests_without_implementation_are_the_corpus_checks_shown_once() -> None:
    """Tests that take no impl are no row: the corpus's own checks, once per case (the worst outcome)."""
    def corpus(outcome: str) -> model.CaseResult:
        return model.CaseResult(model.NO_IMPL, "stores.store_holds_its_data[gray-2d]", outcome, "MUST", ("JPEG-DEC-03",), "", {})

    impl = model.CaseResult("alpha", "roundtrip.x", "pass", "MUST", ("JPEG-DEC-03",), "", {})
    m = model.build([corpus("pass"), corpus("fail"), impl, corpus("pass")])
    assert [i.name for i in m.implementations] == ["alpha"]
    assert list(m.corpus) == ["stores.store_holds_its_data[gray-2d]"] and m.corpus["stores.store_holds_its_data[gray-2d]"].outcome == "fail"
    assert m.cells["alpha"]["JPEG-DEC-03"].counts == {"pass": 1}  # the corpus check is no evidence of alpha's
    assert model.to_json(m)["corpus_checks"]["stores.store_holds_its_data[gray-2d]"]["outcome"] == "fail"
    html, md = render_html.render(m), render_md.render(m)
    assert 'id="corpus"' in html and "1 checks: 1 fail" in html and "## The corpus's own checks" in md
    assert "(no --impl)" not in html + md


def test_cut_short_last_line_is_skipped_only_when_the_run_was_stopped(tmp_path: Path) -> None:
    """A run killed at its timeout may leave its last line unfinished (no newline after it);
    that one line is left out, and only when the run is known to have been stopped."""
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(_records()[0]) + "\n" + json.dumps(_records()[1])[:40], encoding="utf-8")
    assert [r.case for r in model.read_results([path], stopped=True)] == ["config.quality.zero"]
    with pytest.raises(model.ReportFileError, match=r"r\.jsonl, line 2: not a JSON line \(the last line, without a newline"):
        model.read_results([path])


def test_unknown_outcome_is_an_error_of_the_results_file(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It used to be ignored: a results file with only unknown outcomes read "meets every MUST tested"."""
    path = folder / "results" / "alpha.jsonl"
    lines = path.read_text().splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), "outcome": "skipped"})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(model.ReportFileError, match=r"alpha\.jsonl, line 1: outcome: 'skipped' is not one of"):
        model.load(folder)
    assert main(["--from", str(folder)]) == 2
    assert "alpha.jsonl, line 1" in capsys.readouterr().err


def test_verdict_counts_an_unknown_outcome_against_conformance(matrix: model.Matrix) -> None:
    """A matrix built by other code: what is not pass, warn or unsupported is not conformance."""
    with pytest.raises(ValueError, match=r"unknown outcome.*'skipped'"):
        model.build([model.CaseResult("a", "c", "skipped", "MUST", (), "", {})])
    alpha = next(i for i in matrix.implementations if i.name == "alpha")
    cases = matrix.cases["alpha"]
    for key, case in list(cases.items()):
        cases[key] = replace(case, outcome="pass")
    assert wording.verdict(matrix, alpha) == "meets every MUST tested"
    cases["config.quality.zero"] = replace(cases["config.quality.zero"], outcome="bogus")
    assert wording.verdict(matrix, alpha).startswith("does not conform: 1 bogus")


def _corrupt(folder: Path, impl: str, number: int, line: str | None) -> Path:
    path = folder / "results" / f"{impl}.jsonl"
    lines = path.read_text().splitlines()
    if line is None:
        del lines[number - 1]
    else:
        lines[number - 1] = line
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"format_version": 1, "implementation": "beta", "case": "config.qu', "not a JSON line: Unterminated string"),
        ("", "not a JSON line: Expecting value"),
        ("[1, 2]", "expected a JSON object, got [1, 2]"),
        ('{"format_version": 1, "implementation": "beta", "case": "x"}', "missing 'outcome', 'level', 'requirements'"),
        (json.dumps({**_rec("beta", "x", "pass", []), "extra": 1}), "Additional properties are not allowed"),
        (json.dumps(_rec("beta", "x", "pass", ["not-an-id"])), "requirements/0: 'not-an-id' does not match"),
        (json.dumps({k: v for k, v in _rec("beta", "x", "pass", []).items() if k != "format_version"}), "no format_version"),
        (json.dumps({**_rec("beta", "x", "pass", []), "format_version": 2}), "format_version 2; this version"),
        (json.dumps(_rec("alpha", "x", "pass", [])), "a result of alpha in the results file of beta"),
    ],
    ids=["cut", "blank", "not-an-object", "no-outcome", "unknown-key", "bad-requirement", "no-version", "other-version",
         "other-implementation"],
)
def test_a_corrupt_line_in_the_middle_is_refused(folder: Path, capsys: pytest.CaptureFixture[str], line: str,
                                                 message: str) -> None:
    """It used to be dropped in silence: a fail vanished and the verdict improved."""
    _corrupt(folder, "beta", 2, line)
    with pytest.raises(model.ReportFileError, match=re.escape("beta.jsonl, line 2: ") + ".*" + re.escape(message)):
        model.load(folder)
    assert main(["--from", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "beta.jsonl, line 2" in err and "Traceback" not in err


def _ran(folder: Path, impl: str, **run: Any) -> None:
    """Give a meta the record of a real run, with the outcome counts of its results file as it is now."""
    path = folder / "results" / f"{impl}.meta.json"
    meta = json.loads(path.read_text())
    outcomes = [json.loads(line)["outcome"] for line in (folder / "results" / f"{impl}.jsonl").read_text().splitlines()]
    meta["run"] = {**meta["run"], "command": "python -m pytest", "returncode": 1, "timed_out": False, "seconds": 1.0,
                   "results": dict(Counter(outcomes)), **run}
    path.write_text(json.dumps(meta))


def _set_run(folder: Path, impl: str, **run: Any) -> None:
    path = folder / "results" / f"{impl}.meta.json"
    meta = json.loads(path.read_text())
    meta["run"].update(run)
    path.write_text(json.dumps(meta))


def test_counts_of_the_meta_are_cross_checked(folder: Path) -> None:
    """A line deleted since the run (valid on its own) is caught by the counts the run recorded."""
    _ran(folder, "beta")
    model.load(folder)  # consistent
    _corrupt(folder, "beta", 2, None)
    with pytest.raises(model.ReportFileError, match=r"beta\.jsonl: holds .* but beta\.meta\.json counted .*lines were lost"):
        model.load(folder)


def test_a_results_file_the_meta_counted_must_exist(folder: Path) -> None:
    _ran(folder, "beta")
    (folder / "results" / "beta.jsonl").unlink()
    with pytest.raises(model.ReportFileError, match=r"beta\.meta\.json: its run counted 6 results, but beta\.jsonl is missing"):
        model.load(folder)


def test_a_cut_short_last_line_is_accepted_when_the_meta_says_the_run_was_stopped(folder: Path) -> None:
    path = folder / "results" / "beta.jsonl"
    _ran(folder, "beta", timed_out=True)
    path.write_text(path.read_text() + json.dumps(_rec("beta", "y", "fail", []))[:30])
    assert "y" not in model.load(folder).cases["beta"]
    for stop in ({"returncode": -9}, {"interrupted": True}):
        _set_run(folder, "beta", timed_out=False, **stop)
        model.load(folder)
    _set_run(folder, "beta", returncode=1, interrupted=False)
    with pytest.raises(model.ReportFileError, match=r"line 7: not a JSON line \(the last line, without a newline"):
        model.load(folder)


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        ("results/alpha.meta.json", {"format_version": None}, "no format_version"),
        ("results/alpha.meta.json", {"available": "yes"}, "available: 'yes' is not of type 'boolean'; missing 'reason'"),
        ("results/gamma.meta.json", {"reason": None}, "missing 'reason'"),
        ("environment.json", {"format_version": 0}, "format_version 0; this version"),
        ("environment.json", {"cpus": "two"}, "cpus: 'two' is not of type"),
        ("throughput.json", {"format_version": None}, "no format_version"),
        ("throughput.json", {"results": [{"implementation": "alpha", "op": "copy"}]}, "results/0/op: 'copy' is not one of"),
    ],
)
def test_every_file_of_the_folder_is_checked(folder: Path, name: str, change: dict[str, Any], message: str) -> None:
    path = folder / name
    doc = json.loads(path.read_text())
    doc.update(change)
    path.write_text(json.dumps({k: v for k, v in doc.items() if v is not None}))
    with pytest.raises(model.ReportFileError, match=re.escape(f"{path}: ") + ".*" + re.escape(message)):
        model.load(folder)


def test_cross_run_record_is_checked(folder: Path) -> None:
    cross = folder / "results" / "cross-pairs.run.json"
    cross.write_text(json.dumps({"specs": ["alpha", "beta"], "run": {}}))
    with pytest.raises(model.ReportFileError, match=r"cross-pairs\.run\.json: no format_version"):
        model.load(folder)


def test_folder_without_meta_renders(tmp_path: Path) -> None:
    """A folder of plain pytest --results files (no meta, no throughput) still makes a matrix."""
    m = model.load(_write_folder(tmp_path / "bare", _records(), with_meta=False))
    assert [i.name for i in m.implementations] == ["alpha", "beta"]
    assert m.throughput is None
    assert "No throughput data" in render_html.render(m) and "No throughput data" in render_md.render(m)


# ---------------------------------------------------------------- pages


class _Page(HTMLParser):
    """Collects what the structure test needs: sections, tables, svgs, external references."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.sections: list[str] = []
        self.topic_tables = 0
        self.svgs = 0
        self.details_in_cells = 0
        self.scripts = 0
        self.links = 0
        self.external: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        inside = [t for t, _ in self.stack]
        ids = [x.get("id", "") for _, x in self.stack]
        if tag == "section" and a.get("id") and "section" not in inside:
            self.sections.append(a["id"])
        if tag == "tr" and "group-head" in a.get("class", "") and "requirements" in ids:
            self.topic_tables += 1
        if tag == "details" and any("cell" in x.get("class", "") for _, x in self.stack):
            self.details_in_cells += 1
        self.svgs += tag == "svg"
        self.scripts += tag == "script"
        self.links += tag == "link"
        for key in ("src", "href"):
            if a.get(key, "").startswith(("http:", "https:", "//", "file:")):
                self.external.append(a[key])
        if tag not in ("meta", "col", "br", "img", "input", "rect", "circle", "line", "path"):
            self.stack.append((tag, a))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_structure(matrix: model.Matrix) -> None:
    html = render_html.render(matrix)
    page = _Page()
    page.feed(html)
    assert page.sections == ["summary", "roots", "parsing", "protection", "requirements", "cross", "rate-distortion", "throughput",
                             "spec-notes", "spec-review", "corpus", "environment"]
    assert page.topic_tables == len(matrix.topics)  # one heading row per section of the spec
    assert page.svgs >= 3  # rate-distortion per mode and throughput bars
    assert page.details_in_cells >= 3
    assert page.scripts == page.links == 0 and page.external == []
    assert 'src="http' not in html and "<link" not in html and "<script" not in html
    text = "".join(page.text)
    assert "config.quality.zero" in text and "observed: invalid, but parse accepted it" in text
    assert "not available: cannot import 'gammajpeg'" in text


def test_html_escapes_what_implementations_write() -> None:
    message = "fail: <script>alert(1)</script> & </td> [JPEG-Q-01 MUST]"
    m = model.build([model.CaseResult("<i>impl</i>", "config.<x>", "fail", "MUST", ("JPEG-Q-01",), message, {})])
    html = render_html.render(m)
    assert "<script>" not in html and "&lt;script&gt;alert(1)" in html
    assert "<i>impl</i>" not in html and "&lt;i&gt;impl&lt;/i&gt;" in html and "config.&lt;x&gt;" in html


def test_markdown(matrix: model.Matrix) -> None:
    md = render_md.render(matrix)
    for heading in ("## Summary", "## Configuration parsing, once per parser", "## What a codec author must add",
                    "## Requirements", "### Codec name", "## Encoder × decoder", "## Rate–distortion", "## Throughput",
                    "## Spec notes", "## The corpus's own checks", "## Environment"):
        assert heading in md
    assert "- `config.quality.zero` (writer setting) varies: alpha pass, beta fail" in md
    assert "(known failure)" in md
    assert "| alpha | " in md


def test_no_cross_results_note(tmp_path: Path) -> None:
    recs = [r for r in _records() if "encoder" not in r["metrics"]]
    m = model.load(_write_folder(tmp_path / "nocross", recs))
    assert m.cross is None
    assert "No cross results" in render_html.render(m) and "No cross results" in render_md.render(m)


def test_nice_ticks_and_chart() -> None:
    assert svg.nice_ticks(0.3, 7.9) == [0, 2, 4, 6, 8]
    assert svg.nice_ticks(23.1, 58.6) == [20, 30, 40, 50, 60]
    chart = svg.line_chart([svg.Series("a<b", [(1, 30), (2, 35)], "#000")], title="t&t", x_label="x", y_label="y")
    assert chart.startswith("<svg") and "a&lt;b" in chart and "t&amp;t" in chart and "<path" in chart


# ---------------------------------------------------------------- compare


def test_compare(matrix: model.Matrix) -> None:
    old = model.to_json(matrix)
    new = json.loads(json.dumps(old))
    new["cases"]["beta"]["config.quality.zero"]["outcome"] = "pass"
    new["parsers"][0]["cells"]["JPEG-Q-01"]["outcome"] = "pass"
    new["cells"]["alpha"]["JPEG-X-05"]["outcome"] = "pass"
    new["cases"]["alpha"]["config.new.case"] = {"outcome": "fail"}
    del new["cases"]["alpha"]["chunk.dims.width-65535"]
    new["cases"]["alpha"]["roundtrip.quality_sweep[gray]"]["outcome"] = "fail"
    new["cases"]["alpha"]["cross.decode[gray]"]["outcome"] = "warn"
    new["implementations"][0]["versions"] = {"lib": "1.1", "parse": "shared shim"}
    text = compare.compare(old, new)
    assert "| `config.quality.zero` | fail | pass | better |" in text
    assert "Cases that changed outcome (2, 2 worse):" in text and "| `roundtrip.quality_sweep[gray]` | pass | fail | worse |" in text
    assert "Cases that changed outcome (1, 0 worse):" in text  # beta's
    assert "| JPEG-X-05 | warn | pass |" in text
    assert "## parser shared shim" in text and "| JPEG-Q-01 | fail | pass |" in text
    assert "New cases (1)" in text and "`config.new.case`" in text
    assert "Removed cases (1)" in text and "`chunk.dims.width-65535`" in text
    assert "**alpha** versions: lib 1.0, parse shared shim → lib 1.1, parse shared shim" in text
    assert "No changes" in compare.compare(old, old)


def test_compare_cli(folder: Path, matrix: model.Matrix, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a.json"
    a.write_text(json.dumps(model.to_json(matrix)))
    assert main(["compare", str(a), str(a)]) == 0
    assert "No changes" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format_version": 999}))
    assert main(["compare", str(a), str(bad)]) == 2


def _broken_matrix(doc: dict[str, Any], how: str) -> str:
    if how == "not-json":
        return "{"
    if how == "no-version":
        del doc["format_version"]
    elif how == "nameless":
        del doc["implementations"][0]["name"]
    elif how == "no-outcome":
        del doc["cases"]["beta"]["config.quality.zero"]["outcome"]
    elif how == "unknown-outcome":
        doc["cases"]["beta"]["config.quality.zero"]["outcome"] = "passed"
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("not-json", "not JSON: Expecting property name"),
        ("no-version", "no format_version"),
        ("nameless", "implementations/0: missing 'name'"),
        ("no-outcome", "cases/beta/config.quality.zero: missing 'outcome'"),
        ("unknown-outcome", "cases/beta/config.quality.zero/outcome: 'passed' is not one of"),
    ],
)
def test_compare_refuses_broken_inputs_by_name(matrix: model.Matrix, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               how: str, message: str) -> None:
    """They used to end in a raw traceback (KeyError) or an error naming no file."""
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(model.to_json(matrix)))
    bad.write_text(_broken_matrix(model.to_json(matrix), how))
    assert main(["compare", str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"compare: {bad}: " in err and message in err and "Traceback" not in err


def test_from_folder_rerenders(folder: Path) -> None:
    assert main(["--from", str(folder)]) == 0
    for name in ("matrix.json", "matrix.md", "matrix.html"):
        assert (folder / name).stat().st_size > 1000
    assert json.loads((folder / "matrix.json").read_text())["environment"]["python"] == "CPython 3.11"


# ---------------------------------------------------------------- throughput and running


def test_throughput_round_robin_and_relative() -> None:
    doc = throughput.measure([_Fake("alpha"), _Fake("beta", rgb=False)], size=32, repeats=3)
    rows = {(r["implementation"], r["mode"], r["op"]): r for r in doc["results"]}
    assert set(doc["modes"]) == {"gray", "ycbcr-420", "rgb"}
    assert rows[("beta", "rgb", "encode")]["status"] == "unsupported"
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    assert len(ok) == 10 and all(r["repeats"] == 3 and 0 < r["relative"] <= 1 for r in ok)
    for mode in ("gray", "ycbcr-420"):
        for op in ("encode", "decode"):
            assert max(rows[(n, mode, op)]["relative"] for n in ("alpha", "beta")) == 1.0
    # Decoders of a mode read the stream of the first encoder.
    assert rows[("beta", "gray", "decode")]["stream_from"] == "alpha"
    assert doc["batch"] == throughput.DEFAULT_BATCH and doc["transport"] == {"alpha": "in process", "beta": "in process"}


def test_throughput_of_a_harness_is_pipelined_and_says_so() -> None:
    """A harness is timed through its batch calls (requests in flight), and the table's heading says how."""
    found = _builtins(1)
    if not found:
        pytest.skip("no built-in backend is installed")
    impl = found[0]
    from zarr_jpeg_conformance.adapters.remote import ExecAdapter

    calls: list[str] = []
    with ExecAdapter([sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server", impl],
                     on_message=lambda d, m: calls.append(m.get("op", "")) if d == "->" else None) as harness:
        doc = throughput.measure([harness], size=32, repeats=1, batch=3)
    assert doc["transport"] == {impl: "harness protocol, binary framing, pipelined (8 in flight)"}
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    assert ok and all(r["repeats"] == 1 for r in ok)
    # Per task: one warm-up call, then one timed batch of 3.
    assert calls.count("decode") == 4 * len([r for r in ok if r["op"] == "decode"])
    m = model.build([], throughput=doc)
    assert "binary framing, pipelined" in render_html.render(m) and "binary framing, pipelined" in render_md.render(m)


def _timed(times: list[float], batch: int = 1) -> throughput._Task:
    return throughput._Task("alpha", "gray", "encode", lambda: None, 1, times=list(times), batch=batch)


def test_throughput_repeats_a_task_until_its_median_is_known_or_its_budget_is_spent() -> None:
    """The stopping rule: at least MIN_REPEATS, then until the median's standard error is within TARGET_ERROR or
    the repeats took TASK_BUDGET, at most the maximum; a rule that stopped at once, or never, fails here."""
    fast = throughput.TASK_BUDGET / 100
    steady = [fast * (1 + 0.001 * i) for i in range(throughput.MIN_REPEATS)]
    assert not _timed(steady[:-1]).settled(21)  # under the minimum, however steady
    assert _timed(steady).settled(21)
    assert throughput.median_error(steady) < throughput.TARGET_ERROR
    noisy = [fast * f for f in (1.0, 1.6, 0.7, 1.3, 0.9)]
    assert throughput.median_error(noisy) > throughput.TARGET_ERROR and not _timed(noisy).settled(21)
    assert _timed(noisy).settled(5)  # the maximum ends it
    slow = [throughput.TASK_BUDGET / 2 * f for f in (1.0, 1.6, 0.7)]
    assert _timed(slow).settled(21)  # its repeats took the budget: a 4th would cost more than it tells
    assert not _timed(slow[:2]).settled(21)
    # A batch of calls is timed per call: the budget counts the batch's whole time.
    assert _timed([fast * f for f in (1.0, 1.6, 0.7)], batch=100).settled(21) and not _timed([fast * f for f in (1.0, 1.6, 0.7)]).settled(21)
    # One outlier among steady repeats does not keep a task repeating (the spread is the quartiles', not the range's).
    assert throughput.median_error([fast] * 6 + [fast * 5]) < throughput.TARGET_ERROR


def test_throughput_median_error_is_the_stated_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    """1.2533 * (IQR / 1.349) / sqrt(n) over the median: [1, 2, 3, 4, 5] has quartiles 2 and 4 (inclusive) and median 3."""
    assert throughput.median_error([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx(1.2533 * (2 / 1.349) / 5**0.5 / 3, rel=1e-9)
    assert throughput.median_error([1.0, 1.1]) < 1  # two repeats have a spread
    assert throughput.median_error([1.0]) == float("inf") and throughput.median_error([0.0, 0.0, 0.0]) == float("inf")
    # Both ends of the rule are inclusive: a median known to exactly TARGET_ERROR, or repeats that took exactly TASK_BUDGET.
    budget = throughput.TASK_BUDGET
    spent = _timed([budget / 4, budget / 4, budget / 2])
    assert sum(spent.times) == budget and throughput.median_error(spent.times) > throughput.TARGET_ERROR and spent.settled(21)
    monkeypatch.setattr(throughput, "median_error", lambda times: throughput.TARGET_ERROR)
    assert _timed([1e-6] * throughput.MIN_REPEATS).settled(21)


def test_throughput_times_a_slow_call_alone_and_a_quick_one_in_a_batch() -> None:
    """A batch in flight hides a harness's transfer, which is 1-3 % of a call of SLOW_CALL or more: such a call is timed
    alone (three 0.5 s browser decodes a repeat made the table minutes long), a quicker one in a batch."""
    assert throughput._calls(3, throughput.SLOW_CALL) == 1 and throughput._calls(3, throughput.SLOW_CALL * 0.99) == 3
    doc = throughput.measure([_Fake("alpha")], size=32, repeats=3, batch=2)
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    assert ok and all(r["batch"] == 2 for r in ok)  # a 32x32 raw copy is quick


def test_throughput_rows_say_how_many_repeats_and_how_sure() -> None:
    doc = throughput.measure([_Fake("alpha")], size=32, repeats=9)
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    assert ok and all(throughput.MIN_REPEATS <= r["repeats"] <= 9 and r["median_error"] >= 0 for r in ok)
    assert "at least 3, then until the median's standard error is within 3% of it" in doc["method"]
    saved.check(doc, "throughput.json", saved.FILES_SCHEMA, "throughput")
    assert re.search(r"over \d+ repeats \(± \d+% standard error\)", render_html.render(model.build([], throughput=doc)))


def test_the_longest_suite_runs_start_first(tmp_path: Path) -> None:
    """With 2 runs at a time, a long run started last leaves a core idle while it finishes: the last run's
    durations (read before the new run removes them), else a guess by kind, order the starts."""
    results = tmp_path / "results"
    results.mkdir()
    for name, seconds in (("pillow", 4.5), ("cft-zarr", 26.4), ("node-sharp", 9.0)):
        (results / f"{name}.meta.json").write_text(json.dumps({"name": name, "run": {"seconds": seconds}}))
    (results / "broken.meta.json").write_text("{")
    (results / "timed-out.meta.json").write_text(json.dumps({"name": "slowpoke", "run": {"seconds": 1800, "timed_out": True}}))
    earlier = run.earlier_seconds(results)
    assert earlier == {"pillow": 4.5, "cft-zarr": 26.4, "node-sharp": 9.0}
    metas = [{"name": n, "spec": n} for n in ("pillow", "node-sharp", "cft-zarr", "new-one")]
    by_cost = sorted(metas, key=lambda m: -run.expected_cost(m, run.RunOptions(expected=earlier)))
    assert [m["name"] for m in by_cost] == ["cft-zarr", "new-one", "node-sharp", "pillow"]
    guessed = [{"name": "pillow", "spec": "pillow"}, {"name": "node-sharp", "spec": "exec:node harness.mjs"},
               {"name": "cft-zarr", "spec": "cft-zarr"}]
    assert [run.expected_cost(m, run.RunOptions()) for m in guessed] == [10.0, 15.0, 30.0]


def test_pytest_command_selects_suites() -> None:
    opts = run.RunOptions(keyword="parse or bitstream", suites=["parse", "test_bitstream"], pytest_args=["--isolate"])
    cmd = run.pytest_command("pillow", Path("r.jsonl"), opts)
    assert cmd[cmd.index("--pyargs") + 1 : cmd.index("--pyargs") + 3] == [
        "zarr_jpeg_conformance.suites.test_parse", "zarr_jpeg_conformance.suites.test_bitstream"]
    assert cmd[cmd.index("-k") + 1] == "parse or bitstream" and cmd[-1] == "--isolate"
    assert run.file_stem("exec:node harness.mjs --decoder jpeg-js") == "exec_node_harness.mjs_--decoder_jpeg-js"


def _builtins(count: int) -> list[str]:
    return [n for n in ("imagecodecs", "pillow", "turbojpeg") if run.probe(n).get("available")][:count]


def test_cli_end_to_end(tmp_path: Path) -> None:
    """The real command from an unrelated folder: two implementations two at a time, a subset of
    the suites, the corpus's own checks once in a run of their own."""
    impls = _builtins(2)
    if len(impls) < 2:
        pytest.skip("fewer than two built-in adapters' backends are installed")
    out = tmp_path / "matrix"
    done = subprocess.run(
        [sys.executable, "-m", "zarr_jpeg_conformance.report", "--out", str(out), *(f"--impl={i}" for i in impls),
         "--impl", "no_such_module:Adapter", "-k", "parse or bitstream or schema", "--jobs", "2", "--repeats", "1", "--throughput-size", "64"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"[1/3] {impls[0]} (" in done.stderr and "running the suites" in done.stderr
    assert "2 run(s) at a time" in done.stderr
    doc = json.loads((out / "matrix.json").read_text())
    # The order of the --impl options, whichever run ended first.
    assert [i["name"] for i in doc["implementations"]] == [*impls, "no_such_module:Adapter"]
    by_name = {i["name"]: i for i in doc["implementations"]}
    first = by_name[impls[0]]
    assert first["run_problem"] == "" and first["versions"] and first["group"] == "project" and first["kind"] == "codec"
    # One that names an implementation which cannot load here is a row, with the reason (a name
    # that names none is a usage error: tests/test_hostile_stores.py).
    missing = by_name["no_such_module:Adapter"]
    assert not missing["available"] and "cannot import 'no_such_module'" in missing["reason"]
    cases = doc["cases"][impls[0]]
    assert any(c.startswith("config.") for c in cases) and any(c.startswith("bitstream.") for c in cases)
    assert not any(c.startswith("roundtrip.") for c in cases)  # -k reached pytest
    # The corpus's own checks ran once, in their own run, and are no row.
    assert doc["corpus_checks"] and all(c.startswith("schema.") for c in doc["corpus_checks"])
    for name in impls:
        lines = (out / "results" / f"{name}.jsonl").read_text().splitlines()
        assert lines and all(json.loads(line)["implementation"] == name for line in lines)
    assert {json.loads(line)["implementation"] for line in (out / "results" / "corpus-checks.jsonl").read_text().splitlines()} == {"-"}
    (parser,) = doc["parsers"]
    assert parser["rows"] == impls  # both parse with core.config: their configuration cases shown once
    assert {r["implementation"] for r in doc["throughput"]["results"]} == set(impls)
    page = _Page()
    page.feed((out / "matrix.html").read_text())
    assert {"requirements", "parsing", "corpus"} <= set(page.sections) and page.external == []
    # The throughput child's progress is passed on as it comes (it used to be silent for minutes), one line
    # per implementation and mode, and the run ends with what took how long.
    assert f"throughput: gray [1/2] {impls[0]}: encode ok, decode ok" in done.stderr
    assert re.search(r"throughput: rgb decode: 2 implementation\(s\) timed in [0-9.]+ s \(1-1 repeats\)", done.stderr)
    assert re.search(r"done in \d+ s \(suites \d+ s, throughput \d+ s, loading and pages the rest\)\n$", done.stderr)


# ---------------------------------------------------------------- rows, parsers, readers, protection


def _impl(name: str, *, spec: str = "", kind: str = "library", language: str = "Rust",
          roles: tuple[str, ...] = ("decode", "encode"), parse: str = "shim") -> model.Implementation:
    return model.Implementation(name=name, spec=spec or name, roles=roles, versions={"parse": parse} if parse else {},
                                kind=kind, language=language)


def _result(impl: str, case: str, outcome: str, reqs: tuple[str, ...], message: str = "") -> model.CaseResult:
    test = "test_parse.py::test_parse[x]" if case.startswith("config.") else "test_decode_streams.py::test_x[x]"
    return model.CaseResult(impl, case, outcome, "MUST", reqs, message, {}, test=test)


def test_rows_are_grouped_under_their_headings_and_labelled() -> None:
    impls = [_impl("libx"), _impl("zarrs", spec="exec:zarrs-harness", kind="codec"),
             _impl("pillow", kind="codec", language="Python", parse="")]
    m = model.build([_result(i.name, "stream.reference.a", "pass", ("JPEG-DEC-01",)) for i in impls], implementations=impls)
    assert [(g, [i.name for i in rows]) for g, rows in m.groups()] == [("project", ["pillow"]), ("codec", ["zarrs"]),
                                                                       ("library", ["libx"])]
    assert m.implementations[2].parser == rows_mod.PROJECT_PARSER  # the built-ins parse with core.config
    html = render_html.render(m)
    headings = [rows_mod.GROUPS[g][0] for g in ("project", "codec", "library")]
    positions = [html.index(escape(h)) for h in headings]
    assert positions == sorted(positions)
    assert "library · Rust" in html and "codec · Python" in html
    doc = model.to_json(m)
    assert [(i["name"], i["group"], i["kind"], i["language"]) for i in doc["implementations"]] == [
        ("libx", "library", "library", "Rust"), ("zarrs", "codec", "codec", "Rust"), ("pillow", "project", "codec", "Python")]
    md = render_md.render(m)
    assert all(f"### {h}" in md for h in headings)


def test_parse_cases_are_shown_once_per_parser() -> None:
    impls = [_impl("a"), _impl("b"), _impl("c"), _impl("own", parse="")]
    results = [_result(n, "config.name.uppercase", "pass", ("JPEG-NAME-01",)) for n in ("a", "b", "c")]
    results.append(_result("own", "config.name.uppercase", "fail", ("JPEG-NAME-01",), "fail: [JPEG-NAME-01 MUST] x"))
    results += [_result("a", "config.quality.zero", "pass", ("JPEG-Q-01",)), _result("b", "config.quality.zero", "pass", ("JPEG-Q-01",)),
                _result("c", "config.quality.zero", "unsupported", ("JPEG-Q-01",), "unsupported: refused [JPEG-Q-01]")]
    m = model.build(results, implementations=impls)
    assert [(g.parser, g.rows) for g in m.parsers] == [("shim", ["a", "b", "c"]), ("own's own parser", ["own"])]
    shim = m.parsers[0]
    assert shim.cases["config.name.uppercase"].outcome == "pass"
    assert m.parser_cells["shim"]["JPEG-NAME-01"].counts == {"pass": 1}  # once, not once per row
    assert shim.cases["config.quality.zero"].varies
    assert m.parser_cells["shim"]["JPEG-Q-01"].counts == {"pass": 2, "unsupported": 1}  # a case that varies: each row
    assert m.parser_cells["own's own parser"]["JPEG-NAME-01"].outcome == "fail"
    assert not any("JPEG-NAME-01" in cells for cells in m.cells.values())
    html = render_html.render(m)
    assert 'id="parser-shim"' in html and "a, b, c" in html
    assert "Tested at parse only, once per parser: shim ✔ 1; own&#x27;s own parser ✘ 1 fail" in html
    # Rows whose versions name different parsers are not folded together.
    apart = model.build(results, implementations=[_impl("a", parse="p1"), _impl("b", parse="p2"), _impl("c"), _impl("own", parse="")])
    assert len(apart.parsers) == 4


def test_writer_settings_are_counted_apart_for_a_reader_only() -> None:
    assert rows_mod.writer_setting("config.quality.zero") and rows_mod.writer_setting("config.subsampling.rgb-420")
    assert not rows_mod.writer_setting("config.quality.min")  # valid: a reader must accept it to open the array
    assert not rows_mod.writer_setting("config.structure.configuration-array")  # the whole object is malformed
    assert not rows_mod.writer_setting("config.name.uppercase") and not rows_mod.writer_setting("config.decoded-color-space.bgr")
    results = []
    for name in ("viewer", "writer"):
        results += [_result(name, "config.quality.zero", "fail", ("JPEG-Q-01",), "fail: [JPEG-Q-01 MUST] accepted"),
                    _result(name, "config.name.uppercase", "pass", ("JPEG-NAME-01",)),
                    _result(name, "stream.reference.a", "pass", ("JPEG-DEC-01",))]
    impls = [_impl("viewer", roles=("decode",), parse="p1"), _impl("writer", parse="p2")]
    m = model.build(results, implementations=impls)
    viewer, writer = impls
    assert m.judged_totals("viewer") == {"pass": 2} and m.writer_totals("viewer") == {"fail": 1}
    assert m.judged_totals("writer") == {"pass": 2, "fail": 1} and not m.writer_totals("writer")
    assert wording.verdict(m, viewer) == "as a reader, meets every MUST tested; writer settings at parse: 1 fail (counted apart)"
    assert wording.verdict(m, writer) == "1 root finding (JPEG-Q-01); does not conform: 1 fail"
    assert wording.short_verdict(m, viewer) == "as a reader: meets every MUST tested"
    doc = {i["name"]: i for i in model.to_json(m)["implementations"]}
    assert doc["viewer"]["decode_only"] and doc["viewer"]["writer_setting_totals"] == {"fail": 1}
    assert doc["viewer"]["totals"] == {"fail": 1, "pass": 2}  # everything is still in the totals
    assert '<td class="o-fail">1 fail</td>' in render_html.render(m)


def test_core_protection_is_what_every_builtin_holds_and_the_library_does_not() -> None:
    impls = [_impl("pillow", kind="codec", language="Python", parse=""), _impl("turbojpeg", kind="codec", language="Python", parse=""),
             _impl("libx")]
    dim = "fail: [JPEG-DIM-03 MUST] x\n    observed: cropped"
    results = [
        *(_result(b, "stream.malformed.a", "pass", ("JPEG-DIM-03", "JPEG-DEC-01")) for b in ("pillow", "turbojpeg")),
        _result("libx", "stream.malformed.a", "fail", ("JPEG-DIM-03", "JPEG-DEC-01"), dim),
        _result("pillow", "stream.malformed.b", "pass", ("JPEG-DIM-03",)),
        _result("turbojpeg", "stream.malformed.b", "fail", ("JPEG-DIM-03",), dim),  # a built-in fails it too: not the core's
        _result("libx", "stream.malformed.b", "fail", ("JPEG-DIM-03",), dim),
        # A SHOULD every built-in passes and the row misses: listed apart, as SHOULD.
        *(_result(n, "stream.malformed.c", o, ("JPEG-X-07",), "warn: [JPEG-X-07 SHOULD] x" if o == "warn" else "")
          for n, o in (("pillow", "pass"), ("turbojpeg", "pass"), ("libx", "warn"))),
        # ... but not one a built-in misses as well.
        *(_result(n, "stream.malformed.f", o, ("JPEG-X-07",), "warn: [JPEG-X-07 SHOULD] x" if o == "warn" else "")
          for n, o in (("pillow", "warn"), ("turbojpeg", "pass"), ("libx", "warn"))),
        *(_result(b, "stream.malformed.d", "pass", ("JPEG-DEC-01",)) for b in ("pillow", "turbojpeg")),
        _result("libx", "stream.malformed.d", "error", ("JPEG-DEC-01",), "error: RuntimeError: boom"),
        *(_result(b, "config.quality.zero", "pass", ("JPEG-Q-01",)) for b in ("pillow", "turbojpeg")),
        _result("libx", "config.quality.zero", "fail", ("JPEG-Q-01",), "fail: [JPEG-Q-01 MUST] x"),  # the parser's, not the library's
        _result("libx", "stream.malformed.e", "fail", ("JPEG-DIM-03",), dim),  # no built-in ran it
    ]
    m = model.build(results, implementations=impls)
    assert list(m.protection) == ["libx"]
    both = ("pillow", "turbojpeg")
    assert m.protection["libx"] == [protection.Protection("JPEG-DIM-03", ("stream.malformed.a",), both),
                                    protection.Protection("error", ("stream.malformed.d",), both),
                                    protection.Protection("JPEG-X-07", ("stream.malformed.c",), both, "SHOULD")]
    doc = {i["name"]: i for i in model.to_json(m)["implementations"]}
    assert doc["libx"]["core_protection"][0] == {"charged_to": "JPEG-DIM-03", "level": "MUST", "cases": ["stream.malformed.a"],
                                                  "reference": ["pillow", "turbojpeg"]}
    assert "core_protection" not in doc["pillow"]
    html = render_html.render(m)
    section = html[html.index('id="protection"'):html.index('id="requirements"')]
    assert "DIM-03" in section and "stream.malformed.a" in section and "stream.malformed.b" not in section
    assert "| libx | 2 | 1 | 1 | 1 | 1 |" in render_md.render(m)
    assert "DIM-03 (MUST) | error (MUST) | X-07 (SHOULD) |" in render_md.render(m)


def test_spec_note_evidence_is_only_what_probes_the_note() -> None:
    results = [_result("a", "roundtrip.fidelity[ycbcr-411-natural-q90]", "pass", ("JPEG-X-04",)),
               _result("a", "config.optional.luma-4x4", "unsupported", ("JPEG-X-04", "JPEG-SUB-01"), "unsupported: x"),
               _result("a", "config.optional.luma-3x1", "pass", ("JPEG-X-04",)),
               _result("a", "config.subsampling.all-equal-2x2", "pass", ("JPEG-SUB-03",)),
               _result("a", "config.subsampling.chroma-cb-2x1", "pass", ("JPEG-SUB-03",)),
               _result("a", "stream.malformed.color-into-gray-chunk", "warn", ("JPEG-X-18",), "warn: [JPEG-X-18 SHOULD] x")]
    notes = {n.id: n for n in model.build(results).notes}
    assert {"JPEG-MCU-02", "JPEG-SUB-03", "JPEG-X-17", "JPEG-X-18", "JPEG-X-19", "JPEG-X-20", "JPEG-ENC-01"} <= set(notes)
    assert set(notes) <= set(registry.requirements())

    def cases(note: str) -> list[str]:
        return sorted(c.case for by_o in notes[note].evidence.values() for cs in by_o.values() for c in cs)

    # X-04 is cited by every optional-factor case; its note is about the factors beyond one interleaved MCU.
    assert cases("JPEG-X-04") == ["config.optional.luma-4x4"]
    assert cases("JPEG-MCU-02") == ["config.optional.luma-3x1"]  # factor 3: a 24-sample MCU
    assert cases("JPEG-SUB-03") == ["config.subsampling.all-equal-2x2"]
    assert cases("JPEG-X-18") == ["stream.malformed.color-into-gray-chunk"]
    assert "96" in notes["JPEG-MCU-02"].text


#: The spec defects an audit found with no note (issue 26), each under the requirement its words are in.
AUDITED_NOTES = {"JPEG-ECS-06", "JPEG-CFG-01", "JPEG-INT-01", "JPEG-MCU-01", "JPEG-SUB-01", "JPEG-Q-02", "JPEG-X-03",
                 "JPEG-X-06", "JPEG-X-12", "JPEG-X-13", "JPEG-X-14", "JPEG-X-15", "JPEG-X-21", "JPEG-DIM-03"}


def test_audited_spec_defects_have_notes_with_their_evidence() -> None:
    """Each note names the cases that show its defect, and only those where its requirement is cited everywhere."""
    results = [_result("a", "stream.foreign.component-ids-0-1-2-jfif", "warn", ("JPEG-X-21", "JPEG-DEC-01")),
               _result("a", "stream.malformed.gray-into-color-chunk", "warn", ("JPEG-X-18", "JPEG-DIM-03")),
               _result("a", "stream.malformed.one-row-fewer", "fail", ("JPEG-DIM-03",)),
               _result("a", "chunk.shape.hw4-gray", "pass", ("JPEG-SHP-05",)),
               _result("a", "config.encoded-color-space.cmyk", "pass", ("JPEG-ECS-01",)),
               _result("a", "config.quality.zero", "pass", ("JPEG-Q-01", "JPEG-CFG-01")),
               _result("a", "store.boundary", "pass", ("JPEG-DEC-03", "JPEG-MCU-01")),
               _result("a", "chunk.shape.sub-mcu-gray", "pass", ("JPEG-SHP-02", "JPEG-MCU-01")),
               _result("a", "config.subsampling.chroma-above-luma", "pass", ("JPEG-SUB-03",)),
               _result("a", "config.subsampling.factor-five", "pass", ("JPEG-SUB-01",))]
    notes = {n.id: n for n in model.build(results).notes}
    assert set(notes) >= AUDITED_NOTES

    def cases(note: str) -> list[str]:
        return sorted(c.case for by_o in notes[note].evidence.values() for cs in by_o.values() for c in cs)

    assert cases("JPEG-X-21") == ["stream.foreign.component-ids-0-1-2-jfif"]
    assert cases("JPEG-DIM-03") == ["stream.malformed.gray-into-color-chunk"]  # not every reshape failure
    assert cases("JPEG-CFG-01") == ["chunk.shape.hw4-gray", "config.encoded-color-space.cmyk"]
    assert cases("JPEG-MCU-01") == ["store.boundary"]  # not every unaligned size
    assert cases("JPEG-SUB-01") == ["config.subsampling.chroma-above-luma"]


def _corpus_case_ids() -> set[str]:
    from zarr_jpeg_conformance.corpus.cases import build_cases, chunk_cases, config_cases
    from zarr_jpeg_conformance.corpus.streams import stream_cases

    stores = {json.loads(p.read_text())["id"] for p in (registry.resource("fixtures", "stores")).iterdir()
              if p.name.endswith(".json")}
    return {c.id for c in (*config_cases(), *chunk_cases(), *build_cases(), *stream_cases())} | stores


def test_every_note_pattern_of_a_corpus_case_names_one() -> None:
    """A note's pattern for corpus cases that matches none (a typo, a renamed case) would leave it without evidence."""
    import fnmatch

    ids = _corpus_case_ids()
    corpus_prefixes = ("config.", "chunk.", "build.", "stream.", "store.")
    dead = [(rid, p) for rid, note in model.load_note_texts().items() for p in note.get("cases", [])
            if p.startswith(corpus_prefixes) and not fnmatch.filter(ids, p)]
    assert not dead, dead


def test_a_failure_is_shown_before_a_warning_of_the_same_case() -> None:
    message = ('warn: [JPEG-X-07 SHOULD] "A decoder SHOULD reject a truncated stream"\n    observed: partial chunk\n'
               'fail: [JPEG-DIM-03 MUST] "A decoder reshapes the decoded samples by the chunk shape."\n    observed: 8 rows short')
    r = _result("a", "stream.malformed.t", "fail", ("JPEG-X-07", "JPEG-DIM-03"), message)
    assert r.summary().startswith("[JPEG-DIM-03]") and r.summary().index("8 rows short") < r.summary().index("partial chunk")
    html = render_html.render(model.build([r]))
    assert html.index("8 rows short") < html.index("partial chunk")


def test_ctrl_c_keeps_what_ran_and_marks_every_row_not_finished(tmp_path: Path) -> None:
    """Ctrl-C while one run is going and another waits: the first keeps its results so far, the
    waiting one is marked as not run (not shown as conforming from its cross pairs), exit 130."""
    impls = _builtins(2)
    if len(impls) < 2:
        pytest.skip("fewer than two built-in adapters' backends are installed")
    out = tmp_path / "matrix"
    proc = subprocess.Popen(
        [sys.executable, "-m", "zarr_jpeg_conformance.report", "--out", str(out), *(f"--impl={i}" for i in impls),
         "--jobs", "1", "--no-throughput", "--suites", "parse", "decode_streams", "roundtrip"],
        cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background job's Ctrl-C is ignored otherwise
    )
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "running the suites" in line:
            break
    # Well inside the first run: parse and decode_streams alone once ended within a second on a quiet machine,
    # and the run that should have been interrupted had finished.
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, "".join(seen) + rest
    assert "interrupted (Ctrl-C)" in rest
    doc = json.loads((out / "matrix.json").read_text())
    problems = {i["name"]: i["run_problem"] for i in doc["implementations"]}
    assert all("interrupted" in problems[name] for name in impls), problems
    waiting = json.loads((out / "results" / f"{impls[1]}.meta.json").read_text())
    assert waiting["run"] == {"order": 1, "interrupted": True, "seconds": 0}


def test_the_output_folder_names_no_path_of_this_machine(tmp_path: Path) -> None:
    """The default harness specs run this machine's Python; metas, run records and commands say python."""
    spec = f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses node-jpeg-js"
    (tmp_path / "results").mkdir()
    run._write_meta(tmp_path / "results" / "x.meta.json", {"spec": spec, "name": "x", "available": False, "reason": "r", "run": {}})
    run._save_run(tmp_path, "cross-pairs", [spec], {})
    shown = run._shown(["python", "-m", "pytest", f"--impl={spec}"], tmp_path / "results" / "x.jsonl")
    written = (tmp_path / "results" / "x.meta.json").read_text() + (tmp_path / "results" / "cross-pairs.run.json").read_text() + shown
    assert sys.executable not in written and "exec:python -m zarr_jpeg_conformance.harnesses node-jpeg-js" in written


def test_every_kind_of_case_a_run_writes_is_known() -> None:
    """A results line of each suite and each corpus case kind is taken (the stores' cases too)."""
    from zarr_jpeg_conformance.report.saved import known_case

    for case in ("store.boundary", "store.ng-cloudvolume-gray", "cross.gray.from-turbojpeg", "config.quality.min",
                 "chunk.shape.hw-gray", "build.quality.min", "stream.reference.gray.q20.32x96", "roundtrip.fidelity[gray-natural-q90]",
                 "twins.invalid_case_has_a_valid_twin_one_place_away[config.quality.zero]"):
        assert known_case(case), case
    assert not known_case("store.nosuch") and not known_case("nosuch.case")


# ---------------------------------------------------------------- verdicts the mutation search of issue 28 broke


def test_a_row_whose_only_bad_cases_time_out_does_not_conform() -> None:
    """A case that timed out did not hold: a row with nothing worse is no "meets every MUST tested"."""
    impls = [_impl("slow")]
    results = [_result("slow", "stream.reference.a", "pass", ("JPEG-DEC-01",)),
               _result("slow", "stream.reference.b", "timeout", ("JPEG-DEC-01",), "timeout: no reply within 10 s")]
    m = model.build(results, implementations=impls)
    (slow,) = impls
    assert wording.verdict(m, slow) == "1 root finding (timeout (JPEG-DEC-01)); does not conform: 1 timeout"
    assert wording.short_verdict(m, slow) == "does not conform"
    assert [c.case for c in m.must_failures("slow")] == ["stream.reference.b"]
    assert m.cells["slow"]["JPEG-DEC-01"].outcome == "timeout"


@pytest.mark.parametrize("code", [2, 3, 4, 5, -9])
def test_a_pytest_run_that_went_wrong_is_flagged_incomplete(code: int) -> None:
    """pytest exits 0 (all passed) or 1 (some failed) after a whole run; any other code means cases are missing."""
    ran = [_result("x", "stream.reference.a", "pass", ("JPEG-DEC-01",))]
    for normal in (0, 1):
        impl = replace(_impl("x"), run={"returncode": normal, "seconds": 2.0})
        assert impl.run_problem == ""
        assert wording.verdict(model.build(ran, implementations=[impl]), impl) == "meets every MUST tested"
    impl = replace(_impl("x"), run={"returncode": code, "seconds": 2.0})
    assert impl.run_problem and ("code" in impl.run_problem or "signal" in impl.run_problem), impl.run_problem
    m = model.build(ran, implementations=[impl])
    assert wording.verdict(m, impl) == "run incomplete; so far meets every MUST tested"
    assert wording.short_verdict(m, impl) == "run incomplete; so far meets every MUST tested"


def test_compare_names_a_requirement_cell_that_disappeared(matrix: model.Matrix) -> None:
    """A cell gone from a row or a parser (its cases now rest on other requirements) is a change, not "No changes"."""
    old = model.to_json(matrix)
    for place, rid in (("row", "JPEG-X-05"), ("parser", "JPEG-Q-01")):
        new = json.loads(json.dumps(old))
        cells = new["cells"]["alpha"] if place == "row" else new["parsers"][0]["cells"]
        gone = cells.pop(rid)
        text = compare.compare(old, new)
        assert "No changes" not in text, place
        assert f"| {rid} | {gone['outcome']} | not tested |" in text, text
        # and the reverse: a cell that appeared
        assert f"| {rid} | not tested | {gone['outcome']} |" in compare.compare(new, old)


def test_compare_reads_a_matrix_with_blocked_cells_and_parser_cases(matrix: model.Matrix, tmp_path: Path) -> None:
    """A case blocked by a failed twin (a row's cell, a parser's case) is an outcome matrix.json holds: the schema
    `report compare` checks files against refused every real matrix since blocked parser cases exist."""
    from zarr_jpeg_conformance.report.compare import load_matrix

    doc = model.to_json(matrix)
    doc["cells"]["alpha"]["JPEG-X-05"]["outcome"] = "blocked"
    case = next(iter(doc["parsers"][0]["cases"]))
    doc["parsers"][0]["cases"][case]["outcome"] = "blocked"
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps(doc))
    assert load_matrix(path)["cells"]["alpha"]["JPEG-X-05"]["outcome"] == "blocked"
