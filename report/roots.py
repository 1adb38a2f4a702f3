"""Root findings: one deviation, one finding, however many cases show it or stand on it.

A row's root findings are its failing cases (fail, error, crash, timeout) grouped by the rule
each failure is charged to: the requirement its first broken MUST cites (``finding`` in the
results line, chosen by the suites' diagnosis), or for an error, crash or timeout the outcome
with the stage and the exception's type (else the case's own first requirement). Cases ``blocked`` by a root case are counted under the
finding of that case; they are no finding of their own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..corpus.registry import requirements


class CaseResultLike(Protocol):
    """What this module reads of a results line (``model.CaseResult``)."""

    @property
    def case(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def level(self) -> str: ...
    @property
    def requirements(self) -> tuple[str, ...]: ...
    @property
    def finding(self) -> str | None: ...
    @property
    def blocked_by(self) -> str | None: ...

    def charged(self) -> list[str]: ...

    def summary(self, limit: int = 300) -> str: ...

#: Outcomes that are findings (a blocked case stands on one; the rest hold or are optional).
FINDING_OUTCOMES = ("fail", "error", "crash", "timeout")


@dataclass
class RootFinding:
    """One deviation of one row: the rule it breaks, the cases that show it, how many it blocks."""

    requirement: str
    #: "fail" for a broken rule; "error", "crash" or "timeout" for a case that ended so.
    outcome: str
    level: str
    text: str
    cases: list[str] = field(default_factory=list)
    blocked: int = 0
    message: str = ""

    @property
    def label(self) -> str:
        """``JPEG-SUB-05`` for a broken rule, ``error (parse: RuntimeError)`` for an error."""
        return self.requirement if self.outcome == "fail" else f"{self.outcome} ({self.requirement})"


def finding_of(r: CaseResultLike) -> tuple[str, str] | None:
    """(outcome, requirement) of a failing case's finding; None for a case that holds, is blocked or optional."""
    if r.outcome not in FINDING_OUTCOMES:
        return None
    if r.outcome == "fail":
        charged = r.charged()
        return "fail", r.finding or (charged[0] if charged else r.requirements[0] if r.requirements else "?")
    return r.outcome, r.finding or (r.requirements[0] if r.requirements else "?")


def root_findings(cases: Mapping[str, CaseResultLike]) -> list[RootFinding]:
    """A row's root findings, MUST fails first, then by how many cases they touch."""
    found: dict[tuple[str, str], RootFinding] = {}
    by_case: dict[str, tuple[str, str]] = {}
    for r in cases.values():
        key = finding_of(r)
        if key is None:
            continue
        by_case.setdefault(r.case, key)
        finding = found.get(key)
        if finding is None:
            req = requirements().get(key[1]) if key[0] == "fail" else None
            finding = found[key] = RootFinding(
                requirement=key[1], outcome=key[0], level=req.level if req else r.level, text=req.text if req else "",
                message=r.summary(300))
        if r.case not in finding.cases:
            finding.cases.append(r.case)
    blocked_by = {r.case: r.blocked_by for r in cases.values() if r.outcome == "blocked" and r.blocked_by}
    unknown: RootFinding | None = None
    for r in cases.values():
        if r.outcome != "blocked":
            continue
        root, seen = r.blocked_by or "", {r.case}
        while root in blocked_by and root not in seen:  # blocked by a case that is blocked itself: its root
            seen.add(root)
            root = blocked_by[root] or ""
        key = by_case.get(root)
        if key is not None:
            found[key].blocked += 1
            continue
        if unknown is None:
            unknown = RootFinding("?", "blocked", "", "blocked by a case these results do not hold (not run, or run elsewhere)",
                                  message=r.summary(300))
        unknown.blocked += 1
        if r.blocked_by and r.blocked_by not in unknown.cases:
            unknown.cases.append(r.blocked_by)
    ordered = sorted(found.values(), key=lambda f: (f.outcome != "fail", -(len(f.cases) + f.blocked), f.requirement))
    return [*ordered, *([unknown] if unknown else [])]


def roots_text(findings: Sequence[RootFinding], blocked: int) -> str:
    """'2 root findings (JPEG-SUB-05, JPEG-Q-01); 97 cases blocked' ('' when there is nothing to say)."""
    real = [f for f in findings if f.outcome != "blocked"]
    parts = []
    if real:
        parts.append(f"{len(real)} root finding{'s' if len(real) != 1 else ''} ({', '.join(f.label for f in real)})")
    if blocked:
        parts.append(f"{blocked} case{'s' if blocked != 1 else ''} blocked")
    return "; ".join(parts)


__all__ = ["FINDING_OUTCOMES", "RootFinding", "finding_of", "root_findings", "roots_text"]
