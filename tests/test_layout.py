"""The root listing is the architecture: each concern a package, no cycles, ``core`` imports nothing above it.

Read from the sources (``ast``), not by importing them, so a backend that is missing
here cannot hide an import. Lazy imports inside functions count like top-level ones:
they tie packages together all the same.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "zarr_jpeg_conformance"
#: The only modules the root may hold: the package's face and the fixture generator's
#: command line (a design-card entry). Anything else belongs in the package of its concern.
ROOT_MODULES = {"__init__.py", "generate_fixtures.py"}
#: Folders at the root that are not packages of the distribution.
NOT_PACKAGES = {"tests", "fixtures", "schema", "docs", "build", "dist"}


def _packages() -> list[str]:
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    return [p.removeprefix(PACKAGE).lstrip(".") for p in listed if p != PACKAGE]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> Iterator[str]:
    """The modules of this package that ``path`` imports, as dotted names relative to the package."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            elif node.module and (node.module == PACKAGE or node.module.startswith(PACKAGE + ".")):
                target = node.module.removeprefix(PACKAGE).lstrip(".")
            else:
                continue
            # ``from . import x`` names a module when x is one.
            for alias in node.names:
                sub = f"{target}.{alias.name}" if target else alias.name
                yield sub if _exists(sub) else target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    yield alias.name.removeprefix(PACKAGE).lstrip(".")


def _exists(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _sources() -> list[Path]:
    return [p for sub in ["", *_packages()] for p in (ROOT / sub.replace(".", "/")).glob("*.py")]


def test_root_holds_only_the_listed_modules() -> None:
    stray = sorted(p.name for p in ROOT.glob("*.py") if p.name not in ROOT_MODULES)
    assert not stray, (
        f"modules at the repository root besides {sorted(ROOT_MODULES)}: {stray}. "
        "Put each in the package of its concern (see docs/contributors.md, Layout)."
    )


def test_every_folder_of_python_is_a_listed_package() -> None:
    listed = {p.split(".")[0] for p in _packages()}
    folders = {p.parent.name for p in ROOT.glob("*/*.py")} - NOT_PACKAGES
    assert folders <= listed, f"folders with Python code that pyproject.toml does not ship: {sorted(folders - listed)}"


def test_core_imports_nothing_outside_core() -> None:
    outside = {
        f"{path.relative_to(ROOT)} imports {target or PACKAGE}"
        for path in (ROOT / "core").glob("*.py")
        for target in _imports(path)
        if not (target == "core" or target.startswith("core."))
    }
    assert not outside, f"core/ must not depend on the rest of the project: {sorted(outside)}"


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path of nodes, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.mark.parametrize("level", ["module", "package"])
def test_no_import_cycles(level: str) -> None:
    graph: dict[str, set[str]] = {}
    for path in _sources():
        source = _module_name(path)
        if not source:
            continue  # the package's face (__version__) sits under everything
        for target in _imports(path):
            if not target:
                continue
            a, b = (source, target) if level == "module" else (source.split(".")[0], target.split(".")[0])
            if a != b:
                graph.setdefault(a, set()).add(b)
    cycle = _cycle(graph)
    assert cycle is None, f"import cycle between {level}s: {' -> '.join(cycle or [])}"


def test_the_checks_see_what_they_guard() -> None:
    """The graphs above are not empty by accident: known edges are found, and a cycle is seen."""
    assert {"backends", "core.config"} <= set(_imports(ROOT / "zarrcodecs" / "jpeg.py"))
    assert "core.errors" in set(_imports(ROOT / "core" / "config.py"))
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}}) is None
