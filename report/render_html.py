"""matrix.html: one self-contained page (inline CSS and SVG, no scripts, no external resources)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from html import escape
from typing import Any

from .. import __version__
from . import spec_review, svg
from .model import RD_HEIGHT, RD_KIND, RD_WIDTH, CaseResult, Cell, Implementation, Matrix
from .parsing import ParserGroup
from .rows import GROUPS, SHORT, describe_classification
from .wording import (
    COLUMNS,
    MEANING,
    ROOT_COLUMNS,
    ROOTS_INTRO,
    SYMBOL,
    cell_text,
    compact_cell_text,
    counts_text,
    evidence_groups,
    mode_order,
    parse_only,
    protection_columns,
    protection_intro,
    root_rows,
    short_verdict,
    untested_row,
    untested_text,
    versions_text,
)

#: Cases listed inside one cell's <details>; the rest are in matrix.json.
MAX_CASES_PER_CELL = 80
MAX_MESSAGE = 700

CSS = """
:root { --pass:#e2f3e6; --pass-fg:#14572a; --warn:#fff1c2; --warn-fg:#6b4e00; --unsupported:#e9edf2;
  --unsupported-fg:#44505f; --fail:#fadcdc; --fail-fg:#8f1b1b; --error:#f3d7ef; --error-fg:#71145f;
  --crash:#f5c4c4; --crash-fg:#5c0b0b; --blocked:#ece6f5; --blocked-fg:#4b3a6b;
  --timeout:#f5c4c4; --timeout-fg:#5c0b0b; --none:#f7f7f7; --none-fg:#9a9a9a; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f; margin: 0; background: #fff; }
header, main { max-width: 1320px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 18px; border-bottom: 1px solid #ddd; }
h1 { font-size: 24px; margin: 0 0 4px; }
h1 code { font-size: inherit; }
h2 { font-size: 20px; margin: 30px 0 8px; padding-top: 6px; border-top: 2px solid #333; }
h3 { font-size: 15px; margin: 20px 0 6px; }
p.meta { color: #555; margin: 0 0 8px; }
nav { margin: 6px 0 12px; }
nav a { margin-right: 14px; color: #0b57a4; text-decoration: none; }
nav a:hover { text-decoration: underline; }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { border: 1px solid #d4d4d4; padding: 4px 7px; vertical-align: top; text-align: left; }
th { background: #f2f2f2; font-weight: 600; }
table.matrix { width: 100%; table-layout: fixed; }
table.matrix col.c-lvl { width: 86px; }
td.req .rid { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12px; font-weight: 600; }
td.req .rtext { color: #333; font-size: 12.5px; }
td.req .tag { font-size: 11px; color: #6a4c93; margin-left: 4px; }
.lvl { display: inline-block; white-space: nowrap; font-size: 11px; font-weight: 700; padding: 0 5px; border-radius: 3px; border: 1px solid; }
.lvl-MUST, .lvl-MUST-NOT { color: #8f1b1b; border-color: #d99; }
.lvl-SHOULD, .lvl-SHOULD-NOT { color: #6b4e00; border-color: #d9c27a; }
.lvl-MAY { color: #1f5d8a; border-color: #8fb8d8; }
td.cell { font-size: 12.5px; }
td.cell .count { font-weight: 600; }
.o-pass { background: var(--pass); color: var(--pass-fg); }
.o-warn { background: var(--warn); color: var(--warn-fg); }
.o-unsupported { background: var(--unsupported); color: var(--unsupported-fg); }
.o-fail { background: var(--fail); color: var(--fail-fg); }
.o-error { background: var(--error); color: var(--error-fg); }
.o-crash { background: var(--crash); color: var(--crash-fg); }
.o-timeout { background: var(--timeout); color: var(--timeout-fg); }
.o-blocked { background: var(--blocked); color: var(--blocked-fg); }
.o-none { background: var(--none); color: var(--none-fg); }
details { margin-top: 3px; }
details summary { cursor: pointer; color: #333; font-size: 12px; }
details ul { margin: 4px 0 2px; padding-left: 0; list-style: none; }
details li { margin-bottom: 5px; padding-top: 3px; border-top: 1px dotted rgba(0,0,0,.25); color: #222; }
code, .case { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 11.5px; overflow-wrap: anywhere; }
.case { display: inline-block; margin: 0 7px 2px 0; }
pre.msg { white-space: pre-wrap; word-break: break-word; font-size: 11px; margin: 2px 0 0; color: #333;
  background: rgba(255,255,255,.6); padding: 3px 5px; border-radius: 3px; max-height: 14em; overflow: auto; }
.legend span { display: inline-block; padding: 1px 8px; margin: 2px 6px 2px 0; border-radius: 3px; font-size: 12.5px; }
.charts { display: flex; flex-wrap: wrap; gap: 14px; }
.charts figure { margin: 0; border: 1px solid #e0e0e0; padding: 4px; }
.note { border-left: 4px solid #6a4c93; padding: 2px 0 2px 14px; margin: 18px 0; }
.note p { max-width: 980px; }
.problem { background: var(--fail); color: var(--fail-fg); padding: 6px 10px; border-radius: 4px; margin: 6px 0; }
.muted { color: #777; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.bar { display: inline-block; height: 8px; background: #0072B2; vertical-align: middle; margin-left: 6px; }
tr.group-head th { background: #e8e4f0; font-size: 14px; padding-top: 7px; }
tr.group-head .muted { font-weight: 400; font-size: 12px; display: block; max-width: 1100px; }
.label { display: inline-block; font-size: 11px; color: #44505f; background: #eef1f5; border-radius: 3px; padding: 0 5px;
  white-space: nowrap; }
table.summary td.verdict { font-size: 12.5px; }
table.summary td.parser { font-size: 12px; }
table.summary th.narrow { max-width: 90px; font-size: 12px; }
table.matrix th.impl { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; font-size: 12px;
  vertical-align: bottom; text-align: left; padding: 6px 2px; }
table.matrix th.grp { text-align: center; font-size: 11.5px; background: #e8e4f0; font-weight: 600; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; max-width: 0; }
table.requirements thead th { box-shadow: inset 0 -1px 0 #bbb; }
/* Sticky header cells carry their own borders: collapsed borders stay behind when the header sticks. */
table.requirements { border-collapse: separate; border-spacing: 0; border-top: 1px solid #d4d4d4; border-left: 1px solid #d4d4d4; }
table.requirements th, table.requirements td { border-width: 0 1px 1px 0; }
table.matrix td.cell { position: relative; padding: 3px 4px; }
table.requirements td.cell .count, table.cross td.cell .count { font-size: 11px; letter-spacing: -0.2px; }
table.requirements td.cell, table.cross td.cell { padding: 3px 2px 3px 3px; }
table.requirements thead th { position: sticky; top: 0; z-index: 3; }
table.evidence th { font-size: 12.5px; max-width: 420px; }
table.requirements thead tr.top th.grp { height: 26px; }
table.requirements thead tr:nth-child(2) th { top: 26px; }
table.matrix td.cell details[open] > ul { position: absolute; z-index: 5; left: 0; top: 100%; width: 560px;
  background: #fff; border: 1px solid #999; box-shadow: 0 3px 10px rgba(0,0,0,.2); padding: 6px 8px; }
table.matrix td.cell.end details[open] > ul { left: auto; right: 0; }
td.merged { font-size: 12.5px; color: #44505f; background: #f4f2f8; }
table.parsers th.parser .rows { display: block; font-weight: 400; font-size: 11px; color: #555; }
table.protection th.key { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 11px; text-align: center;
  writing-mode: vertical-rl; transform: rotate(180deg); padding: 5px 2px; }
table.protection th.key.lvl-MUST { color: #8f1b1b; }
table.protection th.key.lvl-SHOULD { color: #6b4e00; }
table.protection td.cell { text-align: center; min-width: 46px; }
ul.keys { font-size: 12.5px; columns: 2; max-width: 1280px; }
ul.keys li { break-inside: avoid; margin-bottom: 3px; }
p.intro { max-width: 1000px; }
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _anchor(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _level_badge(level: str) -> str:
    return f'<span class="lvl lvl-{_e(level.replace(" ", "-"))}">{_e(level)}</span>'


def _case_list(cases: Iterable[CaseResult], *, named: bool = False) -> str:
    """The cases, those with the same outcome and message listed together under it once
    (``named``: each case with the row it is of)."""
    cases = list(cases)
    groups: dict[tuple[str, bool, str], list[str]] = {}
    for c in cases[:MAX_CASES_PER_CELL]:
        groups.setdefault((c.outcome, c.known, c.summary(MAX_MESSAGE)), []).append(
            f"{c.implementation}: {c.case}" if named else c.case)
    items = []
    for (outcome, known, msg), ids in groups.items():
        names = " ".join(f'<span class="case">{_e(i)}</span>' for i in ids)
        note = " (known failure)" if known else ""
        pre = f'<pre class="msg">{_e(msg)}</pre>' if msg else " "
        if len(ids) == 1:
            items.append(f"<li>{names}<b>{_e(outcome)}</b>{note}{pre}</li>")
        else:
            items.append(f"<li><b>{_e(outcome)}</b>{note} ({len(ids)} cases){pre}{names}</li>")
    more = len(cases) - MAX_CASES_PER_CELL
    if more > 0:
        items.append(f'<li class="muted">… and {more} more (all are in matrix.json)</li>')
    return f"<ul>{''.join(items)}</ul>"


def _cell(cell: Cell | None, empty: str = "—", *, end: bool = False, named: bool = False, compact: bool = False) -> str:
    """A matrix cell; ``end``: near the right edge (its open list extends to the left);
    ``named``: the cases are of several rows, so each line names its row; ``compact``: a
    narrow column, so the cell shows its worst outcome's count of the total (all counts in
    its title) and an empty cell only a dash (the reason in its title)."""
    extra = " end" if end else ""
    if cell is None or not cell.total:
        shown, title = ("—", f' title="{_e(empty)}"') if compact else (empty, "")
        return f'<td class="cell o-none{extra}"{title}>{_e(shown)}</td>'
    text = compact_cell_text(cell) if compact else cell_text(cell)
    details = ""
    if cell.cases:
        n = len(cell.cases)
        label = "list" if compact else f"{n} case{'s' if n != 1 else ''} not passing"
        details = f"<details><summary>{label}</summary>{_case_list(cell.cases, named=named)}</details>"
    return (f'<td class="cell o-{cell.outcome}{extra}" title="{_e(counts_text(cell.counts))}">'
            f'<div class="count">{_e(text)}</div>{details}</td>')


def _legend() -> str:
    spans = "".join(f'<span class="o-{o}" title="{_e(MEANING[o])}">{SYMBOL[o]} {o}</span>' for o in COLUMNS)
    return (
        f'<p class="legend">{spans}<span class="o-none">— not tested</span></p>'
        "<p>Each cell counts the cases of one implementation that rest on the requirement. A failing "
        "check is charged to the requirement it names, so one broken MUST does not colour every row its case "
        "touches. Open a cell to see the cases that did not pass, with the spec's words and what was observed.</p>"
    )


def _label(impl: Implementation) -> str:
    return f'<span class="label">{_e(impl.kind)} · {_e(impl.language)}</span>'


def _anchor_parser(parser: str) -> str:
    return "parser-" + _anchor(parser)


def _summary(m: Matrix) -> str:
    # Outcome columns that no row has are left out (crash and timeout happen only in harnesses).
    present = [o for o in COLUMNS if o == "pass" or any(m.judged_totals(i.name)[o] for i in m.implementations)]
    head = "".join(f'<th class="num" title="{_e(MEANING[o])}">{SYMBOL[o]} {o}</th>' for o in present)
    ncols = 8 + len(present)
    body = []
    for group, impls in m.groups():
        heading, text = GROUPS[group]
        rows = [f'<tr class="group-head"><th colspan="{ncols}">{_e(heading)}<span class="muted">{_e(text)}</span></th></tr>']
        for impl in impls:
            totals = m.judged_totals(impl.name)
            nums = "".join(
                f'<td class="num{" o-" + o if totals[o] and o != "pass" else ""}">{totals[o] or ""}</td>' for o in present
            )
            writer = m.writer_totals(impl.name)
            writer_cell = (f'<td class="o-{worst_of(writer)}">{_e(counts_text(writer))}</td>' if writer
                           else '<td class="muted">—</td>')
            seconds = impl.run.get("seconds")
            parser = (f'<a href="#{_anchor_parser(impl.parser)}">{_e(impl.parser)}</a>'
                      if any(g.parser == impl.parser for g in m.parsers) else _e(impl.parser))
            roles = "decode only" if impl.decode_only else ", ".join(impl.roles) or "—"
            rows.append(
                f'<tr><th title="{_e(versions_text(impl))}">{_e(impl.name)}</th>'
                f'<td>{_label(impl)}</td><td>{_e(roles)}</td><td class="parser">{parser}</td>'
                f'<td class="num">{sum(totals.values())}</td>{nums}{writer_cell}'
                f'<td class="verdict">{_e(short_verdict(m, impl))}</td>'
                f"<td class=\"num\">{'' if seconds is None else f'{seconds:.0f} s'}</td></tr>"
            )
        body.append(f"<tbody>{''.join(rows)}</tbody>")
    problems = "".join(
        f'<div class="problem"><b>{_e(i.name)}</b>: {_e(i.run_problem)}'
        + (f'<details><summary>log tail</summary><pre class="msg">{_e(i.run.get("log_tail", ""))}</pre></details>' if i.run.get("log_tail") else "")
        + "</div>"
        for i in m.implementations
        if i.run_problem
    )
    covered = {rid for by_req in [*m.cells.values(), *m.parser_cells.values()] for rid in by_req}
    testable = [rid for rid, r in m.requirements.items() if r["when"] != ["untestable"]]
    coverage = (
        f"<p>{len(covered & set(testable))} of {len(testable)} testable requirements have results "
        f"({len(m.requirements) - len(testable)} more are guidance the suites cannot check). Versions: hover a name, "
        'or see <a href="#environment">Environment</a>.</p>'
    )
    return (
        '<section id="summary"><h2>Summary</h2>'
        '<p class="intro">Each row is judged on its own cases. A decode-only row (a viewer, a reader) is judged as a reader: '
        "the parse cases that concern only a writer's settings (invalid quality or subsampling values) are counted apart, "
        "in their own column, so that a strong decoder with a lenient parser does not read as a weak implementation.</p>"
        f'<table class="summary"><thead><tr><th>implementation</th><th>kind · language</th><th>roles</th><th>parser</th>'
        f'<th class="num">cases</th>{head}'
        '<th class="narrow" title="decode-only rows: parse cases of invalid quality or subsampling values, counted apart">'
        "writer settings at parse</th>"
        f"<th>verdict</th><th class=\"num\">run time</th></tr></thead>{''.join(body)}</table>{problems}{coverage}</section>"
    )


def worst_of(counts: Mapping[str, int]) -> str:
    from .model import worst

    return worst(o for o, n in counts.items() if n) or "none"


def _impl_head(m: Matrix) -> tuple[str, list[Implementation]]:
    """Two header rows' cells for the implementation columns: group headings, then names."""
    groups = m.groups()
    top = "".join(f'<th class="grp" colspan="{len(impls)}" title="{_e(GROUPS[g][0])}">{_e(SHORT[g])}</th>' for g, impls in groups)
    order = [i for _, impls in groups for i in impls]
    names = "".join(f'<th class="impl" title="{_e(i.kind)} · {_e(i.language)}">{_e(i.name)}</th>' for i in order)
    return f"<tr>{top}</tr><tr>{names}</tr>", order


def _requirements(m: Matrix) -> str:
    groups_head, order = _impl_head(m)
    impls = [i.name for i in order]
    width = 2 + len(impls)
    cols = '<col style="width:22%"><col class="c-lvl">' + "<col>" * len(impls)
    head = f'<tr class="top"><th rowspan="2">requirement</th><th rowspan="2">level</th>{groups_head.removeprefix("<tr>")}'
    end = max(0, len(impls) - 6)
    rows = []
    for topic in m.topics:
        rows.append(f'<tr class="group-head" id="topic-{_anchor(topic.section)}"><th colspan="{width}">{_e(topic.section)}</th></tr>')
        for rid in topic.requirements:
            req = m.requirements.get(rid, {"level": "?", "text": "(not in the registry)", "when": [], "kind": ""})
            tag = '<span class="tag">interpretation</span>' if req.get("kind") == "interpretation" else ""
            text = req["text"] if len(req["text"]) <= 220 else req["text"][:219] + "…"
            row_cells = [m.cells.get(n, {}).get(rid) for n in impls]
            if any(c and c.total for c in row_cells):
                cells = "".join(_cell(c, _empty_reason(req, impl), end=k >= end, compact=True)
                                for k, (c, impl) in enumerate(zip(row_cells, order, strict=True)))
            elif any(rid in cells for cells in m.parser_cells.values()):
                cells = (f'<td class="merged" colspan="{len(impls)}">{_e(parse_only(m, rid))} '
                         '<a href="#parsing">Configuration parsing</a>.</td>')
            else:
                cells = f'<td class="merged o-none" colspan="{len(impls)}">{_e(untested_row(req.get("when", [])))}</td>'
            rows.append(
                f'<tr id="{_e(rid)}"><td class="req"><span class="rid">{_e(rid)}</span>{tag}'
                f'<div class="rtext" title="{_e(req["text"])}">{_e(text)}</div></td>'
                f"<td>{_level_badge(req['level'])}</td>{cells}</tr>"
            )
    return (
        '<section id="requirements"><h2>Requirements</h2>' + _legend()
        + "<p>Configuration cases are not repeated here per row: they are shown once per parser under "
        '<a href="#parsing">Configuration parsing</a>, and a requirement tested only by them says so. A cell shows its '
        "worst outcome's count out of its cases (hover for all counts, open it for the cases).</p>"
        f'<table class="matrix requirements"><colgroup>{cols}</colgroup><thead>{head}</thead>'
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def _empty_reason(req: Mapping[str, Any], impl: Implementation) -> str:
    """Why a row has no case of a requirement."""
    when = set(req.get("when", []))
    if impl.decode_only and when and not when & {"decode", "parse"}:
        return "does not apply: the row does not encode"
    return untested_text(req.get("when", []))


def _parser_head(g: ParserGroup) -> str:
    return (f'<th class="parser" id="{_anchor_parser(g.parser)}">{_e(g.parser)}'
            f'<span class="rows">{_e(", ".join(g.rows))}</span></th>')


def _roots(m: Matrix) -> str:
    out = [f'<section id="roots"><h2>Root findings</h2><p class="intro">{_e(ROOTS_INTRO)}</p>']
    rows = [(i, m.roots(i.name)) for i in m.implementations]
    for impl, findings in rows:
        if not findings:
            continue
        body = "".join(
            f'<tr><td class="o-{"fail" if f.outcome == "fail" else f.outcome}"><span class="rid">{_e(label)}</span></td>'
            f"<td>{_level_badge(level) if level else ''}</td><td>{_e(text)}</td><td>{_e(cause)}</td><td>{_e(cases)}</td>"
            f'<td class="num">{_e(blocked)}</td><td>{_e(message)}</td>'
            f"<td>{f'<a href={chr(34)}{_e(folder)}ISSUE.md{chr(34)}>{_e(folder)}</a>' if folder else ''}</td></tr>"
            for f, (label, level, text, cause, cases, blocked, message, folder)
            in zip(findings, root_rows(findings, impl.name), strict=True)
        )
        head = "".join(f"<th>{_e(c if c != 'cases blocked' else 'blocked')}</th>" for c in ROOT_COLUMNS)
        out.append(f'<h3 id="roots-{_anchor(impl.name)}">{_e(impl.name)}</h3><table><thead><tr>{head}</tr></thead>'
                   f"<tbody>{body}</tbody></table>")
    clean = [i.name for i, f in rows if not f and m.cases.get(i.name)]
    if clean:
        out.append(f'<p class="muted">No root finding: {_e(", ".join(clean))}.</p>')
    return "".join(out) + "</section>"


def _parsing(m: Matrix) -> str:
    intro = '<section id="parsing"><h2>Configuration parsing, once per parser</h2>'
    if not m.parsers:
        return intro + '<p class="muted">No configuration cases in these results: the parse suite did not run.</p></section>'
    n = max(len(g.cases) for g in m.parsers)
    about = (
        f'<p class="intro">The parse suite\'s {n} configuration cases, shown once for each parser (named under it: the rows '
        "that parse with it). Rows of one parser get the same verdicts, except where a row refuses an optional feature of "
        "its own library when parsing; a cell counts such a case once per row, and its list names the row. "
        "A row whose versions do not name a parser counts as having its own.</p>"
        f'<p class="intro">{_e(describe_classification())}</p>'
    )
    head = "<th>requirement</th><th>level</th>" + "".join(_parser_head(g) for g in m.parsers)
    rows = []
    for topic in m.topics:
        ids = [rid for rid in topic.requirements if any(rid in m.parser_cells.get(g.parser, {}) for g in m.parsers)]
        if not ids:
            continue
        rows.append(f'<tr class="group-head"><th colspan="{2 + len(m.parsers)}">{_e(topic.section)}</th></tr>')
        for rid in ids:
            req = m.requirements.get(rid, {"level": "?", "text": "(not in the registry)"})
            text = req["text"] if len(req["text"]) <= 160 else req["text"][:159] + "…"
            cells = "".join(
                _cell(m.parser_cells.get(g.parser, {}).get(rid), end=k >= len(m.parsers) - 2, named=len(g.rows) > 1)
                for k, g in enumerate(m.parsers)
            )
            rows.append(f'<tr><td class="req"><span class="rid">{_e(rid)}</span><div class="rtext" title="{_e(req["text"])}">'
                        f"{_e(text)}</div></td><td>{_level_badge(req['level'])}</td>{cells}</tr>")
    cols = '<col style="width:26%"><col class="c-lvl">' + "<col>" * len(m.parsers)
    return (intro + about + f'<table class="matrix parsers"><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></section>")


def _protection(m: Matrix) -> str:
    intro = f'<section id="protection"><h2>What a codec author must add</h2><p class="intro">{_e(protection_intro(m))}</p>'
    rows_of = [i for i in m.implementations if i.name in m.protection]
    if not rows_of:
        return intro + '<p class="muted">No row to compare: this run has no built-in, or no row besides them.</p></section>'
    keys = protection_columns(m)
    head = '<th>row</th><th class="num">MUST cases</th><th class="num">SHOULD cases</th>' + "".join(
        f'<th class="key lvl-{level}" title="{_e(_key_text(m, key))}">{_e(key.removeprefix("JPEG-"))}</th>' for level, key in keys)
    rows = []
    for impl in rows_of:
        found = {(p.level, p.charged_to): p for p in m.protection[impl.name]}
        cells = []
        for k, key in enumerate(keys):
            p = found.get(key)
            if p is None:
                cells.append('<td class="cell o-none"></td>')
                continue
            listing = "".join(f'<li><span class="case">{_e(c)}</span></li>' for c in p.cases[:MAX_CASES_PER_CELL])
            more = f'<li class="muted">… and {len(p.cases) - MAX_CASES_PER_CELL} more</li>' if len(p.cases) > MAX_CASES_PER_CELL else ""
            outcome = "warn" if p.level == "SHOULD" else key[1] if key[1] in ("error", "crash", "timeout") else "fail"
            side = " end" if k >= len(keys) - 4 else ""
            cells.append(f'<td class="cell o-{outcome}{side}"><div class="count">{len(p.cases)}</div>'
                         f"<details><summary>list</summary><ul>{listing}{more}</ul></details></td>")
        counts = []
        for level in ("MUST", "SHOULD"):
            distinct = {c for p in found.values() if p.level == level for c in p.cases}
            counts.append(f'<td class="num{"" if distinct else " o-pass"}">{len(distinct)}</td>')
        rows.append(f'<tr><th>{_e(impl.name)}</th>{"".join(counts)}{"".join(cells)}</tr>')
    legend = "".join(f"<li><b>{_e(key)}</b> ({_e(level)}): {_e(_key_text(m, key))}</li>" for level, key in keys)
    return (intro + '<table class="matrix protection"><colgroup><col style="width:160px"><col style="width:76px">'
            f'<col style="width:76px"></colgroup><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'<ul class="keys">{legend}</ul></section>')


def _key_text(m: Matrix, key: str) -> str:
    if key in ("error", "crash", "timeout"):
        return MEANING[key] + " (charged to no single requirement)"
    return str(m.requirements.get(key, {}).get("text", ""))


def _corpus(m: Matrix) -> str:
    intro = '<section id="corpus"><h2>The corpus\'s own checks</h2>'
    if not m.corpus:
        return intro + '<p class="muted">Not run in these results (the schema and store suites take no implementation).</p></section>'
    counts: dict[str, int] = {}
    for c in m.corpus.values():
        counts[c.outcome] = counts.get(c.outcome, 0) + 1
    bad = [c for c in m.corpus.values() if c.outcome != "pass"]
    listing = _case_list(bad) if bad else ""
    return (
        intro + "<p>Tests that take no implementation, run once: the JSON Schema's verdict on every configuration case, and "
        "that every store of the corpus holds its expected array (read by libjpeg-turbo) and the neuroglancer layout. "
        f"{len(m.corpus)} checks: {_e(counts_text(counts))}.</p>{listing}</section>"
    )


def _cross(m: Matrix) -> str:
    intro = '<section id="cross"><h2>Encoder × decoder</h2>'
    if m.cross is None:
        return intro + '<p class="muted">No cross results: no case in these results names both an encoder and a decoder.</p></section>'
    rank = {i.name: k for k, i in enumerate(m.implementations)}
    decoders = sorted(m.cross.decoders, key=lambda n: (rank.get(n, len(rank)), n))
    encoders = sorted(m.cross.encoders, key=lambda n: (rank.get(n, len(rank)), n))
    head = "<th>encoder ↓ / decoder →</th>" + "".join(f'<th class="impl">{_e(d)}</th>' for d in decoders)
    rows = []
    end = max(0, len(decoders) - 6)
    for enc in encoders:
        cells = "".join(_cell(m.cross.cells.get((enc, dec)), "not paired", end=k >= end, compact=True)
                        for k, dec in enumerate(decoders))
        rows.append(f"<tr><th>{_e(enc)}</th>{cells}</tr>")
    return (
        intro + "<p>Streams written by the row's encoder, decoded by the column's decoder.</p>"
        f'<table class="matrix cross"><colgroup><col style="width:150px"></colgroup><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table></section>'
    )


def _rate_distortion(m: Matrix) -> str:
    intro = '<section id="rate-distortion"><h2>Rate–distortion</h2>'
    if not m.rate_distortion:
        return intro + '<p class="muted">No rate–distortion data: the round-trip suite did not run.</p></section>'
    index = {i.name: k for k, i in enumerate(m.implementations)}
    charts = []
    for mode in mode_order(list(m.rate_distortion)):
        series = []
        for impl, pts in sorted(m.rate_distortion[mode].items(), key=lambda kv: index.get(kv[0], 99)):
            color, marker = svg.style_for(index.get(impl, len(index)))
            series.append(svg.Series(impl, [(p.bpp, p.psnr) for p in pts], color, marker))
        chart = svg.line_chart(series, title=mode, x_label="bits per pixel", y_label="PSNR (dB)")
        charts.append(f"<figure>{chart}</figure>")
    return (
        intro + f"<p>Round trip of the {RD_KIND} test image ({RD_HEIGHT}×{RD_WIDTH}) at qualities 5 to 100 "
        "(the quality sweep, plus the fidelity cases for modes outside the sweep). The spec leaves the mapping "
        "from quality to quantization tables to the encoder (JPEG-Q-03), so curves may differ; what matters is "
        "that each rises to the right. Implementations that write identical streams draw identical curves, one on top of the other.</p>"
        f'<div class="charts">{"".join(charts)}</div></section>'
    )


def _throughput(m: Matrix) -> str:
    intro = '<section id="throughput"><h2>Throughput</h2>'
    tp = m.throughput
    if not tp or not tp.get("results"):
        reason = (tp or {}).get("error", "not measured in this run")
        return intro + f'<p class="muted">No throughput data: {_e(reason)}.</p></section>'
    impls: list[str] = list(tp.get("implementations", []))
    index = {i.name: k for k, i in enumerate(m.implementations)}
    by_key: dict[tuple[str, str, str], Mapping[str, Any]] = {(r["mode"], r["op"], r["implementation"]): r for r in tp["results"]}
    image = tp.get("image", {})
    transport: Mapping[str, str] = tp.get("transport", {})
    # Implementations down, mode and operation across: the table stays as wide as the page however many rows.
    modes = list(tp.get("modes", []))
    head = ('<tr><th rowspan="2">implementation</th>'
            + "".join(f'<th colspan="2" class="grp">{_e(mode)}</th>' for mode in modes) + "</tr><tr>"
            + "".join('<th class="num">encode</th><th class="num">decode</th>' for _ in modes) + "</tr>")
    rows = []
    for n in impls:
        cells = []
        for mode in modes:
            for op in ("encode", "decode"):
                r = by_key.get((mode, op, n))
                if r is None:
                    cells.append('<td class="num muted">—</td>')
                elif "mb_per_s" in r:
                    rel = r["relative"]
                    cells.append(
                        f'<td class="num" title="median {r["seconds_median"] * 1000:.1f} ms over {r["repeats"]} repeats'
                        f'{_error(r)}; '
                        f'stream from {_e(r.get("stream_from"))}, {r.get("stream_bytes")} bytes; {rel:.2f}× the fastest">'
                        f'{r["mb_per_s"]:.0f} <span class="bar" style="width:{rel * 40:.0f}px"></span></td>'
                    )
                else:
                    cells.append(f'<td class="num o-{_e(r["status"])}" title="{_e(r.get("message", ""))}">{_e(r["status"])}</td>')
        via = f'<br><span class="muted">{_e(transport[n])}</span>' if n in transport else ""
        rows.append(f"<tr><th>{_e(n)}{via}</th>{''.join(cells)}</tr>")
    charts = []
    for op in ("encode", "decode"):
        groups = []
        for mode in tp.get("modes", []):
            bars = []
            for n in impls:
                r = by_key.get((mode, op, n), {})
                bars.append((n, r.get("mb_per_s"), svg.style_for(index.get(n, len(index)))[0]))
            groups.append((mode, bars))
        charts.append(f"<figure>{svg.bar_chart(groups, title=f'{op} (MB/s, higher is better)', unit='MB/s of uncompressed samples')}</figure>")
    return (
        intro + f"<p>{_e(image.get('kind', ''))} image {image.get('height')}×{image.get('width')}, quality "
        f"{tp.get('quality')}; {_e(tp.get('method', ''))}. The bar is relative to the "
        "fastest implementation of each column (hover for the figures). Decoders of a mode all read the same stream.</p>"
        f'<table class="throughput"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
        f'<div class="charts">{"".join(charts)}</div></section>'
    )


def _notes(m: Matrix) -> str:
    out = ['<section id="spec-notes"><h2>Spec notes</h2>',
           "<p>Places where the spec is ambiguous or cannot be met as written, with what the implementations "
           "under test did on the cases that probe them.</p>"]
    for note in m.notes:
        req = m.requirements.get(note.id, {})
        paras = "".join(f"<p>{_e(p)}</p>" for p in note.text.split("\n\n"))
        if note.evidence:
            rows = []
            for impls, by_outcome in evidence_groups(note.evidence):
                parts = []
                for outcome in COLUMNS:
                    cases = by_outcome.get(outcome, [])
                    if not cases:
                        continue
                    listing = _case_list(cases)
                    parts.append(f'<details class="o-{outcome}"><summary>{SYMBOL[outcome]} {len(cases)} {outcome}</summary>{listing}</details>')
                rows.append(f"<tr><th>{_e(', '.join(impls))}</th><td>{''.join(parts)}</td></tr>")
            evidence = (
                "<table class=\"evidence\"><thead><tr><th>implementations (those with the same outcomes on the same cases "
                "together)</th><th>evidence (open to see the cases of the first)</th></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>"
            )
        else:
            evidence = f'<p class="muted">No results probe {_e(note.id)} in this run (the suites that exercise it did not run).</p>'
        level = _level_badge(req["level"]) if req else ""
        out.append(f'<article class="note" id="note-{_e(note.id)}"><h3>{_e(note.id)} {level} {_e(note.title)}</h3>{paras}{evidence}</article>')
    out.append("</section>")
    return "".join(out)


def _review(m: Matrix) -> str:
    """The spec review's summary, each proposal's text behind its row."""
    revs = spec_review.of_matrix(m)
    intro = re.sub(r"`([^`]*)`", lambda g: f"<code>{g.group(1)}</code>", _e(spec_review.PAGE_INTRO))
    head = "".join(f"<th>{_e(h)}</th>" for h in (*spec_review.SUMMARY_HEADER, "proposed text"))
    rows = []
    for r, cells in zip(revs, spec_review.summary_rows(revs), strict=True):
        p = r.entry.proposal
        text = (f'<details><summary>read</summary><p>{_e(r.entry.problem)}</p><p><b>{_e(p.action.capitalize())}</b> '
                f"<q>{_e(p.at)}</q>:</p><blockquote>{_e(p.text)}</blockquote></details>") if p else ""
        rows.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + f"<td>{text}</td></tr>")
    return (f'<section id="spec-review"><h2>Spec review</h2><p>{intro}</p><p>{_e(spec_review.SUMMARY_INTRO)}</p>'
            f'<table class="review"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></section>')


_NOT_RECORDED = '<tr><td class="muted">not recorded</td></tr>'


def _environment(m: Matrix) -> str:
    env_rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in m.environment.items())
    impl_rows = "".join(
        f"<tr><th>{_e(i.name)}</th><td>{_label(i)}</td><td><code>{_e(i.spec)}</code></td><td>{_e(', '.join(i.roles) or '—')}</td>"
        f"<td>{_e(versions_text(i))}</td><td>{_e(i.run_problem or ('ok' if i.available else ''))}</td></tr>"
        for i in m.implementations
    )
    return (
        '<section id="environment"><h2>Environment</h2>'
        f"<table><tbody>{env_rows or _NOT_RECORDED}</tbody></table>"
        "<h3>Implementations</h3><table><thead><tr><th>name</th><th>kind · language</th><th>--impl</th><th>roles</th>"
        "<th>versions</th><th>run</th></tr></thead>"
        f"<tbody>{impl_rows}</tbody></table></section>"
    )


def _error(row: Mapping[str, Any]) -> str:
    """A throughput cell's standard error of its median, where the file records it."""
    return f" (± {row['median_error']:.0%} standard error)" if isinstance(row.get("median_error"), int | float) else ""


def render(m: Matrix) -> str:
    """The whole page."""
    names = ", ".join(i.name for i in m.implementations) or "none"
    nav = "".join(
        f'<a href="#{a}">{t}</a>'
        for a, t in (("summary", "Summary"), ("roots", "Root findings"), ("parsing", "Configuration parsing"),
                     ("protection", "What a codec author must add"),
                     ("requirements", "Requirements"), ("cross", "Encoder × decoder"), ("rate-distortion", "Rate–distortion"),
                     ("throughput", "Throughput"), ("spec-notes", "Spec notes"), ("spec-review", "Spec review"),
                     ("corpus", "Corpus checks"),
                     ("environment", "Environment"))
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Zarr v3 jpeg codec: compatibility matrix</title><style>{CSS}</style></head><body>"
        "<header><h1>Zarr v3 <code>jpeg</code> codec: compatibility matrix</h1>"
        f'<p class="meta">Implementations: {_e(names)}. Generated {_e(m.generated or "—")} by zarr-jpeg-conformance '
        f"{_e(m.environment.get('zarr_jpeg_conformance', __version__))}.</p><nav>{nav}</nav></header><main>"
        + _summary(m)
        + _roots(m)
        + _parsing(m)
        + _protection(m)
        + _requirements(m)
        + _cross(m)
        + _rate_distortion(m)
        + _throughput(m)
        + _notes(m)
        + _review(m)
        + _corpus(m)
        + _environment(m)
        + "</main></body></html>\n"
    )


__all__ = ["render"]
