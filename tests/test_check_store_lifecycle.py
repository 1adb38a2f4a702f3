"""Nothing outlives the run (issue 45): SIGTERM ends check-store as Ctrl-C does, with a partial report marked as
interrupted, and with no worker process left; the scratch space of a local dask cluster goes with the run.

check-store runs as its command, in a session of its own, against a server that answers slowly, so that the signal
lands while chunks are being checked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("zarr")

from hostile_kit import array, stream

from zarr_jpeg_conformance.check_store.serve import serve

if not Path("/proc/self/stat").exists():
    pytest.skip("needs /proc to see a run's processes", allow_module_level=True)


def _group(pgid: int) -> list[int]:
    """The processes of process group ``pgid`` (a run started in a session of its own, and all it started)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry))
    return found


@pytest.fixture(scope="module")
def slow_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A store of 64 chunks that are no JPEG (each a finding, so each batch writes a line of findings.jsonl as it lands)
    behind a server that waits 0.2 s before each answer."""
    folder = tmp_path_factory.mktemp("slow")
    array(folder / "s.zarr", [32 * 8, 32 * 8], [32, 32], {f"c/{i}/{j}": b"garbage" for i in range(8) for j in range(8)})
    with serve(folder, delay=0.2) as base:
        yield f"{base}/s.zarr"


def _wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {seconds} s")


def _landed(out: Path) -> int:
    """Chunks whose records are in findings.jsonl (every chunk of the slow store has one)."""
    path = out / "findings.jsonl"
    return path.read_text().count('"case"') if path.exists() else 0


def _terminate_midway(run: subprocess.Popen[str], out: Path, workers: int) -> str:
    """SIGTERM to the run alone (not its group) once its workers are up and a batch has landed; what it printed."""
    try:
        _wait_for(lambda: len(_group(run.pid)) > workers and _landed(out) >= 1, 60, "the run's first batch")
        run.send_signal(signal.SIGTERM)
        stdout, _ = run.communicate(timeout=60)
        _wait_for(lambda: not _group(run.pid), 10, "the run's processes ending")
        return stdout
    finally:
        for pid in _group(run.pid):  # what the run left, ended here, so that the test leaves nothing running either
            os.kill(pid, signal.SIGKILL)
        if run.poll() is None:
            run.kill()
            run.communicate()


@pytest.mark.parametrize("scheduler", ["processes", "threads"])
def test_sigterm_ends_the_run_like_ctrl_c_with_a_partial_report_and_no_worker_left(tmp_path: Path, slow_store: str,
                                                                                   scheduler: str) -> None:
    """Issue 45, medium: SIGTERM to ``--scheduler processes`` left its workers running; low: SIGTERM to check-store
    gave no partial report. Now SIGTERM is taken as Ctrl-C is: the summary and the report hold what was checked,
    marked interrupted (by SIGTERM), the exit status is 143, and every process of the run has ended."""
    out = tmp_path / "out"
    run = subprocess.Popen([sys.executable, "-m", "zarr_jpeg_conformance.check_store", slow_store, "--scheduler", scheduler,
                            "--workers", "2", "--batch", "1", "-q", "--out", str(out)], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    stdout = _terminate_midway(run, out, workers=2 if scheduler == "processes" else 0)
    assert run.returncode == 143, (run.returncode, stdout)
    assert "INTERRUPTED (SIGTERM) after" in stdout and "CONFORMS" not in stdout, stdout
    report = json.loads((out / "report.json").read_text())
    assert report["interrupted"] is True and report["interruption"] == "SIGTERM" and report["conforms"] is False
    assert 1 <= report["totals"]["fail"] < 64 and report["totals"]["fail"] == _landed(out), report["totals"]
    assert "interrupted (SIGTERM): a partial report" in (out / "report.html").read_text()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_a_local_dask_cluster_leaves_no_scratch_space(tmp_path: Path) -> None:
    """Issue 45, low: temporary folders were left behind. A local cluster's scratch space (its workers' folders and
    locks) is a folder of the run's, removed with it: the temporary folder holds nothing after the run."""
    pytest.importorskip("distributed")
    pytest.importorskip("imagecodecs")
    data = stream()
    store = array(tmp_path / "s.zarr", [64, 64], [32, 32], {f"c/{i}/{j}": data for i in range(2) for j in range(2)})
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = subprocess.run([sys.executable, "-m", "zarr_jpeg_conformance.check_store", str(store), "--dask", "--workers", "1",
                           "-q"], capture_output=True, text=True, timeout=180, check=False, env={**os.environ, "TMPDIR": str(scratch)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(scratch.iterdir()) == []
