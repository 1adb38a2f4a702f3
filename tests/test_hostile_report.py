"""The report against a hostile or unlucky user, round 2: its output folder is owned by a manifest, nothing it
starts outlives it (SIGTERM is handled as Ctrl-C is), every bad input is a clear error naming the file, and what it
prints is shown, never obeyed, by the terminal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

import pytest

from zarr_jpeg_conformance.report import run
from zarr_jpeg_conformance.report import stores_table as st
from zarr_jpeg_conformance.report.__main__ import main as report
from zarr_jpeg_conformance.report.outfolder import LOCK, MANIFEST, OutFolder
from zarr_jpeg_conformance.report.saved import FORMAT_VERSION

TESTS = Path(__file__).resolve().parent


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _no_suites(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Stand in for the suite runs (none is started); the list gets a line when they would have started."""
    started: list[str] = []
    monkeypatch.setattr(run, "run_all", lambda specs, out, options, log: started.append("run") or [])
    return started


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ------------------------------------------------------------------ the output folder: a manifest says what is ours


@pytest.mark.parametrize("name", ["throughput.json", "stores.json", "matrix.md", "environment.json"])
def test_a_users_file_where_the_report_writes_is_refused_and_left_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """The user's throughput.json and stores.json were deleted, matrix.md and environment.json replaced: no manifest
    lists them, so the run is refused before anything is touched."""
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text("my own\n")
    (out / "notes.txt").write_text("mine too\n")
    before = _files(out)
    started = _no_suites(monkeypatch)
    assert report(["--out", str(out), "--impl", "pillow", "--no-throughput", "--no-stores"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"would replace {name} (not written by this tool)" in line and "move it, or give another folder" in line, line
    assert started == [] and _files(out) == before, "nothing removed, replaced or added (the lock file goes too)"


def test_a_page_edited_since_the_report_wrote_it_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The neighbour: listed in the manifest, but changed since: it is the user's now."""
    out = tmp_path / "out"
    out.mkdir()
    OutFolder(out).write_text("matrix.md", "# Matrix\n")
    (out / "matrix.md").write_text("# Matrix\n\nmy notes on it\n")
    before = _files(out)
    _no_suites(monkeypatch)
    assert report(["--out", str(out), "--impl", "pillow", "--no-throughput", "--no-stores"]) == 2
    assert "would replace matrix.md (changed since this tool wrote it)" in _one_line(capsys.readouterr().err)
    assert _files(out) == before


def test_re_rendering_over_a_users_page_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--from writes the pages into the folder it reads: a matrix.html of the user's there is not replaced."""
    out = tmp_path / "out"
    (out / "results").mkdir(parents=True)
    (out / "results" / "alpha.jsonl").write_text("")
    (out / "matrix.html").write_text("<p>mine</p>\n")
    assert report(["--from", str(out)]) == 2
    assert "would replace matrix.html (not written by this tool)" in _one_line(capsys.readouterr().err)
    assert (out / "matrix.html").read_text() == "<p>mine</p>\n" and not (out / "matrix.json").exists()


@pytest.mark.parametrize("name", ["matrix.json", "stores.json"])
def test_a_folder_where_a_page_goes_is_a_usage_error_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str], name: str) -> None:
    """A folder named like a file the run writes was a traceback and exit 1, an exit status that means a verdict."""
    out = tmp_path / "out"
    (out / name).mkdir(parents=True)
    _no_suites(monkeypatch)
    assert report(["--out", str(out), "--impl", "pillow", "--no-throughput", "--no-stores"]) == 2
    assert f"would replace {name} (a folder)" in _one_line(capsys.readouterr().err)
    assert (out / name).is_dir()


def test_a_run_removes_what_it_wrote_before_and_leaves_no_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    out.mkdir()
    folder = OutFolder(out)
    folder.write_text("throughput.json", "{}\n")
    (out / "mine.txt").write_text("mine\n")
    _no_suites(monkeypatch)
    assert report(["--out", str(out), "--impl", "pillow", "--no-throughput", "--no-stores"]) == 0
    assert not (out / "throughput.json").exists() and (out / "mine.txt").read_text() == "mine\n"
    assert not (out / LOCK).exists(), "the lock file goes with the run"
    listed = json.loads((out / MANIFEST).read_text())["files"]
    assert {"matrix.json", "matrix.md", "matrix.html", "environment.json"} <= set(listed) and "mine.txt" not in listed
    assert all(isinstance(digest, str) for name, digest in listed.items() if (out / name).exists())


def test_settling_unlists_a_claimed_file_only_where_nothing_is_there(tmp_path: Path) -> None:
    """A file reserved for a child and never written is unlisted; one the child wrote gets its digest; a folder or a
    link (even one that leads nowhere) where a file was reserved is something there, and stays claimed."""
    out = tmp_path / "out"
    out.mkdir()
    folder = OutFolder(out)
    folder.reserve(["never.json", "written.json", "folder.json", "dangling.json"])
    (out / "written.json").write_text("{}\n")
    (out / "folder.json").mkdir()
    (out / "dangling.json").symlink_to(tmp_path / "nowhere")
    folder.settle()
    listed = json.loads((out / MANIFEST).read_text())["files"]
    assert sorted(listed) == ["dangling.json", "folder.json", "written.json"], listed
    assert listed["folder.json"] is None and listed["dangling.json"] is None and isinstance(listed["written.json"], str)


def test_a_manifest_is_data_it_never_names_a_file_outside_the_folder(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "precious.txt").write_text("keep\n")
    (out / MANIFEST).write_text(json.dumps({"manifest_version": 1, "files": {"../precious.txt": None}}))
    assert report(["--out", str(out), "--impl", "pillow", "--no-throughput", "--no-stores"]) == 2
    assert f"{MANIFEST} is not a manifest this version wrote" in _one_line(capsys.readouterr().err)
    assert (tmp_path / "precious.txt").read_text() == "keep\n"


# ------------------------------------------------------------------ names that collide after sanitizing


def _probed(monkeypatch: pytest.MonkeyPatch, names: dict[str, str]) -> None:
    monkeypatch.setattr(run, "probe", lambda spec, timeout=0.0: {"spec": spec, "name": names[spec], "available": True,
                                                                   "roles": ["encode", "decode"], "versions": {}})


@pytest.mark.parametrize(("first", "second"), [("lib/a", "lib_a"), ("Lib", "lib"), ("x", "cross-pairs")])
def test_names_that_share_a_results_file_are_refused(monkeypatch: pytest.MonkeyPatch, first: str, second: str) -> None:
    """lib/a and lib_a wrote one results file and a row vanished; the neighbours: names that differ in case only (one
    file on a file system that does not tell case) and a name that is the cross suite's file."""
    _probed(monkeypatch, {"one": first, "two": second})
    metas = run._probe_all(["one", "two"], 1)
    refused = metas[1]
    assert metas[0]["available"] and not refused["available"], metas
    assert "results file" in refused["reason"] and "refused" in refused["reason"], refused["reason"]
    stems = run._stems(metas)
    assert len({s.casefold() for s in stems} | {"cross-pairs", "corpus-checks"}) == len(stems) + 2, stems


# ------------------------------------------------------------------ bad inputs: clear errors naming the file


def _rendered_folder(tmp_path: Path) -> Path:
    """A folder --from can render: one empty results file."""
    out = tmp_path / "from"
    (out / "results").mkdir(parents=True)
    (out / "results" / "alpha.jsonl").write_text("")
    return out


@pytest.mark.parametrize(("text", "problem"), [
    ('{"format_version": 2, "stores": [', "not JSON"),  # damaged
    ('{"format_version": 2, "writers": 5}', "missing"),  # JSON, of the wrong shape: was a KeyError
    ("[" * 100_000 + "]" * 100_000, "nested deeper"),  # was a RecursionError
])
def test_a_damaged_stores_json_is_a_clear_error_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           text: str, problem: str) -> None:
    out = _rendered_folder(tmp_path)
    (out / st.FILE).write_text(text)
    assert report(["--from", str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"{out / st.FILE}: " in line and problem in line, line


@pytest.mark.parametrize("depth", [40, 100_000])
def test_compare_on_deeply_nested_json_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        depth: int) -> None:
    """100 000 levels was a RecursionError out of json; 40, which json reads, would take the schema's validator there."""
    deep = tmp_path / "deep.json"
    deep.write_text('{"format_version": 2, "x": ' + "[" * depth + "]" * depth + "}")
    assert report(["compare", str(deep), str(deep)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"{deep}: nested" in line, line


def test_a_deeply_nested_results_line_is_a_clear_error_naming_the_line(tmp_path: Path) -> None:
    from zarr_jpeg_conformance.report.saved import ReportFileError, read_results

    path = tmp_path / "alpha.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ReportFileError, match=r"alpha.jsonl, line 1: not a JSON line: nested deeper"):
        read_results(path)


def _table(message: str) -> dict[str, Any]:
    cell = {"outcome": "refused", "message": message}
    return {"format_version": FORMAT_VERSION, "arrays": {}, "tolerance_db": 1.0, "writers": ["w"], "readers": ["w", "r"],
            "unavailable": {}, "outcomes": {"exact": "same"},
            "stores": [{"writer": "w", "array": "gray-2d", "written": True, "codec": {"name": "jpeg"},
                        "check_store": {"outcome": "pass"}, "cells": {"w": {"outcome": "exact", "psnr": 40.0}, "r": cell}},
                       {"writer": "w", "array": "rgb", "written": False, "message": "cannot\n2. forged | note"}]}


@pytest.mark.parametrize("message", ["line one\n2 is where the second line starts", "a | b\n\n3. c"])
def test_a_message_of_several_lines_is_one_note_on_both_pages(message: str) -> None:
    """A reader's message whose second line started with a digit was a traceback (the HTML was parsed back out of the
    Markdown); the neighbour holds a table's separator and a line that looks like a numbered note."""
    md = st.render_markdown(_table(message))
    notes = [line for line in md.splitlines() if line[:1].isdigit()]
    assert len(notes) == 2 and notes[0].startswith("1. r reading w's gray-2d: "), md
    assert notes[1] == "2. w cannot write rgb: cannot 2. forged | note", notes
    html = st.html_section(_table(message))
    assert html.count("<li>") == 2 and escape(" ".join(message.split())) in html, html


# ------------------------------------------------------------------ the terminal shows what implementations say


def test_escape_codes_in_names_and_messages_reach_the_terminal_escaped(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A name that clears the screen and a reason that sets the window's title, and (the neighbour) a bidirectional
    override that reorders the verdict line: each shown as its escape."""
    out = tmp_path / "from"
    (out / "results").mkdir(parents=True)
    meta = {"format_version": FORMAT_VERSION, "spec": "x", "name": "evil\x1b[2J\u202econforms", "available": False,
            "reason": "\x1b]0;owned\x07gone", "run": {}}
    (out / "results" / "evil.meta.json").write_text(json.dumps(meta))
    (out / "results" / "evil.jsonl").write_text("")
    assert report(["--from", str(out)]) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err and "\x07" not in err
    assert "evil\\x1b[2J\\u202econforms: not available" in err, err


def test_compare_shows_escape_codes_in_names_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zarr_jpeg_conformance.report import compare

    doc = {"format_version": FORMAT_VERSION, "implementations": [], "cases": {}, "cells": {}, "parsers": [], "corpus_checks": {}}
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(doc))
    impl = {"name": "a\x1b[31m\nb", "kind": "codec", "language": "x", "group": "codec", "parser": "p", "decode_only": False,
            "totals": {}, "judged_totals": {}, "writer_setting_totals": {}}
    new.write_text(json.dumps({**doc, "implementations": [impl]}))
    assert compare.load_matrix(new)["implementations"][0]["name"] == "a\\x1b[31m\\nb"
    assert report(["compare", str(old), str(new)]) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "implementation **a\\x1b[31m\\nb** added" in printed, printed


# ------------------------------------------------------------------ nothing outlives the run


def test_a_timed_out_step_of_the_store_table_is_one_cell_and_ends_with_its_children(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gone: Callable[..., bool]) -> None:
    """One step over its timeout made the whole table an error; now it is a cell of outcome timeout, its process
    ended with the child it started (the neighbour: a grandchild in a session of its own)."""
    harness = tmp_path / "zarrs-harness"
    pids = tmp_path / "pids"
    harness.write_text(f"#!{sys.executable}\nimport os, sys, time\n"
                       "if os.fork() == 0:\n    os.setsid()\n"
                       f"    open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n')\n    time.sleep(600)\n"
                       "time.sleep(600)\n")
    harness.chmod(0o755)
    monkeypatch.setattr(st, "TIMEOUT", 1.0)
    stacks = st._Stacks.__new__(st._Stacks)
    stacks.work, stacks.unavailable, stacks.binaries = tmp_path, {}, dict.fromkeys(st.RUST_STACKS, str(harness))
    started = time.monotonic()
    read = stacks.read_rust(next(iter(st.RUST_STACKS)), tmp_path / "store", tmp_path / "r.npy")
    assert time.monotonic() - started < 10
    assert (read["ok"], read["exception"]) == (False, "timeout") and "took more than 1 s" in read["message"], read
    assert st._cell(read, None, "gray-2d", None) == {"outcome": "timeout", "message": read["message"]}
    grandchild = int(pids.read_text().split()[0])
    assert gone(grandchild), "the step's child lives on"
    table = _table("fine")
    table["stores"][0]["cells"]["r"] = {"outcome": "timeout", "message": read["message"]}
    assert "TIMEOUT [1]" in st.render_markdown(table) and "exact" in st.render_markdown(table)


def _children_of(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_sigterm_ends_the_run_as_ctrl_c_does_and_nothing_outlives_it(tmp_path: Path, gone: Callable[..., bool]) -> None:
    """A SIGTERM killed the report alone: its pytest child (a session of its own) and the harness went on writing
    into the folder a new run could take. Now the run stops as on Ctrl-C: the suite run is interrupted, the pages
    say so, the exit status is 143, and neither the pytest child nor its harness is left, nor the run's temporary
    folder or its lock file."""
    out, pidfile, tmp = tmp_path / "out", tmp_path / "hanging", tmp_path / "tmp"
    tmp.mkdir()
    harness = f"exec:{sys.executable} -m fake_harnesses hang broken_adapters:Twice 1 parse"
    env = {**os.environ, "FAKE_HANG_PIDFILE": str(pidfile), "TMPDIR": str(tmp),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-m", "zarr_jpeg_conformance.report", "--out", str(out), "--impl", harness,
                             "--suites", "parse", "-k", "quality", "--no-throughput", "--no-stores",
                             "--pytest-arg=--harness-timeout=600"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while not pidfile.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pidfile.exists(), f"the harness never hung: {proc.communicate(timeout=30)}"
        hanging = int(pidfile.read_text().split()[0])
        suite_runs = _children_of(proc.pid)
        assert suite_runs, "no pytest child"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err[-3000:]
    assert "interrupted (SIGTERM)" in err and "Traceback" not in err, err[-3000:]
    assert gone(hanging) and all(gone(pid) for pid in suite_runs), "a child of the run outlived it"
    assert not (out / LOCK).exists() and (out / "matrix.md").is_file()
    assert not [p.name for p in tmp.iterdir() if p.name.startswith(("zjc-report-", "stores-"))], "a temporary folder is left"
    meta = json.loads(next((out / "results").glob("*.meta.json")).read_text())
    assert meta["run"]["interrupted"], meta


def test_a_users_file_the_pages_never_read_stays_and_does_not_stop_the_run(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A results/notes.run.json or results/mine.log of the user's is neither read nor removed, and no reason to refuse;
    a results/cross-pairs.run.json of the user's would be read, and is."""
    out = tmp_path / "out"
    (out / "results").mkdir(parents=True)
    for name in ("notes.run.json", "mine.log"):
        (out / "results" / name).write_text("mine\n")
    _no_suites(monkeypatch)
    assert report(["--out", str(out), "--impl", "pillow", "--no-throughput", "--no-stores"]) == 0
    assert all((out / "results" / name).read_text() == "mine\n" for name in ("notes.run.json", "mine.log"))
    (out / "results" / "cross-pairs.run.json").write_text("{}\n")
    assert report(["--out", str(out), "--impl", "pillow", "--no-throughput", "--no-stores"]) == 2
