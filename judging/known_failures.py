"""Known-failure files: an implementation's own list of cases it is known to fail.

Keyed by case ID, each with a reason; checked strictly by the plugin (a listed case that
passes fails the run). The format is documented in docs/protocol.md and docs/codec-authors.md;
report/known_failures.py writes one from a run's results.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest


class KnownFailuresWarning(UserWarning):
    """A known-failure file lists cases that this run cannot check."""


@dataclass(frozen=True)
class KnownFailure:
    """One entry of a known-failure file: a case the implementation is known to fail, and why."""

    implementation: str
    case: str
    reason: str
    issue: str | None
    file: str


def load_known_failures(paths: Sequence[str]) -> dict[tuple[str, str], KnownFailure]:
    """Every entry of every --known-failures file, keyed by (implementation, case ID)."""
    known: dict[tuple[str, str], KnownFailure] = {}
    for path in paths:
        def bad(problem: str, path: str = path) -> pytest.UsageError:
            return pytest.UsageError(f"--known-failures={path}: {problem}")

        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise bad(f"cannot read it: {exc}") from exc
        except ValueError as exc:
            raise bad(f"not JSON: {exc}") from exc
        if not isinstance(doc, dict) or set(doc) != {"implementation", "known_failures"}:
            raise bad('expected an object with exactly "implementation" and "known_failures"')
        impl, entries = doc["implementation"], doc["known_failures"]
        if not isinstance(impl, str) or not impl:
            raise bad('"implementation" must be the name of an implementation')
        if not isinstance(entries, list):
            raise bad('"known_failures" must be a list')
        for i, entry in enumerate(entries):
            where = f"known_failures[{i}]"
            if not isinstance(entry, dict) or not {"case", "reason"} <= set(entry) <= {"case", "reason", "issue"}:
                raise bad(f'{where} must be an object with "case" and "reason" (and optionally "issue"), got {entry!r}')
            case, reason, issue = entry["case"], entry["reason"], entry.get("issue")
            if not isinstance(case, str) or not case:
                raise bad(f'{where}: "case" must be a case ID, got {case!r}')
            if not isinstance(reason, str) or not reason.strip():
                raise bad(f'{where} ({case}): a known failure needs a "reason"')
            if issue is not None and (not isinstance(issue, str) or not issue):
                raise bad(f'{where} ({case}): "issue" must be a non-empty string (a URL)')
            if (impl, case) in known:
                raise bad(f"{where}: {case} of {impl!r} is listed twice (also in {known[impl, case].file})")
            known[impl, case] = KnownFailure(impl, case, reason.strip(), issue, path)
    return known


