"""Root findings: a finding is a defect, however many cases show it, stand on it or rules it breaks.

A row's root findings are its failing cases (fail, error, crash, timeout) grouped by their
cause: the defect the suites' diagnosis named (``cause`` in the results line: the same stage
and the same fault signature, e.g. ``encode.planar-read``). Such a finding is cited under the
rule the defect breaks (the cause's), and the other rules its cases were charged to are listed
as its consequences. Failing cases without a named cause join the row's one cause that breaks
their rule, where it has exactly one. Otherwise, where no diagnosis named the cause, the grouping falls back to the rule
each failure is charged to: the requirement its first broken MUST cites (``finding``), or for an
error, crash or timeout the outcome with the stage and the exception's type (else the case's own
first requirement); such a finding says that its cause is not named. Cases ``blocked`` by a root
case are counted under the finding of that case, and what they would show once it is fixed
(``latent``) is listed with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

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
    @property
    def cause(self) -> Mapping[str, str] | None: ...
    @property
    def latent(self) -> Mapping[str, Any] | None: ...
    @property
    def given(self) -> Sequence[Mapping[str, Any]]: ...

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
    #: The defect in words, where a diagnosis named it ("" where the cases are grouped by their rule).
    cause: str = ""
    #: Its signature (``encode.planar-read``), "" where unknown.
    cause_id: str = ""
    #: Other rules its cases were charged to: what the defect breaks besides its own rule.
    consequences: list[str] = field(default_factory=list)
    #: Blocked cases that show another deviation once this one is fixed: (case, requirement, words).
    latent: list[tuple[str, str, str]] = field(default_factory=list)
    #: What the codec was given for the codec objects of its first case, where the row's adapter maps them to the codec's
    #: own configuration (each: codec, given, and no_equivalent where it had none).
    given: list[Mapping[str, Any]] = field(default_factory=list)
    #: Of its cases, those whose own diagnosis named no cause (folded in: they break the cause's rule, and no other
    #: cause of the row does).
    unnamed: int = 0

    @property
    def label(self) -> str:
        """``JPEG-SUB-05`` for a broken rule, ``error (parse: RuntimeError)`` for an error."""
        return self.requirement if self.outcome == "fail" else f"{self.outcome} ({self.requirement})"

    @property
    def cause_text(self) -> str:
        """The cause as a table or a log shows it: its words, or that it is not named."""
        if self.cause and self.unnamed:
            return (f"{self.cause} (named on {len(self.cases) - self.unnamed} of its {len(self.cases)} cases; the other "
                    f"{self.unnamed} break the same rule, and no other cause of this implementation does)")
        if self.cause:
            return self.cause
        if self.outcome == "fail":
            return f"cause not named: the cases are grouped by the rule they break ({self.requirement})"
        return "cause not named: the cases are grouped by the stage and the exception" if self.outcome != "blocked" else ""

    def given_text(self) -> str:
        """'the codec was given {...} for {...}' where the row's adapter maps codec objects ('' where it does not)."""
        parts = [f"{json.dumps(g.get('given'))} for {json.dumps(g.get('codec'))}" for g in self.given[:2]]
        return f"the codec was given {'; '.join(parts)}" if parts else ""

    def latent_text(self) -> str:
        """'latent: shown once JPEG-SUB-05 is fixed: JPEG-Q-01 (config.quality.zero: ...); ...' ('' without any)."""
        if not self.latent:
            return ""
        parts = [f"{requirement} ({case}: {words})" for case, requirement, words in self.latent]
        return f"latent: shown once {self.label} is fixed: " + "; ".join(parts)


def finding_of(r: CaseResultLike) -> tuple[str, str] | None:
    """(outcome, requirement) of a failing case's finding; None for a case that holds, is blocked or optional."""
    if r.outcome not in FINDING_OUTCOMES:
        return None
    if r.outcome == "fail":
        charged = r.charged()
        return "fail", r.finding or (charged[0] if charged else r.requirements[0] if r.requirements else "?")
    return r.outcome, r.finding or (r.requirements[0] if r.requirements else "?")


def _key(r: CaseResultLike) -> tuple[str, str] | None:
    """What a failing case is grouped by: ("cause", its rule and fault key) where one is named, else :func:`finding_of`."""
    charged = finding_of(r)
    if charged is None:
        return None
    cause = r.cause
    if charged[0] == "fail" and isinstance(cause, Mapping) and cause.get("id") and cause.get("requirement"):
        # The fault's key and rule, not the stage: one defect that shows at encode and at decode (a default taken wrong
        # when the configuration is read) has one key at both; the planes of an encode and of a decode have two.
        return "cause", f"{cause['requirement']}: {str(cause['id']).split('.', 1)[-1]}"
    return charged


def _fold_refinements(found: dict[tuple[str, str], RootFinding], by_case: dict[str, tuple[str, str]]) -> None:
    """A cause named more exactly by a stream's markers (``judging.diagnoses.REFINES``: JFIF taken over APP14) joins the
    general cause it refines where the row shows that one too (the inverse transform applied without JFIF as well):
    then the markers explain nothing, and it is one defect."""
    from ..judging.diagnoses import REFINES

    by_id = {f.cause_id: key for key, f in found.items() if f.cause_id}
    for cause_id, key in list(by_id.items()):
        stage, _, fault = cause_id.partition(".")
        general = by_id.get(f"{stage}.{REFINES.get(fault, '')}")
        if general is None or key not in found:
            continue
        _merge(found, key, general, by_case, unnamed=False)


def _merge(found: dict[tuple[str, str], RootFinding], key: tuple[str, str], into: tuple[str, str],
           by_case: dict[str, tuple[str, str]], *, unnamed: bool) -> None:
    target, folded = found[into], found.pop(key)
    for case in folded.cases:
        if case not in target.cases:
            target.cases.append(case)
            target.unnamed += int(unnamed)
        by_case[case] = into
    target.consequences.extend(c for c in folded.consequences if c not in target.consequences and c != target.requirement)


def _fold_unnamed(found: dict[tuple[str, str], RootFinding], by_case: dict[str, tuple[str, str]]) -> None:
    """Failing cases whose diagnosis named no cause join the one named cause that breaks the same rule, where the row
    has exactly one: a diagnosis that fits some cases of a defect and not others (a stream too small to tell, a
    refusal) would otherwise make one defect two findings. With two or more such causes they stay grouped by rule."""
    named: dict[str, list[tuple[str, str]]] = {}
    for key, finding in found.items():
        if key[0] == "cause" and finding.outcome == "fail":
            named.setdefault(finding.requirement, []).append(key)
    for key in [k for k in found if k[0] == "fail"]:
        targets = named.get(key[1], [])
        if len(targets) != 1:
            continue
        _merge(found, key, targets[0], by_case, unnamed=True)


def root_findings(cases: Mapping[str, CaseResultLike]) -> list[RootFinding]:
    """A row's root findings, MUST fails first, then by how many cases they touch."""
    found: dict[tuple[str, str], RootFinding] = {}
    by_case: dict[str, tuple[str, str]] = {}
    for r in cases.values():
        key = _key(r)
        if key is None:
            continue
        by_case.setdefault(r.case, key)
        finding = found.get(key)
        outcome, charged = finding_of(r) or ("fail", "?")
        if finding is None:
            cause = r.cause if key[0] == "cause" and r.cause is not None else {}
            rule = str(cause.get("requirement", charged))
            req = requirements().get(rule) if outcome == "fail" else None
            finding = found[key] = RootFinding(
                requirement=rule, outcome=outcome, level=req.level if req else r.level, text=req.text if req else "",
                message=r.summary(300), cause=str(cause.get("words", "")), cause_id=str(cause.get("id", "")),
                given=[dict(g) for g in r.given])
        if r.case not in finding.cases:
            finding.cases.append(r.case)
        if outcome == "fail" and charged != finding.requirement and charged not in finding.consequences:
            finding.consequences.append(charged)
    _fold_refinements(found, by_case)
    _fold_unnamed(found, by_case)
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
            latent = r.latent
            if isinstance(latent, Mapping) and latent.get("requirement"):
                found[key].latent.append((r.case, str(latent["requirement"]), str(latent.get("words", ""))))
            continue
        if unknown is None:
            unknown = RootFinding("?", "blocked", "", "blocked by a case these results do not hold (not run, or run elsewhere)",
                                  message=r.summary(300))
        unknown.blocked += 1
        if r.blocked_by and r.blocked_by not in unknown.cases:
            unknown.cases.append(r.blocked_by)
    ordered = sorted(found.values(), key=lambda f: (f.outcome != "fail", -(len(f.cases) + f.blocked), f.requirement))
    return [*ordered, *([unknown] if unknown else [])]


def repro_folder(implementation: str, index: int, f: RootFinding) -> str:
    """Where ``report repro`` writes the reproducer of a row's ``index``-th finding: repro/<row>/<NN>-<rule>-<cause>."""
    key = f.cause_id.split(".", 1)[-1] if f.cause_id else ("rule" if f.outcome == "fail" else f.outcome)
    slug = re.sub(r"[^a-z0-9-]+", "-", f"{index:02d}-{f.requirement}-{key}".lower()).strip("-")
    row = re.sub(r"[^A-Za-z0-9._+-]+", "-", implementation) or "row"
    return f"repro/{row}/{slug}/"


def roots_text(findings: Sequence[RootFinding], blocked: int) -> str:
    """'2 root findings (JPEG-SUB-05, JPEG-Q-01); 97 cases blocked' ('' when there is nothing to say).

    A rule that two findings are cited under shows once per finding: they are two defects."""
    real = [f for f in findings if f.outcome != "blocked"]
    parts = []
    if real:
        parts.append(f"{len(real)} root finding{'s' if len(real) != 1 else ''} ({', '.join(f.label for f in real)})")
    if blocked:
        parts.append(f"{blocked} case{'s' if blocked != 1 else ''} blocked")
    return "; ".join(parts)


__all__ = ["FINDING_OUTCOMES", "RootFinding", "finding_of", "repro_folder", "root_findings", "roots_text"]
