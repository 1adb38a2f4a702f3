"""The report's child processes, and its own end: nothing it started outlives the run.

Every child (a suite run's pytest, a probe, the throughput measurement, a step of the store table) runs in a session
of its own, marked (``adapters.process_tree``), so that what it starts, harnesses and their daemons included, is found
and ended with it: when it times out, when the run is interrupted, and when it ends. A SIGTERM to the report is
handled as Ctrl-C is (:func:`terminated_as_interrupt`): the suite runs are interrupted and keep their results so far,
the pages say the run is incomplete, the output folder is released only when no child of the run is left.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..adapters import process_tree

__all__ = ["Child", "Terminated", "end_all", "interruption", "run", "terminated_as_interrupt"]

_LIVE: set[Child] = set()
_LOCK = threading.Lock()
#: Whether a SIGTERM came while terminated_as_interrupt() was in force (its KeyboardInterrupt may have been caught and
#: another raised in its place by then: run_all's Interrupted).
_TERMINATED = threading.Event()


class Child:
    """A child process in a session of its own, marked: :meth:`end` ends it with everything it started."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None, **popen: Any) -> None:
        environment, self.mark = process_tree.tag(env)
        self.popen: subprocess.Popen[Any] = subprocess.Popen(list(argv), env=environment, start_new_session=True, **popen)
        with _LOCK:
            _LIVE.add(self)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def end(self) -> int | None:
        """SIGKILL it and its whole tree (descendants, its session and group, whatever carries its mark); reap it."""
        process_tree.end(self.pid, self.mark)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.popen.kill()
        code = self.popen.wait()
        self.forget()
        return code

    def finished(self) -> None:
        """It exited by itself: end what it left behind (a harness it did not stop, a daemon)."""
        process_tree.end(self.pid, self.mark)
        self.forget()

    def forget(self) -> None:
        with _LOCK:
            _LIVE.discard(self)


def end_all() -> None:
    """End every child still running, with its tree: what an interrupted run leaves is ended before it returns."""
    with _LOCK:
        live = list(_LIVE)
    for child in live:
        child.end()


def run(argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True)`` in a marked session of its own; at the timeout (or on
    any exception, Ctrl-C included) the child is ended with its tree, and the exception raised
    (``subprocess.TimeoutExpired`` at the timeout)."""
    child = Child(argv, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    try:
        out, err = child.popen.communicate(timeout=timeout)
    except BaseException:
        child.end()
        raise
    child.finished()
    return subprocess.CompletedProcess(list(argv), child.popen.returncode, out, err)


class Terminated(KeyboardInterrupt):
    """A SIGTERM, raised where Ctrl-C's KeyboardInterrupt is, and handled as it is."""


@contextlib.contextmanager
def terminated_as_interrupt() -> Iterator[None]:
    """While the block runs (in the main thread), SIGTERM raises :class:`Terminated`: the run stops as on Ctrl-C, its
    children interrupted and ended, its files left whole; the previous handler is restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_terminated(signum: int, frame: object) -> None:
        _TERMINATED.set()
        raise Terminated(f"signal {signal.Signals(signum).name}")

    _TERMINATED.clear()
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def interruption() -> tuple[str, int]:
    """What interrupted the run, and the exit status that says so: ("SIGTERM", 143) after a SIGTERM, else
    ("Ctrl-C", 130), as a shell reports a process those ended."""
    return ("SIGTERM", 143) if _TERMINATED.is_set() else ("Ctrl-C", 130)
