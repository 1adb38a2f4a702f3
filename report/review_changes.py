"""What an option of the spec review would change: in the matrix (which rows' outcomes and verdicts), and in
the corpus (which cases' level or expectation).

An option's changes say how the judging of some cases would differ under the text it proposes: the
outcome charged to a requirement now -> the outcome under the option (``outcomes``, or derived from a new
``level``: a broken MUST fails, a broken SHOULD warns), and the level and expectation the corpus would give
the cases. Applied to a matrix run's evidence they give each row's new outcomes and whether its verdict
(meets every MUST tested, or not) flips; applied to the corpus they list the cases whose expected outcome
changes. Checks a test did not reach because it stopped are taken to hold.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ..corpus.cases import build_cases, chunk_cases, config_cases
from ..corpus.registry import requirements, severity
from ..corpus.streams import stream_cases
from .model import SEVERITY, worst
from .review_evidence import CaseEvidence, Evidence, RowResult, conforms

#: The outcome of a broken requirement, by severity (judging.verdict.broken).
BROKEN = {"MUST": "fail", "SHOULD": "warn", "MAY": "unsupported"}
#: What each kind of corpus case can expect.
EXPECTS = {"config": ("valid", "invalid"), "chunk": ("valid", "invalid"), "build": ("built", "refused", "either"),
           "stream": ("decode", "reject", "decode-or-reject")}


class ChangeError(ValueError):
    """A change of a proposal cannot be applied as written (named in the message)."""


@dataclass(frozen=True)
class Change:
    """One change of an option (schema/spec-proposals.schema.json, $defs/change)."""

    requirement: str
    cases: tuple[str, ...] = ()
    did: str | None = None
    outcomes: Mapping[str, str] = field(default_factory=dict)
    level: str | None = None
    expect: str | None = None

    @staticmethod
    def of(doc: Mapping[str, Any], where: str) -> Change:
        rid = doc["requirement"]
        req = requirements().get(rid)
        if req is None:
            raise ChangeError(f"{where}: requirement {rid} is not in the registry")
        outcomes = dict(doc.get("outcomes", {}))
        level = doc.get("level")
        if not outcomes and level is not None:
            old, new = BROKEN[severity(req.level)], BROKEN[severity(level)]
            if "unsupported" in (old, new) and old != new:
                raise ChangeError(f"{where}: {rid} goes from {req.level} to {level}: say with 'outcomes' what a MAY makes of "
                                  "the results (a refusal allowed, or what was charged now passing)")
            outcomes = {old: new} if old != new else {}
        return Change(rid, tuple(doc.get("cases", ())), doc.get("did"), outcomes, level, doc.get("expect"))

    def matches(self, case: str, cited: Sequence[str]) -> bool:
        """Whether the change applies to a case with these requirements."""
        if self.cases:
            return any(fnmatch.fnmatchcase(case, p) for p in self.cases)
        return self.requirement in cited


@dataclass(frozen=True)
class Moved:
    """One row's result on one case that an option changes."""

    row: str
    key: str
    before: str
    after: str

    @property
    def worse(self) -> bool:
        return SEVERITY.index(self.after) < SEVERITY.index(self.before)


@dataclass
class Cost:
    """What an option changes in a matrix run."""

    moved: list[Moved]
    #: Rows that meet every MUST tested now and would not, and the reverse.
    newly_failing: list[str]
    newly_conforming: list[str]

    def rows(self, *, worse: bool) -> list[str]:
        """Rows with a result that gets worse (or better) under the option."""
        return list(dict.fromkeys(m.row for m in self.moved if m.worse == worse))

    def by_row(self) -> dict[str, Counter[tuple[str, str]]]:
        """Row -> (before, after) -> cases."""
        out: dict[str, Counter[tuple[str, str]]] = {}
        for m in self.moved:
            out.setdefault(m.row, Counter())[(m.before, m.after)] += 1
        return out


def _apply(change: Change, case: CaseEvidence, result: RowResult) -> RowResult:
    if (change.did == "rejected" and not result.rejected) or (change.did == "decoded" and not result.decoded):
        return result
    cited = change.requirement in case.requirements
    charged = result.attribution(change.requirement, cited)
    if charged is None and cited:
        return result  # the test stopped before the requirement, on another rule's check: that rule's outcome stays
    if charged is None and not change.cases:
        return result
    # A case the change names by pattern and that does not cite its requirement changes as a whole.
    now = charged if charged is not None else result.outcome
    after = change.outcomes.get(now)
    if after is None or after == now:
        return result
    if charged is None:  # a case the change names by pattern without citing the requirement: its outcome as a whole
        return RowResult(after, {}, result.rejected, result.metrics)
    rest = {q: o for q, o in result.charged.items() if q != change.requirement}
    if after != "pass":
        rest[change.requirement] = after
    outcome = worst(rest.values()) or "pass"
    if result.outcome not in ("pass", "warn") and not rest:
        outcome = "pass"  # its only charge is lifted: the checks it stopped before are taken to hold
    return RowResult(outcome, rest, result.rejected, result.metrics)


def cost(ev: Evidence, changes: Sequence[Change]) -> Cost:
    """What ``changes`` would do to the rows of a matrix run."""
    moved: list[Moved] = []
    totals = {r.name: Counter(r.judged) for r in ev.rows}
    for case in ev.cases.values():
        applying = [c for c in changes if c.matches(case.case, case.requirements)]
        if not applying:
            continue
        for name, result in case.rows.items():
            after = result
            for change in applying:
                after = _apply(change, case, after)
            if after.outcome == result.outcome:
                continue
            moved.append(Moved(name, case.key, result.outcome, after.outcome))
            if ev.judged_here(ev.row(name), case):
                totals[name][result.outcome] -= 1
                totals[name][after.outcome] += 1
    failing = [r.name for r in ev.rows if r.conforms and not conforms(totals[r.name])]
    conforming = [r.name for r in ev.rows if not r.conforms and conforms(totals[r.name])]
    return Cost(moved, failing, conforming)


# ---------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class CorpusCase:
    """A case of the corpus: its kind, requirements, level and what it expects ("" for the suites' own cases)."""

    id: str
    kind: str
    requirements: tuple[str, ...]
    level: str
    expect: str


@dataclass(frozen=True)
class Consequence:
    """A corpus case whose expected outcome an option changes."""

    case: CorpusCase
    level: str
    expect: str


@cache
def corpus() -> tuple[CorpusCase, ...]:
    """The cases of the corpus files (configurations, chunks, builds, streams)."""
    out = [CorpusCase(c.id, "config", c.requirements, c.level, "valid" if c.valid else "invalid") for c in config_cases()]
    out += [CorpusCase(c.id, "chunk", c.requirements, c.level, "valid" if c.valid else "invalid") for c in chunk_cases()]
    out += [CorpusCase(c.id, "build", c.requirements, c.level, c.expect) for c in build_cases()]
    out += [CorpusCase(c.id, "stream", c.requirements, c.level, c.expect) for c in stream_cases()]
    return tuple(out)


def all_cases(ev: Evidence | None) -> list[CorpusCase]:
    """The corpus's cases, then the suites' own cases (those the evidence holds that no corpus file does)."""
    known = corpus()
    ids = {c.id for c in known}
    extra: dict[str, CorpusCase] = {}
    for c in (ev.cases.values() if ev is not None else ()):
        if c.case not in ids and c.case not in extra:
            extra[c.case] = CorpusCase(c.case, "suite", c.requirements, c.level, "")
    return [*known, *extra.values()]


def consequences(changes: Sequence[Change], cases: Sequence[CorpusCase], where: str) -> list[Consequence]:
    """The cases whose level or expectation ``changes`` would change."""
    out = []
    for case in cases:
        level, expect = case.level, case.expect
        for change in changes:
            if not change.matches(case.id, case.requirements):
                continue
            req = requirements()[change.requirement]
            if change.level is not None and (change.cases or level == severity(req.level)):
                level = severity(change.level)
            if change.expect is not None and case.kind != "suite":
                if change.expect not in EXPECTS[case.kind]:
                    raise ChangeError(f"{where}: expect {change.expect!r} does not apply to {case.kind} case {case.id} "
                                      f"(one of {', '.join(EXPECTS[case.kind])})")
                expect = change.expect
        if (level, expect) != (case.level, case.expect):
            out.append(Consequence(case, level, expect))
    return out


__all__ = ["BROKEN", "ChangeError", "Change", "Consequence", "CorpusCase", "Cost", "Moved", "all_cases", "consequences",
           "corpus", "cost"]
