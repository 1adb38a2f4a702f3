"""``python -m zarr_jpeg_conformance.harnesses``: run, list, locate or install the shipped harnesses.

    python -m zarr_jpeg_conformance.harnesses NAME          # become harness NAME (for --impl exec:...)
    python -m zarr_jpeg_conformance.harnesses list          # names, and whether each can run here
    python -m zarr_jpeg_conformance.harnesses command NAME  # print the command, to run it by hand
    python -m zarr_jpeg_conformance.harnesses install       # npm ci of the pinned packages

A harness that cannot run here exits with status 3 and the reason on stderr ("node not
available: ..."), which ``--impl exec:...`` turns into a usage error that says so.
"""

from __future__ import annotations

import os
import shlex
import sys

from . import HARNESSES, Unavailable, command, install


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 0 if argv else 2
    verb = argv[0]
    try:
        if verb == "list":
            for name, harness in HARNESSES.items():
                try:
                    command(name)
                    status = "ready"
                except Unavailable as exc:
                    status = str(exc)
                print(f"{name}: {harness.description}\n    {status}")
            return 0
        if verb == "install":
            try:
                return install()
            except Unavailable as exc:
                # Setup goes on without node: the Node harness rows then say why they are absent.
                print(f"Node harnesses not installed: {exc}", file=sys.stderr)
                return 0
        if verb == "command":
            if len(argv) != 2:
                print("usage: python -m zarr_jpeg_conformance.harnesses command NAME", file=sys.stderr)
                return 2
            print(shlex.join(command(argv[1])))
            return 0
        if len(argv) != 1:
            print(f"unexpected arguments after {verb!r}: {' '.join(argv[1:])}", file=sys.stderr)
            return 2
        argv_ = command(verb)
    except Unavailable as exc:
        print(exc, file=sys.stderr)
        return 3
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    # Become the harness: the test session talks to it directly and signals reach it.
    os.execv(argv_[0], argv_)
    return 0  # not reached


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
