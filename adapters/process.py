"""A harness process: started with resource limits in its own process group, spoken to line by line.

The plumbing under :class:`~zarr_jpeg_conformance.adapters.remote.ExecAdapter`: start a
command, write a request and read its reply before a deadline without ever blocking on a
full pipe, keep the tail of its stderr, and end it (with its whole process group) when it
is done or has failed. POSIX only (process groups, resource limits).
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..protocol.wire import TEXT_CAP

try:
    import resource
except ImportError:  # not POSIX: no limits (and no harness processes: see the module docstring)
    resource = None  # type: ignore[assignment]

#: Address space of a harness process, in bytes. A Python harness with numpy and every
#: backend peaks near 160 MB of address space and Node 20 with pdf.js starts under 1 GiB;
#: the largest chunk of the corpus is 3 MB. 2 GiB stops a runaway allocation long
#: before it hurts the machine.
DEFAULT_MEMORY_LIMIT = 2 << 30


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


class StderrTail:
    """Drains a harness's stderr in a thread, keeping the last TEXT_CAP bytes."""

    def __init__(self, stream: Any) -> None:
        self._buf = bytearray()
        self._total = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True, name="harness-stderr")
        self._thread.start()

    def _drain(self, stream: Any) -> None:
        # Undrained, a chatty harness would block on a full pipe and look hung.
        while chunk := stream.read1(65536):
            with self._lock:
                self._buf += chunk
                self._total += len(chunk)
                if len(self._buf) > TEXT_CAP:
                    del self._buf[: len(self._buf) - TEXT_CAP]
        stream.close()

    def mark(self) -> int:
        with self._lock:
            return self._total

    def since(self, mark: int, *, settle: float = 0.0) -> str:
        """Text written since ``mark`` (at most the last TEXT_CAP bytes)."""
        if settle:
            self._thread.join(settle)
        with self._lock:
            n = min(self._total - mark, len(self._buf))
            tail = bytes(self._buf[len(self._buf) - n :]) if n > 0 else b""
        text = tail.decode("utf-8", "replace").strip()
        return ("[...]" + text) if self._total - mark > len(tail) and text else text


class HarnessProcess:
    """One running harness process with non-blocking, deadline-bound line I/O."""

    def __init__(self, argv: Sequence[str], memory_limit: int | None) -> None:
        def limits() -> None:
            # Runs in the child between fork and exec: no imports, no locks, only syscalls.
            if resource is None:
                return
            # A crash must not leave a core dump of a 2 GiB process behind.
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if memory_limit:
                resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

        self.popen = subprocess.Popen(  # the command is the user's --impl
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=limits,  # setrlimit only, no locks taken: safe before exec
            start_new_session=True,  # a timeout kills the whole group, wrappers included
        )
        assert self.popen.stdin and self.popen.stdout and self.popen.stderr
        self.stderr = StderrTail(self.popen.stderr)
        self._in = self.popen.stdin.fileno()
        self._out = self.popen.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._pending = bytearray()

    @property
    def pid(self) -> int:
        return self.popen.pid

    def exchange(self, line: bytes, deadline: float) -> bytes | None:
        """Write one line and read one line back; None on EOF; TimeoutError past the deadline."""
        todo = memoryview(line)
        with selectors.DefaultSelector() as sel:
            sel.register(self._out, selectors.EVENT_READ)
            if todo:
                sel.register(self._in, selectors.EVENT_WRITE)
            while True:
                if b"\n" in self._pending:
                    reply, _, rest = bytes(self._pending).partition(b"\n")
                    self._pending = bytearray(rest)
                    return reply
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                for key, _ in sel.select(left):
                    if key.fd == self._in:
                        try:
                            n = os.write(self._in, todo)
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:
                            return None
                        todo = todo[n:]
                        if not todo:
                            sel.unregister(self._in)
                    else:
                        try:
                            chunk = os.read(self._out, 1 << 20)
                        except BlockingIOError:
                            continue
                        if not chunk:
                            return None
                        self._pending += chunk

    def wait(self, timeout: float) -> int | None:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> int | None:
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.popen.kill()
        code = self.wait(10)
        self._close_pipes()
        return code

    def shutdown(self, grace: float) -> int | None:
        """Close stdin (end of input: a harness exits) and wait; kill after ``grace`` seconds."""
        self._close_pipes(stdout=False)
        code = self.wait(grace)
        if code is None:
            return self.kill()
        self._close_pipes()
        return code

    def _close_pipes(self, *, stdout: bool = True) -> None:
        for stream in (self.popen.stdin, self.popen.stdout if stdout else None):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass


__all__ = ["DEFAULT_MEMORY_LIMIT", "HarnessProcess", "StderrTail", "describe_exit"]
