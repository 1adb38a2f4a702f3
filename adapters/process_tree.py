"""A child process and everything it started, found and ended together: nothing outlives the run.

A process group ends what stays in it, but a daemon leaves it: it calls ``setsid`` (a new session and group),
forks twice (its parent exits, and it is re-parented to init), and points its descriptors at ``/dev/null`` (no pipe
of ours is held). So a child is started with a mark in its environment, an environment variable whose name holds a
fresh token (:func:`tag`); its descendants inherit it, whatever groups and sessions they move to, unless they clear
their environment. :func:`end` ends every process that carries the mark, is in the child's session or group, or
descends from it (all found before any is signalled), as build servers end what a build left behind. Linux
(``/proc``); elsewhere only the child's process group is ended.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from collections.abc import Mapping

__all__ = ["MARK_PREFIX", "end", "mark_of", "members", "tag"]

#: What every mark's environment variable is called, before its token.
MARK_PREFIX = "ZARR_JPEG_CONFORMANCE_TREE_"
#: Rounds of looking for members: one that forked while the others were signalled is found in the next.
_ROUNDS = 3


def tag(env: Mapping[str, str] | None = None) -> tuple[dict[str, str], str]:
    """A copy of ``env`` (by default this process's environment) with a fresh mark, and the mark.

    Marks add up: a child of a marked process started with a mark of its own carries both, so each tree can be ended.
    """
    mark = f"{MARK_PREFIX}{secrets.token_hex(8)}"
    return {**(os.environ if env is None else env), mark: "1"}, mark


def mark_of(env: Mapping[str, str]) -> str | None:
    """The newest mark an environment made by :func:`tag` holds (its last one), if any."""
    return next((name for name in reversed(list(env)) if name.startswith(MARK_PREFIX)), None)


def _stat(pid: int) -> tuple[int, int, int] | None:
    """(parent, process group, session) of ``pid``; None if it is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rfind(b")") + 2 :].split()  # the command name may hold spaces and parentheses
    try:
        return int(fields[1]), int(fields[2]), int(fields[3])
    except (IndexError, ValueError):
        return None


def _carries(pid: int, variable: bytes) -> bool:
    """Whether the environment of ``pid`` sets ``variable`` (``b"NAME="``)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read()
    except OSError:  # gone, or another user's: not ours to end
        return False
    return env.startswith(variable) or b"\0" + variable in env


def members(leader: int, mark: str | None) -> dict[int, int]:
    """The processes of ``leader``'s tree, other than this process and ``leader`` itself, with their process groups:
    those in its session or process group (it leads both when started with ``start_new_session``), those whose
    environment holds ``mark``, and their descendants."""
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return {}
    me = os.getpid()
    variable = f"{mark}=".encode() if mark else None
    children: dict[int, list[int]] = {}
    groups: dict[int, int] = {}
    found: set[int] = set()
    for pid in pids:
        stat = _stat(pid) if pid != me else None
        if stat is None:
            continue
        parent, groups[pid], session = stat
        children.setdefault(parent, []).append(pid)
        if leader in (groups[pid], session) or (variable is not None and _carries(pid, variable)):
            found.add(pid)
    todo = [leader, *found]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    found.discard(leader)
    return {pid: groups[pid] for pid in found}


def end(leader: int, mark: str | None) -> list[int]:
    """SIGKILL every process of ``leader``'s tree (:func:`members`; all found before any is signalled) but ``leader``
    itself, which its owner ends and reaps; the pids ended that were outside ``leader``'s process group (a daemon's)."""
    outside: list[int] = []
    if not os.path.isdir("/proc"):
        return outside
    seen: set[int] = set()
    for _ in range(_ROUNDS):
        found = {pid: group for pid, group in members(leader, mark).items() if pid not in seen}
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        seen |= set(found)
        outside += sorted(pid for pid, group in found.items() if group != leader)
    return outside
