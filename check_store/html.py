"""report.html: one self-contained page (inline CSS and SVG, no scripts), in the style of the matrix."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from ..report.render_html import CSS as MATRIX_CSS

__all__ = ["render"]

#: Chunks listed under one requirement; the rest are in report.json and findings.jsonl.
MAX_LISTED = 60
MAP_WIDTH = 560
COLOURS = {"0": "#ffffff", "1": "#e4e4e4", "2": "#6cc283", "3": "#f0bf3c", "4": "#d83b3b", "5": "#9b3596"}
NAMES = {"1": "missing (fill value)", "2": "conforms", "3": "warn (a SHOULD)", "4": "fail (a MUST)", "5": "error (not checked)"}

CSS = MATRIX_CSS + """
.verdict { display: inline-block; font-size: 15px; font-weight: 700; padding: 3px 12px; border-radius: 4px; margin: 2px 0 8px; }
.maps { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
.maps figure { margin: 0; border: 1px solid #e0e0e0; padding: 8px; background: #fafafa; width: min-content; }
.maps figcaption { font-size: 12.5px; color: #333; margin-bottom: 6px; min-width: 260px; }
.maps svg { display: block; overflow: visible; }
.swatch { display: inline-block; width: 11px; height: 11px; border: 1px solid #999; vertical-align: -1px; margin: 0 4px 0 10px; }
.big { font-size: 22px; font-weight: 700; font-variant-numeric: tabular-nums; }
.tiles { display: flex; flex-wrap: wrap; gap: 10px; margin: 10px 0 4px; }
.tiles > div { border: 1px solid #ddd; border-radius: 4px; padding: 6px 14px; min-width: 120px; }
.tiles .label { font-size: 12px; color: #555; }
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _lvl(level: str) -> str:
    return f'<span class="lvl lvl-{_e(level.replace(" ", "-"))}">{_e(level)}</span>' if level else ""


def _map(array: Mapping[str, Any]) -> str:
    chunk_map = array["map"]
    if not chunk_map:
        return ""
    cells = chunk_map["cells"]
    rows, cols = len(cells), len(cells[0]) if cells else 0
    px = max(2, min(16, MAP_WIDTH // max(cols, 1)))
    rects, marks = [], []
    for y, row in enumerate(cells):
        x = 0
        while x < cols:
            end = x
            while end < cols and row[end] == row[x]:
                end += 1
            if row[x] != "0":
                rects.append(f'<rect x="{x * px}" y="{y * px}" width="{(end - x) * px}" height="{px}" fill="{COLOURS[row[x]]}"/>')
            if row[x] in "345" and px < 10:
                # A ring around each cell that is not conforming, so that one bad chunk in
                # ten thousand is seen at a glance.
                r = 1.5 * px + 2
                marks += [f'<circle cx="{(i + 0.5) * px}" cy="{(y + 0.5) * px}" r="{r}" fill="none" stroke="{COLOURS[row[x]]}" '
                          'stroke-width="2"/>' for i in range(x, end)]
            x = end
    step = chunk_map["row_step"], chunk_map["col_step"]
    per_cell = "one chunk per cell" if step == (1, 1) else f"each cell {step[0]}x{step[1]} grid positions, coloured by its worst"
    unit = "shards" if array["sharded"] else "chunks"
    caption = (f"<b>{_e(array['path'])}</b>: {chunk_map['rows']:,} x {chunk_map['cols']:,} {unit} "
               f"(rows: every axis but the last of the chunk grid; columns: its last axis); {per_cell}")
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * px}" height="{rows * px}" viewBox="0 0 {cols * px} {rows * px}" '
           f'role="img" aria-label="chunk map of {_e(array["path"])}">{"".join(rects)}{"".join(marks)}</svg>')
    return f"<figure><figcaption>{caption}</figcaption>{svg}</figure>"


def _legend() -> str:
    return "<p>" + "".join(f'<span class="swatch" style="background:{COLOURS[k]}"></span>{_e(v)}' for k, v in NAMES.items()) + "</p>"


def _num(value: int, outcome: str) -> str:
    cls = f" o-{outcome}" if value and outcome != "pass" else ""
    return f'<td class="num{cls}">{value:,}</td>' if value else '<td class="num muted">0</td>'


def _arrays(report: Mapping[str, Any]) -> str:
    rows = []
    for a in report["arrays"]:
        meta = a["metadata"]
        image = "x".join(map(str, a["image"])) if a["image"] else "—"
        shape = " x ".join(map(str, meta.get("shape", []))) if meta.get("shape") else "—"
        chunks = " x ".join(map(str, meta.get("chunk_shape", []))) if meta.get("chunk_shape") else "—"
        codecs = " → ".join(c.get("name", "?") for c in meta.get("codecs") or [] if isinstance(c, Mapping))
        c = a["counts"]
        rows.append(
            f'<tr><td><code>{_e(a["path"])}</code></td><td>{_e(shape)}<br><span class="muted">chunks {_e(chunks)}</span></td>'
            f'<td>{_e(a["jpeg"] or "—")}<br><span class="muted">codecs: {_e(codecs)}</span></td><td>{_e(image)}</td>'
            f'<td class="num">{a["chunks"]:,}</td>{_num(c["pass"], "pass")}{_num(c["warn"], "warn")}{_num(c["fail"], "fail")}'
            f'{_num(c["error"], "error")}<td class="num">{c["fill"]:,}</td>'
            f'<td class="o-{_e(a["outcome"])}"><b>{_e(a["outcome"])}</b></td></tr>')
    head = ("<tr><th>array</th><th>shape</th><th>jpeg</th><th>JPEG image<br>(HxWxC)</th><th class=\"num\">chunks</th>"
            "<th class=\"num\">conform</th><th class=\"num\">warn</th><th class=\"num\">fail</th><th class=\"num\">error</th>"
            "<th class=\"num\">missing</th><th>outcome</th></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _requirements(report: Mapping[str, Any]) -> str:
    by_req: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for rec in report["records"]:
        for f in rec["findings"]:
            by_req.setdefault(f["requirement"] or "", []).append((rec["case"], f))
    if not by_req:
        return "<p>No chunk and no metadata document breaks a requirement.</p>"
    rows = []
    reqs = report["requirements"]
    order = sorted(by_req, key=lambda r: ({"error": 0, "fail": 1, "warn": 2}.get(by_req[r][0][1]["outcome"], 3), r))
    opened = " open" if len(order) <= 6 else ""  # a few rows: show where at once
    for rid in order:
        found = by_req[rid]
        outcome = found[0][1]["outcome"]
        counts = sum(a["requirements"].get(rid, 0) for a in report["arrays"]) or len(found)
        if rid:
            req = reqs.get(rid, {})
            label = (f'<span class="rid">{_e(rid)}</span> {_lvl(req.get("level", ""))}'
                     f'<div class="rtext">{_e(req.get("text", ""))}</div>')
        else:
            label = '<span class="rid">not checked</span><div class="rtext">check-store could not read or judge these</div>'
        groups: dict[str, list[str]] = {}
        for case, f in found[:MAX_LISTED]:
            groups.setdefault(f["observed"], []).append(case)
        items = "".join(
            f'<li>{" ".join(f"<span class=case>{_e(c)}</span>" for c in cases)}<pre class="msg">{_e(observed)}</pre></li>'
            for observed, cases in groups.items())
        more = len(found) - MAX_LISTED
        if more > 0:
            items += f'<li class="muted">… and {more:,} more (all are in report.json and findings.jsonl)</li>'
        rows.append(f'<tr><td class="req">{label}</td><td class="cell o-{_e(outcome)}"><div class="count">'
                    f'{counts:,} {"chunk" if counts == 1 else "chunks"} {_e(outcome)}</div>'
                    f'<details{opened}><summary>show where and what was seen</summary><ul>{items}</ul></details></td></tr>')
    return ('<table class="matrix"><col style="width:46%"><col><tr><th>requirement</th><th>chunks and metadata breaking it</th></tr>'
            + "".join(rows) + "</table>")


def render(report: Mapping[str, Any]) -> str:
    """The page for a report.json document."""
    t = report["totals"]
    stored = t["pass"] + t["warn"] + t["fail"] + t["error"]
    rate = stored / report["seconds"] if report["seconds"] else 0
    conforms = report["conforms"]
    verdict = ('<span class="verdict o-pass">✓ conforms</span>' if conforms
               else (f'<span class="verdict o-error">interrupted ({_e(report.get("interruption") or "Ctrl-C")}): a partial '
                     'report</span>') if report.get("interrupted")
               else '<span class="verdict o-fail">✗ does not conform</span>')
    mode = (f"every chunk decoded by {report['decoder']}" + (f" and compared with {report['reference']}" if report["reference"] else "")
            if report["mode"] == "decode" else "header only: each chunk's marker segments and its last bytes")
    tiles = "".join(
        f'<div class="{cls}"><div class="big">{value}</div><div class="label">{_e(label)}</div></div>'
        for value, label, cls in (
            (f"{stored:,}", "chunks checked", ""), (f"{t['pass']:,}", "conform", "o-pass"),
            (f"{t['warn']:,}", "warn", "o-warn" if t["warn"] else ""), (f"{t['fail']:,}", "fail", "o-fail" if t["fail"] else ""),
            (f"{t['error']:,}", "not checked", "o-error" if t["error"] else ""), (f"{t['fill']:,}", "missing (fill value)", ""),
            (f"{rate:,.0f}", "chunks/s", "")))
    maps = "".join(_map(a) for a in report["arrays"])
    skipped = (f"<p class=\"muted\">Arrays without the jpeg codec, not checked: {_e(', '.join(report['skipped_arrays']))}</p>"
               if report["skipped_arrays"] else "")
    dropped = (f"<p class=\"muted\">{report['records_dropped']:,} more records are only in findings.jsonl.</p>"
               if report["records_dropped"] else "")
    versions = ", ".join(f"{k} {v}" for k, v in report["versions"].items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>check-store: {_e(report["store"])}</title><style>{CSS}</style></head>
<body><header><h1>check-store: <code>{_e(report["store"])}</code></h1>
{verdict}
<p class="meta">{_e(report["kind"])} store · {_e(mode)} · {_e(report["engine"])} · {report["seconds"]:.1f} s · started {_e(report["started"])}</p>
<nav><a href="#arrays">Arrays</a><a href="#maps">Chunk maps</a><a href="#requirements">Requirements</a><a href="#how">How it was checked</a></nav>
</header><main>
<div class="tiles">{tiles}</div>
<h2 id="arrays">Arrays</h2>
{_arrays(report)}{skipped}
<h2 id="maps">Chunk maps</h2>
{_legend()}
<div class="maps">{maps}</div>
<h2 id="requirements">Requirements broken</h2>
<p>Each row is one requirement of the spec, with its words; open a row for the chunks (by key; <code>#i,j,k</code> names an
inner chunk of a shard) and what was seen in them. A broken MUST fails the store; a broken SHOULD warns.</p>
{_requirements(report)}{dropped}
<h2 id="how">How it was checked</h2>
<p>Metadata: every <code>jpeg</code> codec object against <code>schema/jpeg.schema.json</code> and the parse rules, its place in
the codec chain, and the data type and chunk shape it receives after the codecs before it. Chunks: the frame (baseline SOF0,
8-bit samples and tables), its height and width against the chunk shape (boundary chunks included: Zarr pads them to the full
shape), the component count and sampling factors against the configuration, the colour-space markers against
<code>encoded_color_space</code>, and EOI as the last bytes. A header-only run reads each chunk's first kilobyte and last 64
bytes; <code>--decode</code> reads chunks whole, walks every marker and decodes each with a strict decoder. Missing chunks
read as the fill value and are not errors.</p>
<p class="muted">{_e(versions)}</p>
</main></body></html>
"""
