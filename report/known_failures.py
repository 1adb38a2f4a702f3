"""An implementation's known-failures file, written from a run's results.

``python -m zarr_jpeg_conformance.report known-failures RESULTS.jsonl [--out FILE]`` lists every
case the run failed (fail, error, crash, timeout) in the format ``--known-failures`` reads
(``judging/known_failures.py``): ``{"implementation": NAME, "known_failures": [{"case": ID,
"reason": TEXT, "issue": URL}]}``. With it, a codec's CI is green on what it fails today and red on
anything new. A reason says which rule the failure is charged to and what was observed; edit it,
and add an ``issue``, as you like: written again over the same ``--out`` file, the list keeps the
reason and issue of every case that still fails, drops the cases that now hold and adds the new.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ..judging.known_failures import KnownFailure, load_known_failures
from .model import NO_IMPL, CaseResult, read_results
from .outfolder import OutFolderError, write_text
from .roots import FINDING_OUTCOMES, finding_of
from .saved import ReportFileError

#: How much of what was observed a generated reason keeps.
REASON_CHARS = 240


class KnownFailuresError(ValueError):
    """The results cannot give a known-failures list, or the --out file is not one; the message says why."""


def _reason(r: CaseResult) -> str:
    """The rule a failure is charged to, and what was observed, in one line."""
    outcome, requirement = finding_of(r) or (r.outcome, "?")
    label = requirement if outcome == "fail" else f"{outcome} ({requirement})"
    lines = [line.strip() for line in r.summary(sys.maxsize).splitlines() if line.strip()]
    observed = next((line.removeprefix("observed:").strip() for line in lines if line.startswith("observed:")),
                    next((line for line in lines if not line.startswith("[JPEG-")), ""))
    text = f"{label}: {observed}" if observed else label
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


def implementation_of(results: Sequence[CaseResult], wanted: str | None) -> str:
    """The implementation whose list is written: ``wanted``, or the only one the results hold."""
    names = list(dict.fromkeys(r.implementation for r in results if r.implementation != NO_IMPL))
    if wanted is not None:
        if wanted not in names:
            raise KnownFailuresError(f"no results of {wanted!r}: the results hold {', '.join(names) or 'none'}")
        return wanted
    if len(names) != 1:
        raise KnownFailuresError(f"the results hold {len(names)} implementations ({', '.join(names) or 'none'}): "
                                 "name one with --impl")
    return names[0]


def known_failures(results: Sequence[CaseResult], implementation: str,
                   previous: Mapping[str, KnownFailure] | None = None) -> tuple[dict[str, Any], list[str]]:
    """The known-failures document of ``implementation``, and the cases it cannot list, each with why.

    A case ID names one entry, and every test that judges that case is held to it: a case that
    fails in one test and passes in another cannot be listed (its pass would be an unexpected
    pass), so it is reported instead.
    """
    lines: dict[str, list[CaseResult]] = {}
    for r in results:
        if r.implementation == implementation:
            lines.setdefault(r.case, []).append(r)
    entries, unlisted = [], []
    for case, rs in lines.items():
        failing = [r for r in rs if r.outcome in FINDING_OUTCOMES]
        if not failing:
            continue
        if any(r.outcome == "pass" for r in rs):
            tests = ", ".join(sorted({r.test or "?" for r in rs if r.outcome == "pass"}))
            unlisted.append(f"{case}: fails in {failing[0].test or 'one test'} and holds in {tests}; "
                            "listed, its pass would fail the run")
            continue
        kept = (previous or {}).get(case)
        entry: dict[str, str] = {"case": case, "reason": kept.reason if kept else _reason(failing[0])}
        if kept is not None and kept.issue:
            entry["issue"] = kept.issue
        entries.append(entry)
    return {"implementation": implementation, "known_failures": entries}, unlisted


def _previous(path: Path, implementation: str) -> dict[str, KnownFailure]:
    """The entries of an existing known-failures file at ``path`` (none if there is no file)."""
    if not path.exists():
        return {}
    try:
        loaded = load_known_failures([str(path)])
    except pytest.UsageError as exc:
        raise KnownFailuresError(f"{exc}: not overwritten") from exc
    # Valid, so a JSON object naming its implementation, whether or not it lists anything.
    other = json.loads(path.read_text(encoding="utf-8"))["implementation"]
    if other != implementation:
        raise KnownFailuresError(f"{path} is the list of {other!r}, not of {implementation!r}: not overwritten")
    return {k.case: k for k in loaded.values()}


def main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="zarr-jpeg-conformance-report known-failures",
        description="Write the known-failures file (--known-failures) that lists every case a run failed.")
    p.add_argument("results", type=Path, nargs="+", help="results files written by pytest --results")
    p.add_argument("--impl", metavar="NAME", help="the implementation to list (needed when the results hold several)")
    p.add_argument("--out", type=Path, metavar="FILE",
                   help="write here (the reasons and issues of an earlier list here are kept); default: print it")
    args = p.parse_args(argv)
    try:
        results = read_results(args.results)
        name = implementation_of(results, args.impl)
        previous = _previous(args.out, name) if args.out else {}
        doc, unlisted = known_failures(results, name, previous)
    except (OSError, ReportFileError, KnownFailuresError) as exc:
        print(f"known-failures: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    for line in unlisted:
        print(f"known-failures: not listed: {line}", file=sys.stderr)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        write_text(args.out, text)
    except (OSError, OutFolderError) as exc:
        print(f"known-failures: cannot write {args.out}: {exc}", file=sys.stderr)
        return 2
    cases = {e["case"] for e in doc["known_failures"]}
    print(f"known-failures: {len(cases)} known failure(s) of {name} in {args.out} ({len(cases & set(previous))} kept, "
          f"{len(cases - set(previous))} new, {len(set(previous) - cases)} removed)", file=sys.stderr)
    return 0


__all__ = ["KnownFailuresError", "implementation_of", "known_failures", "main"]
