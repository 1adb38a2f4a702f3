"""What changed between two matrix.json files, as Markdown: outcomes, new and removed cases,
requirement cells of each row and of each parser.

Works on the JSON documents only, so it can compare runs from different machines,
versions of the suite or versions of an implementation.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .model import SEVERITY
from .saved import read_json
from .terminal import printable

#: Rows per table before the rest is summarised as a count.
MAX_ROWS = 200


def load_matrix(path: Path) -> dict[str, Any]:
    """Read a matrix.json; ReportFileError (naming the file and the place) for anything else,
    another format version included. Every text in it comes out printable (report.terminal): the changes are printed,
    and a name's escape codes or newlines must not rewrite them."""
    doc: dict[str, Any] = _printable(read_json(path, "matrix"))
    return doc


def _printable(value: Any) -> Any:
    """A JSON value with every string, keys included, made printable (its nesting is bounded: saved.MAX_DEPTH)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value


def _direction(old: str | None, new: str | None) -> str:
    """'better' / 'worse' / 'changed', by outcome severity."""
    if old in SEVERITY and new in SEVERITY:
        return "better" if SEVERITY.index(new) > SEVERITY.index(old) else "worse"
    return "changed"


def _rows(rows: list[list[str]], header: list[str]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows[:MAX_ROWS]]
    if len(rows) > MAX_ROWS:
        out.append(f"\n… and {len(rows) - MAX_ROWS} more.")
    return out + [""]


def _versions(impl: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in (impl.get("versions") or {}).items()) or "—"


def _cell_changes(old_cells: Mapping[str, Any], new_cells: Mapping[str, Any]) -> list[list[str]]:
    return [
        [rid, (old_cells.get(rid) or {}).get("outcome") or "not tested", (new_cells.get(rid) or {}).get("outcome") or "not tested"]
        for rid in sorted(set(old_cells) | set(new_cells))
        if (old_cells.get(rid) or {}).get("outcome") != (new_cells.get(rid) or {}).get("outcome")
    ]


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Markdown describing how ``new`` differs from ``old``."""
    out = ["# Compatibility matrix: changes", "",
           f"From {old.get('generated') or 'an earlier run'} to {new.get('generated') or 'this run'}.", ""]
    old_impls = {i["name"]: i for i in old.get("implementations", [])}
    new_impls = {i["name"]: i for i in new.get("implementations", [])}
    changed_anything = False
    for name in sorted(set(new_impls) - set(old_impls)):
        out.append(f"- implementation **{name}** added ({_versions(new_impls[name])})")
        changed_anything = True
    for name in sorted(set(old_impls) - set(new_impls)):
        out.append(f"- implementation **{name}** removed")
        changed_anything = True
    for name in sorted(set(old_impls) & set(new_impls)):
        a, b = _versions(old_impls[name]), _versions(new_impls[name])
        if a != b:
            out.append(f"- **{name}** versions: {a} → {b}")
            changed_anything = True
    if changed_anything:
        out.append("")
    old_parsers = {p["parser"]: p.get("cells", {}) for p in old.get("parsers", [])}
    for parser in new.get("parsers", []):
        changed_cells = _cell_changes(old_parsers.get(parser["parser"], {}), parser.get("cells", {}))
        if changed_cells:
            changed_anything = True
            out += [f"## parser {parser['parser']}", "", f"Rows: {', '.join(parser.get('rows', []))}.", "",
                    "Requirements whose cell changed:", ""] + _rows(changed_cells, ["requirement", "before", "now"])
    for name in [n for n in new_impls if n in old_impls]:
        old_cases = old.get("cases", {}).get(name, {})
        new_cases = new.get("cases", {}).get(name, {})
        changed = [
            [f"`{case}`", old_cases[case]["outcome"], new_cases[case]["outcome"],
             _direction(old_cases[case]["outcome"], new_cases[case]["outcome"])]
            for case in sorted(set(old_cases) & set(new_cases))
            if old_cases[case]["outcome"] != new_cases[case]["outcome"]
        ]
        added = [[f"`{c}`", new_cases[c]["outcome"]] for c in sorted(set(new_cases) - set(old_cases))]
        removed = [[f"`{c}`", old_cases[c]["outcome"]] for c in sorted(set(old_cases) - set(new_cases))]
        cells = _cell_changes(old.get("cells", {}).get(name, {}), new.get("cells", {}).get(name, {}))
        if not (changed or added or removed or cells):
            continue
        changed_anything = True
        out += [f"## {name}", ""]
        if cells:
            out += ["Requirements whose cell changed:", ""] + _rows(cells, ["requirement", "before", "now"])
        if changed:
            worse = sum(1 for r in changed if r[3] == "worse")
            out += [f"Cases that changed outcome ({len(changed)}, {worse} worse):", ""]
            out += _rows(changed, ["case", "before", "now", ""])
        if added:
            out += [f"New cases ({len(added)}):", ""] + _rows(added, ["case", "outcome"])
        if removed:
            out += [f"Removed cases ({len(removed)}):", ""] + _rows(removed, ["case", "last outcome"])
    if not changed_anything:
        out += ["No changes: the same implementations, versions, cases and outcomes.", ""]
    return "\n".join(out).rstrip() + "\n"


__all__ = ["compare", "load_matrix"]
