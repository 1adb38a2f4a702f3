"""The three statements of the harness protocol agree: the summary table of docs/codec-authors.md,
docs/protocol.md and the JSON Schema name the same ops, the same request and reply members, and the
same reply to ``stop``.

A harness author reads the summary first and the schema last; where they differed (the summary,
then in the README, once said ``stop`` gets no reply), a harness written from one failed against
the client. Every example that is JSON is validated against the schema's definition of its op.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = ROOT / "docs" / "codec-authors.md"
SUMMARY_SECTION = "## The harness protocol (version 1)"


@cache
def _schema() -> dict[str, Any]:
    return json.loads((ROOT / "schema" / "protocol" / "v1.schema.json").read_text(encoding="utf-8"))


def _validate(message: dict[str, Any], definition: str) -> None:
    schema = _schema()
    jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}).validate(message)


def _schema_ops() -> set[str]:
    defs = _schema()["$defs"]
    return {d["properties"]["op"]["const"] for name, d in defs.items()
            if name.endswith("-request") and "const" in d.get("properties", {}).get("op", {})}


def _ok_reply(op: str) -> tuple[set[str], set[str]]:
    """(required, optional) members of the op's `ok` reply, without `seq` and `status`."""
    for branch in _schema()["$defs"][f"{op}-reply"]["oneOf"]:
        if branch.get("properties", {}).get("status", {}).get("const") == "ok":
            required = set(branch["required"]) - {"seq", "status"}
            return required, set(branch["properties"]) - required - {"seq", "status"}
    raise AssertionError(f"the schema's {op}-reply has no ok form")


def _json_literals(text: str) -> list[dict[str, Any]]:
    """Every `{...}` in backticks, and every line of a json block, that is JSON."""
    found = []
    candidates = re.findall(r"`(\{[^`]*\})`", text)
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        candidates += block.splitlines()
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append({k: _unelided(v) for k, v in value.items()})
    return found


def _unelided(value: Any) -> Any:
    """A base64 value the docs shorten with "..." stands for its shown part."""
    return value.removesuffix("...") if isinstance(value, str) else value


def _summary_rows() -> dict[str, tuple[str, str]]:
    """op -> (request cell, reply cell) of the summary's protocol table."""
    text = SUMMARY.read_text(encoding="utf-8")
    section = text.split(SUMMARY_SECTION, 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        match = re.match(r'\| `(\{"seq".*?\})`(.*?) \| (.*) \|$', line)
        if match:
            op = re.search(r'"op": "(\w+)"', match.group(1))
            assert op, line
            rows[op.group(1)] = (match.group(1), match.group(3))
    return rows


def _member_names(cell: str) -> set[str]:
    """The quoted member names of a reply cell, once values, literals and asides are taken out."""
    cell = re.sub(r"`\{[^`]*\}`", "", cell)
    cell = re.sub(r"\([^)]*\)|\[[^\]]*\]|\{[^}]*\}", "", cell)
    return set(re.findall(r'"([a-z_]+)"', cell))


def _doc_sections() -> dict[str, str]:
    """op -> its section of docs/protocol.md (a `### `op`: ...` heading to the next heading)."""
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    sections = {}
    for match in re.finditer(r"^### `(\w+)`:[^\n]*\n(.*?)(?=^##)", text, re.S | re.M):
        sections[match.group(1)] = match.group(2)
    return sections


def test_the_three_name_the_same_ops() -> None:
    ops = _schema_ops()
    assert {"start", "parse", "encode", "decode", "stop"} <= ops
    assert set(_summary_rows()) == ops, "the summary's table"
    assert set(_doc_sections()) == ops, "docs/protocol.md's sections"


@pytest.mark.parametrize("op", sorted(_schema_ops()))
def test_summary_row_agrees_with_the_schema(op: str) -> None:
    request, reply = _summary_rows()[op]
    request_props = _schema()["$defs"][f"{op}-request"]
    top_level = request[1:-1]
    while re.search(r"\{[^{}]*\}|\[[^\[\]]*\]", top_level):
        top_level = re.sub(r"\{[^{}]*\}|\[[^\[\]]*\]", "", top_level)
    shown = set(re.findall(r'"(\w+)":', top_level))
    assert set(request_props["required"]) <= shown <= set(request_props["properties"]), request
    required, optional = _ok_reply(op)
    main, _, aside = reply.partition("optional")
    assert _member_names(main) == required, f"the summary's {op} reply members"
    assert _member_names(aside) == optional, f"the summary's optional {op} reply members"
    for literal in _json_literals(reply):
        _validate(literal, f"{op}-reply")


@pytest.mark.parametrize("op", sorted(_schema_ops()))
def test_doc_section_agrees_with_the_schema(op: str) -> None:
    section = _doc_sections()[op]
    required, optional = _ok_reply(op)
    for member in required | optional:
        assert f"`{member}`" in section or f'"{member}"' in section, f"docs/protocol.md's {op} section omits {member}"
    literals = _json_literals(section)
    assert any("op" in m for m in literals), f"docs/protocol.md's {op} section shows no request"
    for message in literals:
        _validate(message, f"{op}-request" if "op" in message else f"{op}-reply")


def test_stop_is_answered_everywhere() -> None:
    """The point where the three once disagreed: `stop` gets an ok reply, then the harness exits."""
    expected = {"status": "ok"}
    summary = [m for m in _json_literals(_summary_rows()["stop"][1]) if "status" in m]
    doc = [m for m in _json_literals(_doc_sections()["stop"]) if "status" in m]
    assert summary and doc, "both show the reply to stop"
    for reply in summary + doc:
        _validate(reply, "stop-reply")
        assert {k: v for k, v in reply.items() if k != "seq"} == expected
    with pytest.raises(jsonschema.ValidationError):
        _validate({"seq": 1}, "stop-reply")
