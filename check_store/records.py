"""Findings and the records they become: one JSON object per nonconforming chunk or metadata document.

A record has the fields of a ``--results`` line (``implementation``, ``case``, ``requirements``,
``level``, ``outcome``, ``message``, ``metrics``), so ``report/model.py`` reads a file of them
unchanged, and the store's own fields (``array``, ``key``, ``inner``, ``findings``, ``seen``).
The message is written as the suites' judge writes it: each broken requirement cited with
the spec's words, then what was observed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..corpus.registry import requirements, severity

__all__ = ["IMPLEMENTATION", "MAX_TEXT", "OUTCOMES", "Finding", "cap", "capped", "error", "finding", "outcome_of",
           "printable", "record", "worst"]

#: The ``implementation`` field of every record: what produced it.
IMPLEMENTATION = "check-store"
#: Outcomes of a record, worst first. ``error``: the checker could not check (a failed read,
#: an index it cannot decode), which is not a verdict on the data.
OUTCOMES = ("error", "fail", "warn", "pass")
#: Longest text a finding keeps: a store's values are quoted in findings, and a store may hold anything.
MAX_TEXT = 2000
#: Longest string, and most items of a list or members of an object, kept of a value a store wrote.
MAX_STRING, MAX_ITEMS = 200, 64


def cap(text: str, limit: int = MAX_TEXT) -> str:
    """``text``, or its start and how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


#: What a terminal would act on rather than show: C0 and C1 controls (escape sequences, carriage returns, new
#: lines), Unicode's invisible format characters (bidirectional overrides and isolates, zero-width characters),
#: line and paragraph separators, and lone surrogates (undecodable bytes of a file name).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                          "\ufff9-\ufffb\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on written as an escape (``\\x1b``, ``\\u202e``): a
    store's names and values reach the terminal as text, never as commands that rewrite what it shows."""
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)


def capped(value: Any, depth: int = 8) -> Any:
    """A JSON value as a store wrote it, with long strings, lists and objects cut, for the report."""
    if isinstance(value, str):
        return cap(value, MAX_STRING)
    if depth <= 0 and isinstance(value, list | dict):
        return cap(repr(value), MAX_STRING)
    if isinstance(value, list):
        out = [capped(v, depth - 1) for v in value[:MAX_ITEMS]]
        return out + [f"... ({len(value):,} items)"] if len(value) > MAX_ITEMS else out
    if isinstance(value, dict):
        items = list(value.items())
        kept = {cap(str(k), MAX_STRING): capped(v, depth - 1) for k, v in items[:MAX_ITEMS]}
        if len(items) > MAX_ITEMS:
            kept["..."] = f"{len(items):,} members"
        return kept
    return value


@dataclass(frozen=True)
class Finding:
    """One requirement the data breaks, and what was seen."""

    requirement: str
    outcome: str
    observed: str

    def to_json(self) -> dict[str, str]:
        req = requirements().get(self.requirement)
        return {"requirement": self.requirement, "level": req.level if req else "", "outcome": self.outcome,
                "observed": self.observed}

    def message(self) -> str:
        req = requirements().get(self.requirement)
        if not self.requirement:
            return f"{self.outcome}: the checker could not check this (no verdict on the data)\n    observed: {self.observed}"
        cited = f'[{req.id} {req.level}] "{req.text}"' if req else f"[{self.requirement}]"
        return f"{self.outcome}: {cited}\n    observed: {self.observed}"


def outcome_of(requirement: str) -> str:
    """What breaking ``requirement`` makes a chunk: a MUST fails it, a SHOULD or MAY warns."""
    req = requirements().get(requirement)
    if req is None:
        raise KeyError(f"unknown requirement {requirement}")
    return "fail" if severity(req.level) == "MUST" else "warn"


def finding(requirement: str, observed: str) -> Finding:
    """A finding whose outcome follows the requirement's level."""
    return Finding(requirement, outcome_of(requirement), cap(observed))


def error(observed: str) -> Finding:
    """The checker could not check something: not a verdict, but not conforming either."""
    return Finding("", "error", cap(observed))


def worst(outcomes: Iterable[str]) -> str:
    """The worst of some outcomes, ``pass`` for none."""
    found = set(outcomes)
    return next((o for o in OUTCOMES if o in found), "pass")


def record(store: str, array: str, key: str, findings: Sequence[Finding], *, inner: Sequence[int] | None = None,
           seen: Mapping[str, Any] | None = None, boundary: bool = False) -> dict[str, Any]:
    """The record of one chunk (or ``zarr.json``) with at least one finding."""
    reqs = list(dict.fromkeys(f.requirement for f in findings if f.requirement))
    levels = [requirements()[r].level for r in reqs if r in requirements()]
    where = f"{array.rstrip('/')}/{key}" if array not in ("", "/") else f"/{key}"
    if inner is not None:
        where += f"#{','.join(map(str, inner))}"
    return {
        "implementation": IMPLEMENTATION,
        "case": where,
        "requirements": reqs,
        "level": min(levels, key=_strength) if levels else "",
        "outcome": worst(f.outcome for f in findings),
        "message": "\n".join(f.message() for f in findings),
        "metrics": {},
        "store": store,
        "array": array,
        "key": key,
        "inner": list(inner) if inner is not None else None,
        "boundary": boundary,
        "findings": [f.to_json() for f in findings],
        "seen": dict(seen or {}),
    }


def _strength(level: str) -> int:
    return {"MUST": 0, "SHOULD": 1, "MAY": 2}[severity(level)]
