"""report repro: a finding's reproducer folder, whose command and replay script reproduce it without the report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from zarr_jpeg_conformance.report.repro import main

TESTS = Path(__file__).resolve().parent
SUITES = TESTS.parent / "suites"
#: A wrong decoder served by the harness server: an exec: row, so that the folder holds the protocol requests too.
SPEC = f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses.server wrong_adapters:DecodesBgr"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("repro")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PYTHONPATH", str(TESTS))  # the wrong adapters live in tests/
        subprocess.run([sys.executable, "-m", "pytest", str(SUITES / "test_decode_streams.py"), "-q", "-p", "no:cacheprovider",
                        "--corpus-checks=skip", "--tb=no", "-k", "test_reference and ycbcr-444.q20.32x96", f"--impl={SPEC}",
                        f"--results={tmp / 'results.jsonl'}"], cwd=tmp, capture_output=True, check=False, timeout=300)
        assert main([str(tmp / "results.jsonl"), "--out", str(tmp / "out"), "--impl", SPEC]) == 0
    (found,) = (tmp / "out" / "wrong-decodes-bgr").iterdir()
    return found


def test_the_folder_holds_the_finding_its_files_and_the_spec_words(folder: Path) -> None:
    assert folder.name == "01-jpeg-dec-02-reversed"
    finding = json.loads((folder / "finding.json").read_text(encoding="utf-8"))
    assert finding["rule"] == "JPEG-DEC-02" and finding["cause_id"] == "decode.reversed"
    assert finding["rerun"] == "reproduced: 1 of 1 case(s) again with the same outcome, rule and cause"
    (case,) = [p for p in folder.iterdir() if p.name.startswith("case-1-")]
    names = {p.name for p in case.iterdir()}
    assert {"calls.jsonl", "message.txt", "001-stream.jpg", "001-returned.npy", "001-returned.raw",
            "001-expected-repeat.npy", "001-expected-triangle.npy"} <= names, names
    calls = [json.loads(line) for line in (case / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    assert calls[0]["op"] == "parse" and calls[0]["codec"]["configuration"]["encoded_color_space"] == "ycbcr"
    issue = (folder / "ISSUE.md").read_text(encoding="utf-8")
    assert "the three components in reverse order" in issue and '"For grayscale, the single-component samples' in issue


def test_replay_needs_only_the_standard_library_and_gets_what_was_recorded(folder: Path) -> None:
    # -I -S: no site-packages, no PYTHONPATH: the script itself imports nothing of this project or numpy.
    done = subprocess.run([sys.executable, "-I", "-S", "replay.py"], cwd=folder, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(TESTS)}, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "decode: ok the same samples (as recorded)" in done.stdout
    requests = [json.loads(line) for line in (folder / "requests.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["op"] for r in requests][:2] == ["parse", "decode"] and requests[1]["handle"] == {"parse": 0}


def test_rerun_sh_reruns_only_the_findings_cases(folder: Path) -> None:
    script = (folder / "rerun.sh").read_text(encoding="utf-8")
    assert script.count("$SUITES/") == 1 and "test_decode_streams.py::test_reference[wrong-decodes-bgr-" in script


def test_a_finding_that_is_not_there_is_said_and_a_missing_spec_asked_for(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                          folder: Path) -> None:
    results = folder.parents[2] / "results.jsonl"
    assert main([str(results), "9", "--out", str(tmp_path), "--impl", SPEC]) == 2
    assert "no finding 9" in capsys.readouterr().err
    assert main([str(results), "--out", str(tmp_path)]) == 2
    assert "give --impl" in capsys.readouterr().err


def test_a_harness_spec_the_report_wrote_for_its_python_reruns_with_the_python_running_repro() -> None:
    """The report writes the shipped harnesses' specs with `python` (report.run); with a venv not activated that
    `python` is another interpreter, without this package: the rerun must use the one running the command."""
    import sys

    from zarr_jpeg_conformance.report.run import runnable

    assert runnable("exec:python -m zarr_jpeg_conformance.harnesses rust-zune-jpeg") == (
        f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses rust-zune-jpeg")
    assert runnable("exec:node my-harness.js") == "exec:node my-harness.js", "a user's own command runs as written"
    assert runnable("turbojpeg") == "turbojpeg"
