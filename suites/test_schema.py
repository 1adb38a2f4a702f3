"""The jpeg codec schema against the configuration corpus.

No adapter is needed: the schema's verdict on every case of ``fixtures/configs`` must equal the
case's ``valid``. Files are read through the installed package, so this works from a wheel too.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

import jsonschema
import pytest
from jsonschema.exceptions import best_match

PACKAGE = files("zarr_jpeg_conformance")


def _load(resource: Traversable) -> Any:
    return json.loads(resource.read_text(encoding="utf-8"))


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(_load(PACKAGE / "schema" / "jpeg.schema.json"))


def _cases() -> list[dict[str, Any]]:
    configs = PACKAGE / "fixtures" / "configs"
    paths = sorted((p for p in configs.iterdir() if p.name.endswith(".json")), key=lambda p: p.name)
    return [case for path in paths for case in _load(path)["cases"]]


CASES = _cases()


def test_corpus_is_not_empty() -> None:
    assert CASES, "no configuration cases found in the package"


def test_jpeg_schema_is_valid_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(_load(PACKAGE / "schema" / "jpeg.schema.json"))


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_schema_verdict_matches_case(case: dict[str, Any]) -> None:
    error = best_match(_validator().iter_errors(case["codec"]))
    accepted = error is None
    if accepted == case["valid"]:
        return
    reason = (
        f"schema rejects it: {error.message} (at /{'/'.join(map(str, error.absolute_path))})"
        if error is not None
        else "schema accepts it"
    )
    pytest.fail(
        f"{case['id']} ({case['description']}; {', '.join(case['requirements'])}, {case['level']}): "
        f"expected valid={case['valid']}, but the {reason}",
        pytrace=False,
    )
