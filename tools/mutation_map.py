"""Which meta-tests run which functions: the table that lets each mutant run only the tests that can kill it.

    python -m zarr_jpeg_conformance.tools.mutate map

runs ``tests/`` once under coverage, with the test's node ID as coverage context, in this
process and in every Python subprocess the tests start (``pytester.runpytest_subprocess``,
``--isolate``, harness servers), and writes ``tests/mutation-map.json``: for every function
of the mutated packages (``tools.mutants.TARGETS``, ``file::qualname``), the tests that executed a
line of it, and for every test its duration. A parametrized test whose every case ran a
function is listed once, by its function's node ID. ``mutate map tests/test_x.py``
measures only the tests given and replaces theirs in the table. Tests that did not pass are left out (a mutant cannot be
"killed" by a test that fails anyway). Keyed by qualified names, the table survives edits
that move lines; a function it does not know yet falls back to its module's tests.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .mutants import TARGETS, functions

MAP_FILE = "tests/mutation-map.json"
#: Coverage context of the setup of a fixture wider than one test (see :class:`_Contexts`).
FIXTURE_CONTEXT = "fixture:"
_PARAMS = re.compile(r"\[.*\]$")


def _fixture_context(fixturedef: Any) -> str:
    return f"{FIXTURE_CONTEXT}{fixturedef.baseid}::{fixturedef.argname}"


class _Contexts:
    """pytest plugin: one coverage context per test, handed down to subprocesses too.

    A fixture wider than one test (module or session scope) is set up once, inside whichever
    of its tests runs first, yet a mutant run picks its tests alone, and each sets the fixture
    up again: the setup gets a context of its own, charged to every test that uses it, and so does
    its time (:attr:`fixture_seconds`, taken out of the test it happened to be set up in). Charged to
    that one test, a module fixture of minutes made its other tests look free: a mutant's "cheap"
    first stage set the fixture up again and outlasted its timeout, mutant or not.
    """

    def __init__(self, cov: Any) -> None:
        self.cov = cov
        self.durations: dict[str, float] = defaultdict(float)
        self.failed: set[str] = set()
        self.skipped: set[str] = set()
        self.items: list[str] = []
        #: fixture context -> the tests that use the fixture
        self.users: dict[str, set[str]] = defaultdict(set)
        #: the test running, then the wider fixtures being set up inside it (one may need another)
        self._stack: list[str] = []
        #: fixture context -> seconds its own setup took (a wider fixture it needs is timed apart)
        self.fixture_seconds: dict[str, float] = defaultdict(float)
        #: test -> seconds of wider fixtures' setups that ran inside it
        self.inside: dict[str, float] = defaultdict(float)
        #: per level of the stack, the seconds spent setting up the wider fixtures below it
        self._nested: list[float] = []

    def pytest_collection_finish(self, session: Any) -> None:
        self.items = [item.nodeid for item in session.items]
        for item in session.items:
            info = getattr(item, "_fixtureinfo", None)
            for defs in (info.name2fixturedefs.values() if info else ()):
                if defs and defs[-1].scope != "function":
                    self.users[_fixture_context(defs[-1])].add(item.nodeid)

    def _switch(self, context: str) -> None:
        self.cov.switch_context(context)
        if not context:
            os.environ.pop("COVERAGE_PROCESS_CONFIG", None)
            return
        config = copy.copy(self.cov.config)
        config.context = context
        config.parallel = True
        os.environ["COVERAGE_PROCESS_CONFIG"] = config.serialize()

    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Iterator[None]:
        self._stack = [item.nodeid]
        self._nested = [0.0]
        self._switch(item.nodeid)
        try:
            yield
        finally:
            self.inside[item.nodeid] += self._nested[0]
            self._stack = []
            self._nested = []
            self._switch("")

    pytest_runtest_protocol.hookwrapper = True  # type: ignore[attr-defined]

    def pytest_fixture_setup(self, fixturedef: Any, request: Any) -> Iterator[None]:
        shared = fixturedef.scope != "function" and bool(self._stack)
        if shared:
            self._stack.append(_fixture_context(fixturedef))
            self._nested.append(0.0)
            self._switch(self._stack[-1])
        started = time.perf_counter()
        try:
            yield
        finally:
            if shared:
                spent = time.perf_counter() - started
                self.fixture_seconds[self._stack.pop()] += spent - self._nested.pop()
                self._nested[-1] += spent
                self._switch(self._stack[-1])

    pytest_fixture_setup.hookwrapper = True  # type: ignore[attr-defined]

    def pytest_runtest_logreport(self, report: Any) -> None:
        self.durations[report.nodeid] += report.duration
        if report.failed or (report.when == "call" and report.skipped):
            self.failed.add(report.nodeid)
        if report.skipped:
            self.skipped.add(report.nodeid)


def measure(root: Path, pytest_args: list[str]) -> tuple[dict[str, dict[int, set[str]]], _Contexts]:
    """Run the tests under coverage: {relative file: {line: node IDs}} and the plugin's record."""
    import coverage
    import pytest

    workdir = Path(tempfile.mkdtemp(prefix="mutation-map-"))
    cov = coverage.Coverage(
        data_file=str(workdir / ".coverage"), data_suffix=True, config_file=False,
        source=[str(root / t) for t in TARGETS],
    )
    plugin = _Contexts(cov)
    # Temporary folders of its own: pytest's clean-up of the shared ones (other sessions' garbage) must not end the run.
    os.environ["PYTEST_DEBUG_TEMPROOT"] = str(workdir)
    cov.start()
    try:
        pytest.main([*pytest_args, "-p", "no:cacheprovider", "-q"], plugins=[plugin])
    finally:
        cov.stop()
        cov.save()
    cov.combine([str(workdir)])
    data = cov.get_data()
    lines: dict[str, dict[int, set[str]]] = {}
    for filename in data.measured_files():
        try:
            rel = Path(filename).resolve().relative_to(root).as_posix()
        except ValueError:
            continue
        if not rel.startswith(tuple(f"{t}/" for t in TARGETS)) or not rel.endswith(".py"):
            continue
        by_line = data.contexts_by_lineno(filename)
        lines[rel] = {n: {c.rsplit("|", 1)[-1] for c in ctx if c} for n, ctx in by_line.items()}
    return lines, plugin


def _qualname_of(spans: list[tuple[int, int, str]], line: int) -> str:
    inner = [s for s in spans if s[0] <= line <= s[1]]
    return min(inner, key=lambda s: s[1] - s[0])[2] if inner else "<module>"


def _compact(tests: set[str], items_by_function: dict[str, list[str]]) -> list[str]:
    """Node IDs, with a parametrized test named once when all its cases are there."""
    out: set[str] = set()
    for nodeid in tests:
        function = _PARAMS.sub("", nodeid)
        cases = items_by_function.get(function, [])
        out.add(function if cases and all(c in tests for c in cases) else nodeid)
    return sorted(out)


def build(root: Path, pytest_args: list[str] | None = None) -> dict[str, Any]:
    """The table of ``tests/mutation-map.json``, measured now."""
    started = time.monotonic()
    lines, plugin = measure(root, pytest_args or ["tests"])
    passing = {n for n in plugin.items if n not in plugin.failed}
    items_by_function: dict[str, list[str]] = defaultdict(list)
    for nodeid in plugin.items:
        items_by_function[_PARAMS.sub("", nodeid)].append(nodeid)
    by_function: dict[str, set[str]] = defaultdict(set)
    for rel, per_line in sorted(lines.items()):
        spans = functions((root / rel).read_bytes())
        for line, contexts in per_line.items():
            tests = set().union(*(plugin.users.get(c, {c}) for c in contexts)) if contexts else set()
            by_function[f"{rel}::{_qualname_of(spans, line)}"] |= tests & passing
    mapped = {key: _compact(tests, items_by_function) for key, tests in sorted(by_function.items()) if tests}
    used = {t for tests in mapped.values() for t in tests}
    durations: dict[str, float] = {}
    for test in sorted(used):
        cases = items_by_function.get(test) if test not in plugin.durations else None
        # Its own time: a wider fixture set up inside it is charged to all of the fixture's users (below).
        seconds = sum(plugin.durations[c] - plugin.inside[c] for c in cases or [test])
        durations[test] = round(max(seconds, 0.0), 2)
    fixtures = {}
    for context, seconds in sorted(plugin.fixture_seconds.items()):
        users = {t for t in used if t in plugin.users[context] or any(c in plugin.users[context] for c in items_by_function.get(t, []))}
        if users and seconds >= 0.01:
            fixtures[context] = {"seconds": round(seconds, 2), "users": sorted(users)}
    return {
        "about": "Meta-tests that execute each function of the package, measured by coverage "
                 "(python -m zarr_jpeg_conformance.tools.mutate map). Read by the mutation run to "
                 "pick the tests of each mutant; durations (seconds, under coverage) order them.",
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "measured_in_seconds": round(time.monotonic() - started),
        "not_passing": sorted(plugin.failed & set(plugin.items)),
        "skipped": sorted(plugin.skipped & set(plugin.items)),
        "durations": durations,
        "fixtures": fixtures,
        "functions": mapped,
    }


def _skipped_in(new: dict[str, Any]) -> Callable[[str], bool]:
    skipped = set(new.get("skipped", []))
    return lambda test: test in skipped or any(s.startswith(test + "[") for s in skipped)


def keep_skipped(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` with what ``old`` knew of the tests skipped in ``new`` (a harness or backend not installed
    here): their coverage was measured where they ran, and a mutant can still be run against them there."""
    was_skipped = _skipped_in(new)
    kept = {t for tests in old["functions"].values() for t in tests if t not in new["durations"] and was_skipped(t)}
    functions: dict[str, set[str]] = defaultdict(set)
    for key, tests in new["functions"].items():
        functions[key] |= set(tests)
    for key, tests in old["functions"].items():
        functions[key] |= kept & set(tests)
    return {**new, "durations": new["durations"] | {t: old["durations"].get(t, 1.0) for t in kept},
            "fixtures": _merge_fixtures(old.get("fixtures", {}), new.get("fixtures", {}), lambda t: t in kept),
            "functions": {k: sorted(v) for k, v in sorted(functions.items())}}


def _merge_fixtures(old: dict[str, Any], new: dict[str, Any], keep: Callable[[str], bool]) -> dict[str, Any]:
    """``new``'s fixtures, and ``old``'s as far as the tests ``keep`` keeps use them (a new measurement's time wins)."""
    out = {name: {"seconds": f["seconds"], "users": set(f["users"])} for name, f in new.items()}
    for name, f in old.items():
        users = {t for t in f["users"] if keep(t)}
        if users:
            out.setdefault(name, {"seconds": f["seconds"], "users": set()})["users"] |= users
    return {name: {"seconds": f["seconds"], "users": sorted(f["users"])} for name, f in sorted(out.items())}


def _ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 7] -> "1-3,7"."""
    spans: list[tuple[int, int]] = []
    for n in sorted(numbers):
        if spans and spans[-1][1] == n - 1:
            spans[-1] = (spans[-1][0], n)
        else:
            spans.append((n, n))
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


def _numbers(ranges: str) -> list[int]:
    out: list[int] = []
    for part in filter(None, ranges.split(",")):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def write(root: Path, table: dict[str, Any]) -> Path:
    """The table as ``tests/mutation-map.json``: the tests (sorted, with durations) once, then each
    function's tests as ranges of their positions, one function per line."""
    path = root / MAP_FILE
    tests = sorted({t for ids in table["functions"].values() for t in ids})
    index = {t: i for i, t in enumerate(tests)}
    head = {k: v for k, v in table.items() if k not in ("functions", "durations", "skipped", "fixtures")}
    text = json.dumps(head, indent=2)[:-2] + ',\n  "tests": [\n'
    text += ",\n".join(f"    [{json.dumps(t)}, {table['durations'].get(t, 1.0)}]" for t in tests)
    # Wider fixtures: the seconds of one setup, and the tests (positions, as below) that each set it up when run alone.
    text += '\n  ],\n  "fixtures": {\n'
    text += ",\n".join(f"    {json.dumps(k)}: [{f['seconds']}, {json.dumps(_ranges([index[t] for t in f['users'] if t in index]))}]"
                       for k, f in sorted(table.get("fixtures", {}).items()) if any(t in index for t in f["users"]))
    text += '\n  },\n  "functions": {\n'
    text += ",\n".join(f"    {json.dumps(k)}: {json.dumps(_ranges([index[t] for t in v]))}"
                       for k, v in sorted(table["functions"].items()))
    text += "\n  }\n}\n"
    json.loads(text)  # the hand-made layout is still JSON
    path.write_text(text, encoding="utf-8")
    return path


def load(root: Path) -> dict[str, Any]:
    """The table written by :func:`write`, with each function's tests as node IDs again."""
    path = root / MAP_FILE
    if not path.is_file():
        return {"durations": {}, "functions": {}}
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    tests = [t for t, _ in raw.pop("tests")]
    durations = {t: s for t, s in json.loads(path.read_text(encoding="utf-8"))["tests"]}
    raw["functions"] = {k: [tests[i] for i in _numbers(v)] for k, v in raw["functions"].items()}
    raw["fixtures"] = {k: {"seconds": seconds, "users": [tests[i] for i in _numbers(v)]}
                       for k, (seconds, v) in raw.get("fixtures", {}).items()}
    raw["durations"] = durations
    return raw


def merge(old: dict[str, Any], new: dict[str, Any], measured: list[str]) -> dict[str, Any]:
    """``old`` with the tests of the files in ``measured`` replaced by their new measurement."""
    files = tuple(a.split("::")[0] for a in measured if not a.startswith("-"))
    was_skipped = _skipped_in(new)
    functions: dict[str, set[str]] = defaultdict(set)
    # A test skipped here keeps what it was measured to run where it ran (see keep_skipped).
    for table, keep in ((old, lambda t: not t.startswith(files) or was_skipped(t)), (new, lambda t: True)):
        for key, tests in table["functions"].items():
            functions[key] |= {t for t in tests if keep(t)}
    durations = {t: s for t, s in old["durations"].items() if not t.startswith(files) or was_skipped(t)} | new["durations"]
    not_passing = sorted({t for t in old.get("not_passing", []) if not t.startswith(files)} | set(new["not_passing"]))
    fixtures = _merge_fixtures(old.get("fixtures", {}), new.get("fixtures", {}), lambda t: not t.startswith(files) or was_skipped(t))
    return {**old, "not_passing": not_passing, "durations": durations, "fixtures": fixtures,
            "functions": {k: sorted(v) for k, v in functions.items() if v}}
