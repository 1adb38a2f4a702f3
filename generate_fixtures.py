"""Write, check and measure the stream corpus (fixtures/streams) and its sha256 manifest.

    python -m zarr_jpeg_conformance.generate_fixtures             # write; refuses to overwrite
    python -m zarr_jpeg_conformance.generate_fixtures --force     # rewrite everything
    python -m zarr_jpeg_conformance.generate_fixtures --check     # verify the committed corpus
    python -m zarr_jpeg_conformance.generate_fixtures --update-manifest
    python -m zarr_jpeg_conformance.generate_fixtures --measure   # numbers behind decode_tolerances
    python generate_fixtures.py ...                               # the same, from the repository root

The command line only; the cases and the commands live in :mod:`zarr_jpeg_conformance.fixturegen`.
Each case is a row of a table there (``reference``, ``foreign``, ``malformed``): how its
stream is made (a reference encoder from pip, a tool of Debian's libjpeg-turbo-progs, or a
byte edit of another case's stream), the configuration and chunk shape it is decoded
under, and the verdict. The expected decode is :func:`corpus.streams.reference_decode` of the
stream. Generation is deterministic: the same libraries give the same bytes. ``--check``
needs pip packages only (numpy, imagecodecs, Pillow, jsonschema): it verifies the
manifest, re-decodes every committed stream, and rebuilds every recipe it can without
cjpeg, comparing bytes, or decoded pixels where an encoder's bytes legitimately differ.
"""

from __future__ import annotations

if __name__ == "__main__" and not __package__:
    # Run as a file: run the installed package's module instead, so relative imports work.
    import runpy

    runpy.run_module("zarr_jpeg_conformance.generate_fixtures", run_name="__main__", alter_sys=True)
    raise SystemExit(0)

import argparse
import sys
from pathlib import Path

from .fixturegen import CorpusError, check, generate, measure, update_manifest, versions

# versions is here for callers that compare the manifest's libraries with the installed ones.
__all__ = ["main", "versions"]

PACKAGE_ROOT = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.generate_fixtures", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=PACKAGE_ROOT,
                        help="folder holding fixtures/ (default: the package's own folder)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--check", action="store_true", help="verify the corpus under --out; write nothing")
    action.add_argument("--update-manifest", action="store_true", help="only rewrite the sha256 manifest")
    action.add_argument("--measure", action="store_true", help="print decoder differences behind decode_tolerances")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.add_argument("--impl", action="append", default=[], metavar="SPEC",
                        help="with --measure: also measure this implementation (repeatable; as pytest's --impl)")
    parser.add_argument("--skip-stores", action="store_true", help="write the streams only; leave fixtures/stores as it is")
    args = parser.parse_args(argv)
    root = args.out.resolve() / "fixtures"
    try:
        if args.check:
            return check(root)
        if args.update_manifest:
            return update_manifest(root)
        if args.measure:
            return measure(args.impl)
        return generate(root, args.force, stores=not args.skip_stores)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
