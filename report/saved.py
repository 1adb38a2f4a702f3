"""Reading the files a run saves, refusing any that this version did not write or that was damaged.

The matrix is only as true as its inputs: a results line dropped in silence can remove a
``fail`` and improve a verdict. So every results line is checked against
``schema/results.schema.json``, every other file of a report folder (meta, cross run,
environment, throughput) and every ``compare`` input against its definition in
``schema/report-files.schema.json``, each for its ``format_version`` first; the outcome
counts a run recorded in its meta are checked against its results file. A problem is a
:class:`ReportFileError` naming the file, the line and what is wrong.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from ..corpus.registry import load_json, requirements
from ..judging.verdict import MAX_MESSAGE
from ..protocol.framing import within_depth

#: ``format_version`` of every file of a report folder this version writes: meta, cross
#: run, environment, throughput, matrix.json (schema/report-files.schema.json).
FORMAT_VERSION = 2
#: ``format_version`` of results lines (schema/results.schema.json; written by the plugin).
RESULTS_FORMAT_VERSION = 1
#: The results file (and run record) of the cross suite's run over every implementation together.
CROSS_STEM = "cross-pairs"
#: The results file (and run record) of the corpus's own checks, run once.
CORPUS_STEM = "corpus-checks"
RESULTS_SCHEMA = "results.schema.json"
FILES_SCHEMA = "report-files.schema.json"
#: Longest results line read, in bytes: a run's are far shorter (messages cut, metrics numbers),
#: and one line is held whole while it is parsed.
MAX_LINE = 1 << 24
#: Longest piece of a file quoted in an error message, and most problems listed for one document.
_QUOTE = 200
_ERRORS = 3
#: How deep a saved document may nest: this version writes none deeper than 8 (matrix.json), and a deeper one would
#: take the recursive readers after json (the schema's validator, the pages) past Python's recursion limit.
MAX_DEPTH = 32


class ReportFileError(ValueError):
    """A saved file is corrupt, of another format version, or contradicts another file."""


@cache
def _validator(schema: str, definition: str | None) -> jsonschema.Draft202012Validator:
    doc = load_json("schema", schema)
    if definition is not None:
        doc = {"$defs": doc["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(doc)


def _quote(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= _QUOTE else f"{text[:_QUOTE]}... ({len(text):,} characters)"


def loads(text: str, where: str) -> Any:
    """The JSON value of ``text``; ReportFileError naming ``where`` for what is no JSON or nests deeper than MAX_DEPTH
    (json's own reader gives up far deeper, with a RecursionError)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ReportFileError(f"{where}: not JSON: {_quote(str(exc))}") from None
    except RecursionError:
        raise ReportFileError(f"{where}: nested deeper than a JSON reader follows: not a file this version wrote") from None
    if not within_depth(doc, MAX_DEPTH):
        raise ReportFileError(f"{where}: nested more than {MAX_DEPTH} deep: not a file this version wrote")
    return doc


def check(doc: Any, where: str, schema: str, definition: str | None = None) -> None:
    """Raise ReportFileError naming ``where`` unless ``doc`` is a valid document of this format version."""
    version = RESULTS_FORMAT_VERSION if schema == RESULTS_SCHEMA else FORMAT_VERSION
    if not isinstance(doc, dict):
        raise ReportFileError(f"{where}: expected a JSON object, got {_quote(doc)}")
    if "format_version" not in doc:
        raise ReportFileError(f"{where}: no format_version: not written by this version of zarr-jpeg-conformance "
                              f"(it writes and reads format_version {version}); run the suites again")
    if doc["format_version"] != version:
        raise ReportFileError(f"{where}: format_version {_quote(doc['format_version'])}; "
                              f"this version of zarr-jpeg-conformance reads {version}: run the report again")
    problems = _problems(_validator(schema, definition).iter_errors(doc))
    if problems:
        more = f" (and {len(problems) - _ERRORS} more)" if len(problems) > _ERRORS else ""
        raise ReportFileError(f"{where}: {'; '.join(problems[:_ERRORS])}{more}")


def _problems(errors: Iterable[jsonschema.ValidationError]) -> list[str]:
    """One text per place, the most specific places first: a wrong value deep down says more
    than what it entails above; missing members of one object are named together."""
    missing: dict[tuple[str | int, ...], list[str]] = {}
    other: list[tuple[tuple[str | int, ...], str]] = []
    for error in errors:
        path = tuple(error.absolute_path)
        if error.validator == "required":
            missing.setdefault(path, []).extend(v for v in error.validator_value if v not in error.instance)
        else:
            other.append((path, _quote(error.message)))
    for path, names in missing.items():
        other.append((path, "missing " + ", ".join(repr(n) for n in dict.fromkeys(names))))
    other.sort(key=lambda p: (-len(p[0]), p[1]))
    return [f"{'/'.join(map(str, path)) + ': ' if path else ''}{text}" for path, text in dict.fromkeys(other)]


def read_json(path: Path, definition: str) -> dict[str, Any]:
    """A JSON file of a report folder (or a matrix.json), checked against its schema definition."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReportFileError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ReportFileError(f"{path}: not JSON: not UTF-8 text (byte {exc.start})") from None
    doc = loads(text, str(path))
    check(doc, str(path), FILES_SCHEMA, definition)
    return doc


def read_results(path: Path, *, stopped: bool = False, implementations: set[str] | None = None) -> list[dict[str, Any]]:
    """Every line of a results file, each checked against the results schema.

    ``implementations``: the names the file may hold (that of the implementation whose
    run wrote it, and "-" for tests that take none), when known.

    Only the writer's last line may be cut short, and only when the run is known to have
    been stopped (``stopped``: killed at its timeout, by a signal or by Ctrl-C), since then
    it was never finished: that line has no newline after it. Anything else that is not
    a valid line, blank lines included, is an error naming the line.
    """
    records = []
    try:
        with open(path, "rb") as f:
            number = 0
            while line := f.readline(MAX_LINE + 1):
                number += 1
                if len(line) > MAX_LINE:
                    raise ReportFileError(f"{path}, line {number}: longer than {MAX_LINE:,} bytes, and a run writes no such line "
                                          f"(its messages are cut at {MAX_MESSAGE:,} characters): not a results line of this version")
                # Only the last line can lack its newline.
                record = _result_line(path, number, line, unfinished=not line.endswith(b"\n"), stopped=stopped)
                if record is not None:
                    if implementations is not None and record["implementation"] not in implementations:
                        raise ReportFileError(f"{path}, line {number}: a result of {_quote(record['implementation'])} in the "
                                              f"results file of {', '.join(sorted(implementations - {'-'}))}")
                    if not known_case(record["case"]):
                        raise ReportFileError(f"{path}, line {number}: case {_quote(record['case'])} is no case of this "
                                              "version's suites or corpus: not a result it wrote")
                    records.append(record)
    except OSError as exc:
        raise ReportFileError(f"{path}: cannot read it: {exc}") from exc
    return records


def _result_line(path: Path, number: int, raw: bytes, *, unfinished: bool, stopped: bool) -> dict[str, Any] | None:
    """One results line, checked and with its message capped; None for a last line a stopped run left unfinished."""
    where = f"{path}, line {number}"
    try:
        line = raw.removesuffix(b"\n").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReportFileError(f"{where}: not UTF-8 text (byte {exc.start}): a damaged file") from exc
    try:
        record = loads(line, where)
    except ReportFileError as exc:
        if unfinished and stopped:
            return None  # cut short by the stop; the run's meta says the results are incomplete
        hint = (" (the last line, without a newline: the run that wrote it was killed while writing, "
                "but nothing says it was stopped)") if unfinished else ""
        raise ReportFileError(f"{where}: not a JSON line{hint}: {_quote(str(exc).removeprefix(f'{where}: ').removeprefix('not JSON: '))}: "
                              f"{_quote(line)}") from None
    check(record, where, RESULTS_SCHEMA)
    unknown = [r for r in record["requirements"] if r not in requirements()]
    if unknown:
        raise ReportFileError(f"{where}: case {_quote(record['case'])} rests on {', '.join(map(_quote, unknown[:3]))}, which "
                              "fixtures/requirements.json does not hold: not a result of this version's suites")
    # The plugin caps what it writes; a longer message was written by something else, and is
    # not carried whole into the matrix.
    if len(record["message"]) > MAX_MESSAGE:
        text = record["message"]
        record["message"] = f"{text[:MAX_MESSAGE]}... (cut when read: {len(text):,} characters, more than a run writes)"
    return record


@cache
def _known() -> tuple[frozenset[str], frozenset[str]]:
    """(the suite modules, by the name a generated case ID starts with; every case ID of the corpus)."""
    from ..corpus.cases import build_cases, chunk_cases, config_cases
    from ..corpus.registry import resource
    from ..corpus.streams import stream_cases

    suites = frozenset(e.name.removeprefix("test_").removesuffix(".py") for e in resource("suites").iterdir()
                       if e.name.startswith("test_") and e.name.endswith(".py"))
    ids = frozenset(c.id for cases in (config_cases(), chunk_cases(), build_cases(), stream_cases()) for c in cases)
    # The store corpus: one sidecar (fixtures/stores/NAME.json) per store, whose id is its case's.
    stores = frozenset(json.loads(e.read_text(encoding="utf-8"))["id"] for e in resource("fixtures", "stores").iterdir()
                       if e.name.endswith(".json"))
    return suites, ids | stores


def known_case(case: str) -> bool:
    """Whether a results line's case is one this version can have written: a case of the corpus,
    or a test of a suite module (``module.function[parameters]``)."""
    suites, ids = _known()
    return case in ids or case.split(".", 1)[0] in suites


def stopped(run: Mapping[str, Any] | None) -> bool:
    """Whether a run record says the run was stopped before its end (its last line may be cut short)."""
    if not run:
        return False
    code = run.get("returncode")
    return bool(run.get("timed_out") or run.get("interrupted") or (isinstance(code, int) and code < 0))


def check_counts(path: Path, records: list[dict[str, Any]], run: Mapping[str, Any], meta: Path) -> None:
    """The outcomes a run counted when it ended (its meta) are the ones its results file holds."""
    expected = {k: v for k, v in (run.get("results") or {}).items() if v}
    found = dict(Counter(r["outcome"] for r in records))
    if found != expected:
        def text(counts: Mapping[str, int]) -> str:
            return ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or "none"

        raise ReportFileError(f"{path}: holds {text(found)}, but {meta.name} counted {text(expected)} when the run "
                              "ended: lines were lost or added since")


__all__ = ["CORPUS_STEM", "CROSS_STEM", "FORMAT_VERSION", "RESULTS_FORMAT_VERSION", "ReportFileError", "check", "check_counts",
           "known_case", "read_json", "read_results", "stopped"]
