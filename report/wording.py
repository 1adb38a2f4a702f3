"""Words shared by the Markdown and HTML pages: outcome labels, cell and verdict texts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from ..corpus.modes import MODE
from .model import FINDING_OUTCOMES, SEVERITY, CaseResult, Cell, Implementation, Matrix
from .roots import RootFinding, repro_folder, roots_text

SYMBOL = {
    "pass": "✔",
    "warn": "⚠",
    "unsupported": "○",
    "fail": "✘",
    "blocked": "⊘",
    "error": "‼",
    "crash": "☠",
    "timeout": "◔",
}
MEANING = {
    "pass": "every check of the requirement held",
    "warn": "a SHOULD (or an interpretation at SHOULD level) was not met",
    "unsupported": "an optional feature (MAY) was rejected cleanly",
    "fail": "a MUST was not met",
    "blocked": "not judged: what the case stands on failed in another case, which holds the finding",
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
    text = f"{SYMBOL.get(cell.outcome or '', '?')} {counts_text(cell.counts)}"
    shown = sum(1 for c in cell.cases if c.outcome in FINDING_OUTCOMES)
    # A root counts once: many failing cases of one deviation are one finding.
    return text + (f" = {cell.findings} root finding{'s' if cell.findings != 1 else ''}" if 0 < cell.findings < shown else "")


def compact_cell_text(cell: Cell | None) -> str:
    """'✘ 2/40': the worst outcome's count out of the cell's cases, for narrow columns."""
    if cell is None or not cell.total:
        return "—"
    if cell.outcome == "pass":
        return f"{SYMBOL['pass']} {cell.total}"
    outcome = cell.outcome or ""
    return f"{SYMBOL.get(outcome, '?')} {cell.counts[outcome]}/{cell.total}"


def untested_row(when: tuple[str, ...] | list[str]) -> str:
    """The text of a requirement row that no case touched."""
    if list(when) == ["untestable"]:
        return "untestable: guidance the suites cannot check"
    return "not tested: no case of this run rests on it"


def untested_text(when: tuple[str, ...] | list[str]) -> str:
    return "untestable" if list(when) == ["untestable"] else "not tested"


def verdict(m: Matrix, impl: Implementation) -> str:
    """One line: does this implementation meet the spec, as far as the suites ran?"""
    if not impl.available:
        return "not available"
    totals: Counter[str] = m.judged_totals(impl.name)
    writer: Counter[str] = m.writer_totals(impl.name)
    if not totals and not writer:
        return "no results"
    known = sum(1 for c in m.judged(impl.name).values() if c.known)
    bad = _bad(totals)
    parts = []
    reader = "as a reader, " if impl.decode_only else ""
    roots = roots_text(m.roots(impl.name), totals["blocked"])
    if roots:
        parts.append(roots)
    if bad:
        parts.append(f"{reader}does not conform: {counts_text(bad)}" + (f" ({known} known)" if known else ""))
    else:
        parts.append(f"{reader}meets every MUST tested")
    if totals["warn"]:
        parts.append(f"{totals['warn']} SHOULD warning(s)")
    if totals["unsupported"]:
        parts.append(f"{totals['unsupported']} optional case(s) unsupported")
    if writer:
        wrong = _bad(writer)
        parts.append("writer settings at parse: " + (f"{counts_text(wrong)} (counted apart)" if wrong else "all held"))
    if impl.run_problem:
        return "run incomplete; so far " + "; ".join(parts)
    return "; ".join(parts)


def _bad(totals: Mapping[str, int]) -> dict[str, int]:
    # Everything but these three is a failure, an outcome this version does not know included
    # (the loader refuses those; a matrix built by other code must not read as conforming).
    # A blocked case is no failure of its own: its root case holds the finding.
    return {o: n for o, n in totals.items() if o not in ("pass", "warn", "unsupported", "blocked") and n}


def short_verdict(m: Matrix, impl: Implementation) -> str:
    """The verdict in a few words, for a table whose other columns hold the counts."""
    if not impl.available:
        return "not available"
    totals = m.judged_totals(impl.name)
    if not totals and not m.writer_totals(impl.name):
        return "no results"
    reader = "as a reader: " if impl.decode_only else ""
    text = f"{reader}does not conform" if _bad(totals) else f"{reader}meets every MUST tested"
    return f"run incomplete; so far {text}" if impl.run_problem else text


def parse_only(m: Matrix, requirement: str) -> str:
    """The text of a requirement row whose cases are all configuration cases: its outcome per parser."""
    parts = []
    for g in m.parsers:
        cell = m.parser_cells.get(g.parser, {}).get(requirement)
        if cell is not None and cell.total:
            parts.append(f"{g.parser} {cell_text(cell)}")
    return "Tested at parse only, once per parser: " + "; ".join(parts) + ". See"


def evidence_groups(evidence: Mapping[str, Mapping[str, list[CaseResult]]]) -> list[tuple[list[str], Mapping[str, list[CaseResult]]]]:
    """A spec note's evidence with the implementations that have the same outcomes on the same
    cases listed together (in their order), each group with the cases of its first."""
    groups: dict[tuple[tuple[str, tuple[str, ...]], ...], tuple[list[str], Mapping[str, list[CaseResult]]]] = {}
    for impl, by_outcome in evidence.items():
        key = tuple(sorted((o, tuple(sorted(c.case for c in cs))) for o, cs in by_outcome.items()))
        groups.setdefault(key, ([], by_outcome))[0].append(impl)
    return list(groups.values())


def protection_columns(m: Matrix) -> list[tuple[str, str]]:
    """The core-protection table's columns, (level, charged to): MUST requirements by how many
    rows lack them (then by cases), then error, crash, timeout, then the SHOULD ones likewise."""
    rows: Counter[tuple[str, str]] = Counter()
    cases: Counter[tuple[str, str]] = Counter()
    for items in m.protection.values():
        for p in items:
            rows[(p.level, p.charged_to)] += 1
            cases[(p.level, p.charged_to)] += len(p.cases)
    unjudged = ("error", "crash", "timeout")
    return sorted(rows, key=lambda k: (k[0] != "MUST", k[1] in unjudged and unjudged.index(k[1]) + 1, -rows[k], -cases[k], k[1]))


def protection_intro(m: Matrix) -> str:
    builtins = [i.name for i in m.implementations if i.group == "project" and m.cases.get(i.name)]
    return (
        "For each row that is not this project's codec: the MUST cases it does not hold (fail, error, crash, timeout) "
        f"while every built-in that ran them holds them ({', '.join(builtins) or 'none in this run'}), and the SHOULD "
        "cases it warns on (truncated or CMYK streams, headers that do not fit the chunk ...) that every built-in passes. "
        "The built-ins are the same spec-aware code (configuration parser, chunk checks, marker inspection before "
        "decoding, a writer for every required scheme) over different pixel libraries, so what they all hold and a row "
        "does not is what that code adds: what an author wrapping the row's library must write. Columns are the "
        "requirements the failures (red) and warnings (yellow) are charged to (hover a heading for the spec's words; the "
        "list below repeats them); a case that ends in an error is counted under error. Configuration cases are left out "
        "(parsing is the adapter's or harness's code, not the library's)."
    )


def versions_text(impl: Implementation) -> str:
    return ", ".join(f"{k} {v}" for k, v in impl.versions.items()) or "—"


def mode_order(modes: list[str]) -> list[str]:
    """Modes in modes.MODES order, unknown ones after."""
    known = list(MODE)
    return sorted(modes, key=lambda m: (known.index(m) if m in known else len(known), m))


__all__ = ["COLUMNS", "MEANING", "ROOTS_INTRO", "SYMBOL", "cell_text", "compact_cell_text", "counts_text", "evidence_groups",
           "mode_order", "parse_only",
           "protection_columns", "protection_intro", "ROOT_COLUMNS", "cause_cell", "root_rows", "short_verdict", "untested_row",
           "untested_text", "verdict", "versions_text"]


#: The columns of a root-findings table (:func:`root_rows`).
ROOT_COLUMNS = ("rule", "level", "the spec's words", "cause", "cases that show it", "cases blocked", "message", "reproducer")


def cause_cell(f: RootFinding) -> str:
    """The cause of a finding, the other rules it breaks and what it hides, in words."""
    parts = [f.cause_text]
    if f.consequences:
        parts.append(f"also breaks: {', '.join(f.consequences)}")
    if f.latent:
        parts.append(f.latent_text())
    parts.append(f.given_text())
    return "; ".join(p for p in parts if p)


def root_rows(findings: list[RootFinding], implementation: str = "") -> list[list[str]]:
    """The root-findings table of one row: rule, level, the spec's words, cause, cases, blocked, one message, and
    the folder its reproducer is written to (``report repro``)."""
    return [[f.label, f.level, f.text, cause_cell(f),
             ", ".join(f.cases[:6]) + (f" and {len(f.cases) - 6} more" if len(f.cases) > 6 else ""),
             str(f.blocked), f.message, repro_folder(implementation, i, f) if f.outcome != "blocked" else ""]
            for i, f in enumerate(findings, 1)]




ROOTS_INTRO = (
    "Each row's defects, each once: its failing cases grouped by the cause the suites' diagnosis names (the same stage "
    "and the same fault, e.g. an encoder that reads the chunk channel-outermost), cited under the rule the defect breaks, "
    "with the other rules its cases break listed as consequences. Where no diagnosis names the cause, the cases are "
    "grouped by the rule each failure is charged to, and the cause column says so. A case that could not run because "
    "something it stands on failed (the parse of its configuration, the encode of its chunk, its valid twin) is blocked "
    "by the case that holds the finding and counted under it; what such a case shows once the finding is fixed (asked "
    "again with the finding's cause removed) is listed as latent. Each finding's reproducer (its column: files, one "
    "command that reruns its cases, an upstream report in ISSUE.md; for a harness, the protocol requests and a script "
    "that replays them without the suite) is written there by `python -m zarr_jpeg_conformance.report repro <this "
    "folder>`."
)
