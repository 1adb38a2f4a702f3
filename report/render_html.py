"""matrix.html: one self-contained page (inline CSS and SVG, no scripts, no external resources)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from html import escape
from typing import Any

from .. import __version__
from . import svg
from .model import RD_HEIGHT, RD_KIND, RD_WIDTH, CaseResult, Cell, Matrix, throughput_grid
from .wording import COLUMNS, MEANING, SYMBOL, cell_text, counts_text, mode_order, untested_text, verdict, versions_text

#: Cases listed inside one cell's <details>; the rest are in matrix.json.
MAX_CASES_PER_CELL = 80
MAX_MESSAGE = 700

CSS = """
:root { --pass:#e2f3e6; --pass-fg:#14572a; --warn:#fff1c2; --warn-fg:#6b4e00; --unsupported:#e9edf2;
  --unsupported-fg:#44505f; --fail:#fadcdc; --fail-fg:#8f1b1b; --error:#f3d7ef; --error-fg:#71145f;
  --crash:#f5c4c4; --crash-fg:#5c0b0b; --timeout:#f5c4c4; --timeout-fg:#5c0b0b; --none:#f7f7f7; --none-fg:#9a9a9a; }
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
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _anchor(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _level_badge(level: str) -> str:
    return f'<span class="lvl lvl-{_e(level.replace(" ", "-"))}">{_e(level)}</span>'


def _case_list(cases: Iterable[CaseResult]) -> str:
    """The cases, those with the same outcome and message listed together under it once."""
    cases = list(cases)
    groups: dict[tuple[str, bool, str], list[str]] = {}
    for c in cases[:MAX_CASES_PER_CELL]:
        groups.setdefault((c.outcome, c.known, c.summary(MAX_MESSAGE)), []).append(c.case)
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


def _cell(cell: Cell | None, empty: str = "—") -> str:
    if cell is None or not cell.total:
        return f'<td class="cell o-none">{_e(empty)}</td>'
    text = cell_text(cell)
    details = ""
    if cell.cases:
        n = len(cell.cases)
        details = f"<details><summary>{n} case{'s' if n != 1 else ''} not passing</summary>{_case_list(cell.cases)}</details>"
    return f'<td class="cell o-{cell.outcome}" title="{_e(counts_text(cell.counts))}"><div class="count">{_e(text)}</div>{details}</td>'


def _legend() -> str:
    spans = "".join(f'<span class="o-{o}" title="{_e(MEANING[o])}">{SYMBOL[o]} {o}</span>' for o in COLUMNS)
    return (
        f'<p class="legend">{spans}<span class="o-none">— not tested</span></p>'
        "<p>Each cell counts the cases of one implementation that rest on the requirement. A failing "
        "check is charged to the requirement it names, so one broken MUST does not colour every row its case "
        "touches. Open a cell to see the cases that did not pass, with the spec's words and what was observed.</p>"
    )


def _summary(m: Matrix) -> str:
    head = "".join(f'<th class="num">{SYMBOL[o]} {o}</th>' for o in COLUMNS)
    rows = []
    for impl in m.implementations:
        totals = m.totals(impl.name)
        nums = "".join(
            f'<td class="num{" o-" + o if totals[o] and o != "pass" else ""}">{totals[o] or ""}</td>' for o in COLUMNS
        )
        seconds = impl.run.get("seconds")
        rows.append(
            f"<tr><th>{_e(impl.name)}</th><td>{_e(', '.join(impl.roles) or '—')}</td>"
            f"<td>{_e(versions_text(impl))}</td><td class=\"num\">{sum(totals.values())}</td>{nums}"
            f"<td>{_e(verdict(m, impl))}</td>"
            f"<td class=\"num\">{'' if seconds is None else f'{seconds:.0f} s'}</td></tr>"
        )
    problems = "".join(
        f'<div class="problem"><b>{_e(i.name)}</b>: {_e(i.run_problem)}'
        + (f'<details><summary>log tail</summary><pre class="msg">{_e(i.run.get("log_tail", ""))}</pre></details>' if i.run.get("log_tail") else "")
        + "</div>"
        for i in m.implementations
        if i.run_problem
    )
    covered = {rid for by_req in m.cells.values() for rid in by_req}
    testable = [rid for rid, r in m.requirements.items() if r["when"] != ["untestable"]]
    coverage = (
        f"<p>{len(covered & set(testable))} of {len(testable)} testable requirements have results "
        f"({len(m.requirements) - len(testable)} more are guidance the suites cannot check).</p>"
    )
    return (
        '<section id="summary"><h2>Summary</h2>'
        f'<table class="summary"><thead><tr><th>implementation</th><th>roles</th><th>versions</th><th class="num">cases</th>{head}'
        f"<th>verdict</th><th class=\"num\">run time</th></tr></thead><tbody>{''.join(rows)}</tbody></table>{problems}{coverage}</section>"
    )


def _requirements(m: Matrix) -> str:
    impls = [i.name for i in m.implementations]
    # The requirement text gives way as implementation columns are added.
    cols = f'<col style="width:{max(24, 50 - 4 * len(impls))}%"><col class="c-lvl">' + "<col>" * len(impls)
    head = "<th>requirement</th><th>level</th>" + "".join(f"<th>{_e(n)}</th>" for n in impls)
    out = ['<section id="requirements"><h2>Requirements</h2>', _legend()]
    for topic in m.topics:
        rows = []
        for rid in topic.requirements:
            req = m.requirements.get(rid, {"level": "?", "text": "(not in the registry)", "when": [], "kind": ""})
            tag = '<span class="tag">interpretation</span>' if req.get("kind") == "interpretation" else ""
            text = req["text"] if len(req["text"]) <= 220 else req["text"][:219] + "…"
            cells = "".join(_cell(m.cells.get(n, {}).get(rid), untested_text(req.get("when", []))) for n in impls)
            rows.append(
                f'<tr id="{_e(rid)}"><td class="req"><span class="rid">{_e(rid)}</span>{tag}'
                f'<div class="rtext" title="{_e(req["text"])}">{_e(text)}</div></td>'
                f"<td>{_level_badge(req['level'])}</td>{cells}</tr>"
            )
        out.append(
            f'<section class="topic" id="topic-{_anchor(topic.section)}"><h3>{_e(topic.section)}</h3>'
            f'<table class="matrix"><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></section>"
        )
    out.append("</section>")
    return "".join(out)


def _cross(m: Matrix) -> str:
    intro = '<section id="cross"><h2>Encoder × decoder</h2>'
    if m.cross is None:
        return intro + '<p class="muted">No cross results: no case in these results names both an encoder and a decoder.</p></section>'
    head = "<th>encoder ↓ / decoder →</th>" + "".join(f"<th>{_e(d)}</th>" for d in m.cross.decoders)
    rows = []
    for enc in m.cross.encoders:
        cells = "".join(_cell(m.cross.cells.get((enc, dec))) for dec in m.cross.decoders)
        rows.append(f"<tr><th>{_e(enc)}</th>{cells}</tr>")
    return (
        intro + "<p>Streams written by the row's encoder, decoded by the column's decoder.</p>"
        f'<table class="matrix"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></section>'
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
    head = "<th>mode</th><th>operation</th>" + "".join(
        f'<th class="num">{_e(n)}' + (f'<br><span class="muted">{_e(transport[n])}</span>' if n in transport else "") + "</th>"
        for n in impls
    )
    rows = []
    for mode, op, measured in throughput_grid(tp):
        cells = []
        for _, r in measured:
            if r is None:
                cells.append('<td class="num muted">—</td>')
            elif "mb_per_s" in r:
                rel = r["relative"]
                cells.append(
                    f'<td class="num" title="median {r["seconds_median"] * 1000:.1f} ms over {r["repeats"]} calls; '
                    f'stream from {_e(r.get("stream_from"))}, {r.get("stream_bytes")} bytes">'
                    f'{r["mb_per_s"]:.0f} MB/s <span class="muted">({rel:.2f}×)</span>'
                    f'<span class="bar" style="width:{rel * 60:.0f}px"></span></td>'
                )
            else:
                cells.append(f'<td class="num o-{_e(r["status"])}" title="{_e(r.get("message", ""))}">{_e(r["status"])}</td>')
        rows.append(f"<tr><th>{_e(mode)}</th><td>{op}</td>{''.join(cells)}</tr>")
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
        f"{tp.get('quality')}; {_e(tp.get('method', ''))}. Relative figures are to the fastest implementation of each row. "
        "Decoders of a mode all read the same stream.</p>"
        f'<table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
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
            for impl, by_outcome in note.evidence.items():
                parts = []
                for outcome in COLUMNS:
                    cases = by_outcome.get(outcome, [])
                    if not cases:
                        continue
                    listing = _case_list(cases)
                    parts.append(f'<details class="o-{outcome}"><summary>{SYMBOL[outcome]} {len(cases)} {outcome}</summary>{listing}</details>')
                rows.append(f"<tr><th>{_e(impl)}</th><td>{''.join(parts)}</td></tr>")
            evidence = (
                "<table><thead><tr><th>implementation</th><th>evidence (open to see case IDs)</th></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>"
            )
        else:
            evidence = f'<p class="muted">No results probe {_e(note.id)} in this run (the suites that exercise it did not run).</p>'
        level = _level_badge(req["level"]) if req else ""
        out.append(f'<article class="note" id="note-{_e(note.id)}"><h3>{_e(note.id)} {level} {_e(note.title)}</h3>{paras}{evidence}</article>')
    out.append("</section>")
    return "".join(out)


_NOT_RECORDED = '<tr><td class="muted">not recorded</td></tr>'


def _environment(m: Matrix) -> str:
    env_rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in m.environment.items())
    impl_rows = "".join(
        f"<tr><th>{_e(i.name)}</th><td><code>{_e(i.spec)}</code></td><td>{_e(', '.join(i.roles) or '—')}</td>"
        f"<td>{_e(versions_text(i))}</td><td>{_e(i.run_problem or ('ok' if i.available else ''))}</td></tr>"
        for i in m.implementations
    )
    return (
        '<section id="environment"><h2>Environment</h2>'
        f"<table><tbody>{env_rows or _NOT_RECORDED}</tbody></table>"
        "<h3>Implementations</h3><table><thead><tr><th>name</th><th>--impl</th><th>roles</th><th>versions</th><th>run</th></tr></thead>"
        f"<tbody>{impl_rows}</tbody></table></section>"
    )


def render(m: Matrix) -> str:
    """The whole page."""
    names = ", ".join(i.name for i in m.implementations) or "none"
    nav = "".join(
        f'<a href="#{a}">{t}</a>'
        for a, t in (("summary", "Summary"), ("requirements", "Requirements"), ("cross", "Encoder × decoder"),
                     ("rate-distortion", "Rate–distortion"), ("throughput", "Throughput"), ("spec-notes", "Spec notes"),
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
        + _requirements(m)
        + _cross(m)
        + _rate_distortion(m)
        + _throughput(m)
        + _notes(m)
        + _environment(m)
        + "</main></body></html>\n"
    )


__all__ = ["render"]
