"""What a codec author must add on top of a library: the "core protection", from the results.

For a library row, the MUST cases it does not hold (fail, error, crash, timeout) that
this project's codec holds (pass or warn) in every built-in row that ran them. The
built-ins are the same spec-aware code (``core/``: configuration parser, chunk checks,
marker inspection before decoding, multi-scan writer) over different pixel libraries,
so what they all hold and the library does not is what that code adds: the checks an
author wrapping the library must write. Parse cases are left out: parsing is the
harness's or adapter's code, not the library's.

Grouped by the requirement a failure is charged to (its message names it); a case that
ends in an error, a crash or a timeout is grouped under that outcome instead, since it
rests on every requirement of its case and is charged to none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

#: Outcomes that break a MUST, and those that hold it.
BROKEN = frozenset({"fail", "error", "crash", "timeout"})
HELD = frozenset({"pass", "warn"})


#: Outcomes that are grouped under their own name rather than a requirement.
UNJUDGED = ("error", "crash", "timeout")


@dataclass(frozen=True)
class Protection:
    """One requirement a library row breaks where this project's codec holds it."""

    #: The requirement ID, or one of UNJUDGED.
    charged_to: str
    #: The case IDs, in the row's order.
    cases: tuple[str, ...]
    #: The built-in rows that ran them.
    reference: tuple[str, ...]


def core_protection(
    row_cases: Mapping[str, object],
    builtin_cases: Mapping[str, Mapping[str, object]],
    charged: Callable[[object], Sequence[str]],
) -> list[Protection]:
    """The protections a library row lacks.

    ``row_cases``: case ID -> result of the library row; ``builtin_cases``: built-in row ->
    case ID -> result; ``charged``: the requirements a non-passing result is charged to.
    """
    by_requirement: dict[str, list[str]] = {}
    reference: dict[str, set[str]] = {}
    for case, result in row_cases.items():
        if getattr(result, "parse", False) or getattr(result, "outcome", None) not in BROKEN:
            continue
        ran = {b: got[case] for b, got in builtin_cases.items() if case in got}
        if not ran or any(getattr(r, "outcome", None) not in HELD for r in ran.values()):
            continue
        outcome = str(getattr(result, "outcome", ""))
        keys = [outcome] if outcome in UNJUDGED else list(charged(result)) or ["(no requirement named)"]
        for key in keys:
            by_requirement.setdefault(key, []).append(case)
            reference.setdefault(key, set()).update(ran)
    order = list(builtin_cases)
    return [
        Protection(key, tuple(cases), tuple(b for b in order if b in reference[key]))
        for key, cases in sorted(by_requirement.items(), key=lambda kv: (kv[0] in UNJUDGED, -len(kv[1]), kv[0]))
    ]


__all__ = ["BROKEN", "HELD", "UNJUDGED", "Protection", "core_protection"]
