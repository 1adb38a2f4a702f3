"""What every test module of this folder shares."""

# pytester's in-process runs (about 250: the suites on wrong adapters) leave sys.modules as they found it, so what one
# run imports the next imports again, and each run's summary imports hypothesis through its pytest plugin (77 modules,
# 0.23 s a run, measured with cProfile). A whole test run imports hypothesis while collecting (tests/test_protocol.py);
# a file run alone did not: tests/test_suites_bite.py's wrong adapters alone took 30 s, now 13 s.
import sys
from pathlib import Path

import hypothesis.internal.observability  # noqa: F401
import pytest

# tests/ is no package: the kits beside the test modules (hostile_kit.py) are imported by their names.
if str(Path(__file__).parent) not in sys.path:
    sys.path.append(str(Path(__file__).parent))


@pytest.fixture(scope="module")
def gray() -> bytes:
    """A grayscale JPEG stream of a 32x32 chunk as the jpeg codec writes it (``hostile_kit.stream``), once a module."""
    pytest.importorskip("imagecodecs")
    from hostile_kit import stream

    return stream()
