"""What a codec author must add on top of a library: the "core protection", from the results.

For a row that is no built-in: the MUST cases it does not hold (fail, error, crash,
timeout) that this project's codec holds (pass or warn) in every built-in row that ran
them, and the SHOULD cases it only warns on (truncated data, CMYK and 12-bit streams,
frame headers that do not fit the chunk ...) that every built-in passes. The built-ins are
the same spec-aware code (``core/``: configuration parser, chunk checks, marker
inspection before decoding, multi-scan writer) over different pixel libraries, so what
they all hold and a row does not is what that code adds: the checks an author wrapping
the library must write. Parse cases are left out: parsing is the harness's or adapter's
code, not the library's.

Grouped by the requirement a failure or warning is charged to (its message names it); a
case that ends in an error, a crash or a timeout is grouped under that outcome instead,
since it rests on every requirement of its case and is charged to none.
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
    """One requirement a row breaks (MUST) or misses (SHOULD) where this project's codec holds it."""

    #: The requirement ID, or one of UNJUDGED.
    charged_to: str
    #: The case IDs, in the row's order.
    cases: tuple[str, ...]
    #: The built-in rows that ran them.
    reference: tuple[str, ...]
    #: "MUST" (the row fails or errs) or "SHOULD" (the row warns where every built-in passes).
    level: str = "MUST"


def _level(outcome: str) -> str | None:
    return "MUST" if outcome in BROKEN else "SHOULD" if outcome == "warn" else None


def core_protection(
    row_cases: Mapping[str, object],
    builtin_cases: Mapping[str, Mapping[str, object]],
    charged: Callable[[object], Sequence[str]],
) -> list[Protection]:
    """The protections a row lacks, MUST ones first.

    ``row_cases``: case ID -> result of the row; ``builtin_cases``: built-in row -> case ID
    -> result; ``charged``: the requirements a non-passing result is charged to.
    """
    found: dict[tuple[str, str], list[str]] = {}
    reference: dict[tuple[str, str], set[str]] = {}
    for case, result in row_cases.items():
        outcome = str(getattr(result, "outcome", ""))
        level = _level(outcome)
        if getattr(result, "parse", False) or level is None:
            continue
        held = HELD if level == "MUST" else frozenset({"pass"})
        ran = {b: got[case] for b, got in builtin_cases.items() if case in got}
        if not ran or any(getattr(r, "outcome", None) not in held for r in ran.values()):
            continue
        keys = [outcome] if outcome in UNJUDGED else list(charged(result)) or ["(no requirement named)"]
        for key in keys:
            found.setdefault((level, key), []).append(case)
            reference.setdefault((level, key), set()).update(ran)
    order = list(builtin_cases)
    return [
        Protection(key, tuple(cases), tuple(b for b in order if b in reference[(level, key)]), level)
        for (level, key), cases in sorted(found.items(), key=lambda kv: (kv[0][0] != "MUST", kv[0][1] in UNJUDGED,
                                                                         -len(kv[1]), kv[0][1]))
    ]


__all__ = ["BROKEN", "HELD", "UNJUDGED", "Protection", "core_protection"]
