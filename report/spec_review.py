"""The spec review: every spec note and interpretation as a proposed change to the spec's text, with its evidence.

``python -m zarr_jpeg_conformance.report spec-review SOURCE --out FILE.md`` writes it, SOURCE being a
matrix.json or the reduced evidence file (``--evidence-out FILE`` writes that from a matrix.json). The prose
(problem, options, proposed text) is ``report/spec_proposals.json``, checked against
``schema/spec-proposals.schema.json`` and against the registry; every count is computed from the evidence
(review_evidence) and every consequence from the options' changes (review_changes).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema

from ..corpus.registry import load_json, requirements
from .model import Matrix, load_note_texts
from .outfolder import write_text
from .review_changes import Change, ChangeError, Consequence, Cost, all_cases, consequences, cost
from .review_evidence import (
    CaseEvidence,
    Evidence,
    dumps,
    from_json,
    from_matrix,
    load,
    outcome_rank,
    profile,
    worst_of,
)
from .saved import ReportFileError

PROPOSALS = "spec_proposals.json"
SCHEMA = "spec-proposals.schema.json"
#: Where the repository keeps the review and its evidence, and the commands that write them.
DOC = "docs/spec-review.md"
EVIDENCE = "docs/evidence/spec-review.json"
REGENERATE = f"python -m zarr_jpeg_conformance.report spec-review {EVIDENCE} --out {DOC}"
REFRESH = f"python -m zarr_jpeg_conformance.report spec-review RUN/matrix.json --evidence-out {EVIDENCE} --out {DOC}"
#: Cases listed in full per entry before the rest is counted.
MAX_LISTED = 12
RFC_LEVELS = ("MUST NOT", "SHOULD NOT", "MUST", "SHOULD", "MAY")


class ProposalError(ValueError):
    """report/spec_proposals.json does not fit the schema or the registry (named in the message)."""


@dataclass(frozen=True)
class Option:
    label: str
    summary: str
    changes: tuple[Change, ...]
    as_written: bool = False


@dataclass(frozen=True)
class Proposal:
    option: str
    action: str
    at: str
    text: str
    level: str
    why: str


@dataclass(frozen=True)
class Entry:
    """One place of the spec: its words, the problem, the options and the text proposed (None: not written yet)."""

    id: str
    title: str
    anchor: str
    quote: tuple[str, ...]
    problem: str
    direction: str
    reason: str
    cases: tuple[str, ...]
    by_citation: bool
    metrics: Mapping[str, Any]
    options: tuple[Option, ...]
    proposal: Proposal | None

    @property
    def interpretation(self) -> bool:
        return requirements()[self.id].kind == "interpretation"

    def option(self, label: str) -> Option:
        return next(o for o in self.options if o.label == label)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _contains_level(text: str, level: str) -> bool:
    return re.search(rf"(?<![A-Za-z]){level}(?![A-Za-z])", text) is not None


def _entry(rid: str, doc: Mapping[str, Any], note: Mapping[str, Any] | None) -> Entry:
    where = f"{PROPOSALS}: {rid}"
    reqs = requirements()
    if rid not in reqs:
        raise ProposalError(f"{where}: not a requirement of the registry")
    anchor = doc.get("anchor", rid)
    if anchor not in reqs or (reqs[anchor].kind == "interpretation" and anchor != rid):
        raise ProposalError(f"{where}: anchor {anchor} is no spec requirement of the registry")
    if reqs[rid].kind == "interpretation" and anchor == rid:
        raise ProposalError(f"{where}: an interpretation needs an anchor, the spec requirement it reads")
    if reqs[rid].kind == "interpretation" and "reading" not in doc:
        raise ProposalError(f"{where}: an interpretation needs a reading (direction and reason)")
    quote = tuple(doc.get("quote", [anchor]))
    for q in quote:
        if q not in reqs or reqs[q].kind == "interpretation":
            raise ProposalError(f"{where}: quote {q} is no spec requirement of the registry")
    title = doc.get("title") or (note or {}).get("title")
    if not title:
        raise ProposalError(f"{where}: no title, and no spec note to take one from")
    options = []
    for i, o in enumerate(doc["options"]):
        try:
            changes = tuple(Change.of(c, f"{where}: option {o['label']}") for c in o["changes"])
        except ChangeError as exc:
            raise ProposalError(str(exc)) from None
        options.append(Option(o["label"], o["summary"], changes, bool(o.get("as_written"))))
        if [x.label for x in options].count(o["label"]) > 1:
            raise ProposalError(f"{where}: option {o['label']} is given twice (option {i + 1})")
    if sum(o.as_written for o in options) > 1:
        raise ProposalError(f"{where}: more than one option is 'as_written'")
    p = doc["proposal"]
    if p["option"] not in {o.label for o in options}:
        raise ProposalError(f"{where}: the proposal names option {p['option']}, which is not among its options")
    listed = any(_norm(p["at"]) in _norm(r.text) for r in reqs.values() if r.kind != "interpretation")
    if listed == bool(p.get("unlisted")):
        raise ProposalError(f"{where}: the proposal's 'at' ({p['at'][:80]!r}) is " + (
            "held by a requirement of the registry: drop 'unlisted'" if listed else
            "not the spec's words as the registry holds them (mark it 'unlisted' only for a descriptive sentence the "
            "registry leaves out)"))
    if p["level"] in RFC_LEVELS and not _contains_level(p["text"], p["level"]):
        raise ProposalError(f"{where}: the proposal is {p['level']} but its text does not say {p['level']}")
    reading = doc.get("reading", {})
    return Entry(
        id=rid, title=title, anchor=anchor, quote=quote, problem=doc["problem"],
        direction=reading.get("direction", ""), reason=reading.get("reason", ""),
        cases=tuple(doc.get("cases", (note or {}).get("cases", ()))),
        by_citation=doc.get("by_citation", (note or {}).get("by_citation", True)),
        metrics=doc.get("metrics", {}), options=tuple(options),
        proposal=Proposal(p["option"], p["action"], p["at"], p["text"], p["level"], p["why"]),
    )


def _placeholder(rid: str, note: Mapping[str, Any] | None) -> Entry:
    """An entry the registry asks for and the proposals do not hold yet: its evidence shows, its proposal is missing."""
    req = requirements()[rid]
    return Entry(rid, (note or {}).get("title") or req.text[:80], rid, (rid,), "", "", "", tuple((note or {}).get("cases", ())),
                 (note or {}).get("by_citation", True), {}, (), None)


def load_proposals() -> dict[str, Any]:
    """report/spec_proposals.json, checked against its schema (ProposalError naming the place)."""
    data = json.loads(files(__package__).joinpath(PROPOSALS).read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(load_json("schema", SCHEMA)).iter_errors(data),
                    key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        where = "/".join(map(str, errors[0].absolute_path)) or "the document"
        raise ProposalError(f"{PROPOSALS}: {where}: {errors[0].message}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""))
    return {k: v for k, v in data.items() if not k.startswith("$")}


def wanted() -> list[str]:
    """The requirements the review must cover: each with a spec note, and each interpretation."""
    notes = load_note_texts()
    return [rid for rid, r in requirements().items() if rid in notes or r.kind == "interpretation"]


def missing() -> list[str]:
    """Requirements the review must cover that have no proposal yet."""
    have = load_proposals()
    return [rid for rid in wanted() if rid not in have]


@cache
def entries() -> tuple[Entry, ...]:
    """Every entry, in the spec's order (by its anchor's place in the registry; an interpretation after the words it reads)."""
    notes = load_note_texts()
    have = load_proposals()
    found = [_entry(rid, doc, notes.get(rid)) for rid, doc in have.items()]
    found += [_placeholder(rid, notes.get(rid)) for rid in wanted() if rid not in have]
    order = {rid: i for i, rid in enumerate(requirements())}
    return tuple(sorted(found, key=lambda e: (order[e.anchor], e.interpretation, order[e.id])))


def metric_cases() -> tuple[str, ...]:
    """Cases whose metrics some entry shows: the evidence file keeps theirs."""
    return tuple(p for e in entries() for p in e.metrics.get("cases", ()))


# ---------------------------------------------------------------- evidence per entry


@dataclass
class Reviewed:
    """An entry with what the evidence says of it."""

    entry: Entry
    cases: list[CaseEvidence]
    costs: dict[str, Cost]
    consequences: list[Consequence]

    @property
    def proposed(self) -> Cost | None:
        p = self.entry.proposal
        return self.costs.get(p.option) if p else None


def review(ev: Evidence) -> list[Reviewed]:
    """Every entry with its evidence, its options' costs and its proposal's consequences for the corpus."""
    corpus = all_cases(ev)
    out = []
    for e in entries():
        cases = ev.select(e.id, e.cases, e.by_citation)
        costs = {o.label: cost(ev, o.changes) for o in e.options}
        found: list[Consequence] = []
        if e.proposal is not None:
            try:
                found = consequences(e.option(e.proposal.option).changes, corpus, f"{PROPOSALS}: {e.id}")
            except ChangeError as exc:
                raise ProposalError(str(exc)) from None
        out.append(Reviewed(e, cases, costs, found))
    return out


# ---------------------------------------------------------------- Markdown


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(_cell(c) for c in r) + " |" for r in rows), ""]


def _counts(c: Mapping[str, int]) -> str:
    """'1 fail, 2 pass': worst first."""
    return ", ".join(f"{n} {o}" for o, n in sorted(c.items(), key=lambda x: outcome_rank(x[0]), reverse=True) if n)


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) + (f" ({len(names)})" if len(names) > 3 else "")


def _quote(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in text.split("\n")] + [""]


def _case_list(keys: Sequence[str]) -> str:
    shown = ", ".join(f"`{k}`" for k in keys[:MAX_LISTED])
    return shown + (f" and {len(keys) - MAX_LISTED} more" if len(keys) > MAX_LISTED else "")


def evidence_lines(ev: Evidence, r: Reviewed) -> list[str]:
    """What the rows did on the entry's cases, rows with the same outcomes together."""
    if not r.cases:
        return [f"_No case of this run probes {r.entry.id}._", ""]
    # Cases chosen by citation show what each row got on the entry's rule; cases an entry names, their outcomes.
    per_row = profile(ev, r.cases, r.entry.id if r.entry.by_citation else None)
    groups: dict[tuple[tuple[str, int], ...], list[str]] = {}
    for name, counts in per_row.items():
        groups.setdefault(tuple(sorted(counts.items())), []).append(name)
    # What most rows do first; among equals, the better first.
    ordered = sorted(groups.items(), key=lambda g: (-len(g[1]), -outcome_rank(worst_of(dict(g[0])))))
    out = [f"**Evidence** from the matrix: {len(r.cases)} case(s), {_case_list([c.key for c in r.cases])}; "
           f"{len(per_row)} of {len(ev.rows)} rows ran them.", ""]
    return out + _table(["outcomes on these cases", "rows"], [[_counts(dict(k)), _names(v)] for k, v in ordered])


def metric_lines(ev: Evidence, e: Entry) -> list[str]:
    """The measurements an entry asks for: each value with the rows that measured it, the commonest first."""
    if not e.metrics:
        return []
    rows = []
    for c in ev.select(None, e.metrics["cases"], False):
        for key in e.metrics["keys"]:
            by_value: dict[float, list[str]] = {}
            for name, result in c.rows.items():
                if key in result.metrics:
                    by_value.setdefault(round(result.metrics[key], 2), []).append(name)
            if by_value:
                values = sorted(by_value.items(), key=lambda v: (-len(v[1]), v[0]))
                rows.append([f"`{c.key}`", key, "; ".join(f"{value:g} ({_names(names) if len(names) <= 4 else f'{len(names)} rows'})"
                                                      for value, names in values)])
    if not rows:
        return ["_The measurements this entry shows are not in this evidence._", ""]
    meanings = [f"- {key}: {meaning}" for key, meaning in e.metrics["keys"].items()]
    return ["**Measured** in the matrix run (each value with the rows that measured it):", "",
            *_table(["case", "measure", "values"], rows), *meanings, ""]


def _moves(c: Cost) -> str:
    if not c.moved:
        return "none"
    groups: dict[tuple[tuple[tuple[str, str], int], ...], list[str]] = {}
    for row, counts in c.by_row().items():
        groups.setdefault(tuple(sorted(counts.items())), []).append(row)
    parts = []
    for moves, rows in groups.items():
        what = ", ".join(f"{a} → {b} ×{n}" for (a, b), n in moves)
        parts.append(f"{_names(rows)}: {what}")
    return f"{len(c.by_row())} row(s), {len(c.moved)} result(s): " + "; ".join(parts)


def _verdicts(c: Cost) -> str:
    parts = []
    if c.newly_failing:
        parts.append(f"would no longer meet every MUST: {_names(c.newly_failing)}")
    if c.newly_conforming:
        parts.append(f"would meet every MUST tested: {_names(c.newly_conforming)}")
    return "; ".join(parts) or "none"


def option_lines(r: Reviewed) -> list[str]:
    rows = []
    for o in r.entry.options:
        tags = [t for t, on in (("as written", o.as_written), ("proposed", r.entry.proposal is not None
                                                                and r.entry.proposal.option == o.label)) if on]
        head = f"**{o.label}**" + (f" ({', '.join(tags)})" if tags else "")
        rows.append([f"{head}: {o.summary}", _moves(r.costs[o.label]), _verdicts(r.costs[o.label])])
    return ["**Options**, each with what it would change in this run's judging:", "",
            *_table(["option", "results that would change", "verdicts that would change"], rows)]


def _consequence_lines(r: Reviewed) -> list[str]:
    if not r.consequences:
        return ["**Consequence for the corpus**: no case's expected outcome changes under the proposal.", ""]
    lines = []
    for c in r.consequences[:40]:
        level = f"{c.case.level} → {c.level}" if c.level != c.case.level else c.level
        expect = (f"expect {c.case.expect} → {c.expect}" if c.expect != c.case.expect
                  else f"expect {c.expect}" if c.expect else "a case of the suites")
        lines.append(f"- `{c.case.id}` ({c.case.kind}): {level}; {expect}")
    if len(r.consequences) > 40:
        lines.append(f"- … and {len(r.consequences) - 40} more")
    return [f"**Consequence for the corpus**: {len(r.consequences)} case(s) whose expected outcome changes under the proposal:",
            "", *lines, ""]


def _reading_lines(r: Reviewed) -> list[str]:
    e = r.entry
    if not e.direction:
        return []
    req = requirements()[e.id]
    out = [f"**This project's reading** ({e.id}, {req.level}; {e.direction} than the text)" if e.direction != "fills a gap"
           else f"**This project's reading** ({e.id}, {req.level}; it fills a gap the text leaves)", "", *_quote(req.text),
           e.reason, ""]
    literal = next((o for o in e.options if o.as_written), None)
    if literal is not None:
        c = r.costs[literal.label]
        out += [f"Rows this reading changes (against option {literal.label}, the text read as written): {_moves(c)}. "
                f"Verdicts: {_verdicts(c)}.", ""]
    return out


def entry_lines(ev: Evidence, r: Reviewed) -> list[str]:
    e = r.entry
    req = requirements()[e.id]
    out = [f"### {e.id}: {e.title}", ""]
    out += [f"**The spec's words** ({', '.join(e.quote)}):", ""]
    for q in e.quote:
        out += _quote(requirements()[q].text)
    if e.proposal is None:
        return out + [f"_No proposal has been written for {e.id} yet ({req.kind}, {req.level}): add one to "
                      f"report/{PROPOSALS}._", "", *evidence_lines(ev, r)]
    out += [f"**Problem.** {e.problem}", ""]
    out += _reading_lines(r)
    out += evidence_lines(ev, r) + metric_lines(ev, e) + option_lines(r)
    p = e.proposal
    verb = {"replace": "Replace", "insert after": "After"}[p.action]
    out += [f"**Proposed text** (option {p.option}, {p.level}). {verb}:", "", *_quote(p.at),
            "with:" if p.action == "replace" else "insert:", "", *_quote(p.text), f"Why {p.level}: {p.why}", ""]
    return out + _consequence_lines(r)


SUMMARY_HEADER = ("entry", "about", "proposed", "rows worse / better", "verdicts lost / gained", "corpus cases changed")
SUMMARY_INTRO = ("Under each proposal: the rows with a result that gets worse / better, the rows that would lose / gain "
                 "'meets every MUST tested', and the corpus cases whose expected outcome changes.")
#: The matrix page's section: what it holds and where the whole review is.
PAGE_INTRO = ("Each spec note and interpretation of the requirement registry as a proposed change to the spec's text, "
              "with what the proposal would change for this run's rows and for the corpus. The whole review (the "
              "spec's words, the evidence, every option and its cost, the text to paste) is written by "
              "`python -m zarr_jpeg_conformance.report spec-review DIR/matrix.json --out spec-review.md`; the "
              f"repository keeps one as {DOC}.")


def summary_rows(revs: Sequence[Reviewed]) -> list[list[str]]:
    """One row per entry (SUMMARY_HEADER's columns), as plain text."""
    rows = []
    for r in revs:
        p, c = r.entry.proposal, r.proposed
        moved = f"{len(c.rows(worse=True))} / {len(c.rows(worse=False))}" if c else "—"
        verdicts = f"{len(c.newly_failing)} / {len(c.newly_conforming)}" if c else "—"
        rows.append([r.entry.id, r.entry.title, p.level if p else "not written", moved, verdicts, str(len(r.consequences))])
    return rows


def _summary(revs: Sequence[Reviewed]) -> list[str]:
    rows = summary_rows(revs)
    for row, r in zip(rows, revs, strict=True):
        row[0] = f"[{r.entry.id}](#{_slug(r.entry)})"
    return [SUMMARY_INTRO, "", *_table(SUMMARY_HEADER, rows)]


def _slug(e: Entry) -> str:
    """GitHub's anchor of an entry's heading."""
    text = f"{e.id}: {e.title}".lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _rows_table(ev: Evidence) -> list[str]:
    return _table(["row", "kind", "language", "versions", "verdict in this run"],
                  [[r.name, r.kind, r.language, ", ".join(f"{k} {v}" for k, v in r.versions.items()) or "—",
                    "meets every MUST tested" if r.conforms else "does not conform"] for r in ev.rows])


INTRO = (
    "Each entry below is a place where the spec's text is unclear, cannot be met as written, or is read by this "
    "project in a way the text does not spell out (an interpretation, JPEG-X-nn). For each: the spec's current "
    "words (as the requirement registry quotes them), the problem, the evidence of a matrix run (what the "
    "implementations under test did on the cases that probe it), the options with what each would change in that "
    "run's judging, and a proposed text to paste, with its MUST / SHOULD / MAY chosen from the evidence. The last "
    "part of each entry lists the corpus cases whose expected outcome the proposal would change.\n\n"
    "A row is an implementation under test. Outcomes: pass; warn (a SHOULD not met); unsupported (an optional "
    "feature refused cleanly); fail (a MUST not met); blocked (not judged: what the case stands on failed "
    "elsewhere); error; timeout. 'On another rule': the case ended on the check of another requirement before it "
    "reached the entry's. A row 'meets every MUST tested' when none of its cases fails, errs or times out. Case IDs "
    "name the corpus's cases (config, chunk, stream, store: fixtures/) and the suites' own checks (bitstream, "
    "roundtrip, colorspace, cross: suites/). An option's cost is computed by judging the run's results again under "
    "it: an outcome charged to the rule changes as the option says, and checks a test did not reach after stopping "
    "are taken to hold."
)


def render(ev: Evidence) -> str:
    """The whole review, as Markdown."""
    revs = review(ev)
    out = ["# The jpeg codec spec: a revision drafted from the evidence", "",
           f"Generated; do not edit. Regenerate with `{REGENERATE}`. The prose is report/{PROPOSALS}; the evidence"
           f" is the matrix run of {ev.generated or 'an unrecorded date'} over {len(ev.rows)} implementations "
           f"(refresh it from a new run with `{REFRESH}`).", ""]
    out += [para for text in INTRO.split("\n\n") for para in (text, "")]
    out += ["## Summary", "", *_summary(revs)]
    section = None
    for r in revs:
        here = requirements()[r.entry.anchor].section
        if here != section:
            section = here
            out += [f"## {section}", ""]
        out += entry_lines(ev, r)
    out += ["## Implementations in the evidence", "", *_rows_table(ev)]
    return "\n".join(out).rstrip() + "\n"


# ---------------------------------------------------------------- command line


def main(argv: Sequence[str]) -> int:
    """``spec-review SOURCE --out FILE.md [--evidence-out FILE.json]``; 0 when written, 2 on bad input."""
    p = argparse.ArgumentParser(prog="zarr-jpeg-conformance-report spec-review",
                                description="Write the spec review (Markdown) from a matrix.json or a reduced evidence file.")
    p.add_argument("source", type=Path, help="a matrix.json, or an evidence file written by --evidence-out")
    p.add_argument("--out", type=Path, required=True, help="the review to write (Markdown)")
    p.add_argument("--evidence-out", type=Path, help="also write the reduced evidence file (to commit), from SOURCE")
    args = p.parse_args(argv)
    outputs = [x.resolve() for x in (args.out, args.evidence_out) if x is not None]
    if args.source.resolve() in outputs or len(set(outputs)) < len(outputs):
        print("spec-review: the source and the files written must be different files", file=sys.stderr)
        return 2
    try:
        ev = load(args.source, metric_cases())
        if args.evidence_out is not None:
            # The review from the file as written, so that regenerating it from that file gives the same text.
            reduced = dumps(ev)
            ev = from_json(json.loads(reduced), str(args.evidence_out))
        text = render(ev)
        if args.evidence_out is not None:
            write_text(args.evidence_out, reduced)
        write_text(args.out, text)
    except (ReportFileError, ProposalError) as exc:
        print(f"spec-review: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"spec-review: cannot write {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for path in (args.evidence_out, args.out):
        if path is not None:
            print(f"wrote {path}", file=sys.stderr)
    return 0


def of_matrix(m: Matrix) -> list[Reviewed]:
    """The review of a matrix built in memory (the pages' section)."""
    return review(from_matrix(m))


__all__ = ["DOC", "EVIDENCE", "PAGE_INTRO", "SUMMARY_HEADER", "SUMMARY_INTRO", "Entry", "ProposalError", "Reviewed", "entries",
           "load_proposals", "main", "missing", "of_matrix", "render", "review", "summary_rows", "wanted"]
