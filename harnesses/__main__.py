"""``python -m zarr_jpeg_conformance.harnesses``: run, list, locate or install the shipped harnesses.

    python -m zarr_jpeg_conformance.harnesses NAME          # become harness NAME (for --impl exec:...)
    python -m zarr_jpeg_conformance.harnesses list          # names, and whether each can run here
    python -m zarr_jpeg_conformance.harnesses command NAME  # print the command, to run it by hand
    python -m zarr_jpeg_conformance.harnesses install [FOLDER ...]  # build every folder whose toolchain is here
    python -m zarr_jpeg_conformance.harnesses kit LANG      # print the folder of a harness kit (rust, go, node, java)
    python -m zarr_jpeg_conformance.harnesses kit LANG --copy DIR  # copy it to DIR, for a codec's build

A harness that cannot run here exits with status 3 and the reason on stderr ("node not
available: ..."), which ``--impl exec:...`` turns into a usage error that says so.
``install`` exits 0 when every folder was built or skipped for a missing toolchain (each
said on stderr), 1 when a build failed. ``kit`` prints the folder it names or copied to and
exits 0, or exits 2 with the reason on stderr.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from . import BUILDS, HARNESSES, Unavailable, command, install
from .kits import KITS, KitError, copy_kit, kit


def _kit_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.harnesses kit",
                                     description="Print the folder of a harness kit, or copy the kit for a codec's build.")
    parser.add_argument("language", choices=list(KITS))
    parser.add_argument("--copy", type=Path, metavar="DIR",
                        help="copy the kit to DIR (new, empty, or an earlier copy of the same kit) and print DIR")
    args = parser.parse_args(argv)
    try:
        print(copy_kit(args.language, args.copy) if args.copy else kit(args.language).path)
    except KitError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 0 if argv else 2
    verb = argv[0]
    if verb == "kit":
        return _kit_main(argv[1:])
    try:
        if verb == "list":
            for name, harness in HARNESSES.items():
                try:
                    command(name)
                    status = "ready"
                except Unavailable as exc:
                    status = str(exc)
                print(f"{name} ({harness.language}): {harness.description}\n    {status}")
            return 0
        if verb == "install":
            unknown = [f for f in argv[1:] if f not in BUILDS]
            if unknown:
                print(f"unknown harness folder(s) {', '.join(unknown)}: use {', '.join(BUILDS)}", file=sys.stderr)
                return 2
            # Setup goes on without a toolchain: those harnesses' rows then say why they are absent.
            outcome = install(argv[1:])
            for folder, what in outcome.items():
                print(f"harnesses/{folder}: {what}", file=sys.stderr)
            return 1 if any(what.startswith("FAILED") for what in outcome.values()) else 0
        if verb == "command":
            if len(argv) != 2:
                print("usage: python -m zarr_jpeg_conformance.harnesses command NAME", file=sys.stderr)
                return 2
            print(shlex.join(command(argv[1])))
            return 0
        if len(argv) != 1:
            print(f"unexpected arguments after {verb!r}: {' '.join(argv[1:])}", file=sys.stderr)
            return 2
        # First: checking a toolchain runs it, and Chromium cannot even say its version under a limit.
        if verb in HARNESSES:
            HARNESSES[verb].check_address_space()
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
