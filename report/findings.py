"""A results file's root findings, each once, for a terminal or a CI log.

``python -m zarr_jpeg_conformance.report.findings results.jsonl`` prints, per implementation,
what the matrix's Root findings section shows: the rules its failures are charged to, the
spec's words, the cases that show each and how many cases each blocks. A codec's CI prints it
after a failing run, so that the first thing read is the few deviations, not the hundreds of
cases they fail or block.
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
        out.append(f"{name}: {roots_text(findings, blocked) or 'no root finding'}")
        for f in findings:
            shown = ", ".join(f.cases[:3]) + (f" and {len(f.cases) - 3} more" if len(f.cases) > 3 else "")
            out.append(f"  {f.label} {f.level}: {len(f.cases)} case(s), blocks {f.blocked}: {shown}")
            # Unwrapped: a CI log wraps for its reader, and a message keeps its own line breaks.
            out.extend(textwrap.indent(text, "      ") for text in (f.text, f.message) if text)
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.report.findings",
                                     description="Print the root findings of results files, each once.")
    parser.add_argument("results", type=Path, nargs="+", help="results files written by pytest --results")
    args = parser.parse_args(argv)
    try:
        results = read_results(args.results)
    except (OSError, ReportFileError) as exc:
        print(f"cannot read the results: {exc}", file=sys.stderr)
        return 2
    print(findings_text(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
