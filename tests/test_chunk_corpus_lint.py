"""Meta-tests of the chunk corpus: schema, unique stable IDs, known requirements, valid codecs."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from zarr_jpeg_conformance.core.config import parse_codec

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "fixtures" / "chunks").glob("*.json"))
REQUIREMENTS = {r["id"] for r in json.loads((ROOT / "fixtures" / "requirements.json").read_text())["requirements"]}
VALIDATOR = jsonschema.Draft202012Validator(json.loads((ROOT / "schema" / "chunk-cases.schema.json").read_text()))


def _cases() -> list[dict]:
    return [c for path in FILES for c in json.loads(path.read_text())["cases"]]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_file_matches_schema(path: Path) -> None:
    errors = [e.message for e in VALIDATOR.iter_errors(json.loads(path.read_text()))]
    assert not errors, errors


def test_ids_unique_and_requirements_known() -> None:
    ids = [c["id"] for c in _cases()]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    unknown = {(c["id"], r) for c in _cases() for r in c["requirements"] if r not in REQUIREMENTS}
    assert not unknown, unknown


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_codec_is_valid(case: dict) -> None:
    """Chunk cases test the chunk, so their configuration must itself be valid."""
    parse_codec(case["codec"])


def test_every_shape_row_and_limit_is_covered() -> None:
    cited = {r for c in _cases() for r in c["requirements"]}
    shape_rows = ("JPEG-SHP-01", "JPEG-SHP-02", "JPEG-SHP-03", "JPEG-SHP-04", "JPEG-SHP-05", "JPEG-SHP-06")
    for req in (*shape_rows, "JPEG-DT-01", "JPEG-DIM-02", "JPEG-CFG-02", "JPEG-X-03"):
        assert req in cited, f"no chunk case cites {req}"



@pytest.mark.parametrize("twin_valid", [True, False], ids=["the-corpus", "a-chunk-twin-made-invalid"])
def test_the_twins_suite_passes_the_corpus_and_fails_a_chunk_case_whose_twin_is_invalid(pytester: pytest.Pytester,
                                                                                        twin_valid: bool) -> None:
    """suites/test_twins.py, run on the chunk cases: every invalid chunk case has a valid twin; where a twin is not
    valid, the check of that case fails."""
    from zarr_jpeg_conformance.corpus import cases

    # A plug-in loaded before the suite is collected: every twin it looks up comes back invalid.
    pytester.makepyfile(invalid_twins="""
        from dataclasses import replace
        from zarr_jpeg_conformance.corpus import cases
        twin_of = cases.twin_of
        cases.twin_of = lambda case: replace(twin_of(case), valid=False)
    """)
    pytester.syspathinsert()
    plugin = [] if twin_valid else ["-p", "invalid_twins"]
    result = pytester.runpytest_subprocess(str(ROOT / "suites" / "test_twins.py"), "-k", "chunk.", *plugin,
                                           "--import-mode=importlib", "-p", "no:cacheprovider", "-q")
    outcomes = result.parseoutcomes()
    chunk_invalid = sum(1 for c in cases.chunk_cases() if not c.valid)
    assert chunk_invalid > 0
    expected = {"passed": chunk_invalid} if twin_valid else {"failed": chunk_invalid}
    assert {k: v for k, v in outcomes.items() if k in ("passed", "failed")} == expected, outcomes
