"""A results file's root findings, each once, for a terminal or a CI log.

``python -m zarr_jpeg_conformance.report.findings results.jsonl`` prints, per implementation,
what the matrix's Root findings section shows: the rules its failures are charged to, the
spec's words, the cases that show each and how many cases each blocks. A codec's CI prints it
after a failing run, so that the first thing read is the few deviations, not the hundreds of
cases they fail or block. A finding whose cases are all listed in the run's ``--known-failures``
file is marked ``[known failure]`` (``[known: N of M cases]`` where only some are), so that what is
new stands out. A results file that is missing or holds no result is said so in plain words (the
suites did not run, or ran nothing), never passed over in silence: exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from .model import NO_IMPL, CaseResult, _case_key, read_results
from .roots import root_findings, roots_text
from .saved import ReportFileError


def findings_text(results: Sequence[CaseResult]) -> str:
    """The root findings of every implementation in ``results``, as plain text."""
    rows: dict[str, dict[str, CaseResult]] = {}
    for r in results:
        if r.implementation != NO_IMPL:
            cases = rows.setdefault(r.implementation, {})
            cases[_case_key(r, cases)] = r
    out = []
    for name, cases in rows.items():
        findings = root_findings(cases)
        blocked = sum(1 for c in cases.values() if c.outcome == "blocked")
        known = sum(1 for f in findings if _known_mark(f.cases, cases) == " [known failure]")
        listed = f"; {'all' if known == len(findings) else known} of them known failures" if known else ""
        out.append(f"{name}: {roots_text(findings, blocked) or 'no root finding'}{listed}")
        for n, f in enumerate(findings, 1):
            shown = ", ".join(f.cases[:3]) + (f" and {len(f.cases) - 3} more" if len(f.cases) > 3 else "")
            out.append(f"  {n}. {f.label} {f.level}{_known_mark(f.cases, cases)}: {len(f.cases)} case(s), blocks {f.blocked}: {shown}")
            # Unwrapped: a CI log wraps for its reader, and a message keeps its own line breaks.
            extra = [f"cause: {f.cause_text}" if f.outcome != "blocked" else "",
                     f"also breaks: {', '.join(f.consequences)}" if f.consequences else "", f.latent_text(), f.given_text()]
            out.extend(textwrap.indent(text, "      ") for text in (f.text, *extra, f.message) if text)
    return "\n".join(out)


def _known_mark(finding_cases: Sequence[str], cases: dict[str, CaseResult]) -> str:
    """' [known failure]' when every case of a finding is a listed known failure, ' [known: N of M cases]' when some are."""
    known = {c.case for c in cases.values() if c.known}
    listed = sum(1 for case in finding_cases if case in known)
    if not listed:
        return ""
    return " [known failure]" if listed == len(finding_cases) else f" [known: {listed} of {len(finding_cases)} cases]"


def unusable(path: Path) -> str | None:
    """Why a results file gives no findings at all (missing, or empty), in plain words; None if it may."""
    if not path.exists():
        return (f"{path}: no results file: the suites did not run, or wrote their results elsewhere "
                "(pytest --results); the run's own output says why")
    if path.is_file() and not path.read_bytes().strip():
        return (f"{path}: empty: no case ran (a -k or --impl that selected nothing, or a run stopped "
                "before its first case); the run's own output says why")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.report.findings",
                                     description="Print the root findings of results files, each once.")
    parser.add_argument("results", type=Path, nargs="+", help="results files written by pytest --results")
    args = parser.parse_args(argv)
    problems = [why for why in map(unusable, args.results) if why]
    try:
        results = read_results([path for path in args.results if not unusable(path)])
    except (OSError, ReportFileError) as exc:
        print(f"cannot read the results: {exc}", file=sys.stderr)
        return 2
    if results:
        print(findings_text(results) or "the results hold only the corpus's own checks: no implementation's findings")
    # On stdout with the findings: a CI step that tees them into a file keeps this too.
    for why in problems:
        print(why)
    return 2 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
