"""Command line of the compatibility matrix.

``python -m zarr_jpeg_conformance.report --out DIR`` runs the suites on every available
implementation (each in its own pytest process), measures throughput, and writes
DIR/matrix.json, DIR/matrix.md and DIR/matrix.html. ``--from DIR`` re-renders the pages
from DIR's saved results without running anything; ``compare OLD.json NEW.json`` prints
what changed between two matrix.json files, as Markdown; ``known-failures RESULTS.jsonl``
writes the known-failures file that lists every case a run failed (``known_failures.py``).
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
from .outfolder import OutFolderError, claim, write_text
from .saved import ReportFileError
from .throughput import DEFAULT_REPEATS, DEFAULT_SIZE
from .wording import verdict


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="zarr-jpeg-conformance-report",
        description="Build the compatibility matrix of Zarr v3 jpeg codec implementations. "
        "Subcommands: 'compare OLD.json NEW.json' prints the changes between two matrix.json files; "
        "'known-failures RESULTS.jsonl [--out FILE]' writes the list of the cases a run failed, for --known-failures.",
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


def write_pages(matrix: model.Matrix, out: Path, source: Path | None = None) -> list[Path]:
    """Write matrix.json, matrix.md and matrix.html into ``out``, each whole or not at all, with the store
    interop table that the run wrote into ``source`` (``out`` by default)."""
    out.mkdir(parents=True, exist_ok=True)
    stores = stores_table.load(source or out)
    paths = [out / name for name in PAGES]
    doc = {**model.to_json(matrix), **({"stores": stores} if stores is not None else {})}
    write_text(paths[0], json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    write_text(paths[1], render_md.render(matrix) + stores_table.markdown_section(stores))
    page = render_html.render(matrix)
    write_text(paths[2], page.replace("</main></body>", stores_table.html_section(stores) + "</main></body>", 1))
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
        print(f"compare: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(compare_mod.compare(old, new))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m zarr_jpeg_conformance.report`` and ``zarr-jpeg-conformance-report``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["compare"]:
        return _compare_main(argv[1:])
    if argv[:1] == ["known-failures"]:
        return known_failures.main(argv[1:])
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
        with claim(out):
            return _report(args, out)
    except OutFolderError as exc:
        _log(f"report: {exc}")
        return 2


def _report(args: argparse.Namespace, out: Path) -> int:
    """Run (unless --from), then write the pages; the exit status."""
    interrupted = False
    began = time.monotonic()
    taken: dict[str, float] = {}
    if args.from_dir is None:
        try:
            taken = _run(args, out)
        except (run.Interrupted, KeyboardInterrupt):
            interrupted = True
            _log(f"interrupted (Ctrl-C): the results so far stay in {out / 'results'}; the pages show them as incomplete")
    try:
        matrix = model.load(args.from_dir or out)
    except (ReportFileError, ValueError) as exc:
        _log(f"report: {exc}")
        return 2
    for path in write_pages(matrix, out, args.from_dir or out):
        _log(f"wrote {path}")
    for impl in matrix.implementations:
        _log(f"  {impl.name}: {verdict(matrix, impl)}")
    if taken:
        stages = ", ".join(f"{stage} {seconds:.0f} s" for stage, seconds in taken.items())
        _log(f"done in {time.monotonic() - began:.0f} s ({stages}, loading and pages the rest)")
    return 130 if interrupted else 0


def _run(args: argparse.Namespace, out: Path) -> dict[str, float]:
    """Run the suites, the cross suite and the throughput measurement into ``out``; the seconds each stage took."""
    specs = args.impl or run.default_specs()
    ours, foreign = run.earlier_results(out / "results")
    options = run.RunOptions(timeout=args.timeout, keyword=args.keyword, suites=args.suites, pytest_args=args.pytest_arg,
                             jobs=max(1, args.jobs), expected=run.earlier_seconds(out / "results") if ours else {})
    if foreign:
        names = ", ".join(p.name for p in foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise OutFolderError(f"--out {out}: results/ holds {names}, which no run of this tool wrote and which the pages would "
                             "read as results: move them, or give another folder")
    # Results, pages and measurements of an earlier run in this folder would mix into this one;
    # the user's own files stay.
    for stale in [*ours, *(out / name for name in (*PAGES, "throughput.json", "environment.json"))]:
        stale.unlink(missing_ok=True)
    write_text(out / "environment.json", json.dumps(run.environment(_selection(args)), indent=1) + "\n")
    taken: dict[str, float] = {}
    start = time.monotonic()
    metas = run.run_all(specs, out, options, _log)
    ready = [m["spec"] for m in metas if m.get("available")]
    taken["suites"] = time.monotonic() - start
    _log(f"suites: {taken['suites']:.0f} s for {len(ready)} implementation(s), {options.jobs} run(s) at a time")
    if not ready:
        _log("no implementation could be loaded: the pages show why")
    (out / stores_table.FILE).unlink(missing_ok=True)
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
