"""matrix.md: the compatibility matrix as plain Markdown (tables and lists, readable as text)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from .. import __version__
from . import spec_review
from .model import RD_HEIGHT, RD_KIND, RD_WIDTH, CaseResult, Matrix, throughput_grid
from .rows import GROUPS, describe_classification
from .wording import (
    COLUMNS,
    MEANING,
    ROOT_COLUMNS,
    ROOTS_INTRO,
    SYMBOL,
    cell_text,
    counts_text,
    evidence_groups,
    mode_order,
    parse_only,
    protection_columns,
    protection_intro,
    root_rows,
    untested_row,
    untested_text,
    verdict,
    versions_text,
)

#: Non-passing cases listed per topic and implementation; the rest are in matrix.json.
MAX_LISTED = 25
#: Qualities shown in the rate-distortion tables (the HTML page plots all of them).
RD_QUALITIES = (25, 50, 75, 90, 100)


def _md(text: object) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(_md(c) for c in row) + " |" for row in rows)
    return lines + [""]


def _case_line(c: CaseResult, requirement: str) -> str:
    known = " (known failure)" if c.known else ""
    # A traceback does not fit a list line; matrix.html and matrix.json keep it.
    msg = " ".join(c.summary(2000).split("Traceback (most recent call last)")[0].split())
    msg = msg if len(msg) <= 300 else msg[:299] + "…"
    if requirement not in msg:
        msg = f"[{requirement}] {msg}".strip()
    return f"- {c.implementation}: `{c.case}` **{c.outcome}**{known}: {msg}"


def _summary(m: Matrix) -> list[str]:
    out = ["## Summary", "",
           "Each row is judged on its own cases. A decode-only row is judged as a reader: its parse cases that concern "
           "only a writer's settings (invalid quality or subsampling values) are counted apart, under \"writer settings\".", ""]
    for group, impls in m.groups():
        heading, text = GROUPS[group]
        out += [f"### {heading}", "", text, ""]
        rows = []
        for impl in impls:
            t = m.judged_totals(impl.name)
            writer = m.writer_totals(impl.name)
            rows.append([impl.name, f"{impl.kind} · {impl.language}", "decode only" if impl.decode_only else ", ".join(impl.roles) or "—",
                         impl.parser, str(sum(t.values())), *[str(t[o]) if t[o] else "" for o in COLUMNS],
                         counts_text(writer) if writer else "—", verdict(m, impl)])
        out += _table(["implementation", "kind · language", "roles", "parser", "cases", *COLUMNS, "writer settings", "verdict"], rows)
    out += [f"- **{i.name}**: {i.run_problem}" for i in m.implementations if i.run_problem]
    out += ["", "Outcomes: " + "; ".join(f"{SYMBOL[o]} {o}: {MEANING[o]}" for o in COLUMNS) + ".", ""]
    return out


def _roots(m: Matrix) -> list[str]:
    out = ["## Root findings", "", ROOTS_INTRO, ""]
    rows = [(i, m.roots(i.name)) for i in m.implementations]
    for impl, findings in rows:
        if findings:
            out += [f"### {impl.name}", ""]
            out += _table(list(ROOT_COLUMNS), root_rows(findings, impl.name))
    clean = [i.name for i, f in rows if not f and m.cases.get(i.name)]
    if clean:
        out += [f"No root finding: {', '.join(clean)}.", ""]
    return out


def _parsing(m: Matrix) -> list[str]:
    out = ["## Configuration parsing, once per parser", ""]
    if not m.parsers:
        return out + ["No configuration cases in these results: the parse suite did not run.", ""]
    out += ["Rows that parse with the same code are shown once. Where rows of one parser differ (a row refusing an "
            "optional feature of its library when parsing), the case is listed with each row's outcome.", "",
            describe_classification(), ""]
    rows = [[g.parser, ", ".join(g.rows), counts_text(g.counts())] for g in m.parsers]
    out += _table(["parser", "rows", "cases (\"varies\": the rows differ)"], rows)
    for g in m.parsers:
        listed = [c for c in g.cases.values() if c.outcome != "pass"]
        if not listed:
            continue
        out += [f"### {g.parser}", ""]
        for c in listed[:MAX_LISTED]:
            tag = " (writer setting)" if c.writer_setting else ""
            if c.varies:
                per_row = ", ".join(f"{row} {getattr(r, 'outcome', '?')}" for row, r in c.rows.items())
                out.append(f"- `{c.case}`{tag} varies: {per_row}")
            else:
                first = next(iter(c.rows.values()))
                assert isinstance(first, CaseResult)
                out.append(_case_line(first, first.requirements[0] if first.requirements else "").replace(
                    f"- {first.implementation}: ", "- ", 1) + tag)
        if len(listed) > MAX_LISTED:
            out.append(f"- … and {len(listed) - MAX_LISTED} more (see matrix.json)")
        out.append("")
    return out


def _protection(m: Matrix) -> list[str]:
    out = ["## What a codec author must add", "", protection_intro(m), ""]
    if not m.protection:
        return out + ["No row to compare: this run has no built-in, or no row besides them.", ""]
    keys = protection_columns(m)
    rows = []
    for name, items in m.protection.items():
        found = {(p.level, p.charged_to): p for p in items}
        counts = [str(len({c for p in items if p.level == level for c in p.cases})) for level in ("MUST", "SHOULD")]
        rows.append([name, *counts, *(str(len(found[k].cases)) if k in found else "" for k in keys)])
    out += _table(["row", "MUST cases", "SHOULD cases", *(f"{k.removeprefix('JPEG-')} ({level})" for level, k in keys)], rows)
    out += [f"- **{k}** ({level}): {m.requirements.get(k, {}).get('text', MEANING.get(k, ''))}" for level, k in keys] + [""]
    return out


def _requirements(m: Matrix) -> list[str]:
    impls = [i.name for _, group in m.groups() for i in group]
    by_name = {i.name: i for i in m.implementations}
    out = ["## Requirements", "",
           "Each cell counts the cases of one implementation that rest on the requirement; a failing check is "
           "charged to the requirement it names, and cases that show one root finding say so ('= 1 root finding'). "
           "— means no case of this run touched it. Configuration cases are shown once per parser (above), not here.", ""]
    for topic in m.topics:
        out += [f"### {topic.section}", ""]
        rows: list[list[str]] = []
        listed: list[tuple[str, str, CaseResult]] = []
        for rid in topic.requirements:
            req = m.requirements.get(rid, {"level": "?", "text": "(not in the registry)", "when": []})
            text = req["text"] if len(req["text"]) <= 120 else req["text"][:119] + "…"
            row_cells = [m.cells.get(n, {}).get(rid) for n in impls]
            if not any(c and c.total for c in row_cells):
                said = (parse_only(m, rid) + " Configuration parsing." if any(rid in c for c in m.parser_cells.values())
                        else untested_row(req.get("when", [])))
                rows.append([f"{rid}: {text}", req["level"], said, *([""] * (len(impls) - 1))])
                continue
            cells = []
            for n, cell in zip(impls, row_cells, strict=True):
                cells.append(cell_text(cell) if cell and cell.total else
                             "—" if by_name[n].decode_only else f"— {untested_text(req.get('when', []))}")
                if cell:
                    listed.extend((n, rid, c) for c in cell.cases)
            rows.append([f"{rid}: {text}", req["level"], *cells])
        out += _table(["requirement", "level", *impls], rows)
        if listed:
            out += ["Cases not passing:", ""]
            per_impl: dict[str, list[str]] = {}
            for n, rid, c in listed:
                per_impl.setdefault(n, []).append(_case_line(c, rid))
            for n, lines in per_impl.items():
                out += lines[:MAX_LISTED]
                if len(lines) > MAX_LISTED:
                    out.append(f"- {n}: … and {len(lines) - MAX_LISTED} more (see matrix.json)")
            out.append("")
    return out


def _cross(m: Matrix) -> list[str]:
    out = ["## Encoder × decoder", ""]
    if m.cross is None:
        return out + ["No cross results: no case in these results names both an encoder and a decoder.", ""]
    rows = [[enc, *(cell_text(m.cross.cells.get((enc, dec))) for dec in m.cross.decoders)] for enc in m.cross.encoders]
    return out + ["Rows encode, columns decode.", ""] + _table(["encoder \\ decoder", *m.cross.decoders], rows)


def _rate_distortion(m: Matrix) -> list[str]:
    out = ["## Rate–distortion", ""]
    if not m.rate_distortion:
        return out + ["No rate–distortion data: the round-trip suite did not run.", ""]
    out += [f"Bits per pixel / PSNR of the {RD_KIND} test image ({RD_HEIGHT}×{RD_WIDTH}); matrix.html plots every quality.", ""]
    for mode in mode_order(list(m.rate_distortion)):
        out += [f"### {mode}", ""]
        rows = []
        for impl, pts in m.rate_distortion[mode].items():
            by_q = {p.quality: p for p in pts}
            rows.append([impl, *(f"{by_q[q].bpp:.2f} bpp / {by_q[q].psnr:.1f} dB" if q in by_q else "—" for q in RD_QUALITIES)])
        out += _table(["implementation", *(f"q{q}" for q in RD_QUALITIES)], rows)
    return out


def _throughput(m: Matrix) -> list[str]:
    out = ["## Throughput", ""]
    tp = m.throughput
    if not tp or not tp.get("results"):
        return out + [f"No throughput data: {(tp or {}).get('error', 'not measured in this run')}.", ""]
    impls = list(tp.get("implementations", []))
    image = tp.get("image", {})
    out += [f"{image.get('kind')} image {image.get('height')}×{image.get('width')}, quality {tp.get('quality')}; "
            f"{tp.get('method', '')}. In brackets: relative to the fastest of the row.", ""]
    rows = []
    for mode, op, measured in throughput_grid(tp):
        cells = []
        for _, r in measured:
            if r is None:
                cells.append("—")
            elif "mb_per_s" in r:
                cells.append(f"{r['mb_per_s']:.0f} MB/s ({r['relative']:.2f}×)")
            else:
                cells.append(r["status"])
        rows.append([mode, op, *cells])
    transport = tp.get("transport", {})
    heads = [f"{n} ({transport[n]})" if n in transport else n for n in impls]
    return out + _table(["mode", "operation", *heads], rows)


def _notes(m: Matrix) -> list[str]:
    out = ["## Spec notes", ""]
    for note in m.notes:
        out += [f"### {note.id}: {note.title}", ""]
        for para in note.text.split("\n\n"):
            out += [para, ""]
        if not note.evidence:
            out += [f"_No results probe {note.id} in this run._", ""]
            continue
        out += ["Evidence (implementations with the same outcomes on the same cases together):", ""]
        for group, by_outcome in evidence_groups(note.evidence):
            impl = ", ".join(group)
            parts = []
            for o in COLUMNS:
                cases = by_outcome.get(o, [])
                if cases:
                    ids = ", ".join(f"`{c.case}`" for c in cases[:8]) + (f", … ({len(cases) - 8} more)" if len(cases) > 8 else "")
                    parts.append(f"{len(cases)} {o} ({ids})")
            out.append(f"- **{impl}**: " + "; ".join(parts))
        out.append("")
    return out


def _review(m: Matrix) -> list[str]:
    revs = spec_review.of_matrix(m)
    return ["## Spec review", "", spec_review.PAGE_INTRO, "", spec_review.SUMMARY_INTRO, "",
            *_table(list(spec_review.SUMMARY_HEADER), spec_review.summary_rows(revs))]


def _corpus(m: Matrix) -> list[str]:
    out = ["## The corpus's own checks", ""]
    if not m.corpus:
        return out + ["Not run in these results (the schema and store suites take no implementation).", ""]
    counts: dict[str, int] = {}
    for c in m.corpus.values():
        counts[c.outcome] = counts.get(c.outcome, 0) + 1
    out += [f"Tests that take no implementation, run once: {len(m.corpus)} checks, {counts_text(counts)}.", ""]
    out += [f"- `{c.case}` **{c.outcome}**: {' '.join(c.summary(300).split())}" for c in m.corpus.values() if c.outcome != "pass"]
    return out + [""]


def _environment(m: Matrix) -> list[str]:
    out = ["## Environment", ""]
    out += _table(["key", "value"], [[k, str(v)] for k, v in m.environment.items()]) if m.environment else ["Not recorded.", ""]
    out += _table(["implementation", "kind · language", "--impl", "roles", "versions"],
                  [[i.name, f"{i.kind} · {i.language}", f"`{i.spec}`", ", ".join(i.roles) or "—", versions_text(i)]
                   for i in m.implementations])
    return out


def render(m: Matrix) -> str:
    """The whole Markdown document."""
    names = ", ".join(i.name for i in m.implementations) or "none"
    head = ["# Zarr v3 jpeg codec: compatibility matrix", "",
            f"Implementations: {names}. Generated {m.generated or '—'} by zarr-jpeg-conformance "
            f"{m.environment.get('zarr_jpeg_conformance', __version__)}.", ""]
    parts = (head + _summary(m) + _roots(m) + _parsing(m) + _protection(m) + _requirements(m) + _cross(m) + _rate_distortion(m)
             + _throughput(m) + _notes(m) + _review(m) + _corpus(m) + _environment(m))
    return _no_html("\n".join(parts).rstrip() + "\n")


def _no_html(text: str) -> str:
    """The document with no raw HTML: names and messages come from the implementations, and
    Markdown renders HTML it meets (code spans show their text as it is, so they are left alone)."""
    pieces = re.split(r"(`[^`\n]*`)", text)
    return "".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1 else html.escape(p, quote=False)
                   for p in pieces)


__all__ = ["render"]
