"""The edges of what the report writes: where texts are cut, which cells are marked, what compare and the run say.

Each test pins one boundary or one branch of the pages (matrix.md, matrix.html), of ``compare``, of the store
table's check-store column, of the chart ticks, and of the run itself (its defaults, its usage error, its log,
its timeout and its Ctrl-C bookkeeping), with the suite runs and probes stood in for so nothing slow runs.
"""

from __future__ import annotations

import html
import json
import math
import re
import subprocess
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from zarr_jpeg_conformance.adapters import store_interop as si
from zarr_jpeg_conformance.corpus import registry
from zarr_jpeg_conformance.report import compare, model, parsing, render_html, render_md, run, stores_table, svg
from zarr_jpeg_conformance.report.__main__ import main

# ---------------------------------------------------------------- helpers (after tests/test_report.py)


def _impl(name: str, *, kind: str = "library", parse: str = "shim", roles: tuple[str, ...] = ("decode", "encode")) -> model.Implementation:
    return model.Implementation(name=name, spec=name, roles=roles, versions={"parse": parse} if parse else {}, kind=kind,
                                language="Rust" if kind == "library" else "Python")


def _builtin(name: str) -> model.Implementation:
    return _impl(name, kind="codec", parse="")


def _result(impl: str, case: str, outcome: str, reqs: tuple[str, ...], message: str = "") -> model.CaseResult:
    test = "test_parse.py::test_parse[x]" if case.startswith("config.") else "test_decode_streams.py::test_x[x]"
    return model.CaseResult(impl, case, outcome, "MUST", reqs, message, {}, test=test)


def _section(page: str, start: str, end: str) -> str:
    """The part of a page from the line (or tag) holding ``start`` to the next one holding ``end``."""
    i = page.index(start)
    return page[i : page.index(end, i + len(start))]


def _td_classes(html: str) -> list[str]:
    return re.findall(r'<td class="cell (o-[a-z]+(?: end)?)"', html)


# ---------------------------------------------------------------- matrix.md: where texts are cut


def test_a_case_message_of_300_characters_is_kept_whole_and_one_of_301_is_cut() -> None:
    m = model.build([_result("a", "stream.y", "fail", ("JPEG-DEC-01",), "y" * 300),
                     _result("a", "stream.z", "fail", ("JPEG-DEC-01",), "z" * 301)], implementations=[_impl("a")])
    lines = render_md.render(m).splitlines()
    assert "- a: `stream.y` **fail**: [JPEG-DEC-01] " + "y" * 300 in lines
    assert "- a: `stream.z` **fail**: [JPEG-DEC-01] " + "z" * 299 + "…" in lines


def test_a_requirement_text_of_120_characters_is_kept_whole_and_one_of_121_is_cut() -> None:
    m = model.build([_result("a", "stream.a", "pass", ("JPEG-DEC-01", "JPEG-DIM-03"))], implementations=[_impl("a")])
    reqs = {**m.requirements, "JPEG-DEC-01": {**m.requirements["JPEG-DEC-01"], "text": "d" * 120},
            "JPEG-DIM-03": {**m.requirements["JPEG-DIM-03"], "text": "e" * 121}}
    md = render_md.render(replace(m, requirements=reqs))
    assert "| JPEG-DEC-01: " + "d" * 120 + " |" in md
    assert "| JPEG-DIM-03: " + "e" * 119 + "… |" in md


def _parse_listing(count: int) -> str:
    results = [_result("a", f"config.made-up.case-{n:02}", "fail", ("JPEG-Q-01",), f"fail: [JPEG-Q-01 MUST] no {n}")
               for n in range(count)]
    md = render_md.render(model.build(results, implementations=[_impl("a")]))
    return _section(md, "### shim", "\n## ")


def test_the_parser_listing_in_markdown_stops_after_25_cases() -> None:
    few = _parse_listing(1)
    assert "`config.made-up.case-00`" in few and "… and" not in few
    full = _parse_listing(25)
    assert "`config.made-up.case-24`" in full and "… and" not in full
    over = _parse_listing(26)
    assert "`config.made-up.case-24`" in over and "`config.made-up.case-25`" not in over
    assert "- … and 1 more (see matrix.json)" in over


def _untested_requirement() -> str:
    return next(rid for rid, q in registry.requirements().items() if list(q.when) == ["untestable"])


def test_a_requirement_a_row_did_not_reach_says_not_tested_or_untestable() -> None:
    untestable = _untested_requirement()
    results = [_result("a", "stream.a", "pass", ("JPEG-DEC-01",)), _result("a", "stream.b", "pass", (untestable,)),
               _result("b", "stream.c", "pass", ("JPEG-DIM-03",))]
    md = render_md.render(model.build(results, implementations=[_impl("a"), _impl("b")]))
    rows = {line.split(":", 1)[0].removeprefix("| "): line for line in md.splitlines() if line.startswith("| JPEG-")}
    assert rows["JPEG-DEC-01"].endswith("| ✔ 1 | — not tested |")
    assert rows[untestable].endswith("| ✔ 1 | — untestable |")


# ---------------------------------------------------------------- matrix.html: which cells are marked


def test_a_cell_lists_a_lone_case_by_name_and_cases_that_say_the_same_under_one_message() -> None:
    results = [_result("a", "stream.one", "fail", ("JPEG-DEC-01",), "alone"),
               _result("a", "stream.two", "fail", ("JPEG-DIM-03",), "together"),
               _result("a", "stream.three", "fail", ("JPEG-DIM-03",), "together")]
    html = render_html.render(model.build(results, implementations=[_impl("a")]))
    assert '<li><span class="case">stream.one</span><b>fail</b><pre class="msg">alone</pre></li>' in html
    assert ('<li><b>fail</b> (2 cases)<pre class="msg">together</pre><span class="case">stream.two</span> '
            '<span class="case">stream.three</span></li>') in html
    assert "(1 cases)" not in html


def _three_parsers() -> str:
    impls = [_impl("a", parse="p1"), _impl("b", parse="p2"), _impl("c", parse="p3")]
    results = [_result(i.name, "config.quality.zero", "pass", ("JPEG-Q-01",)) for i in impls]
    html = render_html.render(model.build(results, implementations=impls))
    return _section(html, '<section id="parsing">', "</section>")


def test_the_parser_table_shows_each_requirement_a_parser_case_rests_on() -> None:
    section = _three_parsers()
    assert '<span class="rid">JPEG-Q-01</span>' in section
    # Only the topics that hold a parse case get a heading.
    assert section.count('class="group-head"') == 1


def test_the_parser_table_cuts_a_long_requirement_text_to_160_characters_and_keeps_it_whole_in_its_title() -> None:
    from zarr_jpeg_conformance.corpus.registry import requirements

    impls = [_impl("a", parse="p1"), _impl("b", parse="p2")]
    results = [_result(i.name, "config.subsampling.x", "pass", ("JPEG-SUB-01",)) for i in impls]
    section = _section(render_html.render(model.build(results, implementations=impls)), '<section id="parsing">', "</section>")
    text = requirements()["JPEG-SUB-01"].text
    assert len(text) > 160
    shown = re.search(r'<div class="rtext" title="[^"]*">([^<]*)</div>', section)
    assert shown is not None and shown.group(1) == html.escape(text[:159]) + "…", section


def test_an_empty_cell_of_a_rule_for_writers_says_a_reader_only_row_does_not_encode() -> None:
    from zarr_jpeg_conformance.report.wording import untested_text

    reader, codec = _impl("r", roles=("decode",)), _impl("c")
    assert render_html._empty_reason({"when": ["encode"]}, reader) == "does not apply: the row does not encode"
    assert render_html._empty_reason({"when": ["encode"]}, codec) == untested_text(["encode"])
    for when in (["decode"], ["parse", "encode"], []):
        assert render_html._empty_reason({"when": when}, reader) == untested_text(when), when


def test_the_last_two_parser_columns_open_their_lists_to_the_left() -> None:
    assert _td_classes(_three_parsers()) == ["o-pass", "o-pass end", "o-pass end"]


def _protection_matrix(extra: int = 0) -> model.Matrix:
    """Two built-ins that hold everything; libx breaks four MUSTs (and ``extra`` more cases of JPEG-DIM-03) and warns on a SHOULD."""
    impls = [_builtin("pillow"), _builtin("turbojpeg"), _impl("libx")]
    broken = {"stream.m.dec": "JPEG-DEC-01", "stream.m.dim": "JPEG-DIM-03", "stream.m.dim2": "JPEG-DIM-02",
              "stream.m.ecs": "JPEG-ECS-05", **{f"stream.m.more-{n:03}": "JPEG-DIM-03" for n in range(extra)}}
    results: list[model.CaseResult] = []
    for case, rid in broken.items():
        results += [_result(b, case, "pass", (rid,)) for b in ("pillow", "turbojpeg")]
        results.append(_result("libx", case, "fail", (rid,), f"fail: [{rid} MUST] x"))
    results += [_result(b, "stream.s.x07", "pass", ("JPEG-X-07",)) for b in ("pillow", "turbojpeg")]
    results.append(_result("libx", "stream.s.x07", "warn", ("JPEG-X-07",), "warn: [JPEG-X-07 SHOULD] x"))
    return model.build(results, implementations=impls)


def _protection_html(m: model.Matrix) -> str:
    return _section(render_html.render(m), '<section id="protection">', "</section>")


def test_protection_cells_are_red_for_a_must_yellow_for_a_should_and_the_last_four_open_to_the_left() -> None:
    section = _protection_html(_protection_matrix())
    assert _td_classes(section) == ["o-fail", "o-fail end", "o-fail end", "o-fail end", "o-warn end"]


def test_a_protection_cell_lists_80_cases_and_counts_the_rest() -> None:
    assert "… and" not in _protection_html(_protection_matrix())
    exactly = _protection_html(_protection_matrix(extra=79))  # JPEG-DIM-03: 80 cases
    assert ">80</div>" in exactly and "… and" not in exactly
    over = _protection_html(_protection_matrix(extra=80))  # 81 cases
    assert ">81</div>" in over and '<li class="muted">… and 1 more</li>' in over
    assert "stream.m.more-078" in over and "stream.m.more-079" not in over


def test_the_protection_intro_names_the_builtins_that_ran_and_no_other_row() -> None:
    m = _protection_matrix()
    m.implementations.append(_builtin("imagecodecs"))  # a built-in with no case in this run
    said = "every built-in that ran them holds them (pillow, turbojpeg)"
    assert said in render_md.render(m)
    assert said in render_html.render(m)


def test_differing_lists_only_the_cases_a_parsers_rows_disagree_on() -> None:
    impls = [_impl("a"), _impl("b")]
    results = [_result("a", "config.quality.zero", "pass", ("JPEG-Q-01",)), _result("b", "config.quality.zero", "fail", ("JPEG-Q-01",)),
               _result("a", "config.name.uppercase", "pass", ("JPEG-NAME-01",)),
               _result("b", "config.name.uppercase", "pass", ("JPEG-NAME-01",))]
    m = model.build(results, implementations=impls)
    assert [(g.parser, c.case) for g, c in parsing.differing(m.parsers)] == [("shim", "config.quality.zero")]


# ---------------------------------------------------------------- charts


def test_ticks_of_an_empty_range_at_zero_span_zero_to_one() -> None:
    assert svg.nice_ticks(0.0, 0.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    labels = re.findall(r'text-anchor="middle" fill="#333">([^<]*)</text>', svg.bar_chart([("g", [("x", 0.0, "#000")])], title="t", unit="u"))
    assert labels == ["0", "0.2", "0.4", "0.6", "0.8", "1"]


def test_ticks_of_a_range_that_is_not_finite_are_zero_and_one() -> None:
    assert svg.nice_ticks(0.0, math.inf) == [0.0, 1.0] and svg.nice_ticks(math.nan, 3.0) == [0.0, 1.0]
    chart = svg.line_chart([svg.Series("s", [(0.0, 1.0), (1.0, math.inf)], "#000")], title="t", x_label="x", y_label="y")
    assert re.findall(r'text-anchor="end" fill="#333">([^<]*)</text>', chart) == ["0", "1"]


def test_a_tick_of_one_billionth_is_labelled_as_such_not_as_zero() -> None:
    chart = svg.line_chart([svg.Series("s", [(0.0, 0.0), (1.0, 5e-9)], "#000")], title="t", x_label="x", y_label="y")
    labels = re.findall(r'text-anchor="end" fill="#333">([^<]*)</text>', chart)
    assert labels == ["0", "1e-09", "2e-09", "3e-09", "4e-09", "5e-09"]


# ---------------------------------------------------------------- compare


def test_compare_leaves_a_blank_line_between_the_version_changes_and_the_next_heading() -> None:
    old = {"implementations": [{"name": "a", "versions": {"lib": "1"}}], "cases": {"a": {"c": {"outcome": "fail"}}}}
    new = {"implementations": [{"name": "a", "versions": {"lib": "2"}}], "cases": {"a": {"c": {"outcome": "pass"}}}}
    assert "- **a** versions: lib 1 → lib 2\n\n## a\n" in compare.compare(old, new)


# ---------------------------------------------------------------- the store table's check-store column


def test_the_check_store_column_carries_the_requirements_check_store_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = list(si.ARRAYS)

    def check_store(argv: list[str], env: Any = None) -> subprocess.CompletedProcess[str]:
        out = Path(argv[argv.index("--out") + 1])
        out.mkdir(parents=True)
        arrays = [{"path": f"/{names[0]}", "outcome": "warn", "requirements": {"JPEG-MCU-02": 2, "JPEG-DIM-03": 0}},
                  {"path": f"/{names[1]}", "outcome": "pass", "requirements": {}}]
        (out / "report.json").write_text(json.dumps({"arrays": arrays}), encoding="utf-8")
        return subprocess.CompletedProcess(argv, 1, "", "")

    monkeypatch.setattr(stores_table, "_run", check_store)
    root = tmp_path / "writer"
    root.mkdir()
    got = stores_table._check_stores(root)
    assert got[names[0]] == {"outcome": "warn", "requirements": ["JPEG-DIM-03", "JPEG-MCU-02"]}
    assert got[names[1]] == {"outcome": "pass", "requirements": []}
    assert got[names[2]]["outcome"] == "not-jpeg"


# ---------------------------------------------------------------- the command line


def _fake_run(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Stand in for the suite runs (one row, pillow, one parse case) and the throughput child: what they were given."""
    calls: dict[str, list[Any]] = {"run_all": [], "throughput": []}

    def run_all(specs: list[str], out: Path, options: run.RunOptions, log: Any) -> list[dict[str, Any]]:
        calls["run_all"].append(options)
        line = {"format_version": 1, "implementation": "pillow", "case": "config.quality.zero", "outcome": "pass",
                "requirements": ["JPEG-Q-01"], "level": "MUST", "message": "", "metrics": {},
                "test": "test_parse.py::test_parse[pillow-config.quality.zero]"}
        (out / "results").mkdir(parents=True, exist_ok=True)
        (out / "results" / "pillow.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
        return [{"spec": "pillow", "name": "pillow", "available": True}]

    def run_throughput(specs: list[str], out: Path, **kwargs: Any) -> dict[str, Any]:
        calls["throughput"].append(list(specs))
        return {}

    monkeypatch.setattr(run, "run_all", run_all)
    monkeypatch.setattr(run, "run_throughput", run_throughput)
    return calls


def test_a_run_measures_throughput_of_what_loaded_unless_told_not_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    calls = _fake_run(monkeypatch)
    assert main(["--out", str(tmp_path / "m"), "--impl", "pillow", "--no-stores"]) == 0
    assert calls["throughput"] == [["pillow"]]
    calls["throughput"].clear()
    assert main(["--out", str(tmp_path / "n"), "--impl", "pillow", "--no-stores", "--no-throughput"]) == 0
    assert calls["throughput"] == []


def test_a_suite_run_is_given_half_an_hour_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    calls = _fake_run(monkeypatch)
    assert main(["--out", str(tmp_path / "m"), "--impl", "pillow", "--no-stores", "--no-throughput"]) == 0
    assert [o.timeout for o in calls["run_all"]] == [1800.0]
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "seconds per implementation's suite run (default 1800.0)" in " ".join(capsys.readouterr().out.split())


def test_foreign_results_are_named_three_at_most_then_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    calls = _fake_run(monkeypatch)
    out = tmp_path / "m"
    (out / "results").mkdir(parents=True)
    for n in range(5):
        (out / "results" / f"mine-{n}.jsonl").write_text('{"my": "data"}\n', encoding="utf-8")
    assert main(["--out", str(out), "--impl", "pillow", "--no-throughput"]) == 2
    err = capsys.readouterr().err
    assert "results/ holds mine-0.jsonl, mine-1.jsonl, mine-2.jsonl and 2 more, which no run of this tool wrote" in err
    assert calls["run_all"] == []
    (out / "results" / "mine-4.jsonl").unlink()
    assert main(["--out", str(out), "--impl", "pillow", "--no-throughput"]) == 2
    assert "results/ holds mine-0.jsonl, mine-1.jsonl, mine-2.jsonl and 1 more, which" in capsys.readouterr().err


# ---------------------------------------------------------------- the run: log, scheduling, timeout, Ctrl-C


def _probed(monkeypatch: pytest.MonkeyPatch, **reasons: str) -> None:
    """Stand in for the probe: a name given a reason cannot load, any other loads."""

    def probe(spec: str, timeout: float = 0.0) -> dict[str, Any]:
        if spec in reasons:
            return {"spec": spec, "available": False, "reason": reasons[spec]}
        return {"spec": spec, "name": spec, "available": True, "versions": {"lib": "1"}}

    monkeypatch.setattr(run, "probe", probe)


def _record(seconds: float = 0.1, **more: Any) -> dict[str, Any]:
    return {"command": "pytest", "returncode": 0, "timed_out": False, "interrupted": False, "seconds": seconds, "log": "x.log",
            "log_tail": "", "results": {"pass": 1}, **more}


def test_the_run_log_says_why_an_implementation_is_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _probed(monkeypatch, nope="cannot import 'nopejpeg'")
    lines: list[str] = []
    run.run_all(["nope"], tmp_path, run.RunOptions(suites=["parse"]), lines.append)
    assert "[1/1] nope: not available: cannot import 'nopejpeg'" in lines
    meta = json.loads((tmp_path / "results" / "nope.meta.json").read_text())
    assert (meta["available"], meta["run"]) == (False, {"order": 0})


def test_ctrl_c_keeps_the_running_row_and_marks_the_waiting_one_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _probed(monkeypatch)
    started = threading.Event()

    def run_suites(spec: str, stem: str, results_dir: Path, options: run.RunOptions, log: Any, stop: Any = None) -> dict[str, Any]:
        started.set()
        assert stop is not None and stop.wait(5)
        raise run.Interrupted(_record(0.2, returncode=2, interrupted=True))

    def ctrl_c(*args: Any, **kwargs: Any) -> None:
        assert started.wait(5)
        raise KeyboardInterrupt

    monkeypatch.setattr(run, "run_suites", run_suites)
    monkeypatch.setattr(run, "wait", ctrl_c)
    with pytest.raises(run.Interrupted):
        run.run_all(["a", "b"], tmp_path, run.RunOptions(suites=["parse"], jobs=1), lambda _: None)
    ran = json.loads((tmp_path / "results" / "a.meta.json").read_text())
    assert ran["run"]["interrupted"] and ran["run"]["order"] == 0
    waiting = json.loads((tmp_path / "results" / "b.meta.json").read_text())
    assert waiting["run"] == {"order": 1, "interrupted": True, "seconds": 0}


def test_a_suite_run_looks_at_its_timeout_and_at_ctrl_c_every_half_second(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wait for the pytest child is cut into slices of at most half a second, so that a timeout or a stop request
    is acted on within that (asserted on the slices the run asks for, not on a clock: the machine may be busy)."""
    waits: list[float | None] = []

    class Recording(subprocess.Popen):  # type: ignore[type-arg]
        def wait(self, timeout: float | None = None) -> int:
            waits.append(timeout)
            return super().wait(timeout)

    monkeypatch.setattr(run.subprocess, "Popen", Recording)
    # A harness that never answers start keeps the pytest child running past the first slice (the parse suite over
    # pillow finished inside it: 164 cases in under half a second, start-up included).
    record = run.run_suites("exec:sleep 10", "hangs", tmp_path, run.RunOptions(timeout=0.01, suites=["parse"]), lambda _: None)
    assert record["timed_out"] and not record["interrupted"]
    assert waits and waits[0] is not None and 0 < waits[0] <= 0.5, waits


def test_the_throughput_stage_passes_on_its_progress_and_says_when_it_is_done(tmp_path: Path) -> None:
    lines: list[str] = []
    doc = run.run_throughput(["imagecodecs"], tmp_path, repeats=1, size=16, timeout=120, log=lines.append)
    assert "error" not in doc and (tmp_path / "throughput.json").is_file(), doc
    assert lines[0] == "throughput: 1 implementation(s), 16x16, at most 1 repeats"
    assert any(line.startswith("    throughput: gray ") for line in lines), lines
    assert re.fullmatch(r"throughput: done in \d+\.\d s", lines[-1]), lines


_RECORD = {"results": {"pass": 2}, "seconds": 1.5, "timed_out": False, "returncode": 0}


def test_a_shared_run_keeps_its_record_beside_its_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus's checks (one run of the suites with no implementation): its record is written to results/, as an
    implementation's meta is, for the pages to check its results against."""
    monkeypatch.setattr(run, "run_suites", lambda *args, **kwargs: dict(_RECORD))
    (tmp_path / "results").mkdir()
    lines: list[str] = []
    assert run.run_corpus(tmp_path, run.RunOptions(), lines.append) == _RECORD
    saved = json.loads((tmp_path / "results" / f"{run.CORPUS_STEM}.run.json").read_text(encoding="utf-8"))
    assert (saved["specs"], saved["run"]) == ([], _RECORD)
    assert lines[-1] == "corpus: 2 results in 1.5 s"


def test_a_row_interrupted_in_its_run_ends_the_whole_run_with_that_rows_record(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A row's suite run that ends interrupted (its child was interrupted) is raised from run_all with the row's record,
    even where this process saw no Ctrl-C of its own: never a run taken for complete."""
    def interrupted(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise run.Interrupted(dict(_RECORD))

    monkeypatch.setattr(run, "_probe_all", lambda specs, jobs: [{"spec": "x", "name": "x", "available": True, "versions": {}}])
    monkeypatch.setattr(run, "run_suites", interrupted)
    with pytest.raises(run.Interrupted) as raised:
        run.run_all(["x"], tmp_path, run.RunOptions(suites=["parse"], jobs=1), lambda line: None)
    assert raised.value.run["results"] == {"pass": 2}
    meta = json.loads((tmp_path / "results" / "x.meta.json").read_text(encoding="utf-8"))
    assert meta["run"]["results"] == {"pass": 2} and meta["run"]["order"] == 0
