"""The timeout budget (``--max-timeouts``): a hanging implementation costs bounded time.

Every timeout of a harness process costs the whole ``--harness-timeout`` and a restart.
Once one op of an implementation (parse, build, encode, decode, bench, or the start of a
restarted process) has timed out ``--max-timeouts`` times, its later requests of that op are
not sent: the case that would send one is ``blocked`` by the case of the first timeout of
that op, before the call (``ExecAdapter.gate``). Its other ops still run, and so do the cases
that do not need that op.

A case that cannot be blocked by that root is not blocked: the case of a timeout itself
(a later call of the same op in it), a case with a crash or timeout of its own (that is its
finding), a call made for another implementation's case or outside any case. There the
request is refused with :class:`NotTried`, which is never a rejection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .verdict import Judge

#: Timeouts of one op of one implementation after which its later calls of that op are not tried.
DEFAULT_MAX_TIMEOUTS = 3


class NotTried(RuntimeError):
    """A request the timeout budget did not send, where no case can be blocked: an error, never a rejection."""


@dataclass
class Spent:
    """One op of one implementation whose budget is spent: the case of its first timeout, the cases blocked since."""

    root: str
    blocked: set[str] = field(default_factory=set)


class TimeoutBudget:
    """Counts each harness's timeouts per op, and refuses the requests of an op whose budget is spent.

    ``limit``: timeouts of one op before its calls are refused (0: no budget). ``running()``:
    the node ID and judge of the test running now, or None. ``case_of``: the case ID of each
    node ID that had a judge (the incidents of a harness name the node ID of their call).
    """

    def __init__(self, limit: int, running: Callable[[], tuple[str, Judge] | None], case_of: Mapping[str, str]) -> None:
        self.limit = limit
        self.running = running
        self.case_of = case_of
        #: (implementation, op) -> what its spent budget blocked.
        self.spent: dict[tuple[str, str], Spent] = {}

    def watch(self, adapter: Any) -> None:
        """Ask this budget before each request ``adapter`` (an ExecAdapter) sends."""
        if self.limit:
            adapter.gate = lambda op: self.gate(adapter, op)

    def gate(self, adapter: Any, op: str) -> None:
        """Return if ``adapter`` may send a request of ``op``; otherwise block the running case, or raise NotTried."""
        timeouts = [i for i in adapter.incidents if _outcome(i) == "timeout" and getattr(i, "op", None) == op]
        if len(timeouts) < self.limit:
            return
        contexts = [getattr(i, "context", None) for i in timeouts]
        roots = [self.case_of[c] for c in contexts if isinstance(c, str) and c in self.case_of]
        why = (f"after {self.limit} timeouts of {op}, not tried: the first was in case {roots[0]}" if roots
               else f"after {self.limit} timeouts of {op} (the first outside any case), not tried")
        why += f" (--max-timeouts {self.limit})"
        running = self.running()
        if running is None or not roots:
            raise NotTried(f"{adapter.name}: {why}")
        nodeid, judge = running
        # Its own crash or timeout is its finding (blocked, it would hide it); another implementation's case has
        # another root; the case of the first timeout cannot be blocked by itself.
        own = any(_outcome(i) in ("crash", "timeout") and getattr(i, "context", None) == nodeid
                  for i in adapter.incidents)
        if own or judge.implementation != adapter.name or judge.case == roots[0]:
            raise NotTried(f"{adapter.name}: {why}")
        self.spent.setdefault((adapter.name, op), Spent(roots[0])).blocked.add(nodeid)
        judge.block(roots[0], why)

    def summary(self, recorded: Mapping[str, str]) -> list[str]:
        """One line per implementation whose budget blocked cases: how many, of which op, by which first timeout.

        ``recorded``: the outcome recorded for each node ID (a case counts if it ended blocked).
        """
        lines: dict[str, list[str]] = {}
        for (name, op), spent in self.spent.items():
            count = sum(1 for nodeid in spent.blocked if recorded.get(nodeid) == "blocked")
            cases, first = f"{count} case{'s' if count != 1 else ''}", f"the first in case {spent.root}"
            lines.setdefault(name, []).append(f"{cases} blocked after {self.limit} timeouts of {op} ({first})")
        return [f"{name}: {'; '.join(parts)}: not tried (timeout budget, --max-timeouts {self.limit})"
                for name, parts in lines.items()]


def _outcome(incident: object) -> object:
    """The outcome a harness incident stands for ("crash", "timeout", "error"; HarnessFailure.outcome)."""
    return getattr(incident, "outcome", None)


__all__ = ["DEFAULT_MAX_TIMEOUTS", "NotTried", "Spent", "TimeoutBudget"]
