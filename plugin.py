"""pytest plugin (``pytest11`` entry point): ``--impl``, markers, results file, outcome summary.

Installed plugins load in every pytest session of an environment, so this module
imports no JPEG backend: adapters are loaded only when a test asks for ``impl``.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

import pytest

from .verdict import ConformanceWarning, Outcome, broken, cite

_PACKAGE_DIR = Path(__file__).resolve().parent
_ORDER = [Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.FAIL, Outcome.WARN, Outcome.UNSUPPORTED, Outcome.PASS]
_STATE = pytest.StashKey["_State"]()


class Judge:
    """Collects the outcome of one test of one implementation on one case."""

    def __init__(self, implementation: str, case: str, requirements: Sequence[str], level: str) -> None:
        self.implementation = implementation
        self.case = case
        self.requirements = list(requirements)
        self.level = level
        self.metrics: dict[str, float | int | str] = {}
        self.outcome = Outcome.PASS
        self.messages: list[str] = []

    def _worse(self, outcome: Outcome) -> None:
        if _ORDER.index(outcome) < _ORDER.index(self.outcome):
            self.outcome = outcome

    def cite(self, requirement: str) -> None:
        """Add a requirement this test also rests on."""
        if requirement not in self.requirements:
            self.requirements.append(requirement)

    def require(self, ok: bool, requirement: str, observed: str, *, level: str | None = None) -> None:
        """Judge one check: a broken MUST fails now, a broken SHOULD warns and goes on."""
        if ok:
            return
        from .corpus import requirements

        req = requirements().get(requirement)
        outcome = broken(level or (req.level if req else "MUST"))
        self.cite(requirement)
        self.finish(outcome, f"{cite(requirement)}\n    observed: {observed}")

    def finish(self, outcome: Outcome, message: str) -> None:
        """Record an outcome; FAIL/ERROR end the test, UNSUPPORTED skips it, WARN warns."""
        self._worse(outcome)
        self.messages.append(f"{outcome.value}: {message}")
        if outcome in (Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT):
            _fail(f"{self.implementation} / {self.case}: {outcome.value.upper()}\n  {message}")
        if outcome is Outcome.UNSUPPORTED:
            pytest.skip(f"unsupported: {self.implementation} / {self.case}: {message}")
        if outcome is Outcome.WARN:
            warnings.warn(ConformanceWarning(f"{self.implementation} / {self.case}: {message}"), stacklevel=3)

    def record(self) -> dict[str, Any]:
        return {
            "implementation": self.implementation,
            "case": self.case,
            "requirements": self.requirements,
            "level": self.level,
            "outcome": self.outcome.value,
            "message": "\n".join(self.messages),
            "metrics": self.metrics,
        }


def _fail(message: str) -> NoReturn:
    pytest.fail(message, pytrace=False)


class _State:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.explicit: list[str] = config.getoption("impl") or []
        self._impls: list[Any] | None = None
        self.unavailable: dict[str, str] = {}
        self.records: list[dict[str, Any]] = []
        path = config.getoption("results")
        self.results: IO[str] | None = open(path, "w", encoding="utf-8") if path else None  # noqa: SIM115

    def implementations(self) -> list[Any]:
        if self._impls is None:
            from .adapters import AdapterLoadError, available_builtins, load_adapter

            if self.explicit:
                impls = []
                for spec in self.explicit:
                    try:
                        impls.append(load_adapter(spec))
                    except AdapterLoadError as exc:
                        raise pytest.UsageError(f"--impl={spec}: {exc}") from exc
                self._impls = impls
            else:
                self._impls = []
                for name, loaded in available_builtins().items():
                    if isinstance(loaded, AdapterLoadError):
                        self.unavailable[name] = str(loaded)
                    else:
                        self._impls.append(loaded)
                if not self._impls:
                    raise pytest.UsageError(
                        "no JPEG implementation is available: install an extra, e.g. "
                        "pip install 'zarr-jpeg-conformance[imagecodecs]', or pass --impl=module:attr\n"
                        + "\n".join(f"  {k}: {v}" for k, v in self.unavailable.items())
                    )
            names = [i.name for i in self._impls]
            dupes = [n for n, c in Counter(names).items() if c > 1]
            if dupes:
                raise pytest.UsageError(f"--impl names must be unique, got {', '.join(dupes)} twice")
        return self._impls

    def write(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        if self.results:
            self.results.write(json.dumps(record, sort_keys=True) + "\n")
            self.results.flush()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("zarr-jpeg-conformance", "Zarr v3 jpeg codec conformance")
    group.addoption(
        "--impl",
        action="append",
        default=[],
        metavar="SPEC",
        help="implementation to test (repeatable): a built-in name (turbojpeg, imagecodecs, pillow), "
        "an entry point of group zarr_jpeg_conformance.adapters, or module:attr. "
        "Default: every built-in adapter whose backend is installed.",
    )
    group.addoption("--results", metavar="PATH", default=None, help="write one JSON object per case and implementation")


def pytest_configure(config: pytest.Config) -> None:
    for level, text in (
        ("must", "checks a MUST / MUST NOT of the spec: a broken check fails"),
        ("should", "checks a SHOULD of the spec: a broken check warns"),
        ("may", "checks an optional feature (MAY): a clean rejection is 'unsupported'"),
    ):
        config.addinivalue_line("markers", f"{level}: {text}")
    config.stash[_STATE] = state = _State(config)
    if state.explicit:
        state.implementations()  # a usage error now, not a skip later


def _runs_our_suites(config: pytest.Config) -> bool:
    if config.getoption("impl"):
        return True
    for arg in config.args or [str(config.rootpath)]:
        if "zarr_jpeg_conformance" in arg:
            return True
        try:
            path = Path(arg.split("::")[0]).resolve()
        except OSError:
            continue
        if path == _PACKAGE_DIR or _PACKAGE_DIR in path.parents or path in _PACKAGE_DIR.parents:
            return True
    return False


def pytest_report_header(config: pytest.Config) -> list[str]:
    if _STATE not in config.stash or not _runs_our_suites(config):
        return []
    state = config.stash[_STATE]
    from . import __version__

    lines = [f"zarr-jpeg-conformance {__version__}: implementations under test"]
    for impl in state.implementations():
        try:
            versions = ", ".join(f"{k} {v}" for k, v in impl.versions().items())
        except Exception as exc:  # noqa: BLE001 - a broken versions() must not hide the run
            versions = f"versions() raised {type(exc).__name__}: {exc}"
        lines.append(f"  {impl.name} [{', '.join(sorted(impl.roles))}]: {versions}")
    for name, reason in state.unavailable.items():
        lines.append(f"  {name}: not available ({reason})")
    return lines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "impl" in metafunc.fixturenames:
        impls = metafunc.config.stash[_STATE].implementations()
        metafunc.parametrize("impl", impls, ids=[i.name for i in impls], scope="module")


@pytest.fixture
def judge(request: pytest.FixtureRequest) -> Iterator[Judge]:
    """The outcome collector of this test; see :class:`Judge`."""
    impl = request.node.funcargs.get("impl")
    case = request.node.funcargs.get("case")
    name = getattr(impl, "name", "-")
    case_id = getattr(case, "id", None) or _case_id(request.node, name)
    reqs = list(getattr(case, "requirements", ()))
    marker = next((m.name.upper() for m in request.node.iter_markers() if m.name in ("must", "should", "may")), "MUST")
    level = getattr(case, "level", marker)
    j = Judge(name, case_id, reqs, level)
    request.node.stash[_JUDGE] = j
    yield j


_JUDGE = pytest.StashKey[Judge]()


def _case_id(item: pytest.Item, impl_name: str) -> str:
    """A stable, implementation-free case ID for a generated test: ``roundtrip.shape[gray-16x48]``."""
    module = item.module.__name__.rsplit(".", 1)[-1].removeprefix("test_") if item.module else "suite"
    func = item.originalname.removeprefix("test_") if isinstance(item, pytest.Function) else item.name
    callspec = getattr(item, "callspec", None)
    params = [p for p in (callspec.id.split("-") if callspec else []) if p != impl_name]
    return f"{module}.{func}" + (f"[{'-'.join(params)}]" if params else "")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    j = item.stash.get(_JUDGE, None)
    if j is None or report.when != "call":
        return
    if report.failed and j.outcome is Outcome.PASS:
        # The test itself raised: an error of the implementation (or of the suite).
        j.outcome = Outcome.ERROR
        j.messages.append(f"error: {call.excinfo.exconly() if call.excinfo else report.longreprtext}"[:4000])
    record = j.record()
    record["test"] = item.nodeid
    item.config.stash[_STATE].write(record)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if not state or not state.records:
        return
    counts: dict[str, Counter[str]] = {}
    for r in state.records:
        counts.setdefault(r["implementation"], Counter())[r["outcome"]] += 1
    terminalreporter.section("zarr-jpeg-conformance outcomes")
    for impl, c in counts.items():
        parts = ", ".join(f"{c[o.value]} {o.value}" for o in reversed(_ORDER) if c[o.value])
        terminalreporter.write_line(f"{impl}: {parts}")
    if state.results:
        terminalreporter.write_line(f"results: {state.results.name}")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state and state.results:
        state.results.close()


