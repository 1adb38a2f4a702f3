"""Words shared by the Markdown and HTML pages: outcome labels, cell and verdict texts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from ..corpus.modes import MODE
from .model import SEVERITY, SHARED, Cell, Implementation, Matrix

SYMBOL = {
    "pass": "✔",
    "warn": "⚠",
    "unsupported": "○",
    "fail": "✘",
    "error": "‼",
    "crash": "☠",
    "timeout": "◔",
}
MEANING = {
    "pass": "every check of the requirement held",
    "warn": "a SHOULD (or an interpretation at SHOULD level) was not met",
    "unsupported": "an optional feature (MAY) was rejected cleanly",
    "fail": "a MUST was not met",
    "error": "the implementation raised an unexpected exception",
    "crash": "the implementation's process died (only with --isolate)",
    "timeout": "the implementation did not answer in time",
}
#: Display order of outcome columns: best first, as people read a summary.
COLUMNS: tuple[str, ...] = tuple(reversed(SEVERITY))


def counts_text(counts: Mapping[str, int]) -> str:
    """'2 fail, 10 pass': worst outcome first (an outcome this version does not know, first of all)."""
    order = sorted(counts, key=lambda o: SEVERITY.index(o) if o in SEVERITY else -1)
    return ", ".join(f"{counts[o]} {o}" for o in order if counts[o])


def cell_text(cell: Cell | None) -> str:
    if cell is None or not cell.total:
        return "—"
    if cell.outcome == "pass":
        return f"{SYMBOL['pass']} {cell.total}"
    return f"{SYMBOL.get(cell.outcome or '', '?')} {counts_text(cell.counts)}"


def untested_text(when: tuple[str, ...] | list[str]) -> str:
    return "untestable" if list(when) == ["untestable"] else "not tested"


def verdict(m: Matrix, impl: Implementation) -> str:
    """One line: does this implementation meet the spec, as far as the suites ran?"""
    if not impl.available:
        return "not available"
    if impl.name == SHARED:
        return "tests that take no implementation (e.g. the store suite), shown once"
    totals: Counter[str] = m.totals(impl.name)
    if not totals:
        return "no results"
    known = sum(1 for c in m.cases[impl.name].values() if c.known)
    # Everything but these three is a failure, an outcome this version does not know included
    # (the loader refuses those; a matrix built by other code must not read as conforming).
    bad = {o: n for o, n in totals.items() if o not in ("pass", "warn", "unsupported") and n}
    parts = []
    if bad:
        parts.append(f"does not conform: {counts_text(bad)}" + (f" ({known} known)" if known else ""))
    else:
        parts.append("meets every MUST tested")
    if totals["warn"]:
        parts.append(f"{totals['warn']} SHOULD warning(s)")
    if totals["unsupported"]:
        parts.append(f"{totals['unsupported']} optional case(s) unsupported")
    if impl.run_problem:
        return "run incomplete; so far " + "; ".join(parts)
    return "; ".join(parts)


def versions_text(impl: Implementation) -> str:
    return ", ".join(f"{k} {v}" for k, v in impl.versions.items()) or "—"


def mode_order(modes: list[str]) -> list[str]:
    """Modes in modes.MODES order, unknown ones after."""
    known = list(MODE)
    return sorted(modes, key=lambda m: (known.index(m) if m in known else len(known), m))


__all__ = ["COLUMNS", "MEANING", "SYMBOL", "cell_text", "counts_text", "mode_order", "untested_text", "verdict", "versions_text"]
