"""A harness process: started with resource limits in its own process group, spoken to message by message.

The plumbing under :class:`~zarr_jpeg_conformance.adapters.remote.ExecAdapter`: start a
command, write a request and read its reply (in either framing, ``protocol.framing``)
before a deadline without ever blocking on a full pipe, keep the tail of its stderr, and
end it with its whole process group when it is done or has failed. POSIX only (process
groups, resource limits).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..protocol.framing import JSON_LINES, MAX_MESSAGE, Frame, FrameReader
from ..protocol.wire import TEXT_CAP
from . import process_tree

try:
    import fcntl
    import resource
except ImportError:  # not POSIX: no limits (and no harness processes: see the module docstring)
    fcntl = None  # type: ignore[assignment]
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


#: Bytes a harness pipe holds (Linux; the default is 64 KiB). A 256x256x3 chunk is 192 KiB:
#: with 64 KiB pipes a request and its reply each take several wake-ups of the other side,
#: which cost more than the codec on a busy machine. 1 MiB is Linux's default maximum for
#: an unprivileged process (/proc/sys/fs/pipe-max-size).
PIPE_SIZE = 1 << 20


#: Seconds a harness that closed its stdin has to finish the replies it writes before it is
#: taken for dead (a dead one closes stdout too, at once, unless a child holds it open).
CLOSED_GRACE = 2.0


#: Seconds between looks at whether the harness exited, where its exit cannot be waited for (no pidfd).
POLL_EXIT = 0.5


def _holders(fds: Sequence[int]) -> list[int]:
    """The other processes that hold the writing end of the pipes ``fds`` read from (Linux ``/proc``; none elsewhere).

    Only the writing end counts: a process this one forked (a worker pool) may hold a copy
    of the reading end, and is none of the harness's.
    """
    targets = set()
    for fd in fds:
        with contextlib.suppress(OSError):
            targets.add(f"pipe:[{os.fstat(fd).st_ino}]")
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    me, found = os.getpid(), []
    for pid in pids:
        if pid == me:
            continue
        try:
            links = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for link in links:
            try:
                if os.readlink(f"/proc/{pid}/fd/{link}") in targets and _writes(pid, link):
                    found.append(pid)
                    break
            except OSError:
                continue
    return found


def _writes(pid: int, fd: str) -> bool:
    """Whether descriptor ``fd`` of process ``pid`` is open for writing only (a pipe's writing end)."""
    with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as info:
        for line in info:
            if line.startswith("flags:"):
                return int(line.split()[1], 8) & os.O_ACCMODE == os.O_WRONLY
    return False


def _widen_pipe(fd: int) -> None:
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if setpipe is None:
        return
    with contextlib.suppress(OSError):  # over the system's maximum, or not a pipe: keep what it is
        fcntl.fcntl(fd, setpipe, PIPE_SIZE)


class HarnessProcess:
    """One running harness process with non-blocking, deadline-bound message I/O.

    ``reader`` cuts its stdout into messages (JSON lines until the caller switches its
    ``framing``) and refuses one larger than ``max_message`` bytes. ``pass_fds``: descriptors it inherits (a region).
    """

    def __init__(self, argv: Sequence[str], memory_limit: int | None, max_message: int | None = MAX_MESSAGE,
                 pass_fds: Sequence[int] = ()) -> None:
        def limits() -> None:
            # Runs in the child between fork and exec: no imports, no locks, only syscalls.
            if resource is None:
                return
            # A crash must not leave a core dump of a 2 GiB process behind.
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if memory_limit:
                # Never above the client's own hard limit (a CI job's ulimit -v): raising it is refused, and the start with it.
                hard = resource.getrlimit(resource.RLIMIT_AS)[1]
                limit = memory_limit if hard == resource.RLIM_INFINITY else min(memory_limit, hard)
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        # Marked: what it starts carries the mark, and ends with it, whatever session it moves to (process_tree).
        env, self.mark = process_tree.tag()
        self.popen = subprocess.Popen(  # the command is the user's --impl
            list(argv),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=limits,  # setrlimit only, no locks taken: safe before exec
            start_new_session=True,  # its own process group: ending it ends wrappers and children too
            pass_fds=tuple(pass_fds),  # the shared framing's region, if offered
        )
        assert self.popen.stdin and self.popen.stdout and self.popen.stderr
        self.stderr = StderrTail(self.popen.stderr)
        self._in = self.popen.stdin.fileno()
        self._out = self.popen.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        for fd in (self._in, self._out):
            _widen_pipe(fd)
        self.reader = FrameReader(JSON_LINES, max_message)
        self._eof = False
        self._unwritten: list[memoryview] = []
        #: Whether stdin is polled for room: only while bytes are queued for it (a pipe with room
        #: would wake every poll), kept across calls while the harness is behind (pipelining).
        self._polling_in = False
        #: Bytes queued for the harness so far, and how many of them it has taken.
        self.queued = 0
        self.written = 0
        #: When writing to its stdin first failed (it closed it, or died), if it has.
        self._closed_at: float | None = None
        # poll, not selectors: a request waits on it about once, and the selectors layer (keys,
        # epoll_ctl for each change of interest) cost more than the poll itself.
        self._poll = select.poll()
        self._poll.register(self._out, select.POLLIN)
        #: When the harness itself was seen to exit, if it has: a process it left behind may
        #: hold its stdout open, and is not waited for past CLOSED_GRACE.
        self._exited_at: float | None = None
        #: Readable when the harness exits (Linux); None: its exit is polled for.
        self._pidfd: int | None = None
        with contextlib.suppress(AttributeError, OSError):
            self._pidfd = os.pidfd_open(self.popen.pid)
            self._poll.register(self._pidfd, select.POLLIN)
        #: Processes outside the harness's process group that held its stdout or stderr open when
        #: it was ended (a daemon it started with setsid), killed with it.
        self.strays: list[int] = []
        #: Other processes of its tree outside its process group when it was ended (daemons: process_tree), killed too.
        self.daemons: list[int] = []

    @property
    def pid(self) -> int:
        return self.popen.pid

    def exchange(self, parts: Sequence[bytes | bytearray | memoryview], deadline: float) -> Frame | None:
        """Write a request (its parts in order) and read the next message back: :meth:`send`, then :meth:`receive`."""
        self.send(parts)
        return self.receive(deadline)

    def send(self, parts: Sequence[bytes | bytearray | memoryview]) -> int:
        """Queue a message for the harness and write what its stdin takes now, without waiting.

        Returns where the message ends in the byte stream to the harness: once
        :attr:`written` reaches it, the harness has taken all of it. Messages may be queued
        before earlier replies arrive (pipelining); :meth:`receive` goes on writing them.
        """
        behind = bool(self._unwritten)
        for part in parts:
            view = memoryview(part).cast("B")
            if view.nbytes:
                self._unwritten.append(view)
                self.queued += view.nbytes
        # Most requests fit in the pipe: written at once, without asking whether it has room.
        # Behind bytes that did not fit, they wait for poll to say it has room (no write that fails).
        if not behind:
            self._write()
        return self.queued

    def receive(self, deadline: float) -> Frame | None:
        """The next message from the harness, writing what is queued meanwhile.

        None on end of output (the harness closed stdout or died); TimeoutError past the
        deadline; FrameError (MessageTooLarge included) for output that is no message.
        Reading never blocks the writing, so neither side waits on a full pipe. A message
        may come before all that is queued is written: the caller compares :attr:`written`
        with what :meth:`send` returned. A harness that closed its stdin gets
        :data:`CLOSED_GRACE` seconds to finish what it writes before this says None.
        """
        reader = self.reader
        while True:
            frame = reader.pop()
            if frame is not None:
                return frame
            if self._eof:
                return None
            if self._polling_in != bool(self._unwritten):
                self._poll_in(not self._polling_in)
            now = time.monotonic()
            left = deadline - now
            if self._closed_at is not None or self._exited_at is not None:
                gone = min(t for t in (self._closed_at, self._exited_at) if t is not None)
                if now >= gone + CLOSED_GRACE:
                    # It stopped reading, or exited, and says nothing: it is dying or dead (what it
                    # left running may hold stdout open: that is no reply).
                    return None
                left = min(left, gone + CLOSED_GRACE - now)
            elif self._pidfd is None:
                left = min(left, POLL_EXIT)
            if now >= deadline:
                raise TimeoutError
            for fd, _ in self._poll.poll(left * 1e3):
                if fd == self._out:
                    self._read()
                elif fd == self._in:
                    self._write()
                else:
                    self._saw_exit()
            if self._pidfd is None and self._exited_at is None and self.popen.poll() is not None:
                self._exited_at = time.monotonic()

    def _poll_in(self, on: bool) -> None:
        if on:
            self._poll.register(self._in, select.POLLOUT)
        else:
            self._poll.unregister(self._in)
        self._polling_in = on

    def _saw_exit(self) -> None:
        assert self._pidfd is not None
        self._poll.unregister(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = None
        self._exited_at = time.monotonic()

    @property
    def unwritten(self) -> int:
        """Bytes queued for the harness and not yet taken by it."""
        return self.queued - self.written

    def _write(self) -> None:
        """Write what the pipe takes now; a harness that closed stdin gets nothing more."""
        todo = self._unwritten
        while todo:
            try:
                n = os.writev(self._in, todo)
            except BlockingIOError:
                return
            except BrokenPipeError:
                # What it will never read is dropped; its replies so far may still come.
                todo.clear()
                if self._closed_at is None:
                    self._closed_at = time.monotonic()
                return
            self.written += n
            while n and n >= len(todo[0]):
                n -= len(todo.pop(0))
            if n:
                todo[0] = todo[0][n:]

    def _read(self) -> None:
        if self.reader.fill(self._readinto) == 0:
            self._eof = True

    def _readinto(self, buffer: memoryview) -> int | None:
        # Into the reader's own buffers: a fresh 1 MiB bytes object per read (os.read) costs
        # more than the data it holds (measured: 196 KB round trips 3x slower).
        try:
            return os.readv(self._out, [buffer])
        except BlockingIOError:
            return None

    def unsolicited(self) -> int:
        """Bytes the harness wrote that no request asked for (so far, without waiting)."""
        if not self._eof:
            self._read()
        return self.reader.buffered

    def drain_stdout(self, timeout: float, limit: int = TEXT_CAP) -> str:
        """What is left on stdout, up to end of output or ``timeout``: the last words of a dying harness."""
        deadline = time.monotonic() + timeout
        if self._polling_in:
            self._poll_in(False)  # only its output is waited for now
        while not self._eof and self.reader.buffered < limit and (left := deadline - time.monotonic()) > 0:
            if self._poll.poll(left * 1e3):
                self._read()
        return self.reader.peek(limit).decode("utf-8", "replace").strip()

    def wait(self, timeout: float) -> int | None:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> int | None:
        """Kill the harness with its whole process group (and what holds its output open); its exit status."""
        self.reader.clear()  # what it sent is of no use now: freed at once, whoever still holds this object
        self._end_tree()  # while it may still live, its children are found as its children too
        self._kill_group()
        code = self.wait(10)
        self._kill_strays()
        self._close_pipes()
        return code

    def shutdown(self, grace: float) -> int | None:
        """Close stdin (end of input: a harness exits) and wait; kill after ``grace`` seconds.

        Whatever the harness started in its process group (a child an adapter forked, a
        worker pool) ends with it, even when the harness itself exits cleanly.
        """
        self._close_pipes(stdout=False)
        code = self.wait(grace)
        self._end_tree()
        self._kill_group()
        if code is None:
            code = self.wait(10)
        self._kill_strays()
        self._close_pipes()
        return code

    def _end_tree(self) -> None:
        """End what the harness started that left its process group: a daemon in a session of its own, its descriptors
        on /dev/null, re-parented to init (process_tree finds it by the mark it inherited)."""
        self.daemons += [pid for pid in process_tree.end(self.pid, self.mark) if pid not in self.daemons]

    def _stdout_held(self) -> bool:
        """Whether some process still has the harness's stdout open for writing, once the harness is gone."""
        if self.popen.stdout is None or self.popen.stdout.closed:
            return False  # its number may name another file by now
        try:
            for _ in range(64):
                if not os.read(self._out, 1 << 16):
                    return False
        except BlockingIOError:
            return True
        except OSError:
            return False
        return True  # still writing

    def _kill_strays(self) -> None:
        """Kill what holds the harness's output open from outside its process group (``setsid`` daemons).

        Only a process the harness started can hold these pipes, since this process made them
        for it alone; an orphan reparented to init keeps no trace of its parent, but keeps the pipe.
        """
        if not self._stdout_held():
            return
        streams = [s for s in (self.popen.stdout, self.popen.stderr) if s is not None and not s.closed]
        fds = []
        for stream in streams:
            with contextlib.suppress(ValueError, OSError):
                fds.append(stream.fileno())
        for pid in _holders(fds):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                group = os.getpgid(pid)
                if group == self.popen.pid:
                    continue  # in the harness's group: killed with it, and on its way out
                if group == pid and group != os.getpgrp():
                    os.killpg(group, signal.SIGKILL)  # it leads a group of its own: its children go with it
                else:
                    os.kill(pid, signal.SIGKILL)
                self.strays.append(pid)

    def _kill_group(self) -> None:
        # The group's ID stays reserved while any member lives (even after the leader is
        # reaped), so this can only reach the harness's own processes.
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # no member left
        except PermissionError:
            if self.popen.poll() is None:
                self.popen.kill()

    def _close_pipes(self, *, stdout: bool = True) -> None:
        if stdout and self._pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = None
        for stream in (self.popen.stdin, self.popen.stdout if stdout else None):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass


__all__ = ["DEFAULT_MEMORY_LIMIT", "HarnessProcess", "StderrTail", "describe_exit"]
