"""The CI recipes a codec repository copies (docs/ci/*.yml) and the section of docs/codec-authors.md
that explains them agree with each other and with the suites: every option they pass is one pytest
knows, the results file they keep is the one they read the root findings from, and each language's
``--impl`` is the page's table's. (tests/test_ci_recipe_runs.py runs them.)"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPES = sorted((ROOT / "docs" / "ci").glob("*.yml"))
PAGE = ROOT / "docs" / "codec-authors.md"
SECTION = "## Add the suite to your codec's CI"
LANGUAGE = {"rust": "Rust", "go": "Go", "node": "JavaScript", "java": "Java", "python": "Python"}


def _workflow(path: Path) -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


def _step(steps: list[dict[str, Any]], name: str) -> dict[str, Any]:
    found = [s for s in steps if s.get("name") == name]
    assert len(found) == 1, f"no single step {name!r}"
    return found[0]


@cache
def _pytest_help() -> str:
    done = subprocess.run([sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"], capture_output=True, text=True,
                          timeout=120, check=True, cwd=ROOT)
    return done.stdout


def _page_table() -> dict[str, str]:
    """language -> the `--impl` cell of the table in docs/codec-authors.md."""
    text = PAGE.read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| (\w+) \|.*\| `([^`]+)`[^|]* \|$", text, re.M)}
    rows.pop("language", None)  # the header
    return rows


def test_a_recipe_per_language_of_the_page() -> None:
    assert {p.stem for p in RECIPES} == set(LANGUAGE)
    assert set(_page_table()) == set(LANGUAGE.values())


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_recipe_runs_the_suites_and_keeps_what_it_reads(recipe: Path) -> None:
    workflow = _workflow(recipe)
    steps = workflow["jobs"]["conformance"]["steps"]
    assert "git+https://github.com/" in workflow["env"]["CONFORMANCE"], "the suite comes from its repository"
    install = _step(steps, "Install the suite")["run"]
    assert '"$CONFORMANCE"' in install
    command = _step(steps, "Run the suites")["run"]
    assert "--pyargs zarr_jpeg_conformance.suites" in command
    for option in set(re.findall(r"(?<!\S)(--[a-z][a-z-]+)", command)):
        # An option may follow its other spellings on the line ("--junitxml, --junit-xml=path" on some installs).
        assert re.search(rf"^\s+(?:-[\w-]+(?:=\S+)?,\s+)*{re.escape(option)}\b", _pytest_help(), re.M), f"pytest knows no {option}"
    impl = re.search(r"--impl '([^']+)'", command)
    assert impl and impl.group(1) == _page_table()[LANGUAGE[recipe.stem]], "the page's --impl for this language"
    results = re.search(r'--results "(\S+)"', command)
    assert results, "the run keeps a results file"
    findings = _step(steps, "Root findings")
    assert findings["if"] == "always()" and f"zarr_jpeg_conformance.report.findings \"{results.group(1)}\"" in findings["run"]
    upload = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert upload and upload[0]["if"] == "always()", "artefacts are kept when the run fails too"
    assert steps.index(upload[0]) > steps.index(findings)
