"""pytest plugin (``pytest11`` entry point): ``--impl``, markers, results file, outcome summary.

Also ``--isolate`` (every implementation in its own harness process, so a crash or a hang
becomes that case's outcome instead of the session's end), ``--max-timeouts`` (after so many
timeouts of one op, a harness's later calls of it are not tried: :mod:`.timeout_budget`) and
``--known-failures`` (an implementer's list of cases it is known to fail, checked strictly).

Ctrl-C stops the run: the results written so far stay in the results file and the
summary says the run was interrupted. A ``KeyboardInterrupt`` that no Ctrl-C caused (the
code under test raised it) is that case's ``error`` instead, and the run goes on; the
plugin tells the two apart by watching SIGINT (:class:`_Interrupts`).

Installed plugins load in every pytest session of an environment, so this module
imports no JPEG backend: adapters are loaded only when a test asks for ``impl``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import signal
import sys
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pytest

from .known_failures import KnownFailuresWarning, load_known_failures
from .timeout_budget import DEFAULT_MAX_TIMEOUTS, TimeoutBudget
from .verdict import MAX_MESSAGE, MAX_TEXT, ORDER, Judge, Outcome, clip

if TYPE_CHECKING:
    from pluggy import Result

_PACKAGE_DIR = Path(__file__).resolve().parent
_STATE = pytest.StashKey["_State"]()
#: Outcomes a known-failure entry expects (the test shows as xfail). ``unsupported`` is no
#: failure but no pass either: it stays a skip. A pass is an unexpected pass.
_FAILING = frozenset({Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.WARN})
#: Default address-space limit of a harness process (--harness-memory), in MiB.
_DEFAULT_MEMORY_MIB = 2048
#: ``format_version`` of every line of a results file (schema/results.schema.json).
RESULTS_FORMAT_VERSION = 1


def _seconds(text: str) -> float:
    """--harness-timeout: a finite number of seconds above 0 (0 and nan used to mean 60 s and a crash)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, got {text!r}")
    return value


def _whole(unit: str, zero: str) -> Callable[[str], int]:
    """An option's type: a whole number of ``unit``, 0 for ``zero`` (a negative one is refused, not taken for 0)."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            expected = f"expected a whole number of {unit} (0 for {zero}), got {text!r}"
            raise argparse.ArgumentTypeError(expected) from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"must be 0 ({zero}) or a positive number of {unit}, got {text!r}")
        return value

    return whole


#: --harness-memory (a negative number used to mean no limit) and --max-timeouts.
_mebibytes = _whole("MiB", "no limit")
_timeouts = _whole("timeouts", "no budget")


class ImplementationInterrupt(RuntimeError):
    """The code under test raised KeyboardInterrupt although nobody pressed Ctrl-C: its error."""


class _Interrupts:
    """Tells the user's Ctrl-C from a ``KeyboardInterrupt`` that the code under test raises.

    Python turns SIGINT into KeyboardInterrupt in its handler; wrapping that handler marks
    every real Ctrl-C. A KeyboardInterrupt without one was raised by code, as is every one
    while SIGINT is ignored. Where another handler is in place (the plugin loaded outside
    the main thread, or an implementation replaced it), every KeyboardInterrupt counts as
    the user's: stopping is the safe mistake.
    """

    def __init__(self) -> None:
        self.pressed = False
        self._previous: Any = None

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGINT)
        if callable(previous):
            self._previous = previous
            signal.signal(signal.SIGINT, self._handler)

    def uninstall(self) -> None:
        if self._watching():
            signal.signal(signal.SIGINT, self._previous)

    def _handler(self, signum: int, frame: Any) -> None:
        __tracebackhide__ = True  # pytest shows where the run was, not this frame
        self.pressed = True
        self._previous(signum, frame)

    def _watching(self) -> bool:
        return self._previous is not None and signal.getsignal(signal.SIGINT) == self._handler

    def users(self) -> bool:
        """Whether a KeyboardInterrupt seen now is (or may be) the user's Ctrl-C."""
        if self.pressed:
            return True
        if self._watching():
            return False
        # SIGINT ignored (a background job) or fatal: no Ctrl-C raises KeyboardInterrupt.
        # Someone else's handler: no telling.
        return signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, signal.SIG_DFL)


def _open_results(path: str) -> IO[str]:
    """The results file, opened for writing; a usage error, in one line, when it cannot be."""
    if os.path.isdir(path):
        raise pytest.UsageError(f"--results {path}: a folder; give the path of a file (e.g. {os.path.join(path, 'results.jsonl')})")
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise pytest.UsageError(f"--results {path}: cannot write it: {exc.strerror or exc}") from None


class _State:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.explicit: list[str] = config.getoption("impl") or []
        self._impls: list[Any] | None = None
        self.unavailable: dict[str, str] = {}
        self.records: list[dict[str, Any]] = []
        #: Preconditions that failed, by key: the case that became their root (judging.roots).
        self.roots: dict[tuple[str, ...], str] = {}
        path = config.getoption("results")
        self.isolate: bool = config.getoption("isolate")
        self.harness_timeout: float | None = config.getoption("harness_timeout")
        memory_mib: int = config.getoption("harness_memory")
        self.harness_memory: int | None = memory_mib << 20 if memory_mib > 0 else None
        #: The node ID and judge of the test running now (the timeout budget blocks that case).
        self.running: tuple[str, Judge] | None = None
        #: The case ID of every test that had a judge, by node ID (harness incidents name node IDs).
        self.case_of: dict[str, str] = {}
        self.budget = TimeoutBudget(config.getoption("max_timeouts"), lambda: self.running, self.case_of)
        #: Node IDs of the collected tests that judge a case (the rest are not conformance cases).
        self.cases: set[str] = set()
        self.interrupts = _Interrupts()
        #: Set when the session ends by a KeyboardInterrupt (pytest_keyboard_interrupt).
        self.interrupted = False
        #: Harness processes this session started (closed at the end).
        self.harnesses: list[Any] = []
        self.known = load_known_failures(config.getoption("known_failures") or [])
        self.results: IO[str] | None = _open_results(path) if path else None

    def _exec(self, command: str | list[str], spec: str) -> Any:
        """Start a harness process; AdapterLoadError with the harness's reason if it cannot start."""
        from ..adapters import AdapterLoadError, _instantiate
        from ..adapters.remote import DEFAULT_TIMEOUT, ExecAdapter
        from ..harnesses import address_space_limit

        try:
            argv = shlex.split(command) if isinstance(command, str) else command
            # A shipped harness that cannot run under an address-space limit (a browser) gets none.
            memory = address_space_limit(argv, self.harness_memory)
            adapter = ExecAdapter(command, timeout=self.harness_timeout or DEFAULT_TIMEOUT, memory_limit=memory)
        except (OSError, RuntimeError) as exc:
            raise AdapterLoadError(f"{spec!r} could not start its harness: {type(exc).__name__}: {clip(str(exc), MAX_TEXT)}") from exc
        self.harnesses.append(adapter)
        self.budget.watch(adapter)
        return _instantiate(adapter, spec)  # the same checks of name and roles as in-process adapters

    def _load(self, spec: str) -> Any:
        from ..adapters import load_adapter

        if spec.startswith("exec:"):
            return self._exec(spec.removeprefix("exec:"), spec)
        if self.isolate:
            # The same spec, loaded by a child Python: the implementation keeps its name.
            return self._exec([sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server", spec], spec)
        return load_adapter(spec)

    def implementations(self) -> list[Any]:
        if self._impls is None:
            from ..adapters import BUILTINS, AdapterLoadError, available_builtins

            if not self.explicit and self.config.getoption("corpus_checks", "run") == "only":
                self._impls = []  # only tests that take none will run
            elif self.explicit:
                impls = []
                for spec in self.explicit:
                    try:
                        impls.append(self._load(spec))
                    except AdapterLoadError as exc:
                        raise pytest.UsageError(f"--impl={spec}: {exc}") from exc
                self._impls = impls
            else:
                self._impls = []
                candidates: dict[str, Any] = {}
                if self.isolate:
                    for name in BUILTINS:
                        try:
                            candidates[name] = self._load(name)
                        except AdapterLoadError as exc:
                            candidates[name] = exc
                else:
                    candidates = dict(available_builtins())
                for name, loaded in candidates.items():
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
            record = self.config.getoption("record_calls", None)
            if record:
                from .recording import Recorder

                self._impls = [Recorder(i, Path(record)) for i in self._impls]
            names = [i.name for i in self._impls]
            dupes = [n for n, c in Counter(names).items() if c > 1]
            if dupes:
                raise pytest.UsageError(f"--impl names must be unique, got {', '.join(dupes)} twice")
        return self._impls

    def loaded(self) -> list[Any]:
        """The implementations loaded so far (none are loaded just to say so)."""
        return list(self._impls or [])

    def write(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        if self.results:
            self.results.write(json.dumps(record, sort_keys=True) + "\n")
            self.results.flush()


#: States of the sessions running in this process, innermost last (pytester runs sessions in sessions).
_LIVE: list[_State] = []


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
    group.addoption(
        "--isolate",
        action="store_true",
        default=False,
        help="run every implementation in its own harness process (python -m zarr_jpeg_conformance.harnesses.server "
        "SPEC): a segfault, a hang or runaway memory becomes a 'crash' or 'timeout' outcome of that case, and the "
        "process is restarted for the next one",
    )
    group.addoption(
        "--harness-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="seconds one call to a harness process (--isolate, exec:) may take before it is killed (default 60)",
    )
    group.addoption(
        "--harness-memory",
        type=_mebibytes,
        default=_DEFAULT_MEMORY_MIB,
        metavar="MIB",
        help=f"address-space limit of each harness process in MiB, 0 for none (default {_DEFAULT_MEMORY_MIB})",
    )
    group.addoption(
        "--max-timeouts",
        type=_timeouts,
        default=DEFAULT_MAX_TIMEOUTS,
        metavar="N",
        help="after N timeouts of one op (parse, encode, decode, build) of a harness process, the implementation's "
        "later cases that need that op are blocked by the first timeout, not tried; 0 for no budget "
        f"(default {DEFAULT_MAX_TIMEOUTS})",
    )
    group.addoption(
        "--corpus-checks",
        choices=("run", "skip", "only"),
        default="run",
        help="the suites' tests that take no implementation (the schema and store corpus checks): run them "
        "(default), skip them, or run only them. The report runs them once, not once per implementation",
    )
    group.addoption(
        "--record-calls",
        default=None,
        metavar="DIR",
        help="write every parse, encode and decode call of each case to DIR/<case>/ (the codec object, the chunk, the "
        "stream, what came back; judging/recording.py): what report repro puts in a finding's reproducer",
    )
    group.addoption(
        "--known-failures",
        action="append",
        default=[],
        metavar="FILE",
        help='cases an implementation is known to fail (repeatable), a JSON file: {"implementation": NAME, '
        '"known_failures": [{"case": CASE_ID, "reason": TEXT, "issue": URL}]}. Listed failures show as xfail; '
        "a listed case that passes fails the run",
    )


def pytest_configure(config: pytest.Config) -> None:
    for level, text in (
        ("must", "checks a MUST / MUST NOT of the spec: a broken check fails"),
        ("should", "checks a SHOULD of the spec: a broken check warns"),
        ("may", "checks an optional feature (MAY): a clean rejection is 'unsupported'"),
    ):
        config.addinivalue_line("markers", f"{level}: {text}")
    config.addinivalue_line(
        "markers",
        "roles(*roles): the test needs these adapter roles (encode, decode, build); an implementation "
        "without them is not parametrized, since the case does not apply to it",
    )
    config.stash[_STATE] = state = _State(config)
    state.interrupts.install()
    _LIVE.append(state)
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
    from .. import __version__

    lines = [f"zarr-jpeg-conformance {__version__}: implementations under test"]
    for impl in state.implementations():
        try:
            versions = ", ".join(f"{k} {v}" for k, v in impl.versions().items())
        except Exception as exc:  # noqa: BLE001 - a broken versions() must not hide the run
            versions = f"versions() raised {type(exc).__name__}: {exc}"
        lines.append(f"  {impl.name} [{', '.join(sorted(impl.roles))}]: {clip(versions, MAX_TEXT)}")
    for name, reason in state.unavailable.items():
        lines.append(f"  {name}: not available ({reason})")
    if state.harnesses:
        memory = f"{state.harness_memory >> 20} MiB" if state.harness_memory else "unlimited"
        lines.append(f"  harness processes: {', '.join(h.name for h in state.harnesses)} "
                     f"(timeout {state.harnesses[0].timeout:g} s per call, address space {memory})")
    for path in dict.fromkeys(k.file for k in state.known.values()):
        entries = [k for k in state.known.values() if k.file == path]
        lines.append(f"  known failures of {entries[0].implementation}: {path} ({len(entries)} listed)")
    return lines


def implementations(config: pytest.Config) -> list[Any]:
    """The implementations under test in this session (for suites that pair them up)."""
    return list(config.stash[_STATE].implementations())


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "impl" in metafunc.fixturenames:
        impls = metafunc.config.stash[_STATE].implementations()
        needed = {role for m in metafunc.definition.iter_markers("roles") for role in m.args}
        # A decode-only implementation is not asked to encode: such cases do not apply to it,
        # and counting them as 'unsupported' would blur what it does support.
        applicable = [i for i in impls if needed <= set(i.roles)]
        params = [pytest.param(i, id=i.name) for i in applicable] or [
            pytest.param(None, id="no-implementation", marks=pytest.mark.skip(
                reason=f"no implementation under test has the role(s) {', '.join(sorted(needed))}"))
        ]
        metafunc.parametrize("impl", params, scope="module")


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
    state = request.config.stash[_STATE]
    j = Judge(name, case_id, reqs, level, roots=state.roots)
    request.node.stash[_JUDGE] = j
    if hasattr(impl, "incidents"):
        request.node.stash[_INCIDENTS] = len(impl.incidents)
        impl.context = request.node.nodeid
    log = getattr(impl, "given_log", None)
    if log is not None:
        request.node.stash[_GIVEN] = log.count
    if hasattr(impl, "start_case"):  # --record-calls
        impl.start_case(case_id)
    state.case_of[request.node.nodeid] = case_id
    state.running = (request.node.nodeid, j)
    try:
        yield j
    finally:
        state.running = None


_JUDGE = pytest.StashKey[Judge]()
#: How many codec objects the implementation's adapter had mapped to its codec's own before this test (GivenLog.count).
_GIVEN = pytest.StashKey[int]()
#: How many of them a results line names at most.
GIVEN_KEPT = 8
#: How many harness incidents (crashes, timeouts) the implementation had before this test.
_INCIDENTS = pytest.StashKey[int]()


def _case_id(item: pytest.Item, impl_name: str) -> str:
    """A stable, implementation-free case ID for a generated test: ``roundtrip.shape[gray-16x48]``."""
    mod = getattr(item, "module", None)  # test functions have one; other kinds of item need not
    module = mod.__name__.rsplit(".", 1)[-1].removeprefix("test_") if mod else "suite"
    func = item.originalname.removeprefix("test_") if isinstance(item, pytest.Function) else item.name
    callspec = getattr(item, "callspec", None)
    params = callspec.id.split("-") if callspec else []
    # The implementation's ID is one parameter, and may itself contain "-" (node-jpeg-js).
    name = impl_name.split("-")
    for i in range(len(params) - len(name) + 1):
        if params[i : i + len(name)] == name:
            del params[i : i + len(name)]
            break
    return f"{module}.{func}" + (f"[{'-'.join(params)}]" if params else "")


def _given(item: pytest.Item) -> list[dict[str, Any]]:
    """What the implementation's codec was given for the codec objects this test parsed (adapters.zarr_codecs.GivenLog):
    a row whose adapter or harness maps the spec's codec object to its codec's own shows it on every line."""
    impl = getattr(item, "funcargs", {}).get("impl")
    log = getattr(impl, "given_log", None)
    start = item.stash.get(_GIVEN, None)
    return [] if log is None or start is None else log.since(start)[:GIVEN_KEPT]


def _harness_outcome(item: pytest.Item, call: pytest.CallInfo[None]) -> tuple[Outcome, str] | None:
    """CRASH or TIMEOUT if the implementation's process died or hung during this test.

    Suites catch the exception (``verdict.attempt`` makes it an error), so the adapter's
    incident log is the reliable witness; an exception escaping the test is checked too.
    """
    impl = getattr(item, "funcargs", {}).get("impl")
    incidents = [
        exc
        for exc in list(getattr(impl, "incidents", None) or ())[item.stash.get(_INCIDENTS, 0) :]
        if getattr(exc, "context", item.nodeid) == item.nodeid
    ]
    exc: BaseException | None = call.excinfo.value if call.excinfo else None
    while exc is not None and exc not in incidents:
        incidents.append(exc)
        exc = exc.__cause__ or exc.__context__
    for kind in (Outcome.CRASH, Outcome.TIMEOUT):
        for incident in incidents:
            if getattr(incident, "outcome", None) == kind.value:
                return kind, f"{type(incident).__name__}: {incident}"
    return None


def _guard_interrupts(item: pytest.Item) -> Generator[None, object, object]:
    """Around a test's setup and call: a KeyboardInterrupt without a Ctrl-C is the code's error.

    And a Ctrl-C that the code under test swallowed (``except BaseException``) still stops
    the run once the call returns.
    """
    __tracebackhide__ = True
    state = item.config.stash.get(_STATE, None)
    if state is None:
        return (yield)
    try:
        result = yield
    except KeyboardInterrupt as exc:
        if state.interrupts.users():
            raise
        raise ImplementationInterrupt(
            "KeyboardInterrupt raised by the code under test, not by a Ctrl-C: an error of the implementation "
            "(a Ctrl-C stops the run instead)") from exc
    except BaseException:
        if state.interrupts.pressed:
            raise KeyboardInterrupt from None
        raise
    if state.interrupts.pressed:
        raise KeyboardInterrupt
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _guard_interrupts(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _guard_interrupts(item))


def pytest_keyboard_interrupt(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    # The hook is given no config: the session interrupted is the innermost one running.
    if _LIVE:
        _LIVE[-1].interrupted = True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.failed and len(report.longreprtext) > MAX_MESSAGE:
        # An implementation's giant exception text, escaping the test, must not flood the terminal.
        report.longrepr = clip(report.longreprtext)
    j = item.stash.get(_JUDGE, None)
    if j is None and not report.skipped and (report.when == "call" or (report.when == "setup" and report.failed)) and _corpus_check(item):
        # Recorded too, as implementation "-", so that a report shows the corpus's own checks.
        item.config.stash[_STATE].write(_corpus_record(item, report))
        return
    if j is None or report.when != "call":
        return
    if report.skipped and j.outcome is Outcome.PASS:
        # Skipped by the suite itself, not by a verdict: no outcome to record (recording
        # "pass" would claim a check that never ran). The summary counts such skips.
        return
    if report.failed and j.outcome is Outcome.PASS:
        # The test itself raised: an error of the implementation (or of the suite).
        j.outcome = Outcome.ERROR
        j.messages.append(clip(f"error: {call.excinfo.exconly() if call.excinfo else report.longreprtext}"))
    # A blocked case's crash or timeout came from probing what it stands on (a valid twin, a
    # precondition): the root case shows it, this one stays blocked.
    harness = _harness_outcome(item, call) if j.outcome is not Outcome.BLOCKED else None
    if harness is not None:
        # The suite saw an exception; the cause is the process dying or hanging.
        j.outcome, text = harness
        j.messages.insert(0, clip(f"{j.outcome.value}: {text}"))
        report.outcome = "failed"
        report.longrepr = clip(f"{j.implementation} / {j.case}: {j.outcome.value.upper()}\n  {text}")
    state = item.config.stash[_STATE]
    record = j.record()
    record["test"] = item.nodeid
    given = _given(item)
    if given:
        record["given"] = given
    record["format_version"] = RESULTS_FORMAT_VERSION
    known = state.known.get((j.implementation, j.case))
    if known is not None:
        record["known"] = True
        if j.outcome in _FAILING:
            report.outcome = "skipped"
            report.wasxfail = f"known failure ({known.file}): {known.reason}" + (f" {known.issue}" if known.issue else "")
        elif j.outcome is Outcome.PASS:
            text = (f"unexpected pass: {j.case} is listed for {j.implementation} in {known.file} as a known failure "
                    f"({known.reason}), but its outcome is {j.outcome.value}: remove it from {known.file}")
            record["message"] = "\n".join([*j.ordered_messages(), text])
            report.outcome = "failed"
            report.longrepr = text
        # UNSUPPORTED: a clean refusal of an optional feature is neither the listed failure
        # nor a pass; it stays a skip, and the summary counts it apart.
    state.write(record)


_SUITES_DIR = _PACKAGE_DIR.parent / "suites"


def _corpus_check(item: pytest.Item) -> bool:
    """A test of this package's suites that takes no implementation: a check of the corpus itself."""
    if "impl" in getattr(item, "fixturenames", ()):
        return False
    try:
        return Path(item.path).resolve().parent == _SUITES_DIR
    except (OSError, AttributeError):
        return False


def _select_corpus_checks(config: pytest.Config, items: list[pytest.Item]) -> None:
    """--corpus-checks skip / only: deselect the corpus checks, or everything else."""
    mode = config.getoption("corpus_checks", "run")
    if mode == "run":
        return
    keep = [i for i in items if _corpus_check(i) == (mode == "only")]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep


def _corpus_record(item: pytest.Item, report: pytest.TestReport) -> dict[str, Any]:
    """The results line of a corpus check: implementation "-", the outcome pytest gave it."""
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("case") if callspec else None
    get = case.get if isinstance(case, dict) else lambda key, default: getattr(case, key, default)
    outcome = Outcome.PASS if report.passed else Outcome.FAIL if report.when == "call" else Outcome.ERROR
    text = "" if report.passed else clip(f"{outcome.value}: {report.longreprtext}")
    return {
        "implementation": "-",
        "case": _case_id(item, "-"),
        "requirements": list(get("requirements", ()) or ()),
        "level": str(get("level", "MUST") or "MUST"),
        "outcome": outcome.value,
        "message": text,
        "metrics": {},
        "test": item.nodeid,
        "format_version": RESULTS_FORMAT_VERSION,
    }


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Note the tests that judge a case; warn about known-failure entries that match no
    collected case (before -k/-m deselect)."""
    state = config.stash.get(_STATE, None)
    _select_corpus_checks(config, items)
    if state:
        state.cases.update(i.nodeid for i in items if "judge" in getattr(i, "fixturenames", ()) or _corpus_check(i))
    if not state or not state.known:
        return
    collected: dict[str, set[str]] = {}
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or "impl" not in callspec.params or "judge" not in getattr(item, "fixturenames", ()):
            continue
        name = getattr(callspec.params["impl"], "name", "-")
        case = getattr(callspec.params.get("case"), "id", None) or _case_id(item, name)
        collected.setdefault(name, set()).add(case)
    for path in dict.fromkeys(k.file for k in state.known.values()):
        entries = [k for k in state.known.values() if k.file == path]
        impl = entries[0].implementation
        if impl not in collected:
            warnings.warn(KnownFailuresWarning(
                f"{path}: implementation {impl!r} has no collected case (under test: "
                f"{', '.join(sorted(collected)) or 'none'}); its {len(entries)} entries were not checked"), stacklevel=1)
            continue
        stale = [k.case for k in entries if k.case not in collected[impl]]
        if stale:
            warnings.warn(KnownFailuresWarning(
                f"{path}: {len(stale)} case ID(s) of {impl!r} match no collected case (stale entries, or their suites "
                f"were not collected): {', '.join(stale)}"), stacklevel=1)


#: pytest's categories of the final summary line that count tests (not warnings, not deselected).
_PYTEST_KEYS = ("failed", "passed", "skipped", "xfailed", "xpassed", "error")
#: Why a test counted in one of pytest's categories has this outcome (or none), in display order.
_WHY = {
    **{o.value: (o.value, o.value) for o in reversed(ORDER)},
    "known": ("known failure", "known failures"),
    "unexpected": ("unexpected pass of a known failure", "unexpected passes of known failures"),
    "no-impl": ("with no implementation that has the roles it needs", "with no implementation that has the roles they need"),
    "suite-skip": ("skipped by the suite, no outcome", "skipped by the suite, no outcome"),
    "collect": ("module skipped at collection", "modules skipped at collection"),
    "not-run": ("skipped before its case ran", "skipped before their cases ran"),
    "phase": ("in setup, teardown or collection, no outcome", "in setup, teardown or collection, no outcome"),
    "other": ("not a conformance case", "not conformance cases"),
}


def _why(key: str, report: Any, record: dict[str, Any] | None, cases: set[str]) -> str:
    if record is not None:
        if record.get("known") and key == "xfailed":
            return "known"
        if record.get("known") and key == "failed" and record["outcome"] == Outcome.PASS.value:
            return "unexpected"
        return str(record["outcome"])
    if key == "error":
        return "phase"
    when = getattr(report, "when", "collect")
    if key == "skipped" and when == "collect":
        return "collect"
    if report.nodeid not in cases:
        return "other"
    if key == "skipped":
        if "[no-implementation" in report.nodeid or "-no-implementation" in report.nodeid:
            return "no-impl"
        return "suite-skip" if when == "call" else "not-run"
    return "other"


def reconcile(stats: dict[str, list[Any]], records: list[dict[str, Any]], cases: set[str]) -> str:
    """pytest's totals explained by outcomes: '150 passed (148 pass, 2 warn); 12 skipped (10 unsupported, ...)'.

    pytest counts tests by how they ended; the outcome line counts verdicts. Every test in
    pytest's totals is one of the parts, so the two always add up. ``cases``: node IDs of the
    tests that judge a case (the others are not conformance cases).
    """
    by_test = {r["test"]: r for r in records}
    order = list(_WHY)
    parts = []
    for key in _PYTEST_KEYS:
        reports = [r for r in stats.get(key, []) if getattr(r, "count_towards_summary", True)]
        if not reports:
            continue
        why = Counter(_why(key, r, by_test.get(r.nodeid) if getattr(r, "when", None) == "call" else None, cases)
                      for r in reports)
        inner = ", ".join(f"{n} {_WHY[w][n != 1]}" for w, n in sorted(why.items(), key=lambda kv: order.index(kv[0])))
        parts.append(f"{len(reports)} {key} ({inner})")
    return "pytest's totals: " + ("; ".join(parts) if parts else "no tests ran")


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if not state or not (state.records or state.explicit):
        return
    # Every implementation under test has a line, one without outcomes too.
    only_corpus = config.getoption("corpus_checks", "run") == "only"
    counts: dict[str, Counter[str]] = {} if only_corpus else {i.name: Counter() for i in state.loaded()}
    for r in state.records:
        counts.setdefault(r["implementation"], Counter())[r["outcome"]] += 1
    terminalreporter.section("zarr-jpeg-conformance outcomes")
    if state.interrupted:
        terminalreporter.write_line(
            f"run interrupted (Ctrl-C): the outcomes below are the {len(state.records)} cases that finished"
            + (f", all kept in {state.results.name}" if state.results else ""), yellow=True, bold=True)
    for impl, c in counts.items():
        parts = ", ".join(f"{c[o.value]} {o.value}" for o in reversed(ORDER) if c[o.value]) or "no outcomes"
        known = [Outcome(r["outcome"]) for r in state.records if r["implementation"] == impl and r.get("known")]
        if known:
            unexpected = sum(1 for o in known if o is Outcome.PASS)
            parts += f" (known failures: {sum(1 for o in known if o in _FAILING)}, unexpected passes: {unexpected}"
            unsupported = sum(1 for o in known if o is Outcome.UNSUPPORTED)
            if unsupported:
                parts += f", listed but unsupported: {unsupported}, a clean refusal, not a failure: the entries are not needed"
            parts += ")"
        terminalreporter.write_line(f"{'tests that take no implementation' if impl == '-' else impl}: {parts}")
    for line in state.budget.summary({r["test"]: r["outcome"] for r in state.records if "test" in r}):
        terminalreporter.write_line(line, yellow=True)
    terminalreporter.write_line(reconcile(terminalreporter.stats, state.records, state.cases))
    if state.results:
        terminalreporter.write_line(f"results: {state.results.name}")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    state.interrupts.uninstall()
    if state in _LIVE:
        _LIVE.remove(state)
    if state.results:
        state.results.close()
    for harness in state.harnesses:
        harness.close()
