"""Run the suites for each implementation in its own pytest subprocess, and the throughput child.

One subprocess per implementation keeps a crashing or hanging backend from taking the
others down (a timeout kills that run only; its results so far are kept), and keeps
native libraries of one backend out of the others' process.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import platform
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from .. import __version__
from ..adapters import BUILTINS, LIBRARIES, ZARR_CODECS
from ..harnesses import HARNESSES
from .children import Child, end_all
from .children import run as run_child
from .outfolder import OutFolder
from .saved import CORPUS_STEM, CROSS_STEM, FORMAT_VERSION

Log = Callable[[str], None]
#: pytest exit codes: 0 all passed, 1 some tests failed; anything else means the run went wrong.
_NORMAL_EXIT = (0, 1)
LOG_TAIL = 3000
PROGRESS_EVERY = 10.0


@dataclass
class RunOptions:
    """How to run the suites; the defaults run everything."""

    #: Seconds per implementation before its pytest run is killed.
    timeout: float = 1800.0
    #: pytest -k expression.
    keyword: str | None = None
    #: Suite modules to run ("parse" or "test_parse"); empty means the whole suites package.
    suites: Sequence[str] = ()
    #: Further pytest arguments, passed as given (e.g. --isolate, --known-failures=FILE).
    pytest_args: Sequence[str] = field(default_factory=list)
    #: pytest runs at a time (each still in its own process, with its own timeout).
    jobs: int = 2
    #: Seconds each implementation's run took last time (by name): the longest start first.
    expected: Mapping[str, float] = field(default_factory=dict)
    #: Descriptors each suite run inherits: the output folder's lock, held while any of them lives.
    hold: Sequence[int] = ()
    #: Called with the files of the output folder (relative paths) that the runs are about to write, before any
    #: starts (OutFolder.reserve: refused where they are not this tool's).
    reserve: Callable[[list[str]], None] = lambda rels: None


def file_stem(name: str) -> str:
    """A file name for an implementation name (exec: specs can hold any character)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "impl"


def probe(spec: str, timeout: float = 120.0) -> dict[str, Any]:
    """Load the adapter in a child process (report.probe) and return what it printed."""
    cmd = [sys.executable, "-m", "zarr_jpeg_conformance.report.probe", spec]
    try:
        done = run_child(cmd, timeout)  # an exec: spec starts a harness: it ends with the probe
    except subprocess.TimeoutExpired:
        return {"spec": spec, "available": False, "reason": f"loading the adapter took more than {timeout:.0f} s"}
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip()[-600:]
        return {"spec": spec, "available": False, "reason": f"probe exited with {done.returncode}: {tail}"}
    return json.loads(lines[-1])


def unknown_spec(spec: str) -> str | None:
    """Why ``spec`` names no implementation at all (a typo: a usage error), None when it names one.

    Whether a named one loads is the probe's to find out: one that cannot is a row of the matrix.
    """
    from importlib.metadata import entry_points

    from ..adapters import ENTRY_POINT_GROUP

    if spec.startswith("exec:") or ":" in spec or spec in BUILTINS or spec in LIBRARIES:
        return None
    named = {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if spec in named:
        return None
    return f"no implementation is called {spec[:200]!r}: use one of {', '.join(sorted({*BUILTINS, *LIBRARIES, *named}))}, " \
           "exec:COMMAND or module:attr"


#: What a run writes into the results folder, by the end of the name; the loader reads all but the logs.
_OWN_SUFFIXES = (".meta.json", ".run.json", ".jsonl", ".log")


def earlier_results(folder: OutFolder) -> tuple[list[str], list[str]]:
    """(files an earlier run of this tool wrote into ``folder``'s results/, files the loader would read there that no
    run wrote, or that changed since), by path in the folder. The folder's manifest says which are this tool's; a log
    that is not, and anything else in results/, is the user's and is neither read nor removed."""
    results = folder.path / "results"
    if not results.is_dir():
        return [], []
    rels = sorted(f"results/{p.name}" for p in results.iterdir() if p.name.endswith(_OWN_SUFFIXES))
    ours = [rel for rel in rels if folder.owner(rel) is None]
    read = {f"results/{stem}.run.json" for stem in (CROSS_STEM, CORPUS_STEM)}
    foreign = [rel for rel in rels if rel not in ours and (rel.endswith((".jsonl", ".meta.json")) or rel in read)]
    return ours, foreign


def default_specs() -> list[str]:
    """Every built-in adapter, library adapter, Zarr codec adapter and shipped harness (those that cannot run are
    shown with the reason). A Zarr codec that a shipped harness of the same name serves (imagecodecs_jpeg, in a
    venv of its own) is one row: the harness's."""
    harnesses = [f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses {name}" for name in HARNESSES]
    return [*BUILTINS, *LIBRARIES, *(name for name in ZARR_CODECS if name not in HARNESSES), *harnesses]


def _targets(suites: Sequence[str]) -> list[str]:
    if not suites:
        return ["zarr_jpeg_conformance.suites"]
    return [f"zarr_jpeg_conformance.suites.{s if s.startswith('test_') else 'test_' + s}" for s in suites]


#: The suite that pairs encoders with decoders: it runs once over all implementations together.
CROSS_SUITE = "cross"
#: Seconds a pytest child has, after the Ctrl-C it is passed, to finish its summary before it is killed.
INTERRUPT_GRACE = 10.0


class Interrupted(Exception):
    """The user pressed Ctrl-C during a suite run: ``run`` is that run's record (its results so far are kept)."""

    def __init__(self, run: dict[str, Any]) -> None:
        super().__init__("interrupted by Ctrl-C")
        self.run = run


#: Suites that hold the corpus's own checks (tests that take no implementation).
CORPUS_SUITES = ("schema", "stores")


def _wants_cross(options: RunOptions) -> bool:
    return not options.suites or any(s.removeprefix("test_") == CROSS_SUITE for s in options.suites)


def _wants_corpus(options: RunOptions) -> bool:
    return not options.suites or any(s.removeprefix("test_") in CORPUS_SUITES for s in options.suites)


def pytest_command(spec: str | Sequence[str], results: Path, options: RunOptions) -> list[str]:
    """The pytest command line for one implementation, for the cross run of several, or
    (spec "") for the corpus's own checks; without the isolating -c/--rootdir."""
    cross = not isinstance(spec, str)
    specs = list(spec) if cross else [spec] if spec else []
    targets = [f"zarr_jpeg_conformance.suites.test_{CROSS_SUITE}"] if cross else _targets(options.suites)
    # zarr's and hypothesis's pytest plugins serve their own test suites, not these: loading them cost
    # each of the ~27 runs a second or more (zarr imports itself whole, hypothesis at the summary).
    cmd = [sys.executable, "-m", "pytest", "--pyargs", *targets, *(f"--impl={s}" for s in specs),
           f"--results={results}", "-q", "-p", "no:cacheprovider", "-p", "no:zarr", "-p", "no:hypothesispytest",
           "--import-mode=importlib"]
    if not cross:
        # Pairs need every implementation in one session: the cross run does them all.
        # pytest anchors a relative glob at the cwd; fnmatch's * also matches "/".
        cmd.append(f"--ignore-glob=/*/suites/test_{CROSS_SUITE}.py")
        # The corpus's own checks run once, in a run of their own, not once per implementation.
        cmd.append("--corpus-checks=skip" if specs else "--corpus-checks=only")
    if options.keyword:
        cmd += ["-k", options.keyword]
    return cmd + list(options.pytest_args)


def _shown(cmd: Sequence[str], results: Path) -> str:
    """The command as written into the output folder: no paths of this machine."""
    # The executable also appears inside the default harness specs (--impl=exec:PYTHON -m ...).
    parts = [_spec_shown(c).replace(str(results), f"results/{results.name}") for c in cmd]
    return " ".join(parts)


def _count(path: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                counts[json.loads(line).get("outcome", "?")] += 1
            except (json.JSONDecodeError, AttributeError):
                continue
    return counts


def _interrupt(child: Child) -> None:
    """Pass the user's Ctrl-C on to the pytest child (its own session does not get it) and let it finish; then end
    what it left (or it, and all it started, after INTERRUPT_GRACE seconds)."""
    try:
        os.killpg(child.pid, signal.SIGINT)
        child.popen.wait(timeout=INTERRUPT_GRACE)
    except (ProcessLookupError, PermissionError, subprocess.TimeoutExpired):
        child.end()
    else:
        child.finished()


def run_suites(spec: str | Sequence[str], stem: str, results_dir: Path, options: RunOptions, log: Log,
               stop: threading.Event | None = None) -> dict[str, Any]:
    """Run the suites on one implementation (or the cross suite on several, or, with spec "",
    the corpus's own checks); returns the run record.

    ``stop``: set by the caller when the user pressed Ctrl-C (the child, in its own session,
    does not get it): the child is interrupted and :class:`Interrupted` raised.
    """
    results = results_dir / f"{stem}.jsonl"
    log_path = results_dir / f"{stem}.log"
    cmd = pytest_command(spec, results.resolve(), options)
    start = time.monotonic()
    timed_out = interrupted = False
    # An empty ini in a private folder: pytest must not pick up the configuration of
    # whatever project the report happens to be run from.
    with tempfile.TemporaryDirectory(prefix="zjc-report-") as tmp:
        ini = Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        full = cmd[:3] + ["-c", str(ini), "--rootdir", tmp] + cmd[3:]
        with open(log_path, "wb") as out:
            # It holds the output folder's lock too (options.hold): a new run cannot take the folder while it writes,
            # even if this process is killed with no chance to end it.
            child = Child(full, cwd=tmp, stdout=out, stderr=subprocess.STDOUT, pass_fds=tuple(options.hold))
            proc = child.popen
            last = start
            try:
                while True:
                    try:
                        proc.wait(timeout=0.5)
                        child.finished()
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    if stop is not None and stop.is_set():
                        raise KeyboardInterrupt
                    now = time.monotonic()
                    if now - start > options.timeout:
                        timed_out = True
                        child.end()
                        break
                    if now - last >= PROGRESS_EVERY:
                        last = now
                        log(f"    {stem}: {sum(_count(results).values())} results so far, {now - start:.0f} s")
            except KeyboardInterrupt:
                interrupted = True
                _interrupt(child)
            except BaseException:
                child.end()
                raise
    seconds = time.monotonic() - start
    text = log_path.read_text(encoding="utf-8", errors="replace")
    record = {
        "command": _shown(cmd, results.resolve()),
        "returncode": proc.returncode,
        "timed_out": timed_out,
        "interrupted": interrupted,
        "seconds": round(seconds, 2),
        "log": log_path.name,
        "log_tail": "" if proc.returncode in _NORMAL_EXIT and not (timed_out or interrupted) else text[-LOG_TAIL:],
        "results": dict(_count(results)),
    }
    if interrupted:
        raise Interrupted(record)
    return record


def earlier_seconds(results_dir: Path) -> dict[str, float]:
    """How long each implementation's suite run took in the run that wrote ``results_dir`` (by name), read
    before a new run removes its files; empty where there was none or a meta cannot be read."""
    seconds: dict[str, float] = {}
    for path in sorted(results_dir.glob("*.meta.json")) if results_dir.is_dir() else []:
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
            taken = meta["run"]["seconds"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(meta.get("name"), str) and isinstance(taken, int | float) and not meta["run"].get("timed_out"):
            seconds[meta["name"]] = float(taken)
    return seconds


def expected_cost(meta: Mapping[str, Any], options: RunOptions) -> float:
    """The seconds a run is expected to take, to start the longest first (with 2 runs at a time a long run
    started last leaves one core idle meanwhile): the last run's time where known, else a guess by what the
    row drives (a Zarr codec in process opens an array per case; a harness starts processes; a library calls)."""
    known = options.expected.get(meta.get("name", ""))
    if known is not None:
        return known
    if meta.get("name") in ZARR_CODECS and not str(meta.get("spec", "")).startswith("exec:"):
        return 30.0
    return 15.0 if str(meta.get("spec", "")).startswith("exec:") else 10.0


def _probe_all(specs: Sequence[str], jobs: int) -> list[dict[str, Any]]:
    """Probe every spec (``jobs`` at a time), in spec order; a name taken by an earlier spec, or one whose results
    file would be an earlier one's (``lib/a`` and ``lib_a``, ``A`` and ``a`` on a file system that does not tell
    case), makes a later one unavailable."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        try:
            metas = list(pool.map(probe, specs))
        except KeyboardInterrupt:
            end_all()  # the probes, and the harnesses they started: the pool's threads then return at once
            raise
    used: dict[str, str] = {}
    files = {CROSS_STEM.casefold(): "the cross suite's run", CORPUS_STEM.casefold(): "the corpus's own checks"}
    for spec, meta in zip(specs, metas, strict=True):
        name = meta.get("name", spec)
        taken = files.get(file_stem(name).casefold()) if meta.get("available") else None
        if meta.get("available") and name in used:
            meta.clear()
            meta.update({"spec": spec, "available": False, "reason": f"its name {name!r} is already taken by --impl {used[name]}"})
        elif taken is not None:
            meta.clear()
            meta.update({"spec": spec, "available": False,
                         "reason": f"its name {name!r} makes the results file results/{file_stem(name)}.jsonl, which is "
                                   f"already {taken}'s: names that differ only where a file name cannot are refused; "
                                   "rename it"})
        elif meta.get("available"):
            used[name] = spec
            files[file_stem(name).casefold()] = f"{name!r} (--impl {spec})"
        meta.setdefault("name", spec)
    return metas


def _stems(metas: Sequence[Mapping[str, Any]]) -> list[str]:
    """The file stem of each meta: an available implementation's from its name (unique: _probe_all), one that is not
    from its spec, made unique where two specs share one (only its meta is written)."""
    taken = {file_stem(m["name"]).casefold() for m in metas if m.get("available")} | {CROSS_STEM, CORPUS_STEM}
    stems = []
    for meta in metas:
        stem = file_stem(meta["name"] if meta.get("available") else meta["spec"])
        if not meta.get("available"):
            base, n = stem, 1
            while stem.casefold() in taken:
                n += 1
                stem = f"{base}-{n}"
            taken.add(stem.casefold())
        stems.append(stem)
    return stems


def _reserved(metas: Sequence[Mapping[str, Any]], stems: Sequence[str], cross: bool, corpus: bool) -> list[str]:
    """The files of results/ the runs will write, for OutFolder.reserve."""
    rels = []
    for meta, stem in zip(metas, stems, strict=True):
        rels += [f"results/{stem}{suffix}" for suffix in ((".meta.json", ".jsonl", ".log") if meta.get("available") else (".meta.json",))]
    for stem, wanted in ((CROSS_STEM, cross), (CORPUS_STEM, corpus)):
        if wanted:
            rels += [f"results/{stem}{suffix}" for suffix in (".run.json", ".jsonl", ".log")]
    return rels


def _run_one(order: int, total: int, meta: dict[str, Any], stem: str, results_dir: Path, options: RunOptions, log: Log,
             stop: threading.Event) -> dict[str, Any]:
    """The suite run of one probed implementation; writes its meta (also when interrupted)."""
    name = meta["name"]
    if meta.get("available"):
        versions = ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items())
        log(f"[{order + 1}/{total}] {name} ({versions}): running the suites (timeout {options.timeout:.0f} s)")
        try:
            meta["run"] = run_suites(meta["spec"], stem, results_dir, options, log, stop)
        except Interrupted as interrupted:
            meta["run"] = {**interrupted.run, "order": order}
            _write_meta(results_dir / f"{stem}.meta.json", meta)
            raise
        run = meta["run"]
        counts = ", ".join(f"{n} {o}" for o, n in sorted(run["results"].items()))
        status = "timed out" if run["timed_out"] else f"exit {run['returncode']}"
        log(f"    {name}: {sum(run['results'].values())} results in {run['seconds']:.1f} s ({counts}; {status})")
    else:
        log(f"[{order + 1}/{total}] {meta['spec']}: not available: {meta.get('reason')}")
        meta["run"] = {}
    meta["run"]["order"] = order
    _write_meta(results_dir / f"{stem}.meta.json", meta)
    return meta


def run_all(specs: Sequence[str], out: Path, options: RunOptions, log: Log) -> list[dict[str, Any]]:
    """Probe and run every implementation, ``options.jobs`` pytest processes at a time, with
    the cross suite over all of them and the corpus's own checks as two more runs of the same
    pool; writes results/<name>.{jsonl,log,meta.json}, cross-pairs.* and corpus-checks.*.

    Each run keeps its own process and timeout; files are named by implementation and metas
    carry the spec order, so what is written does not depend on which run ends first. On
    Ctrl-C every running child is interrupted and keeps its results so far and its record
    (marked interrupted), the runs not started are dropped, and :class:`Interrupted` ends the run.
    """
    results_dir = out / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    log(f"loading {len(specs)} implementation(s)")
    began = time.monotonic()
    metas = _probe_all(specs, options.jobs)
    log(f"loaded in {time.monotonic() - began:.0f} s: {sum(1 for m in metas if m.get('available'))} available")
    ready = [m["spec"] for m in metas if m.get("available")]
    stems = _stems(metas)
    options.reserve(_reserved(metas, stems, len(ready) >= 2 and _wants_cross(options), _wants_corpus(options)))
    stop = threading.Event()
    # (the run, the implementation's order, meta and file stem if it is one's)
    tasks: list[tuple[Callable[[], Any], int, dict[str, Any] | None, str]] = []
    if len(ready) >= 2 and _wants_cross(options):
        # The longest run first: every encoder x decoder pair in one session.
        tasks.append((lambda: run_cross(ready, out, options, log, stop), -1, None, CROSS_STEM))
    for order, meta in sorted(enumerate(metas), key=lambda om: -expected_cost(om[1], options)):
        tasks.append((functools.partial(_run_one, order, len(metas), meta, stems[order], results_dir, options, log, stop),
                      order, meta, stems[order]))
    if _wants_corpus(options):
        tasks.append((lambda: run_corpus(out, options, log, stop), -1, None, CORPUS_STEM))
    interrupted: Interrupted | None = None
    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        futures = [(pool.submit(task), order, meta, stem) for task, order, meta, stem in tasks]
        try:
            while not all(f.done() for f, _, _, _ in futures):
                wait([f for f, _, _, _ in futures], timeout=0.5)
        except KeyboardInterrupt:
            stop.set()
            for f, position, waiting, stem in futures:
                if f.cancel() and waiting is not None:
                    # Never started: its row says so, rather than showing only its cross pairs as if it had run.
                    waiting["run"] = {"order": position, "interrupted": True, "seconds": 0} if waiting.get("available") else {"order": position}
                    _write_meta(results_dir / f"{stem}.meta.json", waiting)
        for f, _, _, _ in futures:
            if f.cancelled():
                continue
            exc = f.exception()
            if isinstance(exc, Interrupted):
                interrupted = interrupted or exc
            elif exc is not None:
                raise exc
    if interrupted is not None or stop.is_set():
        raise interrupted or Interrupted({})
    return metas


def _spec_shown(spec: str) -> str:
    """A spec as written into the output folder: the default harness specs name this
    machine's Python, which the pages need not show."""
    return spec.replace(sys.executable, "python")


def runnable(spec: str) -> str:
    """A spec as :func:`_spec_shown` wrote it, made to run here (``report repro``): ``python`` is the Python that ran
    the report, which need not be the ``python`` on this PATH (a venv not activated), so it is the one running now."""
    return f"exec:{shlex.quote(sys.executable)} {spec[len('exec:python '):]}" if spec.startswith("exec:python ") else spec


def _write_meta(path: Path, meta: dict[str, Any]) -> None:
    meta["format_version"] = FORMAT_VERSION
    path.write_text(json.dumps({**meta, "spec": _spec_shown(meta["spec"])}, indent=1) + "\n", encoding="utf-8")


def _save_run(out: Path, stem: str, specs: Sequence[str], record: dict[str, Any]) -> None:
    # What a meta is to an implementation's run: the loader checks the results file against it.
    doc = {"format_version": FORMAT_VERSION, "specs": [_spec_shown(s) for s in specs], "run": record}
    (out / "results" / f"{stem}.run.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def _shared_run(specs: Sequence[str], stem: str, label: str, out: Path, options: RunOptions, log: Log,
                stop: threading.Event | None) -> dict[str, Any]:
    try:
        record = run_suites(list(specs) if specs else "", stem, out / "results", options, log, stop)
    except Interrupted as interrupted:
        _save_run(out, stem, specs, interrupted.run)
        raise
    _save_run(out, stem, specs, record)
    log(f"{label}: {sum(record['results'].values())} results in {record['seconds']:.1f} s")
    return record


def run_cross(specs: Sequence[str], out: Path, options: RunOptions, log: Log,
              stop: threading.Event | None = None) -> dict[str, Any] | None:
    """Every encoder x decoder pair among the implementations, in one session: results/cross-pairs.jsonl."""
    if len(specs) < 2 or not _wants_cross(options):
        return None
    log(f"cross: {len(specs)} implementations, every encoder x decoder pair")
    return _shared_run(specs, CROSS_STEM, "cross", out, options, log, stop)


def run_corpus(out: Path, options: RunOptions, log: Log, stop: threading.Event | None = None) -> dict[str, Any]:
    """The suites' tests that take no implementation, once: results/corpus-checks.jsonl."""
    log("corpus: the corpus's own checks (schema, stores)")
    return _shared_run([], CORPUS_STEM, "corpus", out, options, log, stop)


def run_throughput(specs: Sequence[str], out: Path, *, repeats: int, size: int, timeout: float, log: Log) -> dict[str, Any]:
    """Measure throughput in one child process (report.throughput), its progress lines passed on as
    they come; writes out/throughput.json."""
    path = out / "throughput.json"
    cmd = [sys.executable, "-m", "zarr_jpeg_conformance.report.throughput", "--out", str(path),
           "--repeats", str(repeats), "--size", str(size)]
    for spec in specs:
        cmd += ["--impl", spec]
    log(f"throughput: {len(specs)} implementation(s), {size}x{size}, at most {repeats} repeats")
    start = time.monotonic()
    tail: list[str] = []
    child = Child(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")
    proc = child.popen
    stream = proc.stderr
    assert stream is not None  # piped above

    def relay() -> None:
        for line in stream:
            line = line.rstrip("\n")
            tail.append(line)
            del tail[:-40]
            if line.startswith("throughput: "):
                log(f"    {line}")

    reader = threading.Thread(target=relay, daemon=True)
    reader.start()
    try:
        returncode: int | None = proc.wait(timeout=timeout)
        child.finished()
    except subprocess.TimeoutExpired:
        child.end()
        returncode = None
    except BaseException:
        child.end()
        raise
    reader.join(timeout=5)
    if returncode is None:
        doc: dict[str, Any] = {"error": f"the measurement took more than {timeout:.0f} s and was stopped"}
    elif returncode == 0 and path.is_file():
        doc = json.loads(path.read_text(encoding="utf-8"))
    else:
        doc = {"error": f"the measurement exited with {returncode}: {chr(10).join(tail).strip()[-600:]}"}
    if "error" in doc:
        doc = {"format_version": FORMAT_VERSION, "error": doc["error"]}
        path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        log(f"throughput: {doc['error']}")
    else:
        log(f"throughput: done in {time.monotonic() - start:.1f} s")
    return doc


def _dist_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def environment(selection: str) -> dict[str, Any]:
    """Where and when the run happened (written to out/environment.json)."""
    return {
        "format_version": FORMAT_VERSION,
        "generated": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "zarr_jpeg_conformance": __version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "numpy": _dist_version("numpy"),
        "pytest": _dist_version("pytest"),
        "selection": selection,
    }


__all__ = ["RunOptions", "default_specs", "earlier_results", "environment", "file_stem", "probe", "pytest_command", "run_all", "runnable",
           "run_corpus", "run_cross", "run_suites", "run_throughput", "unknown_spec"]
