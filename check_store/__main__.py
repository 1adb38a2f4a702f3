"""``python -m zarr_jpeg_conformance.check_store URL``: is every chunk of this store conformant?

Exit status: 0 when everything conforms (with ``--strict``, warnings too), 1 when something
does not (or could not be checked), 2 for bad input (an unreachable URL, no Zarr v3 node,
corrupt metadata, no array with the jpeg codec) or a bad command line (an unknown backend,
an ``--out`` that cannot be written or that another run holds), 130 after Ctrl-C and 143
after SIGTERM (the summary and the report then hold what was checked before it, marked as
interrupted, and no worker of the run is left running).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import IO, Any

from .chunks import Options
from .limits import DEFAULT, Limits, parse_bytes
from .records import cap, printable
from .run import Result, Terminated, check
from .stores import DEFAULT_TIMEOUT, StoreError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
#: Ctrl-C and SIGTERM: the shell's codes (128 + the signal); the summary and the report say what was checked.
EXIT_INTERRUPTED, EXIT_TERMINATED = 128 + signal.SIGINT, 128 + signal.SIGTERM


def _say(text: str) -> None:
    """One line for the user on stderr: capped, and shown as text (a store's names hold what they like)."""
    print(f"check-store: {printable(cap(text, 1000))}", file=sys.stderr)


class _Signals:
    """Ctrl-C and SIGTERM while the store is checked end the check as Ctrl-C always did (KeyboardInterrupt,
    :class:`Terminated`): the run then reports what it checked and ends its workers. Once the check has ended
    (workers being ended, the report being written) a signal is noted, not raised: the report is written
    whole, and the exit status says the run was interrupted."""

    def __init__(self) -> None:
        self.armed = False
        self.noted: int | None = None
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():  # only the main thread may take signals
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._on)
        self.armed = True
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)

    def _on(self, signum: int, frame: FrameType | None) -> None:
        if self.armed:
            self.armed = False
            raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
        self.noted = signum


class Progress:
    """A progress bar on stderr: chunks done, chunks/s, ETA, findings so far.

    On a terminal it redraws one line; elsewhere (CI logs, files) it prints a line every
    ``every`` seconds, so that logs stay short.
    """

    def __init__(self, stream: IO[str], enabled: bool = True, every: float = 10.0) -> None:
        self.stream, self.enabled, self.every = stream, enabled, every
        self.tty = stream.isatty()
        self.total = self.done = self.bad = 0
        self.began = self.shown = time.perf_counter()

    def start(self, result: Result) -> None:
        self.total = sum(a.total for a in result.arrays)
        self.began = self.shown = time.perf_counter()
        if self.enabled:
            arrays = len(result.arrays)
            self.stream.write(printable(f"check-store: {cap(result.store, 300)}: {arrays} array{'s' if arrays != 1 else ''} "
                                        f"with the jpeg codec, {self.total:,} chunk positions") + "\n")
            self.stream.flush()

    def update(self, out: dict[str, Any], result: Result) -> None:
        self.done += out["positions"]
        self.bad += sum(1 for r in out["records"] if r["outcome"] in ("fail", "error"))
        now = time.perf_counter()
        if self.enabled and ((self.tty and now - self.shown > 0.1) or now - self.shown > self.every or self.done >= self.total):
            self.shown = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = max(now - self.began, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate else 0.0
        share = self.done / self.total if self.total else 1.0
        width = 28
        bar = "#" * int(share * width) + "." * (width - int(share * width))
        eta = time.strftime("%H:%M:%S", time.gmtime(left))
        text = (f"[{bar}] {self.done:,}/{self.total:,} chunks {share:4.0%}  {rate:,.0f} chunks/s  ETA {eta}  "
                f"{self.bad:,} nonconforming")
        self.stream.write(("\r" + text + "\x1b[K") if self.tty else text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


class UsageError(Exception):
    """A command line that cannot run: one line for the user, exit status 2."""


def _options(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--storage-option needs KEY=VALUE, got {cap(repr(pair), 200)}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m zarr_jpeg_conformance.check_store",
        description="Check that a Zarr v3 array, or every array of a hierarchy, that uses the jpeg codec conforms to the "
                    "codec's spec: its metadata, and every stored chunk (from its header; --decode decodes each).",
        epilog="Exit status: 0 conforms, 1 does not (or could not be checked), 2 bad input or usage, 130 Ctrl-C.",
    )
    p.add_argument("url", help="a local folder, a .zip file, or a URL fsspec opens (http://, s3://, gs://, ...)")
    p.add_argument("--decode", action="store_true", help="read each chunk whole, walk every marker and decode it strictly")
    p.add_argument("--backend", help="the decoder of --decode (turbojpeg, imagecodecs, pillow; default: the first that loads)")
    p.add_argument("--reference", metavar="BACKEND", help="with --decode: a second decoder that must agree within the suite's tolerances")
    p.add_argument("--out", type=Path, metavar="DIR", help="write DIR/findings.jsonl (as results land), report.json and report.html")
    p.add_argument("--scheduler", default="threads", metavar="ADDRESS",
                   help="threads (default), processes, sync, or the address of a dask scheduler (tcp://host:8786)")
    p.add_argument("--dask", action="store_true", help="run on a local dask.distributed cluster (one process per worker)")
    p.add_argument("--workers", type=int, help="threads, processes or cluster workers (default: one per core)")
    p.add_argument("--batch", type=int, help="chunks per task (default: 64-1024, from the store's size)")
    p.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                   help="passed to fsspec (repeatable; VALUE may be JSON), e.g. anon=true")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help="seconds each request of a remote store has, from connecting to its last byte (default %(default)g)")
    p.add_argument("--max-chunk-bytes", default=str(DEFAULT.chunk), metavar="BYTES",
                   help="the most bytes read of a chunk read whole, inflated by the codecs after jpeg, or decoded, and of a "
                        "shard index (64M, 1G, ...; default 64M): a larger one is an error, not read on")
    p.add_argument("--max-metadata-bytes", default=str(DEFAULT.metadata), metavar="BYTES",
                   help="the most bytes read of a zarr.json or of an http folder's page (default 32M)")
    p.add_argument("--max-positions", type=int, default=DEFAULT.positions, metavar="N",
                   help="where the store cannot list its keys (http): chunk positions of an array visited, the first N, "
                        "(default %(default)s); the report says how many were left")
    p.add_argument("--strict", action="store_true", help="warnings (broken SHOULDs) make the store nonconforming too")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    return p


def _usage(args: argparse.Namespace) -> str | None:
    """What is wrong with the command line beyond its syntax, in one line; None when nothing is."""
    if args.reference and not args.decode:
        return "--reference compares decodes: give --decode too"
    if not args.timeout > 0:
        return f"--timeout {args.timeout:g}: give a number of seconds above 0"
    for option, value in (("--workers", args.workers), ("--batch", args.batch), ("--max-positions", args.max_positions)):
        if value is not None and value < 1:
            return f"{option} {value}: give 1 or more"
    for option, text in (("--max-chunk-bytes", args.max_chunk_bytes), ("--max-metadata-bytes", args.max_metadata_bytes)):
        try:
            if parse_bytes(text) < 1:
                return f"{option} {cap(text, 50)}: give 1 or more bytes"
        except ValueError as exc:
            return f"{option}: {exc}"
    try:
        _options(args.storage_option)
    except UsageError as exc:
        return str(exc)
    from ..backends import BACKENDS, BackendUnavailable, load_backend

    for option, name in (("--backend", args.backend), ("--reference", args.reference)):
        if name is None:
            continue
        if name not in BACKENDS:
            return f"{option} {name}: no such backend (use one of {', '.join(BACKENDS)})"
        try:
            load_backend(name)
        except BackendUnavailable as exc:
            return f"{option} {name}: {cap(str(exc), 300)}"
    return None


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    problem = _usage(args)
    if problem is not None:
        _say(problem)
        return EXIT_USAGE
    with _Signals() as signals:
        code = _claimed(args, signals)
    if signals.noted is not None and code not in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        return 128 + signals.noted  # asked to stop once the check was done: its report is whole, and says so
    return code


def _claimed(args: argparse.Namespace, signals: _Signals) -> int:
    if args.out is None:
        return _run(args, None, signals)
    from ..report.outfolder import OutFolderError, claim

    try:
        with claim(args.out):
            return _run(args, args.out, signals)
    except OutFolderError as exc:
        _say(str(exc))
        return EXIT_USAGE


def _run(args: argparse.Namespace, out: Path | None, signals: _Signals) -> int:
    progress = Progress(sys.stderr, enabled=not args.quiet)
    files: list[IO[str]] = []
    if out is not None:
        # An earlier run's report and findings must not stand beside this run's.
        for name in ("report.json", "report.html", "findings.jsonl"):
            (out / name).unlink(missing_ok=True)

    def landed(batch: dict[str, Any], result: Result) -> None:
        for jsonl in files:
            for rec in batch["records"]:
                jsonl.write(json.dumps(rec) + "\n")
            jsonl.flush()
        progress.update(batch, result)

    def started(result: Result) -> None:
        if out is not None:
            files.append(_open_findings(out))
            for a in result.arrays:
                if a.metadata:
                    files[0].write(json.dumps(a.metadata) + "\n")
        progress.start(result)

    limits = Limits(parse_bytes(args.max_metadata_bytes), parse_bytes(args.max_chunk_bytes), args.max_positions)
    try:
        result = check(args.url, storage_options=_options(args.storage_option),
                       options=Options(args.decode, args.backend, args.reference),
                       scheduler="cluster" if args.dask else args.scheduler, workers=args.workers, batch=args.batch,
                       on_start=started, on_batch=landed, timeout=args.timeout, limits=limits)
    except (StoreError, ValueError, RuntimeError, OSError) as exc:
        progress.close()
        _say(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        progress.close()
        why = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        _say(f"interrupted ({why}) while reading the store's metadata: no chunk was checked")
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    finally:
        signals.armed = False
        for jsonl in files:
            jsonl.close()
    progress.close()
    from .summary import lines, to_json

    for line in lines(result, strict=args.strict):
        print(line)
    if out is not None:
        from ..report.outfolder import write_text
        from .html import render

        report = to_json(result, strict=args.strict)
        write_text(out / "report.json", json.dumps(report, indent=1) + "\n")
        write_text(out / "report.html", render(report))
        partial = " (partial: interrupted)" if result.interrupted else ""
        print(printable(f"report{partial}: {out / 'report.html'} ({out / 'report.json'}, {out / 'findings.jsonl'})"))
    if result.interrupted:
        return EXIT_TERMINATED if result.interruption == "SIGTERM" else EXIT_INTERRUPTED
    return EXIT_OK if result.conforms(args.strict) else EXIT_FINDINGS


def _open_findings(out: Path) -> IO[str]:
    from ..report.outfolder import OutFolderError

    try:
        return (out / "findings.jsonl").open("w", encoding="utf-8")
    except OSError as exc:
        raise OutFolderError(f"--out {out}: cannot write findings.jsonl: {exc.strerror or exc}") from None


if __name__ == "__main__":
    raise SystemExit(main())
