"""What every test module of this folder shares."""

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
