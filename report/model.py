"""The compatibility matrix as typed data, built from saved results only (never by running tests).

Inputs are the files a report run leaves in its output folder: ``results/*.jsonl`` (one
line per case and implementation, written by the plugin's ``--results``),
``results/*.meta.json`` (how each implementation was run, its versions), and
``environment.json`` / ``throughput.json``. Any of the optional files may be missing: a
folder holding only JSONL files written by a plain ``pytest --results`` run renders too.
Every file present is checked (``saved``): a corrupt or foreign one is refused, never skipped.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from collections import Counter
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from ..corpus.registry import requirements
from . import saved
from .parsing import ParserGroup, parser_groups, representative
from .protection import Protection, core_protection
from .roots import RootFinding, repro_folder, root_findings
from .rows import (
    GROUPS,
    PARSE_PREFIX,
    decode_only,
    describe_classification,
    group_of,
    is_parse_case,
    parser_of,
    writer_setting,
)
from .saved import FORMAT_VERSION, ReportFileError

#: Outcomes from worst to best: a cell shows its worst outcome.
SEVERITY: tuple[str, ...] = ("crash", "timeout", "error", "fail", "blocked", "warn", "unsupported", "pass")
#: Outcomes that stop a test early: requirements it had not reached yet are not credited.
_STOPPING = frozenset({"crash", "timeout", "error", "fail", "blocked", "unsupported"})
_REQ_ID = re.compile(r"JPEG-[A-Z]+-\d+")
#: A Judge message is several "outcome: text" entries joined by newlines.
_SEGMENT = re.compile(r"^(pass|fail|blocked|warn|unsupported|error|crash|timeout): ", re.MULTILINE)
_FIDELITY = re.compile(r"^roundtrip\.fidelity\[(?P<mode>.+)-(?P<kind>[a-z]+)-q(?P<q>\d+)\]$")
_SWEEP = re.compile(r"^roundtrip\.quality_sweep\[(?P<mode>.+)\]$")
#: The image of roundtrip.fidelity and roundtrip.quality_sweep (suites/test_roundtrip.py).
RD_KIND, RD_HEIGHT, RD_WIDTH = "natural", 64, 96


#: The implementation name of the suites' tests that take no ``impl`` (the schema and
#: store corpus checks): shown once, as the corpus's own checks, not as a row.
NO_IMPL = "-"
#: Their name in spec-note evidence.
CORPUS = "the corpus's own checks"


def worst(outcomes: Iterable[str]) -> str | None:
    """The worst of some outcomes (unknown outcome names count as errors)."""
    ranks = [SEVERITY.index(o) if o in SEVERITY else SEVERITY.index("error") for o in outcomes]
    return SEVERITY[min(ranks)] if ranks else None


@dataclass(frozen=True)
class CaseResult:
    """One results line: one implementation on one case."""

    implementation: str
    case: str
    outcome: str
    level: str
    requirements: tuple[str, ...]
    message: str
    metrics: Mapping[str, Any]
    known: bool = False
    #: The pytest node ID that produced it ("" where a hand-made file has none).
    test: str = ""
    #: Of a fail: the requirement its first broken MUST cites (the root finding it shows).
    finding: str | None = None
    #: Of a blocked case: the case whose failure it stands on.
    blocked_by: str | None = None
    #: Of a fail: the defect its diagnosis found (id, requirement, words); None where the cause is unknown.
    cause: Mapping[str, str] | None = None
    #: Of a blocked case: what it shows once its root is fixed (requirement, words, codec).
    latent: Mapping[str, Any] | None = None
    #: Of a row with a configuration of its own: each codec object and what the codec was given for it.
    given: tuple[Mapping[str, Any], ...] = ()

    @property
    def parse(self) -> bool:
        """A case of the parse suite (a configuration case)."""
        return is_parse_case(self.case, self.test)

    def charged(self) -> list[str]:
        """The requirements its non-passing outcome is charged to."""
        return [r for r, o in self.attributions().items() if o == self.outcome]

    def attributions(self) -> dict[str, str]:
        """Requirement -> the outcome this case gives it.

        A failing check names its requirement in the message (verdict.cite), so a failure
        is charged to that requirement only, not to every requirement the case rests on.
        """
        if self.outcome == "pass":
            return {r: "pass" for r in self.requirements}
        charged: dict[str, str] = {}
        marks = list(_SEGMENT.finditer(self.message))
        for i, m in enumerate(marks):
            text = self.message[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(self.message)]
            named = [r for r in dict.fromkeys(_REQ_ID.findall(text)) if r in self.requirements]
            for r in named or self.requirements:
                charged[r] = worst([m.group(1), charged.get(r, "pass")]) or "pass"
        if not charged:  # no message to go by (e.g. a hand-written results file)
            return {r: self.outcome for r in self.requirements}
        if self.outcome not in _STOPPING:
            # The test ran to its end, so the checks of the other requirements held.
            for r in self.requirements:
                charged.setdefault(r, "pass")
        return charged

    def summary(self, limit: int = 300) -> str:
        """The message for a table: no outcome prefixes, no quoted spec text (the row shows it), shortened."""
        text = _SEGMENT.sub("", _worst_first(self.message))
        for rid in dict.fromkeys(_REQ_ID.findall(text)):
            req = requirements().get(rid)
            if req is not None:
                text = text.replace(f'[{rid} {req.level}] "{req.text}"', f"[{rid}]")
        text = "\n".join(line.strip() for line in text.strip().splitlines())
        return text if len(text) <= limit else text[: limit - 1] + "…"


def _worst_first(message: str) -> str:
    """A Judge message with its entries worst outcome first (a failure before a warning);
    the results of older versions kept them in the order found."""
    marks = list(_SEGMENT.finditer(message))
    if len(marks) < 2:
        return message
    head = message[: marks[0].start()]
    parts = [message[m.start() : marks[i + 1].start() if i + 1 < len(marks) else len(message)].rstrip("\n")
             for i, m in enumerate(marks)]
    parts.sort(key=lambda p: SEVERITY.index(p.split(":", 1)[0]))
    return head + "\n".join(parts)


@dataclass
class Cell:
    """What one implementation's cases say about one requirement."""

    counts: Counter[str] = field(default_factory=Counter)
    cases: list[CaseResult] = field(default_factory=list)  # the ones that did not pass

    @property
    def outcome(self) -> str | None:
        return worst(o for o, n in self.counts.items() if n)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def findings(self) -> int:
        """How many root findings its failing cases show: one deviation seen by many cases counts once."""
        return len({c.finding or c.case for c in self.cases if c.outcome in FINDING_OUTCOMES})


#: The outcomes that are findings of their own (a blocked case stands on one).
FINDING_OUTCOMES = ("fail", "error", "crash", "timeout")


@dataclass
class Implementation:
    """An implementation under test and how its run went."""

    name: str
    spec: str = ""
    roles: tuple[str, ...] = ()
    versions: Mapping[str, str] = field(default_factory=dict)
    available: bool = True
    reason: str = ""
    #: returncode, seconds, timed_out, log_tail, command (from results/<name>.meta.json).
    run: Mapping[str, Any] = field(default_factory=dict)
    #: What it puts under test (adapters.labels.KINDS) and in which language, as it says.
    kind: str = "codec"
    language: str = "Python"

    @property
    def group(self) -> str:
        """Its heading in the matrix (rows.GROUPS)."""
        return group_of(self.spec, self.kind)

    @property
    def parser(self) -> str:
        """The parser its configuration cases come from."""
        return parser_of(self.name, self.group, self.versions)

    @property
    def decode_only(self) -> bool:
        return decode_only(self.roles)

    @property
    def run_problem(self) -> str:
        """Why this implementation's results may be incomplete; empty if the run was normal."""
        if not self.available:
            return f"not available: {self.reason}"
        if self.run.get("interrupted"):
            return f"the suite run was interrupted (Ctrl-C) after {self.run.get('seconds', 0):.0f} s: results are incomplete"
        if self.run.get("timed_out"):
            return f"the suite run timed out after {self.run.get('seconds', 0):.0f} s: results are incomplete"
        code = self.run.get("returncode")
        if code is None or code in (0, 1):  # pytest: 0 all passed, 1 some tests failed
            return ""
        if code < 0:
            return f"the suite run was killed by signal {-code}: results are incomplete"
        return f"pytest exited with code {code} (interrupted, internal or usage error): see the log"


@dataclass(frozen=True)
class Topic:
    """A section of the spec with its requirements, in registry order."""

    section: str
    requirements: tuple[str, ...]


@dataclass
class CrossMatrix:
    """Encoder x decoder outcomes from cases whose metrics name both (suites/test_cross.py)."""

    encoders: list[str]
    decoders: list[str]
    cells: dict[tuple[str, str], Cell]


@dataclass(frozen=True)
class RdPoint:
    quality: int
    bpp: float
    psnr: float


@dataclass(frozen=True)
class SpecNote:
    """Prose about a place where the spec is ambiguous or cannot be met, with its evidence."""

    id: str
    title: str
    text: str
    #: implementation -> outcome -> cases (citing the note's requirement or matching its patterns).
    evidence: dict[str, dict[str, list[CaseResult]]]


@dataclass
class Matrix:
    """Everything the pages show; see :func:`build`."""

    implementations: list[Implementation]
    requirements: Mapping[str, Any]
    topics: list[Topic]
    cases: dict[str, dict[str, CaseResult]]
    cells: dict[str, dict[str, Cell]]
    cross: CrossMatrix | None
    rate_distortion: dict[str, dict[str, list[RdPoint]]]
    throughput: Mapping[str, Any] | None
    notes: list[SpecNote]
    environment: Mapping[str, Any]
    generated: str = ""
    #: The configuration cases once per parser; requirement cells of each parser.
    parsers: list[ParserGroup] = field(default_factory=list)
    parser_cells: dict[str, dict[str, Cell]] = field(default_factory=dict)
    #: The corpus's own checks (tests that take no implementation): case -> its worst result.
    corpus: dict[str, CaseResult] = field(default_factory=dict)
    #: Row that is no built-in -> what this project's codec holds and the row does not.
    protection: dict[str, list[Protection]] = field(default_factory=dict)

    def roots(self, implementation: str) -> list[RootFinding]:
        """The row's root findings, each once (report.roots), from the cases it is judged on (:meth:`judged`)."""
        return root_findings(self.judged(implementation))

    def totals(self, implementation: str) -> Counter[str]:
        return Counter(c.outcome for c in self.cases.get(implementation, {}).values())

    def judged(self, implementation: str) -> dict[str, CaseResult]:
        """The cases a row is judged on: all of them, except, for a decode-only row, the
        parse cases that concern only the writer's settings (:meth:`writer_cases`)."""
        writer = self.writer_cases(implementation)
        return {k: c for k, c in self.cases.get(implementation, {}).items() if k not in writer}

    def writer_cases(self, implementation: str) -> dict[str, CaseResult]:
        """A decode-only row's parse cases that concern only writer settings (rows.writer_setting)."""
        impl = next((i for i in self.implementations if i.name == implementation), None)
        if impl is None or not impl.decode_only:
            return {}
        return {k: c for k, c in self.cases.get(implementation, {}).items() if c.parse and writer_setting(c.case)}

    def judged_totals(self, implementation: str) -> Counter[str]:
        return Counter(c.outcome for c in self.judged(implementation).values())

    def writer_totals(self, implementation: str) -> Counter[str]:
        return Counter(c.outcome for c in self.writer_cases(implementation).values())

    def groups(self) -> list[tuple[str, list[Implementation]]]:
        """The rows under their headings, in GROUPS order (empty groups left out)."""
        return [(g, rows) for g in GROUPS if (rows := [i for i in self.implementations if i.group == g])]

    def must_failures(self, implementation: str) -> list[CaseResult]:
        """Cases of MUST level that did not hold (fail, error, crash, timeout)."""
        bad = {"fail", "error", "crash", "timeout"}
        return [c for c in self.cases.get(implementation, {}).values() if c.outcome in bad]


# ---------------------------------------------------------------- loading


def _case(rec: Mapping[str, Any]) -> CaseResult:
    """A results line already checked against schema/results.schema.json."""
    return CaseResult(
        implementation=rec["implementation"],
        case=rec["case"],
        outcome=rec["outcome"],
        level=rec["level"],
        requirements=tuple(rec["requirements"]),
        message=rec["message"],
        metrics=rec["metrics"],
        known=rec.get("known", False),
        test=rec.get("test", ""),
        finding=rec.get("finding"),
        blocked_by=rec.get("blocked_by"),
        cause=rec.get("cause"),
        latent=rec.get("latent"),
        given=tuple(rec.get("given", ())),
    )


def read_results(paths: Iterable[Path], *, stopped: bool = False) -> list[CaseResult]:
    """Parse results files, refusing any line that is not a valid results line (ReportFileError).

    ``stopped``: the runs that wrote them were stopped (timeout, signal, Ctrl-C), so a last
    line without its newline was cut short and is left out.
    """
    return [_case(rec) for path in paths for rec in saved.read_results(path, stopped=stopped)]


def _results_dir(folder: Path) -> Path:
    sub = folder / "results"
    return sub if sub.is_dir() else folder


def results_files(folder: Path) -> list[Path]:
    """The JSONL files of a report folder (``results/``), or of a bare folder of them."""
    return sorted(_results_dir(folder).glob("*.jsonl"))


def _read_metas(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    return [(path, saved.read_json(path, "meta")) for path in sorted(_results_dir(folder).glob("*.meta.json"))]


def _implementation(m: Mapping[str, Any]) -> Implementation:
    return Implementation(
        name=m["name"],
        spec=m["spec"],
        roles=tuple(m.get("roles") or ()),
        versions=m.get("versions") or {},
        available=m["available"],
        reason=m.get("reason", ""),
        run=m["run"],
        kind=m.get("kind", "codec"),
        language=m.get("language", "Python"),
    )


def _in_run_order(metas: Iterable[tuple[Path, Mapping[str, Any]]]) -> list[Implementation]:
    return sorted((_implementation(m) for _, m in metas), key=lambda i: (i.run.get("order", 1_000_000), i.name))


def read_meta(folder: Path) -> list[Implementation]:
    """The implementations of a report folder's ``*.meta.json``, in the order they ran."""
    return _in_run_order(_read_metas(folder))


def _read_optional(path: Path, definition: str) -> Any:
    return saved.read_json(path, definition) if path.is_file() else None


def _read_checked_results(folder: Path, metas: Sequence[tuple[Path, Mapping[str, Any]]]) -> list[CaseResult]:
    """Every results file of the folder, each checked against the run that wrote it where one is recorded."""
    where = _results_dir(folder)
    runs: dict[str, tuple[Path, Mapping[str, Any], set[str] | None]] = {
        path.name.removesuffix(".meta.json"): (path, m["run"], {m["name"], NO_IMPL}) for path, m in metas
    }
    for stem, names in ((saved.CROSS_STEM, None), (saved.CORPUS_STEM, {NO_IMPL})):
        shared = where / f"{stem}.run.json"
        if shared.is_file():
            runs[stem] = (shared, saved.read_json(shared, "cross_run")["run"], names)
    results: list[CaseResult] = []
    for path in results_files(folder):
        meta, run, names = runs.get(path.name.removesuffix(".jsonl"), (None, None, None))
        records = saved.read_results(path, stopped=saved.stopped(run), implementations=names)
        if meta is not None and run is not None and "command" in run:
            saved.check_counts(path, records, run, meta)
        results += [_case(r) for r in records]
    for stem, (meta, run, _) in runs.items():
        counted = sum((run.get("results") or {}).values())
        if counted and not (where / f"{stem}.jsonl").is_file():
            raise ReportFileError(f"{meta}: its run counted {counted} results, but {stem}.jsonl is missing")
    return results


def load(folder: Path) -> Matrix:
    """Build the matrix from a report folder's saved files; ReportFileError if one is corrupt or inconsistent."""
    metas = _read_metas(folder)
    return build(
        _read_checked_results(folder, metas),
        implementations=_in_run_order(metas),
        throughput=_read_optional(folder / "throughput.json", "throughput"),
        environment=_read_optional(folder / "environment.json", "environment") or {},
    )


# ---------------------------------------------------------------- building


def _case_key(r: CaseResult, taken: Container[str]) -> str:
    """The case ID, unless two lines of one implementation share it (cross pairs do)."""
    if r.case.startswith(PARSE_PREFIX) and not r.parse:
        # Another test on a configuration case (encoding what was parsed): the plain ID is
        # the parse case's.
        key = f"{r.case} [{r.test.split('::')[-1].split('[')[0].removeprefix('test_')}]"
        if key not in taken:
            return key
    elif r.case not in taken:
        return r.case
    enc, dec = r.metrics.get("encoder"), r.metrics.get("decoder")
    if enc is not None or dec is not None:
        key = f"{r.case} [{enc}->{dec}]"
        if key not in taken:
            return key
    n = 2
    while f"{r.case} #{n}" in taken:
        n += 1
    return f"{r.case} #{n}"


def _topics(reqs: Mapping[str, Any], cited: set[str]) -> list[Topic]:
    order: dict[str, list[str]] = {}
    for rid, req in reqs.items():
        order.setdefault(req["section"], []).append(rid)
    unknown = sorted(cited - set(reqs))
    topics = [Topic(section, tuple(ids)) for section, ids in order.items()]
    if unknown:
        topics.append(Topic("Not in the requirement registry", tuple(unknown)))
    return topics


def _cross(results: Sequence[CaseResult]) -> CrossMatrix | None:
    cells: dict[tuple[str, str], Cell] = {}
    for r in results:
        enc, dec = r.metrics.get("encoder"), r.metrics.get("decoder")
        if enc is None or dec is None:
            continue
        cell = cells.setdefault((str(enc), str(dec)), Cell())
        cell.counts[r.outcome] += 1
        if r.outcome != "pass":
            cell.cases.append(r)
    if not cells:
        return None
    return CrossMatrix(sorted({e for e, _ in cells}), sorted({d for _, d in cells}), cells)


def _sweep_points(text: str) -> list[RdPoint]:
    points = []
    for item in text.split(";"):
        try:
            q, p, n = item.split(":")
            psnr, size = float(p), int(n)
        except ValueError:
            continue
        if math.isfinite(psnr):
            points.append(RdPoint(int(q), round(8 * size / (RD_HEIGHT * RD_WIDTH), 4), psnr))
    return points


def _rate_distortion(results: Sequence[CaseResult]) -> dict[str, dict[str, list[RdPoint]]]:
    """mode -> implementation -> points by quality, from the sweep and the natural-image fidelity cases."""
    found: dict[str, dict[str, dict[int, RdPoint]]] = {}
    for r in results:
        if (m := _SWEEP.match(r.case)) and isinstance(r.metrics.get("sweep"), str):
            per_q = found.setdefault(m["mode"], {}).setdefault(r.implementation, {})
            for p in _sweep_points(r.metrics["sweep"]):
                per_q[p.quality] = p
        elif (m := _FIDELITY.match(r.case)) and m["kind"] == RD_KIND:
            psnr, bpp = r.metrics.get("psnr"), r.metrics.get("bpp")
            if isinstance(psnr, int | float) and isinstance(bpp, int | float) and math.isfinite(psnr):
                per_q = found.setdefault(m["mode"], {}).setdefault(r.implementation, {})
                per_q.setdefault(int(m["q"]), RdPoint(int(m["q"]), float(bpp), float(psnr)))
    return {
        mode: {impl: sorted(pts.values(), key=lambda p: p.quality) for impl, pts in by_impl.items()}
        for mode, by_impl in found.items()
    }


def load_note_texts() -> dict[str, dict[str, Any]]:
    """report/spec_notes.json: requirement ID -> {title, text, cases (fnmatch patterns), by_citation}."""
    data = json.loads(files(__package__).joinpath("spec_notes.json").read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("$")}


def _notes(results: Sequence[CaseResult], impl_order: Sequence[str]) -> list[SpecNote]:
    """Each note of spec_notes.json with the results that probe it: the cases its patterns
    name, and, unless ``by_citation`` is false, those that rest on its requirement."""
    notes = []
    for rid, note in load_note_texts().items():
        patterns = note.get("cases", [])
        by_citation = note.get("by_citation", True)
        evidence: dict[str, dict[str, list[CaseResult]]] = {name: {} for name in [*impl_order, CORPUS]}
        for r in results:
            if (by_citation and rid in r.requirements) or any(fnmatch.fnmatchcase(r.case, p) for p in patterns):
                name = CORPUS if r.implementation == NO_IMPL else r.implementation
                evidence.setdefault(name, {}).setdefault(r.outcome, []).append(r)
        evidence = {k: v for k, v in evidence.items() if v}
        notes.append(SpecNote(rid, note["title"], note["text"], evidence))
    return notes


def _corpus_once(results: Sequence[CaseResult]) -> tuple[list[CaseResult], dict[str, CaseResult]]:
    """The results of implementations, and the corpus's own checks once per case (the worst
    of the runs that ran them)."""
    out: list[CaseResult] = []
    corpus: dict[str, CaseResult] = {}
    for r in results:
        if r.implementation != NO_IMPL:
            out.append(r)
            continue
        seen = corpus.get(r.case)
        if seen is None or worst([seen.outcome, r.outcome]) != seen.outcome:
            corpus[r.case] = r
    return out, corpus


def _add(cells: dict[str, Cell], r: CaseResult) -> None:
    for rid, outcome in r.attributions().items():
        cell = cells.setdefault(rid, Cell())
        cell.counts[outcome] += 1
        if outcome != "pass":
            cell.cases.append(r)


def _parser_cells(groups: Sequence[ParserGroup]) -> dict[str, dict[str, Cell]]:
    """Requirement cells of each parser: a case its rows agree on counts once; a case they
    differ on counts each row's result, so the cell names the rows."""
    out: dict[str, dict[str, Cell]] = {}
    for g in groups:
        cells = out.setdefault(g.parser, {})
        for c in g.cases.values():
            for r in c.rows.values() if c.varies else [representative(c)]:
                assert isinstance(r, CaseResult)
                _add(cells, r)
    return out


def build(
    results: Sequence[CaseResult],
    *,
    implementations: Sequence[Implementation] = (),
    throughput: Mapping[str, Any] | None = None,
    environment: Mapping[str, Any] | None = None,
    generated: str = "",
) -> Matrix:
    """Group results by implementation and requirement; attach parsers, core protection,
    the corpus's own checks, cross, rate-distortion and notes.

    The requirement cells of a row hold its cases but the parse suite's: those are shown
    once per parser (``parsers``, ``parser_cells``).
    """
    unknown = [r for r in results if r.outcome not in SEVERITY]
    if unknown:
        r = unknown[0]
        raise ValueError(f"{len(unknown)} result(s) with an unknown outcome, e.g. {r.implementation} / {r.case}: "
                         f"{r.outcome!r} (outcomes are {', '.join(SEVERITY)})")
    results, corpus = _corpus_once(results)
    impls = list(implementations)
    known_names = {i.name for i in impls}
    for r in results:
        if r.implementation not in known_names:
            known_names.add(r.implementation)
            impls.append(Implementation(name=r.implementation, spec=r.implementation))
    reqs = {
        rid: {"level": q.level, "section": q.section, "text": q.text, "kind": q.kind, "when": list(q.when), "note": q.note}
        for rid, q in requirements().items()
    }
    cases: dict[str, dict[str, CaseResult]] = {i.name: {} for i in impls}
    cells: dict[str, dict[str, Cell]] = {i.name: {} for i in impls}
    for r in results:
        mine = cases[r.implementation]
        mine[_case_key(r, mine)] = r
        if not r.parse:
            _add(cells[r.implementation], r)
    parsers = parser_groups({i.name: i.parser for i in impls if cases[i.name]}, cases)
    parser_cells = _parser_cells(parsers)
    builtins = {i.name: cases[i.name] for i in impls if i.group == "project" and cases[i.name]}
    protection = {
        i.name: core_protection(cases[i.name], builtins, lambda r: r.charged() if isinstance(r, CaseResult) else [])
        for i in impls
        if i.group != "project" and cases[i.name] and builtins
    }
    cited = {rid for by_req in [*cells.values(), *parser_cells.values()] for rid in by_req}
    return Matrix(
        implementations=impls,
        requirements=reqs,
        topics=_topics(reqs, cited),
        cases=cases,
        cells=cells,
        cross=_cross(results),
        rate_distortion=_rate_distortion(results),
        throughput=throughput,
        notes=_notes([*results, *corpus.values()], [i.name for i in impls]),
        environment=environment or {},
        generated=generated or str((environment or {}).get("generated", "")),
        parsers=parsers,
        parser_cells=parser_cells,
        corpus=corpus,
        protection=protection,
    )


# ---------------------------------------------------------------- matrix.json


def _cell_json(cell: Cell) -> dict[str, Any]:
    return {
        "outcome": cell.outcome,
        "counts": dict(sorted(cell.counts.items())),
        "cases": [{"case": c.case, "implementation": c.implementation, "outcome": c.outcome, "message": c.summary(2000)}
                  for c in cell.cases],
    }


def to_json(m: Matrix) -> dict[str, Any]:
    """The machine-readable matrix (matrix.json); ``format_version`` says how to read it."""
    return {
        "format_version": FORMAT_VERSION,
        "generated": m.generated,
        "environment": m.environment,
        "implementations": [
            {
                "name": i.name,
                "spec": i.spec,
                "roles": list(i.roles),
                "versions": dict(i.versions),
                "available": i.available,
                "reason": i.reason,
                "run": dict(i.run),
                "run_problem": i.run_problem,
                "kind": i.kind,
                "language": i.language,
                "group": i.group,
                "parser": i.parser,
                "decode_only": i.decode_only,
                "totals": dict(sorted(m.totals(i.name).items())),
                "root_findings": [
                    {"requirement": f.requirement, "outcome": f.outcome, "level": f.level, "text": f.text, "cases": f.cases,
                     "blocked": f.blocked, "message": f.message, "cause": f.cause_text,
                     **({"cause_id": f.cause_id} if f.cause_id else {}),
                     "consequences": list(f.consequences),
                     "latent": [{"case": c, "requirement": r, "words": w} for c, r, w in f.latent],
                     **({"reproducer": repro_folder(i.name, n, f)} if f.outcome != "blocked" else {})}
                    for n, f in enumerate(m.roots(i.name), 1)
                ],
                "judged_totals": dict(sorted(m.judged_totals(i.name).items())),
                "writer_setting_totals": dict(sorted(m.writer_totals(i.name).items())),
                **({"core_protection": [
                    {"charged_to": p.charged_to, "level": p.level, "cases": list(p.cases), "reference": list(p.reference)}
                    for p in m.protection[i.name]
                ]} if i.name in m.protection else {}),
            }
            for i in m.implementations
        ],
        "groups": {key: {"heading": heading, "description": text} for key, (heading, text) in GROUPS.items()},
        "writer_settings": describe_classification(),
        "requirements": m.requirements,
        "topics": [{"section": t.section, "requirements": list(t.requirements)} for t in m.topics],
        "cells": {impl: {rid: _cell_json(c) for rid, c in by_req.items()} for impl, by_req in m.cells.items()},
        "parsers": [
            {
                "parser": g.parser,
                "rows": g.rows,
                "counts": dict(sorted(g.counts().items())),
                "cases": {
                    c.case: {
                        "outcome": c.outcome,
                        "writer_setting": c.writer_setting,
                        **({"rows": {row: getattr(r, "outcome", "?") for row, r in c.rows.items()}} if c.varies else {}),
                    }
                    for c in g.cases.values()
                },
                "cells": {rid: _cell_json(c) for rid, c in m.parser_cells.get(g.parser, {}).items()},
            }
            for g in m.parsers
        ],
        "corpus_checks": {
            case: {"outcome": c.outcome, "requirements": list(c.requirements), "message": c.message, "test": c.test}
            for case, c in m.corpus.items()
        },
        "cases": {
            impl: {
                key: {
                    "outcome": c.outcome,
                    "level": c.level,
                    "requirements": list(c.requirements),
                    "message": c.message,
                    "metrics": dict(c.metrics),
                    **({"known": True} if c.known else {}),
                    **({"finding": c.finding} if c.finding else {}),
                    **({"blocked_by": c.blocked_by} if c.blocked_by else {}),
                    **({"cause": dict(c.cause)} if c.cause else {}),
                    **({"latent": dict(c.latent)} if c.latent else {}),
                    **({"given": [dict(g) for g in c.given]} if c.given else {}),
                }
                for key, c in by_case.items()
            }
            for impl, by_case in m.cases.items()
        },
        "cross": None
        if m.cross is None
        else {
            "encoders": m.cross.encoders,
            "decoders": m.cross.decoders,
            "cells": [{"encoder": e, "decoder": d, **_cell_json(c)} for (e, d), c in sorted(m.cross.cells.items())],
        },
        "rate_distortion": {
            "image": {"kind": RD_KIND, "height": RD_HEIGHT, "width": RD_WIDTH},
            "curves": {
                mode: {impl: [[p.quality, p.bpp, p.psnr] for p in pts] for impl, pts in by_impl.items()}
                for mode, by_impl in m.rate_distortion.items()
            },
        },
        "throughput": m.throughput,
        "spec_notes": [
            {
                "id": n.id,
                "title": n.title,
                "text": n.text,
                "evidence": {impl: {o: [c.case for c in cs] for o, cs in by_o.items()} for impl, by_o in n.evidence.items()},
            }
            for n in m.notes
        ],
    }


__all__ = [
    "FORMAT_VERSION",
    "NO_IMPL",
    "ReportFileError",
    "CORPUS",
    "SEVERITY",
    "CaseResult",
    "Cell",
    "CrossMatrix",
    "Implementation",
    "Matrix",
    "RdPoint",
    "SpecNote",
    "Topic",
    "build",
    "load",
    "read_results",
    "to_json",
    "worst",
]


def throughput_grid(tp: Mapping[str, Any]) -> list[tuple[str, str, list[tuple[str, Mapping[str, Any] | None]]]]:
    """Rows (mode, operation, [(implementation, measurement or None)]) of a throughput.json."""
    by_key = {(r["mode"], r["op"], r["implementation"]): r for r in tp.get("results", [])}
    impls = list(tp.get("implementations", []))
    return [
        (mode, op, [(n, by_key.get((mode, op, n))) for n in impls])
        for mode in tp.get("modes", [])
        for op in ("encode", "decode")
    ]
