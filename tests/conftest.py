"""What every test module of this folder shares."""

import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

# pytester's in-process runs (about 250: the suites on wrong adapters) leave sys.modules as they found it, so what one
# run imports the next imports again, and each run's summary imports hypothesis through its pytest plugin (77 modules,
# 0.23 s a run, measured with cProfile). A whole test run imports hypothesis while collecting (tests/test_protocol.py);
# a file run alone did not: tests/test_suites_bite.py's wrong adapters alone took 30 s, now 13 s.
import hypothesis.internal.observability  # noqa: F401
import pytest


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not); Linux /proc."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _gone(pid: int, within: float = 5.0) -> bool:
    """Whether ``pid`` has stopped running, or does within ``within`` seconds."""
    deadline = time.monotonic() + within
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _running(pid)


@pytest.fixture
def running() -> Callable[[int], bool]:
    """Whether a process runs (for tests that check what outlives what)."""
    return _running


@pytest.fixture
def gone() -> Callable[..., bool]:
    """Whether a process has stopped running, or does within a few seconds."""
    return _gone


ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout built as a wheel, once a session (tests/test_wheel.py, tests/test_ci_recipe_runs.py)."""
    out = tmp_path_factory.mktemp("wheel") / "dist"
    # setuptools builds through build/ in the checkout and ships what an earlier build left there: a file since
    # removed from the package data would still be in the wheel.
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)], cwd=out.parent,
                           capture_output=True, text=True, timeout=600, check=False)
    assert built.returncode == 0, built.stderr[-3000:]
    (found,) = out.glob("*.whl")
    return found


@pytest.fixture(scope="session")
def venv_over_ours() -> Callable[[Path], Path]:
    """Make a fresh venv at a folder that sees the site-packages of the interpreter running the tests; its python.

    It sees them whether that is a venv's or the system's, so that numpy and the backends need no
    download. ``--system-site-packages`` would show the *base* interpreter's, which lack everything
    installed in a venv running these tests: a .pth file appends ours instead. A .pth line only
    appends a directory: the .pth files inside it (this checkout's editable install among them) are
    not run, so this project is importable there only once something installs it into the venv.
    pip is ours too (no copy of its own, 7 s less): ``python -m pip`` installs into the venv it runs in.
    """

    def make(folder: Path) -> Path:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True, timeout=300)
        python = folder / "bin" / "python"
        ours = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]
        purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True, timeout=60).stdout.strip()
        (Path(purelib) / "outer-site-packages.pth").write_text("".join(f"{p}\n" for p in ours))
        return python

    return make


# tests/ is no package: the kits beside the test modules (hostile_kit.py) are imported by their names.
if str(Path(__file__).parent) not in sys.path:
    sys.path.append(str(Path(__file__).parent))


@pytest.fixture(scope="module")
def gray() -> bytes:
    """A grayscale JPEG stream of a 32x32 chunk as the jpeg codec writes it (``hostile_kit.stream``), once a module."""
    pytest.importorskip("imagecodecs")
    from hostile_kit import stream

    return stream()
