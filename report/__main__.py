"""Command line of the compatibility matrix.

``python -m zarr_jpeg_conformance.report --out DIR`` runs the suites on every available
implementation (each in its own pytest process), measures throughput, and writes
DIR/matrix.json, DIR/matrix.md and DIR/matrix.html. ``--from DIR`` re-renders the pages
from DIR's saved results without running anything; ``compare OLD.json NEW.json`` prints
what changed between two matrix.json files, as Markdown; ``known-failures RESULTS.jsonl``
writes the known-failures file that lists every case a run failed (``known_failures.py``);
``repro RESULTS.jsonl [FINDING ...] --out DIR`` writes a reproducer folder per root finding (``repro.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from . import compare as compare_mod
from . import known_failures, model, render_html, render_md, run, stores_table
from .children import end_all, interruption, terminated_as_interrupt
from .outfolder import OutFolder, OutFolderError, claim, write_text
from .saved import ReportFileError
from .terminal import printable
from .throughput import DEFAULT_REPEATS, DEFAULT_SIZE
from .wording import verdict


def _log(text: str) -> None:
    # Names, reasons and messages come from implementations and saved files: shown, never obeyed by the terminal.
    print(printable(text), file=sys.stderr, flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="zarr-jpeg-conformance-report",
        description="Build the compatibility matrix of Zarr v3 jpeg codec implementations. "
        "Subcommands: 'compare OLD.json NEW.json' prints the changes between two matrix.json files; "
        "'known-failures RESULTS.jsonl [--out FILE]' writes the list of the cases a run failed, for --known-failures; "
        "'repro RESULTS.jsonl [FINDING ...] --out DIR' writes a reproducer folder per root finding.",
    )
    p.add_argument("--out", type=Path, help="output folder (required unless --from is given)")
    p.add_argument("--from", dest="from_dir", type=Path, metavar="DIR",
                   help="re-render from DIR/results and DIR/throughput.json without running anything")
    p.add_argument("--impl", action="append", default=[], metavar="SPEC",
                   help="implementation (repeatable), as for pytest --impl; default: every built-in adapter")
    p.add_argument("-k", dest="keyword", metavar="EXPR", help="pytest -k expression to run a subset")
    p.add_argument("--suites", nargs="+", default=[], metavar="NAME",
                   help="suite modules to run, e.g. parse bitstream (default: all)")
    p.add_argument("--pytest-arg", action="append", default=[], metavar="ARG",
                   help="extra pytest argument (repeatable), e.g. --pytest-arg=--isolate")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per implementation's suite run (default %(default)s)")
    p.add_argument("-j", "--jobs", type=int, default=2,
                   help="suite runs at a time, each in its own process (default %(default)s; the throughput measurement runs alone)")
    p.add_argument("--no-throughput", action="store_true", help="skip the throughput measurement")
    p.add_argument("--no-stores", action="store_true",
                   help="skip the store interop table (every Zarr stack writes the same arrays, every one reads them; "
                        "also skipped when --suites or -k selects a part)")
    p.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help="throughput: timed calls per task (default %(default)s)")
    p.add_argument("--throughput-size", type=int, default=DEFAULT_SIZE, help="throughput: image side (default %(default)s)")
    p.add_argument("--throughput-timeout", type=float, default=600.0, help="throughput: seconds before it is stopped")
    return p


#: The pages a run writes into its output folder.
PAGES = ("matrix.json", "matrix.md", "matrix.html")
#: Everything a run writes at the top of its output folder: the pages and the measurements.
TOP_FILES = (*PAGES, "environment.json", "throughput.json", stores_table.FILE)


def write_pages(matrix: model.Matrix, out: Path, source: Path | None = None, folder: OutFolder | None = None) -> list[Path]:
    """Write matrix.json, matrix.md and matrix.html into ``out``, each whole or not at all, with the store
    interop table that the run wrote into ``source`` (``out`` by default); into ``folder``, as its manifest allows."""
    out.mkdir(parents=True, exist_ok=True)
    stores = stores_table.load(source or out)
    paths = [out / name for name in PAGES]
    doc = {**model.to_json(matrix), **({"stores": stores} if stores is not None else {})}
    page = render_html.render(matrix)
    texts = [json.dumps(doc, indent=1, ensure_ascii=False) + "\n", render_md.render(matrix) + stores_table.markdown_section(stores),
             page.replace("</main></body>", stores_table.html_section(stores) + "</main></body>", 1)]
    if folder is not None:
        folder.check(PAGES)  # all three or none
    for path, text in zip(paths, texts, strict=True):
        if folder is not None:
            folder.write_text(path.name, text)
        else:
            write_text(path, text)
    return paths


def _selection(args: argparse.Namespace) -> str:
    parts = [f"suites: {' '.join(args.suites) or 'all'}"]
    if args.keyword:
        parts.append(f"-k {args.keyword}")
    if args.pytest_arg:
        parts.append("pytest args: " + " ".join(args.pytest_arg))
    return "; ".join(parts)


def _compare_main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="zarr-jpeg-conformance-report compare",
                                description="Print, as Markdown, what changed between two matrix.json files.")
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path)
    args = p.parse_args(argv)
    try:
        old, new = compare_mod.load_matrix(args.old), compare_mod.load_matrix(args.new)
    except ReportFileError as exc:
        print(printable(f"compare: {exc}"), file=sys.stderr)
        return 2
    sys.stdout.write(compare_mod.compare(old, new))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m zarr_jpeg_conformance.report`` and ``zarr-jpeg-conformance-report``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["compare"]:
        return _compare_main(argv[1:])
    if argv[:1] == ["spec-review"]:
        from .spec_review import main as spec_review_main

        return spec_review_main(argv[1:])
    if argv[:1] == ["known-failures"]:
        return known_failures.main(argv[1:])
    if argv[:1] == ["repro"]:
        from .repro import main as repro_main

        return repro_main(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    if args.from_dir is None and args.out is None:
        parser.error("give --out DIR to run, or --from DIR to re-render saved results")
    unknown = next((why for why in map(run.unknown_spec, args.impl) if why), None) if args.from_dir is None else None
    if unknown is not None:
        _log(f"report: --impl: {unknown}")
        return 2
    if args.from_dir is not None and not model.results_files(args.from_dir):
        parser.error(f"--from {args.from_dir}: no results/*.jsonl there")
    out = args.out or args.from_dir
    try:
        with claim(out) as folder, terminated_as_interrupt():
            try:
                return _report(args, out, folder)
            finally:
                end_all()  # nothing the run started outlives it, whatever ended it
                folder.settle()
    except OutFolderError as exc:
        _log(f"report: {exc}")
        return 2
    except KeyboardInterrupt:  # after the run, while the pages were made: they are whole or not there
        what, status = interruption()
        _log(f"report: interrupted ({what}) while the pages were written")
        return status


def _report(args: argparse.Namespace, out: Path, folder: OutFolder) -> int:
    """Run (unless --from), then write the pages; the exit status."""
    interrupted = False
    began = time.monotonic()
    taken: dict[str, float] = {}
    if args.from_dir is None:
        try:
            taken = _run(args, out, folder)
        except (run.Interrupted, KeyboardInterrupt):
            interrupted = True
            _log(f"interrupted ({interruption()[0]}): the results so far stay in {out / 'results'}; the pages show them as "
                 "incomplete")
    try:
        matrix = model.load(args.from_dir or out)
        paths = write_pages(matrix, out, args.from_dir or out, folder)
    except (ReportFileError, ValueError) as exc:
        _log(f"report: {exc}")
        return 2
    for path in paths:
        _log(f"wrote {path}")
    for impl in matrix.implementations:
        _log(f"  {impl.name}: {verdict(matrix, impl)}")
    if taken:
        stages = ", ".join(f"{stage} {seconds:.0f} s" for stage, seconds in taken.items())
        _log(f"done in {time.monotonic() - began:.0f} s ({stages}, loading and pages the rest)")
    return interruption()[1] if interrupted else 0


def _clear_earlier_run(folder: OutFolder) -> list[str]:
    """Remove what an earlier run of this tool left in ``folder`` (its manifest says what), which would mix into this
    run; refuse, before anything is removed, a folder whose files this run would read as results or replace but this
    tool did not write (or that changed since). The user's other files stay. Returns the earlier run's results files."""
    ours, foreign = run.earlier_results(folder)
    if foreign:
        names = [rel.removeprefix("results/") for rel in foreign]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        raise OutFolderError(f"--out {folder.path}: results/ holds {shown}, which no run of this tool wrote (or which changed "
                             "since) and which the pages would read as results: move them, or give another folder")
    folder.check(TOP_FILES)
    folder.remove([*ours, *(name for name in TOP_FILES if name in folder.listed())])
    return ours


def _run(args: argparse.Namespace, out: Path, folder: OutFolder) -> dict[str, float]:
    """Run the suites, the cross suite and the throughput measurement into ``out``; the seconds each stage took."""
    specs = args.impl or run.default_specs()
    expected = run.earlier_seconds(out / "results")  # read before the earlier run's files go
    ours = _clear_earlier_run(folder)
    options = run.RunOptions(timeout=args.timeout, keyword=args.keyword, suites=args.suites, pytest_args=args.pytest_arg,
                             jobs=max(1, args.jobs), expected=expected if ours else {},
                             hold=(folder.lock_fd,) if folder.lock_fd >= 0 else (), reserve=folder.reserve)
    folder.reserve(TOP_FILES)
    folder.write_text("environment.json", json.dumps(run.environment(_selection(args)), indent=1) + "\n")
    taken: dict[str, float] = {}
    start = time.monotonic()
    metas = run.run_all(specs, out, options, _log)
    ready = [m["spec"] for m in metas if m.get("available")]
    taken["suites"] = time.monotonic() - start
    _log(f"suites: {taken['suites']:.0f} s for {len(ready)} implementation(s), {options.jobs} run(s) at a time")
    if not ready:
        _log("no implementation could be loaded: the pages show why")
    if args.no_stores or args.suites or args.keyword:
        _log("stores: the writer x reader table is not built (--no-stores, or a selection of suites or cases)")
    else:
        start = time.monotonic()
        stores_table.run_into(out, _log)
        taken["stores"] = time.monotonic() - start
        _log(f"stores: {taken['stores']:.0f} s for the writer x reader table")
    if ready and not args.no_throughput:
        start = time.monotonic()
        run.run_throughput(ready, out, repeats=max(1, args.repeats), size=args.throughput_size,
                           timeout=args.throughput_timeout, log=_log)
        taken["throughput"] = time.monotonic() - start
    return taken


if __name__ == "__main__":
    raise SystemExit(main())
