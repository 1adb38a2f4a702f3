"""A reproducer per finding: the files and the one command a codec's author needs, without this report.

``python -m zarr_jpeg_conformance.report repro RESULTS.jsonl [FINDING ...] --out DIR`` writes, for
each root finding of each implementation in RESULTS (or only those named: the number
``report.findings`` and the matrix print, the cause's id such as ``encode.planar-read``, or the
rule), a folder ``DIR/<row>/<NN>-<rule>-<cause>/``. ``repro REPORT_FOLDER`` does it for every row
of a report, into ``REPORT_FOLDER/repro/``, where the matrix's findings link to:

- ``ISSUE.md``: an upstream report in the codec's terms: what, expected, got, the spec's words,
  the cause, the files, the commands;
- ``finding.json``: the finding as the report has it (rule, level, spec text, cause, the other rules
  it breaks, every case, what it blocks and hides);
- ``rerun.sh``: one command that reruns only the finding's chosen cases (at most
  :data:`CASES_SHOWN`, one per rule they break first) with the suites, and prints their verdicts;
- per chosen case, ``case-N-<id>/``: ``message.txt`` (the results line), and every call the case
  made to the implementation as ``rerun.sh`` made them again (``judging.recording``): the codec
  object as the spec writes it and as the adapter or harness built it (``calls.jsonl``), the input
  chunk (``.npy`` and the raw bytes), the stream (``.jpg``), what came back (``.npy``, ``.raw``),
  and the expected decodes of every stream a decode was given (``NNN-expected-*.npy``: the exact
  reconstruction of its coefficients, chroma repeated and by libjpeg's triangle filter: two of the
  decodes a legal decoder may give);
- for an ``exec:`` row, ``requests.jsonl`` and ``replay.py``: the protocol requests of those calls,
  and a script using only Python's standard library that sends them to the harness (no suite) and
  says, for each, whether the harness answers as it did.

The inputs are not kept in the results files: this command makes them again, deterministically, by
running the chosen cases once more (the corpus and the suites make the same chunks and streams
from the case IDs), recording every call. So it needs the implementation the results came from:
its spec is read from the report folder's ``results/<row>.meta.json``, or given with ``--impl``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..judging.recording import case_folder_name
from . import model
from .roots import RootFinding, repro_folder, root_findings
from .run import runnable

#: Cases of a finding rerun and written out, at most: the first case of each rule its cases break first, then the next.
CASES_SHOWN = 3
#: Seconds the rerun of one row's cases may take.
RERUN_TIMEOUT = 900.0
_SUITES = Path(__file__).resolve().parent.parent / "suites"


# ------------------------------------------------------------------ which findings, which cases


@dataclass
class Rows:
    """What a results file holds, by row: its findings, its cases, its --impl spec and versions (from a report folder)."""

    findings: dict[str, list[RootFinding]]
    cases: dict[str, dict[str, model.CaseResult]]
    specs: dict[str, str]
    versions: dict[str, dict[str, str]]


def read_rows(results: Path) -> Rows:
    """The rows of a results file; a report folder's is read with its whole folder (its cross cases, its decode-only
    rows' writer settings counted apart), so that the findings and their numbers are the matrix's."""
    folder = results.resolve().parent
    if folder.name == "results" and (folder / f"{results.stem}.meta.json").is_file():
        matrix = model.load(folder.parent)
        mine = [i for i in matrix.implementations if i.name == results.stem]
        return Rows({i.name: matrix.roots(i.name) for i in mine}, {i.name: dict(matrix.cases.get(i.name, {})) for i in mine},
                    {i.name: i.spec for i in matrix.implementations}, {i.name: dict(i.versions) for i in mine})
    rows: dict[str, dict[str, model.CaseResult]] = {}
    for r in model.read_results([results]):
        if r.implementation != model.NO_IMPL:
            rows.setdefault(r.implementation, {})[r.case] = r
    return Rows({name: root_findings(cases) for name, cases in rows.items()}, rows, {}, {})


def _chosen(finding: RootFinding, cases: Mapping[str, model.CaseResult]) -> list[model.CaseResult]:
    """Up to :data:`CASES_SHOWN` cases of a finding: the first of each rule its cases were charged to, then the next
    ones; cases another implementation's stream makes (cross) only where nothing else shows it."""
    shown = [cases[c] for c in finding.cases if c in cases]
    own = [c for c in shown if not c.case.startswith("cross.")] or shown
    picked: list[model.CaseResult] = []
    for rule in dict.fromkeys(c.finding or "" for c in own):
        first = next(c for c in own if (c.finding or "") == rule)
        picked.append(first)
    picked += [c for c in own if c not in picked]
    return picked[:CASES_SHOWN]


def selected(findings: Sequence[RootFinding], wanted: Sequence[str]) -> list[tuple[int, RootFinding]]:
    """The findings ``wanted`` names (a number, a cause id, a rule, a folder name), each with its number; all if none."""
    numbered = [(n, f) for n, f in enumerate(findings, 1) if f.outcome != "blocked"]
    if not wanted:
        return numbered
    return [(n, f) for n, f in numbered
            if any(w in (str(n), f.cause_id, f.requirement, f.label, repro_folder("", n, f).split("/")[2]) for w in wanted)]


# ------------------------------------------------------------------ rerunning with every call recorded


def _node(test: str) -> str | None:
    """The node ID that reruns a results line's test from the installed suites (``test`` is rootdir-relative)."""
    file, _, name = test.rpartition("::")
    function = name.split("[", 1)[0]
    if not file:
        found = [p.name for p in sorted(_SUITES.glob("test_*.py")) if f"def {function}(" in p.read_text(encoding="utf-8")]
        if not found:
            return None
        file = found[0]
    path = _SUITES / Path(file).name
    return f"{path}::{name}" if path.is_file() and name else None


def rerun_command(spec: str, nodes: Sequence[str], results: Path, record: Path | None, extra_specs: Sequence[str] = ()) -> list[str]:
    """The pytest command that reruns exactly ``nodes`` of the installed suites for ``spec`` (and ``extra_specs``: the
    encoders of cross cases), writing their results lines (and every call, with ``record``)."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:zarr", "-p", "no:hypothesispytest",
            "--corpus-checks=skip", "--tb=no", *(f"--impl={s}" for s in dict.fromkeys([spec, *extra_specs])),
            f"--results={results}", *([f"--record-calls={record}"] if record is not None else []), *nodes]


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # An empty ini in a folder of its own, as the report runs the suites: no configuration of the caller's is picked up.
    (cwd / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    full = command[:3] + ["-c", str(cwd / "pytest.ini"), "--rootdir", str(cwd)] + command[3:]
    return subprocess.run(full, cwd=cwd, capture_output=True, text=True, timeout=RERUN_TIMEOUT, check=False)


# ------------------------------------------------------------------ writing a finding's folder


def _expected(stream: bytes, codec: Any, shape: Sequence[int]) -> dict[str, np.ndarray]:
    """Two legal decodes of ``stream`` under ``codec``: the exact reconstruction of its coefficients, chroma repeated
    and by libjpeg's triangle filter; none where the stream's coefficients are not read or the codec is not valid."""
    from ..core.config import parse_codec
    from ..judging.decoder_accuracy import applies, exact_decode
    from ..judging.t81.reading import reading

    try:
        config = parse_codec(codec)
    except (ValueError, TypeError):
        return {}
    found = reading(stream)
    stored = found.stream.stored_color_space
    if not applies(found.coefficients, config, stored, int(np.prod(shape))) or found.coefficients is None or stored is None:
        return {}
    return {way: exact_decode(found.coefficients, stored, config.decoded_color_space, tuple(shape), way)
            for way in ("repeat", "triangle")}


def _calls(folder: Path) -> list[dict[str, Any]]:
    path = folder / "calls.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []


def _add_expected(folder: Path, calls: Sequence[Mapping[str, Any]]) -> None:
    """Beside each decode call's stream, the expected decodes under the codec object of the parse it used."""
    parses = {c["call"]: c for c in calls if c.get("op") == "parse"}
    for call in calls:
        stream = (call.get("files") or {}).get("stream.jpg")
        parse = parses.get(call.get("parse"))
        if call.get("op") != "decode" or not stream or parse is None or not (folder / stream).is_file():
            continue
        for way, array in _expected((folder / stream).read_bytes(), parse.get("codec"), call["chunk_shape"]).items():
            np.save(folder / f"{call['call']:03d}-expected-{way}.npy", array, allow_pickle=False)


def _requests(calls: Sequence[Mapping[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """The protocol requests (docs/protocol.md) that make the same calls: parse, then each encode or decode on the handle
    of the parse it used (``"handle": {"parse": N}``: the replay puts the harness's own handle of request N there)."""
    from ..protocol.wire import array_to_wire

    out: list[dict[str, Any]] = []
    number: dict[int, int] = {}
    for call in calls:
        files = call.get("files") or {}
        if call.get("op") == "parse":
            number[call["call"]] = len(out)
            out.append({"op": "parse", "codec": call.get("codec")})
        elif call.get("op") == "encode" and call.get("parse") in number and "chunk.npy" in files:
            chunk = np.load(folder / files["chunk.npy"], allow_pickle=False)
            out.append({"op": "encode", "handle": {"parse": number[call["parse"]]}, "chunk": array_to_wire(chunk)})
        elif call.get("op") == "decode" and call.get("parse") in number and "stream.jpg" in files:
            import base64

            data = base64.b64encode((folder / files["stream.jpg"]).read_bytes()).decode("ascii")
            out.append({"op": "decode", "handle": {"parse": number[call["parse"]]}, "data": data,
                        "chunk_shape": call["chunk_shape"]})
        else:
            continue
        out[-1]["expect"] = {"status": "ok" if call.get("outcome") == "ok" else call.get("outcome"),
                             **({"returned": files["returned.raw"]} if "returned.raw" in files else {}),
                             **({"stream": files["stream.jpg"]} if call.get("op") == "encode" and "stream.jpg" in files else {})}
    return out


def _compared(chosen: Sequence[model.CaseResult], rerun: str) -> str:
    """'reproduced: 3 of 3 cases ...': how many chosen cases the rerun gave the same outcome, rule and cause."""
    again = {}
    for line in rerun.splitlines():
        record = json.loads(line)
        again[record["case"]] = record
    same = [c.case for c in chosen if c.case in again and again[c.case]["outcome"] == c.outcome
            and again[c.case].get("finding") == c.finding
            and (again[c.case].get("cause") or {}).get("id") == (c.cause or {}).get("id")]
    return f"reproduced: {len(same)} of {len(chosen)} case(s) again with the same outcome, rule and cause"


def _harness_command(spec: str) -> list[str] | None:
    """The command an ``exec:`` spec runs, resolved to the harness itself where it names a shipped one."""
    if not spec.startswith("exec:"):
        return None
    argv = shlex.split(spec.removeprefix("exec:"))
    if len(argv) >= 4 and argv[1:3] == ["-m", "zarr_jpeg_conformance.harnesses"]:
        from .. import harnesses

        try:
            return list(harnesses.command(argv[3]))
        except (KeyError, harnesses.Unavailable):
            return argv
    return argv


def _case_words(case: model.CaseResult) -> str:
    return case.summary(1200).replace("\n", " ")


def issue_text(row: str, versions: Mapping[str, str], number: int, finding: RootFinding, chosen: Sequence[model.CaseResult],
               folders: Sequence[str], replay: bool, rerun: str) -> str:
    """ISSUE.md: the finding as an upstream report in the codec's terms."""
    what = finding.cause or f"the cases break {finding.requirement} (no diagnosis named the cause)"
    lines = [f"# {row}: {what}", "",
             f"Found by the Zarr v3 `jpeg` codec conformance suite (zarr-jpeg-conformance), finding {number} of {row}.", "",
             "## What", "", what + ".", ""]
    if finding.consequences:
        lines += [f"It also breaks {', '.join(finding.consequences)} (below: the spec's words of the first).", ""]
    if finding.latent:
        lines += [finding.latent_text() + ".", ""]
    lines += ["## The spec", "", f"{finding.requirement} ({finding.level}): \"{finding.text}\"", "",
              "## Expected and got", ""]
    for case, folder in zip(chosen, folders, strict=True):
        lines += [f"- `{case.case}` (files in `{folder}/`): {_case_words(case)}"]
        if case.given:
            lines += [f"  - the codec was given `{json.dumps(case.given[0].get('given'))}` for the spec's "
                      f"`{json.dumps(case.given[0].get('codec'))}`"]
    lines += ["", f"{len(finding.cases)} case(s) show it: {', '.join(finding.cases)}."
              + (f" {finding.blocked} more could not run because of it." if finding.blocked else ""), "",
              "## Versions", "", *(f"- {k}: {v}" for k, v in versions.items()), "",
              "## Files", "",
              "Per case: `calls.jsonl` lists every call the case made (the codec object as the spec writes it, and "
              "`given`: as the codec was given it; what came back or was raised), with the input chunk "
              "(`NNN-chunk.npy`, `NNN-chunk.raw`: uint8 in C order), the stream (`NNN-stream.jpg`), what the codec "
              "returned (`NNN-returned.npy`, `.raw`) and two legal decodes of each stream it was asked to decode "
              "(`NNN-expected-repeat.npy`, `NNN-expected-triangle.npy`: the exact reconstruction, chroma repeated or "
              "triangle-filtered; any upsampler between them is legal).", "",
              "## Reproduce", "", f"With the suite: `{rerun}` reruns exactly these cases and prints their verdicts.", ""]
    if replay:
        lines += ["Without it: `python3 replay.py [HARNESS COMMAND ...]` sends `requests.jsonl` (the same calls, in the "
                  "harness protocol) to the harness and says for each whether it answers as recorded.", ""]
    return "\n".join(lines)


REPLAY = '''#!/usr/bin/env python3
"""Send this finding's recorded requests to a harness (the harness protocol, JSON lines) and compare its replies.

    python3 replay.py [HARNESS COMMAND ...]

Standard library only. Without a command, the one the finding was recorded with (harness.json).
Each request of requests.jsonl goes to the harness's stdin as one JSON line, after a start
request; an encode or decode names its parse by position ({"parse": N}) and gets the handle the
harness gave that parse. For each, it prints the status and whether the reply is the one recorded
(the same stream, the same returned samples, the same refusal); replies' payloads are written to
replay-N.* beside it.
"""
import base64
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def main(argv):
    command = argv or json.loads((HERE / "harness.json").read_text())["command"]
    requests = [json.loads(line) for line in (HERE / "requests.jsonl").read_text().splitlines() if line.strip()]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    seq = 0

    def call(request):
        nonlocal seq
        seq += 1
        proc.stdin.write(json.dumps({"seq": seq, **request}) + "\\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            sys.exit(f"the harness closed its output (exit status {proc.wait()})")
        return json.loads(line)

    hello = call({"op": "start", "protocol": 1, "framings": ["json"]})
    print(f"start: {hello.get('status')} {hello.get('name')} {hello.get('version')} {hello.get('versions')}")
    handles, same = {}, 0
    for number, request in enumerate(requests):
        expect = request.pop("expect", {})
        if isinstance(request.get("handle"), dict):
            handle = handles.get(request["handle"]["parse"])
            if handle is None:
                print(f"{number}: {request['op']}: skipped, its parse was refused")
                continue
            request["handle"] = handle
        reply = call(request)
        status = reply.get("status")
        if request["op"] == "parse" and status == "ok":
            handles[number] = reply["handle"]
        got = ""
        if status == "ok" and request["op"] == "encode":
            data = base64.b64decode(reply["data"])
            (HERE / f"replay-{number}.jpg").write_bytes(data)
            got = "the same stream" if expect.get("stream") and (HERE / expect["stream"]).read_bytes() == data else "a stream"
        if status == "ok" and request["op"] == "decode":
            data = base64.b64decode(reply["chunk"]["data"])
            (HERE / f"replay-{number}.raw").write_bytes(data)
            got = ("the same samples" if expect.get("returned") and (HERE / expect["returned"]).read_bytes() == data
                   else f"samples of shape {reply['chunk']['shape']}")
        if status != "ok":
            got = f"{reply.get('exception', '')}: {reply.get('message', '')}"[:300]
        as_recorded = status == expect.get("status") and (status != "ok" or "same" in got or request["op"] == "parse")
        same += as_recorded
        print(f"{number}: {request['op']}: {status} {got} ({'as recorded' if as_recorded else 'recorded: ' + str(expect)})")
    call({"op": "stop"})
    proc.wait(timeout=30)
    print(f"{same} of {len(requests)} replies as recorded")
    return 0 if same == len(requests) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''


def write_finding(out: Path, row: str, spec: str, versions: Mapping[str, str], number: int, finding: RootFinding,
                  cases: Mapping[str, model.CaseResult], encoders: Mapping[str, str]) -> tuple[Path, str]:
    """Write one finding's folder under ``out`` (its path relative to the matrix's folder, ``repro_folder``); returns it
    and what the rerun said."""
    folder = out / repro_folder(row, number, finding).removeprefix("repro/")
    folder.mkdir(parents=True, exist_ok=True)
    chosen = _chosen(finding, cases)
    nodes = [n for n in (_node(c.test) for c in chosen) if n]
    extra = [encoders[str(c.metrics.get("encoder"))] for c in chosen
             if c.case.startswith("cross.") and str(c.metrics.get("encoder")) in encoders]
    shown_nodes = [f"$SUITES/{n.removeprefix(str(_SUITES) + os.sep)}" for n in nodes]
    shown = shlex.join(["python", *rerun_command(spec, [], Path("results.jsonl"), None, extra)[1:]]) + " " + " ".join(
        f'"{n}"' for n in shown_nodes)
    (folder / "rerun.sh").write_text(
        "#!/bin/sh\n# Reruns only this finding's cases with the suites (results.jsonl: one line a case), then prints the "
        "findings they show.\nset -e\nSUITES=$(python -c 'import os, zarr_jpeg_conformance.suites as s; "
        "print(os.path.dirname(s.__file__))')\ncd \"$(dirname \"$0\")\"\nprintf '[pytest]\\n' > pytest.ini\nrm -f results.jsonl\n"
        f"{shown.replace('python -m pytest', 'python -m pytest -c pytest.ini --rootdir .', 1)} || true\n"
        "python -m zarr_jpeg_conformance.report.findings results.jsonl\n", encoding="utf-8")
    (folder / "rerun.sh").chmod(0o755)
    said = "no case of it can be rerun from the installed suites"
    folders: list[str] = []
    with tempfile.TemporaryDirectory(prefix="repro-") as tmp:
        record = Path(tmp) / "calls"
        if nodes:
            done = _run(rerun_command(runnable(spec), nodes, Path(tmp) / "results.jsonl", record, [runnable(e) for e in extra]),
                        Path(tmp))
            rerun_lines = (Path(tmp) / "results.jsonl").read_text(encoding="utf-8") if (Path(tmp) / "results.jsonl").is_file() else ""
            (folder / "rerun-results.jsonl").write_text(rerun_lines, encoding="utf-8")
            said = _compared(chosen, rerun_lines) if rerun_lines.strip() else (
                f"the rerun wrote no results: {(done.stdout + done.stderr).strip()[-500:]}")
        requests: list[dict[str, Any]] = []
        for k, case in enumerate(chosen, 1):
            name = f"case-{k}-{case_folder_name(case.case)}"
            folders.append(name)
            target = folder / name
            target.mkdir(exist_ok=True)
            (target / "message.txt").write_text(case.message + "\n", encoding="utf-8")
            source = record / case_folder_name(case.case)
            if source.is_dir():
                for path in source.iterdir():
                    (target / path.name).write_bytes(path.read_bytes())
            calls = _calls(target)
            _add_expected(target, calls)
            offset = len(requests)  # a request names its parse by position in the whole requests.jsonl
            for request in _requests(calls, target):
                if isinstance(request.get("handle"), dict):
                    request["handle"] = {"parse": request["handle"]["parse"] + offset}
                expect = request.get("expect", {})
                for key in ("returned", "stream"):
                    if key in expect:
                        expect[key] = f"{name}/{expect[key]}"
                requests.append(request)
    harness = _harness_command(spec)
    if harness is not None:
        (folder / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests), encoding="utf-8")
        (folder / "harness.json").write_text(json.dumps({"command": harness}, indent=1) + "\n", encoding="utf-8")
        (folder / "replay.py").write_text(REPLAY, encoding="utf-8")
    doc = {"row": row, "spec": spec, "number": number, "rule": finding.requirement, "level": finding.level,
           "spec_words": finding.text, "cause": finding.cause_text, "cause_id": finding.cause_id,
           "consequences": finding.consequences, "cases": finding.cases, "blocked": finding.blocked,
           "latent": [{"case": c, "requirement": r, "words": w} for c, r, w in finding.latent],
           "reproduced": [c.case for c in chosen], "rerun": said}
    (folder / "finding.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / "ISSUE.md").write_text(issue_text(row, versions, number, finding, chosen, folders, harness is not None,
                                                "sh rerun.sh"), encoding="utf-8")
    return folder, said


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.report repro",
                                     description="Write a reproducer folder per root finding of a results file.")
    parser.add_argument("results", type=Path, help="a results file (results/<row>.jsonl of a report folder, or pytest "
                                                    "--results), or a report folder: every row of it")
    parser.add_argument("finding", nargs="*", help="findings to write (number, cause id, rule); default: every one")
    parser.add_argument("--out", type=Path, help="folder to write <row>/<finding>/ into (default for a report folder: its "
                                                 "repro/, where the matrix links to)")
    parser.add_argument("--impl", metavar="SPEC", help="the implementation's --impl spec (default: the report folder's)")
    args = parser.parse_args(argv)
    if args.results.is_dir():
        files = sorted(p for p in (args.results / "results").glob("*.jsonl") if (p.parent / f"{p.stem}.meta.json").is_file())
        if not files:
            print(f"{args.results}: no results/<row>.jsonl of a report", file=sys.stderr)
            return 2
        out = args.out or args.results / "repro"
        return max(main([str(f), *args.finding, "--out", str(out), *(["--impl", args.impl] if args.impl else [])]) for f in files)
    if args.out is None:
        parser.error("give --out DIR (only a report folder has a default, its repro/)")
    if not args.results.is_file():
        print(f"{args.results}: no results file", file=sys.stderr)
        return 2
    try:
        rows = read_rows(args.results)
    except (OSError, model.ReportFileError) as exc:
        print(f"cannot read the results: {exc}", file=sys.stderr)
        return 2
    wrote = 0
    for row, row_findings in rows.findings.items():
        spec = args.impl or rows.specs.get(row)
        if not spec:
            print(f"{row}: no --impl spec (the results are not in a report folder): give --impl", file=sys.stderr)
            return 2
        chosen = selected(row_findings, args.finding)
        if args.finding and not chosen:
            print(f"{row}: no finding {', '.join(args.finding)} (report.findings lists them, numbered)", file=sys.stderr)
            return 2
        for number, finding in chosen:
            folder, said = write_finding(args.out, row, spec, rows.versions.get(row, {}), number, finding, rows.cases[row],
                                         rows.specs)
            print(f"{row} #{number} {finding.label}: {folder} ({said})")
            wrote += 1
    if not wrote:
        print(f"{args.results}: no finding to reproduce")
    return 0


if __name__ == "__main__":
    sys.exit(main())
