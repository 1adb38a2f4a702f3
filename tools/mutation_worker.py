"""One worker of the mutation run: imports the heavy libraries once, then forks one pytest run per mutant.

Started by ``tools.mutate`` inside a private copy of the package (``PYTHONPATH`` points at
the copy, so the copy's modules, and the mutated file, are what the tests import, here
and in every subprocess they start). Reads one JSON job per line on stdin, answers one
JSON line per job on stdout:

    {"file": "core/markers.py", "source": "<mutated text or null>", "args": [...], "timeout": 60, "log": "<path>"}
    {"rc": 1, "seconds": 3.2, "timed_out": false, "killer": "tests/test_markers.py::test_x"}

The file is restored after every job. A job whose pytest run outlives ``timeout`` is
killed with its whole process group.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

PACKAGE = "zarr_jpeg_conformance"
#: Imported before forking, so that each mutant's run starts without paying for them.
PRELOAD = ("numpy", "pytest", "_pytest.pytester", "hypothesis", "jsonschema", "PIL.Image", "imagecodecs",
           "turbojpeg", "simplejpeg", "zarr", "zarr.codecs")
#: The outer run's summary lines (the suites' own runs inside pytester print theirs too).
_FAILED = re.compile(r"^(?:FAILED|ERROR) (tests/\S+)", re.MULTILINE)


def _forget_package() -> None:
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def _child(root: Path, args: list[str], log: str) -> None:
    os.setsid()
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    code = 3
    try:
        import pytest

        _forget_package()
        os.chdir(root)
        sys.argv = ["pytest"]
        code = int(pytest.main(args))
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _wait(pid: int, timeout: float) -> tuple[int, bool]:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return -signal.SIGKILL, True
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):  # what the run left behind in its group (servers, pools)
        os.killpg(pid, signal.SIGKILL)
    return os.waitstatus_to_exitcode(status), False


def _forget_bytecode(path: Path) -> None:
    for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        pyc.unlink(missing_ok=True)


def run(root: Path, job: dict[str, Any]) -> dict[str, Any]:
    path = root / job["file"] if job.get("file") else None
    original = path.read_bytes() if path else b""
    started = time.monotonic()
    try:
        if path is not None and job.get("source") is not None:
            path.write_bytes(job["source"].encode())
            _forget_bytecode(path)
        pid = os.fork()
        if pid == 0:
            _child(root, job["args"], job["log"])
        rc, timed_out = _wait(pid, float(job["timeout"]))
    finally:
        if path is not None:
            path.write_bytes(original)
            _forget_bytecode(path)
    seconds = time.monotonic() - started
    text = Path(job["log"]).read_text(errors="replace") if os.path.exists(job["log"]) else ""
    killers = _FAILED.findall(text)
    return {"rc": rc, "seconds": round(seconds, 2), "timed_out": timed_out, "killer": killers[-1] if killers else None}


def main() -> None:
    for name in PRELOAD:
        # An optional backend that cannot load is simply not preloaded.
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    _forget_package()
    root = Path(os.environ["MUTATION_ROOT"])
    sys.dont_write_bytecode = True
    for line in sys.stdin:
        reply = run(root, json.loads(line))
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
