"""The evidence a spec review rests on: each row's outcome on each case, and what it was charged to.

Read from a full matrix.json (or a :class:`model.Matrix` in memory), or from the reduced
evidence file this module writes (``docs/evidence/spec-review.json`` in the repository): the
same data without messages, so that the review can be regenerated and tested without running
the matrix. The reduced file keeps, per row and case, the outcome, the requirements each
non-passing outcome was charged to (``CaseResult.attributions``), whether the implementation
refused the input, and the metrics the review's entries ask for.
"""

from __future__ import annotations

import fnmatch
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from ..corpus.registry import load_json
from .model import SEVERITY, CaseResult, Matrix
from .rows import writer_setting
from .saved import ReportFileError, read_json

#: ``evidence_format`` of the reduced file this version writes and reads.
EVIDENCE_FORMAT = 1
EVIDENCE_SCHEMA = "spec-review-evidence.schema.json"
#: Outcomes that make a row non-conforming (wording.verdict): everything but these.
_CONFORMING = frozenset({"pass", "warn", "unsupported", "blocked"})
#: Said of an outcome a case got on another rule's check, before it reached the requirement asked about.
ELSEWHERE = " on another rule"
#: Outcomes after which a test stopped: requirements not charged were not reached.
_RAN_TO_END = frozenset({"pass", "warn"})


@dataclass(frozen=True)
class RowResult:
    """One row's result on one case."""

    outcome: str
    #: requirement -> the non-passing outcome charged to it.
    charged: Mapping[str, str] = field(default_factory=dict)
    #: The row refused the input (a clean rejection), as opposed to returning something.
    rejected: bool = False
    metrics: Mapping[str, float] = field(default_factory=dict)

    def attribution(self, requirement: str, cited: bool) -> str | None:
        """The outcome this result gives ``requirement``; None where the test stopped before reaching it."""
        if requirement in self.charged:
            return self.charged[requirement]
        return "pass" if cited and self.outcome in _RAN_TO_END else None

    @property
    def decoded(self) -> bool:
        """It returned something (judged), rather than refusing, stopping early or being blocked."""
        return not self.rejected and self.outcome in ("pass", "warn", "fail")


@dataclass(frozen=True)
class CaseEvidence:
    """Every row's result on one case (a key of matrix.json's ``cases``)."""

    key: str
    level: str
    #: Every requirement the rows' results rest on, in first-seen order.
    requirements: tuple[str, ...]
    #: A parse case that concerns only the writer's settings: decode-only rows are not judged on it (rows.writer_setting).
    writer_setting: bool
    rows: Mapping[str, RowResult]

    @property
    def case(self) -> str:
        """The case ID (a key can carry a suffix: ``<case> [test]``, ``<case> #2``)."""
        return self.key.split(" ", 1)[0]


@dataclass(frozen=True)
class Row:
    """An implementation of the matrix."""

    name: str
    group: str
    kind: str
    language: str
    decode_only: bool
    versions: Mapping[str, str]
    #: Outcome -> the cases the row is judged on (model.Matrix.judged_totals).
    judged: Mapping[str, int]

    @property
    def conforms(self) -> bool:
        return conforms(self.judged)


def conforms(totals: Mapping[str, int]) -> bool:
    """Whether a row with these judged totals meets every MUST tested (wording.verdict's test)."""
    return not any(n for o, n in totals.items() if o not in _CONFORMING)


@dataclass
class Evidence:
    """The rows and their results, with where they came from."""

    generated: str
    rows: list[Row]
    cases: dict[str, CaseEvidence]

    def row(self, name: str) -> Row:
        return next(r for r in self.rows if r.name == name)

    def judged_here(self, row: Row, case: CaseEvidence) -> bool:
        """Whether the row is judged on this case (a decode-only row is not, on writer settings)."""
        return not (row.decode_only and case.writer_setting)

    def select(self, requirement: str | None, patterns: Sequence[str], by_citation: bool) -> list[CaseEvidence]:
        """The cases that cite ``requirement`` (unless ``by_citation`` is false) or match one of ``patterns``."""
        return [c for c in self.cases.values()
                if (by_citation and requirement in c.requirements) or any(fnmatch.fnmatchcase(c.case, p) for p in patterns)]


# ---------------------------------------------------------------- building


def _row_result(r: CaseResult, metric_cases: Sequence[str]) -> RowResult:
    """A results line reduced: its charges, whether it refused, and its numeric metrics where its case matches ``metric_cases``."""
    charged = {q: o for q, o in r.attributions().items() if o != "pass"}
    keep = any(fnmatch.fnmatchcase(r.case, p) for p in metric_cases)
    metrics = {k: float(v) for k, v in r.metrics.items() if keep and isinstance(v, int | float) and not isinstance(v, bool)}
    return RowResult(r.outcome, charged, "rejection" in r.metrics, metrics)


def _add_case(cases: dict[str, CaseEvidence], key: str, r: CaseResult, result: RowResult) -> None:
    """Add one row's result to the case of ``key``: its requirements join the case's, in first-seen order."""
    seen = cases.get(key)
    if seen is None:
        # A key with a suffix is another test on a configuration case, never the parse case itself (model._case_key).
        cases[key] = CaseEvidence(key, r.level, tuple(r.requirements), " " not in key and writer_setting(r.case),
                                  {r.implementation: result})
        return
    reqs = tuple(dict.fromkeys([*seen.requirements, *r.requirements]))
    cases[key] = CaseEvidence(key, seen.level, reqs, seen.writer_setting, {**seen.rows, r.implementation: result})


def from_matrix(m: Matrix, metric_cases: Sequence[str] = ()) -> Evidence:
    """The evidence of a matrix built in memory (the pages' own); metrics kept for cases matching ``metric_cases``."""
    rows = [Row(i.name, i.group, i.kind, i.language, i.decode_only, dict(i.versions), dict(m.judged_totals(i.name)))
            for i in m.implementations if m.cases.get(i.name)]
    cases: dict[str, CaseEvidence] = {}
    for row in rows:
        for key, r in m.cases[row.name].items():
            _add_case(cases, key, r, _row_result(r, metric_cases))
    return Evidence(m.generated, rows, cases)


def from_matrix_document(doc: Mapping[str, Any], metric_cases: Sequence[str] = ()) -> Evidence:
    """The evidence of a matrix.json already checked against its schema (saved.read_json)."""
    rows = [Row(i["name"], i["group"], i["kind"], i["language"], i["decode_only"], dict(i.get("versions") or {}),
                dict(i["judged_totals"]))
            for i in doc["implementations"] if doc["cases"].get(i["name"])]
    cases: dict[str, CaseEvidence] = {}
    for row in rows:
        for key, c in doc["cases"][row.name].items():
            r = CaseResult(row.name, key.split(" ", 1)[0], c["outcome"], c.get("level", "MUST"), tuple(c.get("requirements", ())),
                           c.get("message", ""), c.get("metrics") or {})
            _add_case(cases, key, r, _row_result(r, metric_cases))
    return Evidence(str(doc.get("generated", "")), rows, cases)


# ---------------------------------------------------------------- the reduced file

def _result_text(r: RowResult) -> str:
    """'unsupported rejected JPEG-X-03:unsupported': the outcome, whether it refused, and its charges."""
    return " ".join([r.outcome, *(["rejected"] if r.rejected else []), *(f"{q}:{o}" for q, o in r.charged.items())])


def _result_json(r: RowResult | None) -> str | dict[str, Any] | None:
    if r is None:
        return None
    return {"result": _result_text(r), "metrics": dict(r.metrics)} if r.metrics else _result_text(r)


def to_json(ev: Evidence) -> dict[str, Any]:
    """The reduced evidence file's document: each case's results in the order of ``rows`` (null: no result)."""
    return {
        "evidence_format": EVIDENCE_FORMAT,
        "generated": ev.generated,
        "rows": [{"name": r.name, "group": r.group, "kind": r.kind, "language": r.language, "decode_only": r.decode_only,
                  "versions": dict(r.versions), "judged": dict(sorted(r.judged.items()))} for r in ev.rows],
        "cases": {
            c.key: {"level": c.level, "requirements": list(c.requirements), **({"writer_setting": True} if c.writer_setting else {}),
                    "results": [_result_json(c.rows.get(r.name)) for r in ev.rows]}
            for c in ev.cases.values()
        },
    }


def dumps(ev: Evidence) -> str:
    """The reduced file's text: one case per line, so that a new run's changes read as a diff."""
    doc = to_json(ev)
    cases = doc.pop("cases")
    head = json.dumps(doc, indent=1, ensure_ascii=False)
    lines = [f" {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False, separators=(',', ':'))}"
             for k, v in cases.items()]
    return head[:-2] + ',\n "cases": {\n' + ",\n".join(lines) + "\n }\n}\n"


def _row_from_json(value: str | Mapping[str, Any]) -> RowResult:
    """A result of the reduced file, its form already checked by the schema ($defs/result)."""
    text, metrics = (value, {}) if isinstance(value, str) else (value["result"], dict(value["metrics"]))
    outcome, *rest = text.split(" ")
    rejected = rest[:1] == ["rejected"]
    charged = dict(item.split(":", 1) for item in rest[rejected:])
    return RowResult(outcome, charged, rejected, metrics)


def from_json(doc: Mapping[str, Any], source: str) -> Evidence:
    """The evidence of a reduced file's document, checked against its schema first (ReportFileError naming ``source``)."""
    problems = sorted(jsonschema.Draft202012Validator(load_json("schema", EVIDENCE_SCHEMA)).iter_errors(doc),
                      key=lambda e: list(map(str, e.absolute_path)))
    if problems:
        first = problems[0]
        where = "/".join(map(str, first.absolute_path)) or "the document"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ReportFileError(f"{source}: {where}: {first.message}{more}")
    rows = [Row(r["name"], r["group"], r["kind"], r["language"], r["decode_only"], dict(r["versions"]), dict(r["judged"]))
            for r in doc["rows"]]
    cases: dict[str, CaseEvidence] = {}
    for key, c in doc["cases"].items():
        if len(c["results"]) != len(rows):
            raise ReportFileError(f"{source}: cases/{key}: {len(c['results'])} results for {len(rows)} rows")
        results = {row.name: _row_from_json(v) for row, v in zip(rows, c["results"], strict=True) if v is not None}
        cases[key] = CaseEvidence(key, c["level"], tuple(c["requirements"]), bool(c.get("writer_setting")), results)
    return Evidence(doc["generated"], rows, cases)


def load(path: Path, metric_cases: Sequence[str] = ()) -> Evidence:
    """The evidence of a matrix.json or of a reduced evidence file (told apart by ``evidence_format``).

    ReportFileError (naming the file) when it is neither, or is damaged.
    """
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportFileError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ReportFileError(f"{path}: not JSON: {exc}") from None
    if isinstance(doc, dict) and "evidence_format" in doc:
        if doc["evidence_format"] != EVIDENCE_FORMAT:
            raise ReportFileError(f"{path}: evidence_format {doc['evidence_format']!r}; this version reads {EVIDENCE_FORMAT}: "
                                  "write it again from a matrix.json (spec-review MATRIX.json --evidence-out FILE)")
        return from_json(doc, str(path))
    return from_matrix_document(read_json(path, "matrix"), metric_cases)


# ---------------------------------------------------------------- summaries


def profile(ev: Evidence, cases: Iterable[CaseEvidence], requirement: str | None) -> dict[str, Counter[str]]:
    """Row -> outcome -> how many of ``cases`` give it (rows with none left out).

    Where a case cites ``requirement``, the outcome charged to it; where the test ended on another rule's check
    before reaching it, that outcome "on another rule". Elsewhere (or with no requirement) the case's outcome.
    """
    out: dict[str, Counter[str]] = {}
    for c in cases:
        for name, r in c.rows.items():
            cited = requirement is not None and requirement in c.requirements
            outcome = r.attribution(requirement, True) if requirement is not None and cited else r.outcome
            out.setdefault(name, Counter())[outcome or r.outcome + ELSEWHERE] += 1
    return {r.name: out[r.name] for r in ev.rows if r.name in out}


def outcome_rank(outcome: str) -> float:
    """Higher is better (pass highest); an outcome on another rule just above the same outcome on this one."""
    base = outcome.removesuffix(ELSEWHERE)
    rank = SEVERITY.index(base) if base in SEVERITY else -1
    return rank + (0.5 if outcome.endswith(ELSEWHERE) else 0)


def worst_of(counts: Mapping[str, int]) -> str:
    """The worst outcome of some counts ("not reached" included)."""
    return min((o for o, n in counts.items() if n), key=outcome_rank, default="pass")


__all__ = ["ELSEWHERE", "EVIDENCE_FORMAT", "CaseEvidence", "Evidence", "Row", "RowResult", "conforms", "dumps", "from_json",
           "from_matrix", "from_matrix_document", "load", "outcome_rank", "profile", "to_json", "worst_of"]
