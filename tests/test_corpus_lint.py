"""Meta-tests of the configuration corpus and the requirement registry.

They run from the source tree (paths relative to the repository root), so they check the files
that are committed, not the ones some installed copy of the package holds.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "fixtures" / "configs"
REQUIREMENTS = ROOT / "fixtures" / "requirements.json"
SCHEMAS = ROOT / "schema"

CASE_ID = re.compile(r"^config\.[a-z0-9]+(?:[.-][a-z0-9]+)*$")
REQUIREMENT_ID = re.compile(r"^JPEG-[A-Z]+-[0-9]{2}$")
CASE_KEY_ORDER = ("id", "description", "requirements", "level", "codec", "valid", "twin", "comment")
# Descriptions say what a case is, not what a test does or what an implementation ought to do.
BANNED_WORDS = re.compile(r"\b(should|test|tests|testing|check|checks|verify|verifies|ensure|ensures)\b", re.I)
MAX_DESCRIPTION = 99
MIN_CASES_PER_PARSE_MUST = 2

CONFIG_FILES = sorted(CONFIGS.glob("*.json"))


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _validator(name: str) -> jsonschema.Draft202012Validator:
    schema = _load(SCHEMAS / name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@cache
def _requirements() -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in _load(REQUIREMENTS)["requirements"]}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    return [(path.name, case) for path in CONFIG_FILES for case in _load(path)["cases"]]


def _errors(validator: jsonschema.Draft202012Validator, instance: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in validator.iter_errors(instance)]


def test_corpus_is_not_empty() -> None:
    assert CONFIG_FILES, f"no case files in {CONFIGS}"


@pytest.mark.parametrize("name", sorted(p.name for p in SCHEMAS.glob("*.json")))
def test_schema_is_valid_2020_12(name: str) -> None:
    schema = _load(SCHEMAS / name)
    assert schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.name)
def test_case_file_matches_schema(path: Path) -> None:
    errors = _errors(_validator("config-cases.schema.json"), _load(path))
    assert not errors, f"{path.name}:\n" + "\n".join(errors)


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.name)
def test_case_keys_in_canonical_order(path: Path) -> None:
    # object_pairs_hook keeps the order as written; plain json.load would too, but says so explicitly.
    doc = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=lambda pairs: pairs)
    cases = dict(doc)["cases"]
    for pairs in cases:
        keys = [k for k, _ in pairs]
        expected = [k for k in CASE_KEY_ORDER if k in keys]
        assert keys == expected, f"{path.name}: {dict(pairs).get('id')}: keys {keys}, expected {expected}"


def test_case_ids_unique_and_well_formed() -> None:
    ids = [case["id"] for _, case in _cases()]
    malformed = [i for i in ids if not CASE_ID.match(i)]
    assert not malformed, f"malformed case ids: {malformed}"
    duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
    assert not duplicates, f"case ids used more than once: {duplicates}"


def test_cited_requirements_exist() -> None:
    known = _requirements()
    unknown = {(case["id"], r) for _, case in _cases() for r in case["requirements"] if r not in known}
    assert not unknown, f"cases cite requirements missing from the registry: {sorted(unknown)}"


def test_cases_cite_a_parse_time_requirement() -> None:
    # A config case is judged at parse: it must rest on something checked at parse.
    reqs = _requirements()
    bad = [
        case["id"]
        for _, case in _cases()
        if not any("parse" in reqs.get(r, {}).get("when", ()) for r in case["requirements"])
    ]
    assert not bad, f"cases citing no parse-time requirement: {bad}"


def test_case_level_matches_a_cited_requirement() -> None:
    # The level is that of the requirement deciding the verdict, so one cited requirement has it.
    reqs = _requirements()
    bad = [
        (case["id"], case["level"])
        for _, case in _cases()
        if case["level"] not in {reqs.get(r, {}).get("level") for r in case["requirements"]}
    ]
    assert not bad, f"cases whose level no cited requirement has: {bad}"


def test_may_only_with_valid_true() -> None:
    # MAY marks optional support: rejecting is conformant, so only a valid case can be MAY.
    bad = [case["id"] for _, case in _cases() if case["level"] == "MAY" and case["valid"] is not True]
    assert not bad, f"MAY cases with valid false: {bad}"


def test_should_cases_rest_on_a_should() -> None:
    # A SHOULD case warns when an implementation disagrees: its first requirement must be a SHOULD
    # (reject unknown members, JPEG-X-01; accept must_understand, JPEG-X-19), or a MUST would be softened.
    levels = {rid: r["level"] for rid, r in _requirements().items()}
    bad = [case["id"] for _, case in _cases() if case["level"] == "SHOULD" and not levels[case["requirements"][0]].startswith("SHOULD")]
    assert not bad, f"SHOULD cases whose first requirement is not a SHOULD: {bad}"


def test_every_parse_must_requirement_has_cases() -> None:
    counts = Counter(r for _, case in _cases() for r in set(case["requirements"]))
    parse_must = [
        rid for rid, r in _requirements().items() if r["level"] == "MUST" and "parse" in r["when"]
    ]
    assert parse_must, "the registry has no parse-time MUST requirement"
    short = {rid: counts[rid] for rid in parse_must if counts[rid] < MIN_CASES_PER_PARSE_MUST}
    assert not short, f"parse-time MUST requirements with fewer than {MIN_CASES_PER_PARSE_MUST} cases: {short}"


def _description_problems(text: str) -> list[str]:
    problems = []
    if len(text) > MAX_DESCRIPTION:
        problems.append(f"{len(text)} chars (max {MAX_DESCRIPTION})")
    if text != text.strip() or not text:
        problems.append("empty or padded with whitespace")
    if text.endswith("."):
        problems.append("ends with a period")
    problems += [f"uses {m.group(0)!r}" for m in BANNED_WORDS.finditer(text)]
    return problems


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.name)
def test_description_style(path: Path) -> None:
    doc = _load(path)
    found = [(path.name, p) for p in _description_problems(doc["description"])]
    found += [(case["id"], p) for case in doc["cases"] for p in _description_problems(case["description"])]
    assert not found, "\n".join(f"{where}: {problem}" for where, problem in found)


def test_requirements_match_schema() -> None:
    errors = _errors(_validator("requirements.schema.json"), _load(REQUIREMENTS))
    assert not errors, "fixtures/requirements.json:\n" + "\n".join(errors)


def test_requirement_ids_unique_and_well_formed() -> None:
    ids = [r["id"] for r in _load(REQUIREMENTS)["requirements"]]
    malformed = [i for i in ids if not REQUIREMENT_ID.match(i)]
    assert not malformed, f"malformed requirement ids: {malformed}"
    duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
    assert not duplicates, f"requirement ids used more than once: {duplicates}"
