"""Harnesses for implementations in other languages, and how to start them from anywhere.

A harness is a program that speaks the JSON-lines protocol (``docs/protocol.md``) on
stdin/stdout. The ones shipped here live inside the installed package, so their paths
depend on where it was installed; ``python -m zarr_jpeg_conformance.harnesses NAME`` finds
them and replaces itself with the harness, which makes the ``--impl`` spec the same on
every machine::

    pytest --pyargs zarr_jpeg_conformance.suites \\
        --impl 'exec:python3 -m zarr_jpeg_conformance.harnesses node-jpeg-js'
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

NODE_DIR = Path(__file__).resolve().parent / "node"
#: Oldest Node.js the pinned pdfjs-dist supports (its package.json "engines").
NODE_MIN = (20, 19)


@dataclass(frozen=True)
class Harness:
    """A shipped harness: a name for --impl and what it runs."""

    name: str
    description: str
    decoder: str

    def argv(self, node: str) -> list[str]:
        return [node, str(NODE_DIR / "harness.mjs"), "--decoder", self.decoder]


HARNESSES: dict[str, Harness] = {
    h.name: h
    for h in (
        Harness("node-jpeg-js", "jpeg-js 0.4.4 on Node.js, decode only (ignores APP14, like neuroglancer's jpgjs)", "jpeg-js"),
        Harness("node-pdfjs", "pdf.js 5.6.205 JpegImage on Node.js, decode only (the upstream of neuroglancer's jpgjs)", "pdfjs"),
    )
}


class Unavailable(RuntimeError):
    """A harness cannot run here; the message says why and what to install."""


def node_executable() -> str:
    """Path of a usable ``node``, or Unavailable with the reason."""
    node = shutil.which("node")
    if node is None:
        raise Unavailable("node not available: install Node.js >= 20.19 (Debian: apt-get install nodejs npm) to run the node harnesses")
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise Unavailable(f"node not available: {node} --version failed: {exc}") from exc
    try:
        version = tuple(int(p) for p in out.lstrip("v").split(".")[:2])
    except ValueError as exc:
        raise Unavailable(f"node not available: cannot read the version {out!r} of {node}") from exc
    if version < NODE_MIN:
        raise Unavailable(f"node not available: {node} is {out}, the harnesses need >= {'.'.join(map(str, NODE_MIN))}")
    return node


def check_packages() -> None:
    """Unavailable unless the pinned npm packages are installed next to the harness."""
    missing = [p for p in ("jpeg-js", "pdfjs-dist") if not (NODE_DIR / "node_modules" / p / "package.json").is_file()]
    if missing:
        raise Unavailable(
            f"npm packages not installed ({', '.join(missing)}): run `python -m zarr_jpeg_conformance.harnesses install` "
            "(npm ci in the harness folder)"
        )


def command(name: str) -> list[str]:
    """The argument list that runs harness ``name``; Unavailable if it cannot run here."""
    if name not in HARNESSES:
        raise KeyError(f"unknown harness {name!r}: use one of {', '.join(HARNESSES)}")
    node = node_executable()
    check_packages()
    return HARNESSES[name].argv(node)


def install() -> int:
    """``npm ci`` of the pinned packages (package-lock.json) into the harness folder."""
    node_executable()
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm not available: install it (Debian: apt-get install npm)")
    # Optional dependencies of pdfjs-dist (a canvas binding) serve rendering, not JPEG decoding.
    return subprocess.run([npm, "ci", "--omit=optional", "--no-audit", "--no-fund", "--prefix", str(NODE_DIR)], check=False).returncode


__all__ = ["HARNESSES", "NODE_DIR", "Harness", "Unavailable", "check_packages", "command", "install", "node_executable"]
