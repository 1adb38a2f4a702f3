"""Mutation testing of the checks: does a meta-test of ``tests/`` notice each deliberately broken check?

    python -m zarr_jpeg_conformance.tools.mutate                       # every mutant
    python -m zarr_jpeg_conformance.tools.mutate --sample 12 --seed 18 # the fixed sample CI runs
    python -m zarr_jpeg_conformance.tools.mutate --only core/markers.py
    python -m zarr_jpeg_conformance.tools.mutate --sample 400 --seed 49 --changed-since REV  # a sample of new code
    python -m zarr_jpeg_conformance.tools.mutate list                  # the mutants, with their keys
    python -m zarr_jpeg_conformance.tools.mutate map                   # remeasure tests/mutation-map.json
    python -m zarr_jpeg_conformance.tools.mutate sample --sample 12 --seed 18  # record the CI sample's keys

A long sample is run in sittings: ``--results FILE`` records each mutant's result and takes up the ones
whose fingerprint still holds. ``tests/mutation-sample-results.jsonl.gz`` is the last sitting of the
400-mutant sample over the whole product (``--sample 400 --seed 4242``): ``gunzip -k`` it and pass the
``.jsonl`` as ``--results`` to go on from there.

Every mutant of ``suites/``, ``core/``, ``judging/``, ``report/``, ``check_store/``, ``adapters/``,
``protocol/`` and ``zarrcodecs/`` (``tools.mutants.TARGETS``) is applied, one
at a time, to a private copy of the package, and only the meta-tests that execute the
mutated function (``tests/mutation-map.json``, measured by coverage) are run against it,
cheapest first, stopping at the first failure. A mutant is *killed* when a test fails
(or the run exceeds its timeout), and *survives* when every test passes: then no
meta-test proves the check it broke. A survivor that cannot change any outcome is listed,
with the reason, in ``tests/mutation-equivalents.json`` and counted apart; the others are
printed with where they are, the mutation and the tests that ran. The exit status is 1
when any unlisted mutant survives.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import itertools
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import mutation_map
from .mutants import Mutant, all_mutants, function_names, module_closure, names_bound, names_used

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS_FILE = "tests/mutation-equivalents.json"
SAMPLE_FILE = "tests/mutation-sample.json"
#: Test files that run none of the package's code (mypy and ruff; a wheel build): not measured.
NOT_MAPPED = ("test_wheel.py", "test_static.py")
#: Tests that run the package only in copies (the CI sample of mutants): not measured either.
NOT_MAPPED_TESTS = ("tests/test_mutation.py::test_the_sample_of_mutants_is_killed",)
#: Per mutant: this many times the measured duration of its tests, plus the start-up.
TIMEOUT_FACTOR = 4.0
TIMEOUT_BASE = 30.0
#: Measured seconds of the cheapest tests run first (see :meth:`Selector.stages`).
FIRST_STAGE_SECONDS = 10.0
FIRST_STAGE_FILES = 2
#: How long a mutant started within a time box (--budget) may run past it.
GRACE_SECONDS = 60.0
#: How often a mutant whose run timed out, as did its tests without it, is tried again with twice the time.
MAX_RETRIES = 2
#: Files of the checkout a copy does not need, or links to instead of copying.
_SKIP = {".git", "__pycache__", ".hypothesis", ".mypy_cache", ".ruff_cache", ".pytest_cache", "build", "dist", ".venv"}
_LINK = {"node_modules", "target"}
PYTEST_ARGS = ["-x", "-q", "-p", "no:cacheprovider", "--tb=short", "-W", "ignore::pytest.PytestAssertRewriteWarning"]


@dataclass
class Result:
    mutant: Mutant
    tests: list[str]
    #: killed, timeout, survived, no tests; pending (survived its cheapest tests, the rest not run yet); not run;
    #: slow (its tests outlast their timeout without it too, even given four times the time: undecided)
    status: str = "not run"
    seconds: float = 0.0
    killer: str | None = None
    equivalent: str | None = None
    notes: list[str] = field(default_factory=list)
    stages_done: int = 0
    #: The tests it has survived so far: a run taken up later runs the others, however the stages fall then.
    ran: list[str] = field(default_factory=list)
    fingerprint: str = ""
    #: Times its run timed out along with the unmutated run of the same tests (a busy machine): its timeout doubles.
    retries: int = 0

    def record(self) -> dict[str, Any]:
        m = self.mutant
        return {"key": m.key, "where": m.where, "operator": m.operator, "before": m.before, "after": m.after,
                "status": self.status, "seconds": self.seconds, "killer": self.killer, "tests": self.tests,
                "equivalent": self.equivalent, "notes": self.notes, "stages_done": self.stages_done, "ran": self.ran,
                "fingerprint": self.fingerprint, "retries": self.retries}


def requirement_ids() -> list[str]:
    from ..corpus.registry import requirements

    return sorted(requirements())


def load_equivalents(root: Path) -> dict[str, str]:
    path = root / EQUIVALENTS_FILE
    if not path.is_file():
        return {}
    entries = json.loads(path.read_text(encoding="utf-8"))["equivalent"]
    return {e["key"]: e["reason"] for e in entries}


class Selector:
    """The tests that can kill a mutant, cheapest first."""

    def __init__(self, root: Path, table: dict[str, Any]) -> None:
        self.root = root
        self.functions: dict[str, list[str]] = table.get("functions", {})
        self.durations: dict[str, float] = table.get("durations", {})
        #: test -> the wider fixtures it sets up when run without the tests it was measured beside: {name: seconds}
        self.fixtures: dict[str, dict[str, float]] = defaultdict(dict)
        for name, f in table.get("fixtures", {}).items():
            for test in f["users"]:
                self.fixtures[test][name] = f["seconds"]
        self._sources: dict[str, bytes] = {}

    def alone(self, test: str) -> float:
        """What running ``test`` by itself costs: its own time and the setup of every wider fixture it uses."""
        return self.durations.get(test, 1.0) + sum(self.fixtures.get(test, {}).values())

    def cost(self, tests: list[str]) -> float:
        """What running ``tests`` together costs: a fixture they share is set up once."""
        shared = {name: s for t in tests for name, s in self.fixtures.get(t, {}).items()}
        return sum(self.durations.get(t, 1.0) for t in tests) + sum(shared.values())

    def _source(self, rel: str) -> bytes:
        if rel not in self._sources:
            self._sources[rel] = (self.root / rel).read_bytes()
        return self._sources[rel]

    def _module_keys(self, rel: str) -> list[str]:
        return [k for k in self.functions if k.startswith(rel + "::")]

    def tests(self, m: Mutant) -> tuple[list[str], list[str]]:
        """(node IDs, notes) for one mutant."""
        notes: list[str] = []
        key = f"{m.path}::{m.qualname}"
        found = set(self.functions.get(key, []))
        if key not in self._function_keys(m.path):
            # Module or class level: the functions that use what the statement binds, and the function
            # a class body is nested in (a class defined inside a function runs when the function does).
            parts = m.qualname.split(".")
            outer = [f"{m.path}::{'.'.join(parts[:i])}" for i in range(len(parts) - 1, 0, -1)]
            enclosing = next((f for f in outer if f in self._function_keys(m.path)), None)
            if enclosing:
                found |= set(self.functions.get(enclosing, []))
            names = frozenset(module_closure(self._source(m.path), names_bound(self._source(m.path), m)))
            for function in self._users(names):
                found |= set(self.functions.get(function, []))
            found |= self._readers(m.path, names)
            # and the module's own test file, which may read the constant itself
            own = f"tests/test_{Path(m.path).stem}.py::"
            found |= {t for k in self._module_keys(m.path) for t in self.functions[k] if t.startswith(own)}
            if not found:
                notes.append("module-level, used by no mapped function: ran the module's tests")
                found = {t for k in self._module_keys(m.path) for t in self.functions[k]}
        elif key not in self.functions:
            notes.append("no test runs this function (tests/mutation-map.json); new? run `mutate map`")
        return sorted(found, key=lambda t: (self.alone(t), t)), notes

    @functools.cache  # noqa: B019 - one selector per run
    def _users(self, names: frozenset[str]) -> frozenset[str]:
        """The mapped functions, in any target module, whose bodies use one of ``names``."""
        if not names:
            return frozenset()
        return frozenset(f"{rel}::{q}" for rel in sorted({k.split("::", 1)[0] for k in self.functions})
                         if (self.root / rel).is_file() for q, used in self._uses(rel).items() if used & names)

    @functools.cache  # noqa: B019 - one selector per run
    def _uses(self, rel: str) -> dict[str, frozenset[str]]:
        """What each function of a file uses, parsed once per run (every module-level mutant asks)."""
        return names_used(self._source(rel))

    @functools.cache  # noqa: B019 - one selector per run
    def _readers(self, rel: str, names: frozenset[str]) -> frozenset[str]:
        """The measured tests, in test files that import the module, whose own bodies use one of ``names``: a test
        that reads a module's table runs none of its functions, so coverage does not tie it to the table."""
        module = rel.removesuffix(".py").replace("/", ".")
        found: set[str] = set()
        for path in sorted((self.root / "tests").glob("test_*.py")) if names else []:
            file = path.relative_to(self.root).as_posix()
            if module.encode() not in self._source(file):
                continue
            for qualname, used in self._uses(file).items():
                if used & names and qualname.rsplit(".", 1)[-1].startswith("test"):
                    node = f"{file}::{qualname.replace('.', '::')}"
                    found |= {t for t in self.durations if t == node or t.startswith(node + "[")}
        return frozenset(found)

    @functools.cache  # noqa: B019 - one selector per run
    def _function_keys(self, rel: str) -> frozenset[str]:
        """``file::qualname`` of every function (not class) of a module."""
        return frozenset(f"{rel}::{q}" for q in function_names(self._source(rel)))

    def stages(self, tests: list[str], module: str = "") -> list[list[str]]:
        """The tests in up to four runs: the cheapest of two test files (the module's own
        ``tests/test_<name>.py``, or its package's, if it runs the function, and the one with the most tests of it); for a
        survivor, the cheapest test of every other file, those of seconds first, then those of more; then the rest.

        Each run collects only the test files it names: a mutant killed by a unit test never
        pays for collecting the slow meta-tests, and one that a test of some other file kills
        (a widely used function has thousands of tests, hours of them) is found in one test per
        file before the hours are spent.
        """
        per_file = Counter(t.split("::", 1)[0] for t in tests)
        # The module's own test file, else its package's (check_store/html.py: tests/test_check_store.py).
        own = {f"tests/test_{Path(module).stem}.py", f"tests/test_{Path(module).parent.name}.py"} if module else set()
        files = {f for f, _ in sorted(per_file.items(), key=lambda fc: (fc[0] not in own, -fc[1]))[:FIRST_STAGE_FILES]}
        first: list[str] = []
        spent, set_up = 0.0, set()
        for test in tests:
            more = self.durations.get(test, 1.0) + sum(s for f, s in self.fixtures.get(test, {}).items() if f not in set_up)
            if test.split("::", 1)[0] in files and (not first or spent + more <= FIRST_STAGE_SECONDS):
                first.append(test)
                spent += more
                set_up |= set(self.fixtures.get(test, {}))
        chosen = set(first)
        breadth: dict[str, str] = {}
        for test in tests:  # cheapest first: the first test met of a file is its cheapest
            breadth.setdefault(test.split("::", 1)[0], test)
        second = [t for t in tests if t not in chosen and breadth.get(t.split("::", 1)[0]) == t]
        chosen |= set(second)
        # The breadth run's cheap tests before its dear ones: a meta-test of seconds that kills the mutant is not
        # run behind a whole suite run that another file's cheapest test of it is.
        cheap = [t for t in second if self.alone(t) <= FIRST_STAGE_SECONDS]
        dear = [t for t in second if t not in cheap]
        parts = [first, cheap, dear, [t for t in tests if t not in chosen]]
        # A later test whose wider fixtures a run already sets up costs that run only its own time: it joins the run
        # when that is less than a later run would spend setting them up again (the attribution meta-tests' suite runs).
        for i, part in enumerate(parts[:-1]):
            set_up = {f for t in part for f in self.fixtures.get(t, {})}
            for later in parts[i + 1:]:
                joining = [t for t in later if self.fixtures.get(t) and set(self.fixtures[t]) <= set_up
                           and self.durations.get(t, 1.0) <= sum(self.fixtures[t].values())]
                part += joining
                later[:] = [t for t in later if t not in joining]
        return [part for part in parts if part]

    def timeout(self, tests: list[str]) -> float:
        return TIMEOUT_BASE + TIMEOUT_FACTOR * self.cost(tests)


def _copy(root: Path, dest: Path) -> Path:
    target = dest / "zarr_jpeg_conformance"

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = {n for n in names if n in _SKIP or n in _LINK or n.endswith(".egg-info")}
        if Path(folder) == root:
            skipped |= {n for n in names if n == "out"}
        return skipped

    shutil.copytree(root, target, ignore=ignore, symlinks=True)
    for link in _LINK:
        for found in root.glob(f"*/*/{link}"):
            (target / found.relative_to(root)).symlink_to(found, target_is_directory=True)
    return target


class Worker:
    def __init__(self, root: Path, scratch: Path, index: int) -> None:
        self.copy = _copy(root, scratch / f"w{index}")
        self.logs = scratch / f"logs{index}"
        self.logs.mkdir()
        (scratch / f"tmp{index}").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
        env.update(PYTHONPATH=os.pathsep.join([str(self.copy.parent), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
                   PYTHONDONTWRITEBYTECODE="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   MUTATION_ROOT=str(self.copy),
                   # pytest's temporary folders of its own: its clean-up of the shared ones (other sessions'
                   # garbage) must not fail a run, which would read as a kill.
                   PYTEST_DEBUG_TEMPROOT=str(scratch / f"tmp{index}"))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "zarr_jpeg_conformance.tools.mutation_worker"],
            cwd=self.copy, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )

    def run(self, file: str | None, source: str | None, tests: list[str], timeout: float, name: str,
            extra: list[str] | None = None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        job = {"file": file, "source": source, "args": [*PYTEST_ARGS, *(extra or []), *tests], "timeout": timeout,
               "log": str(self.logs / f"{name}.log")}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("a mutation worker died")
        reply: dict[str, Any] = json.loads(line)
        reply["log"] = job["log"]
        return reply

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def rank(key: str, seed: int) -> str:
    """A mutant's place in the draw of ``seed``: a hash of its key, so that it does not depend on the others."""
    return hashlib.sha256(f"{seed}\0{key}".encode()).hexdigest()


def choose(mutants: list[Mutant], equivalents: dict[str, str], sample: int | None, seed: int) -> list[Mutant]:
    """Every mutant, or the ``sample`` non-equivalent ones whose keys rank lowest for ``seed``.

    Drawn by key, not by position in the population: an edit that adds or removes mutants
    elsewhere leaves the sample as it is; only a new mutant that ranks lower enters it
    (reported as new, see :func:`recorded_sample`), pushing out the highest.
    """
    if sample is None:
        return sorted(mutants, key=lambda m: (m.path, m.start, m.key))
    population = [m for m in mutants if m.key not in equivalents]
    chosen = sorted(population, key=lambda m: rank(m.key, seed))[:sample]
    return sorted(chosen, key=lambda m: (m.path, m.start, m.key))


def recorded_sample(root: Path, sample: int, seed: int) -> set[str] | None:
    """The keys of the sample of this size and seed when ``tests/mutation-sample.json`` was written, if it was."""
    path = root / SAMPLE_FILE
    if not path.is_file():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    return set(doc["keys"]) if (doc["sample"], doc["seed"]) == (sample, seed) else None


def record_sample(root: Path, chosen: list[Mutant], sample: int, seed: int) -> Path:
    path = root / SAMPLE_FILE
    doc = {"about": "The keys of the mutants the CI sample draws (python -m zarr_jpeg_conformance.tools.mutate sample "
                    "--sample N --seed S writes it). A survivor of the sample whose key is not here is new: code added "
                    "since, whose check no meta-test proves.",
           "sample": sample, "seed": seed, "keys": sorted(m.key for m in chosen)}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _fingerprint(source: bytes, tests: list[str], texts: Path | dict[str, bytes] | None = None) -> str:
    """The mutated module, the set of tests run (not their order, which follows measured durations) and,
    with ``texts`` (the checkout, or :func:`test_texts` of it), the text of the test files they are in and of the
    tests' helpers (``tests/`` modules that are not test files): a result is reused only while none of what decided
    it changed."""
    digest = hashlib.sha1(source + b"\0" + "\n".join(sorted(tests)).encode())
    if texts is not None:
        known = test_texts(texts) if isinstance(texts, Path) else texts
        files = {t.split("::", 1)[0] for t in tests} | {n for n in known if not Path(n).name.startswith("test_")}
        for name in sorted(files & known.keys()):
            digest.update(b"\0" + name.encode() + b"\0" + known[name])
    return digest.hexdigest()[:16]


def test_texts(root: Path) -> dict[str, bytes]:
    """The text of every module of ``tests/``: the test files and their helpers (conftest.py, the wrong adapters ...),
    read once, as the copies the workers run are made once."""
    return {f"tests/{p.name}": p.read_bytes() for p in sorted((root / "tests").glob("*.py"))}


def stands_on(status: str, killer: str | None, ran: list[str], tests: list[str]) -> list[str]:
    """The tests a result was decided by: a kill by the test that failed (the others it was to meet do not change
    it), a pending mutant by those it has survived so far, a survivor (or a timeout) by all of its tests. An edit of a
    test file a kill did not stand on leaves the kill as it is: a sitting does not decide again what it already knows."""
    if status == "killed" and killer:
        return [killer]
    if status == "pending":
        return list(ran)
    return list(tests)


def _earlier(path: Path | None) -> dict[str, dict[str, Any]]:
    """Results of an earlier run (one JSON object per line), by key; the last line of a key wins."""
    if path is None or not path.is_file():
        return {}
    out: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            out[record["key"]] = record
    return out


def _slow_for_itself(worker: Worker, tests: list[str], timeout: float, r: Result) -> bool:
    """After a mutant's run timed out: do the same tests, without it, finish in half the time? Only then is the
    timeout the mutant's (a kill); else the machine was too busy, and the mutant is tried again with twice the time."""
    control = worker.run(None, None, tests, timeout, f"c{id(r)}-{r.stages_done}-{r.retries}")
    if not control["timed_out"] and control["rc"] == 0 and control["seconds"] <= timeout / 2:
        return True
    r.retries += 1
    r.notes.append(f"timed out, and so did (or nearly) its tests without it ({control['seconds']:.0f} s of {timeout:.0f} s): "
                   + ("tried again with twice the time" if r.retries <= MAX_RETRIES else "too slow to decide on this machine"))
    return False


def take_up(r: Result, old: dict[str, Any] | None, fingerprint: Callable[[list[str]], str] | None = None) -> None:
    """Reuse an earlier result of the same fingerprint: a decided one as it is, a pending one with the tests it
    survived, so that only the others are run (a long run stopped by its time box is taken up, not started again).
    With ``fingerprint``, the earlier result's is compared with that of the tests it stands on (:func:`stands_on`),
    as they are now; without it, with ``r.fingerprint``."""
    if old and old["status"] == "timeout" and "retries" not in old:
        return  # a timeout of a run before timeouts were checked against the tests without the mutant
    if not old or old["status"] not in ("killed", "timeout", "survived", "pending"):
        return
    if old["status"] == "pending" and "ran" not in old:
        return  # pending from before the tests it survived were recorded: started again
    expected = r.fingerprint if fingerprint is None else fingerprint(
        stands_on(old["status"], old["killer"], old.get("ran", []), r.tests))
    if old.get("fingerprint") == expected:
        r.status, r.seconds, r.killer, r.stages_done = old["status"], old["seconds"], old["killer"], old["stages_done"]
        r.ran = list(old.get("ran", []))
        r.fingerprint = expected


class Cheapest:
    """Mutants waiting for their next stage, the one whose next stage costs least first.

    Taken first come, first served, a few stages of minutes (a suite mutant meeting the attribution
    meta-tests) held both workers while dozens of mutants with a second's tests left waited behind
    them, and a time-boxed run ended with them undecided.
    """

    def __init__(self, selector: Selector) -> None:
        self._selector = selector
        self._queue: queue.PriorityQueue[tuple[float, int, Result]] = queue.PriorityQueue()
        self._order = itertools.count()

    def cost(self, r: Result) -> float:
        """The timeout of ``r``'s next stage: what the tests it has not met yet cost, split as :meth:`Selector.stages` splits them."""
        done = set(r.ran)
        stages = self._selector.stages([t for t in r.tests if t not in done], r.mutant.path)
        return self._selector.timeout(stages[0]) if stages else 0.0

    def put(self, r: Result) -> None:
        self._queue.put((self.cost(r), next(self._order), r))

    def get_nowait(self) -> Result:
        return self._queue.get_nowait()[2]

    def empty(self) -> bool:
        return self._queue.empty()

    def next_cost(self) -> float | None:
        """What the stage of the mutant :meth:`get_nowait` would give costs; None when none waits."""
        with self._queue.mutex:
            return self._queue.queue[0][0] if self._queue.queue else None


def run(root: Path, chosen: list[Mutant], selector: Selector, equivalents: dict[str, str], jobs: int,
        budget: float | None, baseline: str, out: Any, results_file: Path | None = None,
        recorded: set[str] | None = None) -> list[Result]:
    """Run every chosen mutant; ``baseline`` ("all", "control" or "none") first runs tests without any mutant.

    "all" runs every selected test; "control" only those of the cheapest mutant, which
    proves at least that the copy and the workers run tests that pass (a broken set-up
    would otherwise "kill" every mutant). Every mutant first meets its cheapest tests, and a survivor then
    the rest, stage by stage; whatever waits, the cheapest next stage runs first, first stages and later ones alike,
    so that a run stopped early (``budget``) has decided as many mutants as its time allowed. With ``results_file`` each result is
    appended as it comes, and a result already there is reused while the module's source and the
    tests it stands on (:func:`stands_on`) are unchanged: a long run can be stopped and taken up again. ``recorded``: the keys of
    the sample as it was recorded; a mutant not among them is noted as new.
    """
    # Read once: an edit of the checkout during a long run must not shift the mutants' byte spans.
    sources = {m.path: (root / m.path).read_bytes() for m in chosen}
    texts = test_texts(root)
    earlier = _earlier(results_file)
    results = []
    for m in chosen:
        tests, notes = selector.tests(m)
        if recorded is not None and m.key not in recorded:
            notes = [*notes, f"new: not in the recorded sample ({SAMPLE_FILE}), so code added or changed since"]
        r = Result(m, tests, notes=notes, equivalent=equivalents.get(m.key))
        r.fingerprint = _fingerprint(sources[m.path], tests, texts)
        if not tests:
            r.status = "no tests"
        take_up(r, earlier.get(m.key), functools.partial(_fingerprint, sources[m.path], texts=texts))
        results.append(r)
    first = Cheapest(selector)
    rest = Cheapest(selector)
    for r in results:
        if r.tests and r.status in ("not run", "pending"):
            (first if not r.ran else rest).put(r)
    scratch = Path(tempfile.mkdtemp(prefix="mutation-"))
    started = time.monotonic()
    lock = threading.Lock()
    stopping = threading.Event()
    done = [0]
    # Nothing to run (every mutant reused from the results file, or without tests): no worker is started.
    workers = [Worker(root, scratch, i) for i in range(max(1, jobs))] if not first.empty() or not rest.empty() else []
    sink = results_file.open("a", encoding="utf-8") if results_file else None
    try:
        with_tests = [r for r in results if r.tests]
        if baseline != "none" and with_tests:
            if baseline == "all":
                union = sorted({t for r in with_tests for t in r.tests}, key=lambda t: (selector.alone(t), t))
            else:
                union = min((r.tests for r in with_tests), key=selector.timeout)
            print(f"baseline: {len(union)} tests without any mutant ...", file=out, flush=True)
            reply = workers[0].run(None, None, union, 3 * selector.timeout(union), "baseline", extra=["--maxfail=20"])
            if reply["rc"] != 0:
                print(f"the selected tests fail without any mutant (exit {reply['rc']}); see {reply['log']}:\n"
                      + Path(reply["log"]).read_text(errors="replace")[-3000:], file=out)
                raise SystemExit(2)
            print(f"baseline: passed in {reply['seconds']:.0f} s", file=out, flush=True)

        def next_job() -> Result | None:
            # The cheaper of the two next stages: a survivor whose next tests take a second does not wait behind
            # first stages of minutes (a time box used to end with dozens of those undecided).
            cheaper_rest = (b := rest.next_cost()) is not None and ((a := first.next_cost()) is None or b < a)
            for source in (rest, first) if cheaper_rest else (first, rest):
                try:
                    return source.get_nowait()
                except queue.Empty:
                    pass
            return None

        def work(worker: Worker) -> None:
            try:
                work_on(worker)
            except (OSError, ValueError, RuntimeError):
                if not stopping.is_set():
                    raise  # a worker failed on its own; when the run is stopping, its pipes are closed

        def work_on(worker: Worker) -> None:
            while (r := next_job()) is not None:
                if budget is not None and time.monotonic() - started > budget:
                    continue  # the time box is spent: left as it is ("not run" or "pending")
                m = r.mutant
                # What it has not met yet, split again: the durations (and so the stages) may have changed since.
                done_tests = set(r.ran)
                stages = selector.stages([t for t in r.tests if t not in done_tests], m.path)
                stage = stages[0]
                own = selector.timeout(stage) * 2**r.retries
                timeout = own
                if budget is not None:
                    timeout = min(timeout, budget + GRACE_SECONDS - (time.monotonic() - started))
                reply = worker.run(m.path, m.apply(sources[m.path]).decode(), stage, timeout, f"m{id(r)}-{r.stages_done}")
                if reply["timed_out"] and timeout < own:
                    continue  # stopped by the time box, not by its own timeout: left as it was
                if reply["timed_out"] and not _slow_for_itself(worker, stage, timeout, r):
                    if r.retries <= MAX_RETRIES:
                        (first if not r.ran else rest).put(r)
                        continue
                    r.status = "slow"
                    with lock:
                        print(f"[-] slow     {m.describe()}: its tests outlast {timeout:.0f} s without it too", file=out, flush=True)
                    continue
                r.seconds = round(r.seconds + reply["seconds"], 2)
                r.killer = reply["killer"]
                r.stages_done += 1
                r.status = "timeout" if reply["timed_out"] else "killed" if reply["rc"] not in (0, 5) else "survived"
                if reply["rc"] == 5:
                    r.notes.append("pytest collected no test")
                if r.status == "survived":
                    r.ran += stage
                if r.status == "survived" and len(stages) > 1:
                    r.status = "pending"
                    rest.put(r)
                r.fingerprint = _fingerprint(sources[m.path], stands_on(r.status, r.killer, r.ran, r.tests), texts)
                with lock:
                    if sink:
                        sink.write(json.dumps(r.record()) + "\n")
                        sink.flush()
                    if r.status == "pending":
                        continue
                    done[0] += 1
                    new = " (new)" if any(n.startswith("new:") for n in r.notes) else ""
                    mark = "" if r.status != "survived" else f"  SURVIVED{new}" if not r.equivalent else "  (equivalent)"
                    print(f"[{done[0]}] {r.status:8} {r.seconds:6.1f}s {m.describe()}{mark}", file=out, flush=True)

        threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        stopping.set()
        for w in workers:
            w.close()
        if sink:
            sink.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def summary(results: list[Result], seconds: float, out: Any) -> int:
    """Print killed/total and the survivors; the number of unlisted survivors."""
    ran = [r for r in results if r.status not in ("not run", "pending", "slow")]
    pending = sum(r.status == "pending" for r in results)
    slow = sum(r.status == "slow" for r in results)
    listed = [r for r in ran if r.equivalent and r.status in ("survived", "no tests")]
    judged = [r for r in ran if r not in listed]
    killed = [r for r in judged if r.status in ("killed", "timeout")]
    survivors = [r for r in judged if r.status in ("survived", "no tests")]
    stale = [r for r in ran if r.equivalent and r.status in ("killed", "timeout")]
    print("", file=out)
    if survivors:
        print("Survivors (no meta-test fails when this check is broken):", file=out)
        for r in sorted(survivors, key=lambda r: (r.mutant.path, r.mutant.start)):
            tests = ", ".join(r.tests[:3]) + (f" and {len(r.tests) - 3} more" if len(r.tests) > 3 else "")
            print(f"  {r.mutant.describe()}\n      key: {r.mutant.key}\n      ran {len(r.tests)} tests: {tests or 'none'}"
                  + "".join(f"\n      note: {n}" for n in r.notes), file=out)
        by_module = Counter(r.mutant.path for r in survivors)
        by_kind = Counter(r.mutant.operator for r in survivors)
        print("Survivors by module: " + ", ".join(f"{k} {v}" for k, v in sorted(by_module.items())), file=out)
        print("Survivors by kind: " + ", ".join(f"{k} {v}" for k, v in by_kind.most_common()), file=out)
    for r in stale:
        print(f"listed as equivalent but killed (remove it from {EQUIVALENTS_FILE}): {r.mutant.key}", file=out)
    per_module: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in judged:
        per_module[r.mutant.path][1] += 1
        per_module[r.mutant.path][0] += r in killed
    print("Killed per module: " + ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(per_module.items())), file=out)
    not_run = len(results) - len(ran) - pending - slow
    timeouts = sum(r.status == "timeout" for r in killed)
    share = f" ({100 * len(killed) / len(judged):.1f} %)" if judged else ""
    print(f"killed/total: {len(killed)}/{len(judged)}{share} in {seconds:.0f} s; "
          f"{timeouts} of the killed by timeout; {len(listed)} equivalent (listed)"
          + (f"; {not_run} not run (time box)" if not_run else "")
          + (f"; {pending} survived their cheapest tests, the rest not run (time box)" if pending else "")
          + (f"; {slow} undecided: their tests time out without them too on this machine" if slow else ""), file=out)
    return len(survivors) + len(stale)


def changed_files(root: Path, rev: str) -> set[str]:
    """The files of the checkout that differ from ``rev`` (``git diff --name-only rev``: committed since, or changed in
    the working tree), relative to ``root``; GitError naming the revision where git cannot tell."""
    done = subprocess.run(["git", "diff", "--name-only", "--relative", rev, "--"], cwd=root, capture_output=True,
                          text=True, check=False)
    if done.returncode:
        raise GitError(f"--changed-since {rev}: git cannot compare with it: {done.stderr.strip()[:300]}")
    return set(done.stdout.split("\n")) - {""}


class GitError(RuntimeError):
    """A revision git cannot compare the checkout with."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.tools.mutate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", choices=["run", "list", "map", "sample"], default="run")
    parser.add_argument("tests", nargs="*", help="map: measure only these test files and merge them into the table")
    parser.add_argument("--sample", type=int, help="run this many mutants, drawn with --seed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", action="append", default=[], help="run mutants whose key contains this text")
    parser.add_argument("--changed-since", metavar="REV",
                        help="only the mutants of modules changed since REV (git diff --name-only REV): a sample of new code")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--budget", type=float, help="stop starting mutants after this many seconds")
    parser.add_argument("--no-baseline", action="store_true", help="skip the run of the selected tests without mutants")
    parser.add_argument("--results", type=Path,
                        help="append each result here (JSON lines) and reuse those of an earlier run of the same code")
    args = parser.parse_args(argv)
    # A terminated run closes its workers (and their pytest runs) and keeps its results file.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    if args.command == "map":
        everything = ["tests", *(f"--ignore=tests/{f}" for f in NOT_MAPPED), *(f"--deselect={t}" for t in NOT_MAPPED_TESTS)]
        table = mutation_map.build(ROOT, args.tests or everything)
        old = mutation_map.load(ROOT)
        table = mutation_map.merge(old, table, args.tests) if args.tests else mutation_map.keep_skipped(old, table)
        print(f"wrote {mutation_map.write(ROOT, table)}: {len(table['functions'])} functions, "
              f"{len(table['durations'])} tests, in {time.monotonic() - started:.0f} s; not passing: {table['not_passing']}")
        return 0
    mutants = all_mutants(ROOT, requirement_ids())
    if args.only:
        mutants = [m for m in mutants if any(o in m.key for o in args.only)]
    if args.changed_since:
        try:
            changed = changed_files(ROOT, args.changed_since)
        except GitError as exc:
            parser.error(str(exc))
        mutants = [m for m in mutants if m.path in changed]
    equivalents = load_equivalents(ROOT)
    chosen = choose(mutants, equivalents, args.sample, args.seed)
    if args.command == "list":
        for m in chosen:
            print(f"{m.where}\t{m.key}")
        print(f"{len(chosen)} mutants")
        return 0
    if args.command == "sample":
        if args.sample is None or args.only or args.changed_since:
            parser.error("sample records the draw of --sample N --seed S over every mutant (no --only, no --changed-since)")
        print(f"wrote {record_sample(ROOT, chosen, args.sample, args.seed)}: {len(chosen)} keys")
        return 0
    selector = Selector(ROOT, mutation_map.load(ROOT))
    whole = args.sample is not None and not args.only and not args.changed_since
    recorded = recorded_sample(ROOT, args.sample, args.seed) if whole else None
    results = run(ROOT, chosen, selector, equivalents, args.jobs, args.budget,
                  baseline="none" if args.no_baseline else "control" if args.sample is not None else "all", out=sys.stdout,
                  results_file=args.results, recorded=recorded)
    return 1 if summary(results, time.monotonic() - started, sys.stdout) else 0


if __name__ == "__main__":
    raise SystemExit(main())
