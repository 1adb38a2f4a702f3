"""``python -m zarr_jpeg_conformance.check_store URL``: is every chunk of this store conformant?

Exit status: 0 when everything conforms (with ``--strict``, warnings too), 1 when something
does not (or could not be checked), 2 for bad input (an unreachable URL, no Zarr v3 node,
corrupt metadata, no array with the jpeg codec) or a bad command line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import IO, Any

from .chunks import Options
from .run import Result, check
from .stores import StoreError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


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
            self.stream.write(f"check-store: {result.store}: {arrays} array{'s' if arrays != 1 else ''} with the jpeg codec, "
                              f"{self.total:,} chunk positions\n")
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


def _options(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--storage-option needs KEY=VALUE, got {pair!r}")
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
        epilog="Exit status: 0 conforms, 1 does not (or could not be checked), 2 bad input.",
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
    p.add_argument("--strict", action="store_true", help="warnings (broken SHOULDs) make the store nonconforming too")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.reference and not args.decode:
        print("check-store: --reference compares decodes: give --decode too", file=sys.stderr)
        return EXIT_USAGE
    progress = Progress(sys.stderr, enabled=not args.quiet)
    jsonl = None
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        jsonl = (args.out / "findings.jsonl").open("w", encoding="utf-8")

    def landed(out: dict[str, Any], result: Result) -> None:
        if jsonl is not None:
            for rec in out["records"]:
                jsonl.write(json.dumps(rec) + "\n")
            jsonl.flush()
        progress.update(out, result)

    def started(result: Result) -> None:
        if jsonl is not None:
            for a in result.arrays:
                if a.metadata:
                    jsonl.write(json.dumps(a.metadata) + "\n")
        progress.start(result)

    try:
        result = check(args.url, storage_options=_options(args.storage_option),
                       options=Options(args.decode, args.backend, args.reference),
                       scheduler="cluster" if args.dask else args.scheduler, workers=args.workers, batch=args.batch,
                       on_start=started, on_batch=landed)
    except StoreError as exc:
        progress.close()
        print(f"check-store: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, RuntimeError) as exc:
        progress.close()
        print(f"check-store: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if jsonl is not None:
            jsonl.close()
    progress.close()
    from .summary import lines, to_json

    for line in lines(result, strict=args.strict):
        print(line)
    if args.out is not None:
        from .html import render

        report = to_json(result, strict=args.strict)
        (args.out / "report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        (args.out / "report.html").write_text(render(report), encoding="utf-8")
        print(f"report: {args.out / 'report.html'} ({args.out / 'report.json'}, {args.out / 'findings.jsonl'})")
    return EXIT_OK if result.conforms(args.strict) else EXIT_FINDINGS


if __name__ == "__main__":
    raise SystemExit(main())
