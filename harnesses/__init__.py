"""Harnesses for implementations in other languages: what is shipped, how to build it, how to start it.

A harness is a program that speaks the harness protocol (``docs/protocol.md``) on
stdin/stdout. The ones shipped here live inside the installed package, so their paths
depend on where it was installed; ``python -m zarr_jpeg_conformance.harnesses NAME`` finds
them and replaces itself with the harness, which makes the ``--impl`` spec the same on
every machine::

    pytest --pyargs zarr_jpeg_conformance.suites \\
        --impl 'exec:python3 -m zarr_jpeg_conformance.harnesses node-jpeg-js'

Two tables: :data:`BUILDS`, one row per folder of this package that is built as a whole
(an npm project, a cargo workspace, a Maven project, a Go module), with the toolchain it
needs, the command that builds it and what must exist once it is built; and
:data:`HARNESSES`, one row per implementation, naming its build and the command that runs
it. ``harnesses install`` builds every folder whose toolchain is here and says which
toolchains are missing; a harness whose build is absent reports itself unavailable with
the reason.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE / "node"


class Unavailable(RuntimeError):
    """A harness cannot run here; the message says why and what to install."""


def _version_tuple(text: str) -> tuple[int, ...]:
    digits = []
    for part in text.strip().lstrip("v").split("."):
        number = "".join(ch for ch in part if ch.isdigit())
        if not number:
            break
        digits.append(int(number))
    return tuple(digits)


@dataclass(frozen=True)
class Toolchain:
    """A program a build or a harness needs, and the oldest version that will do."""

    program: str
    minimum: tuple[int, ...]
    version_argv: tuple[str, ...]
    install_hint: str
    #: Where the version number starts in the output of ``version_argv`` (after this text).
    version_after: str = ""

    def executable(self) -> str:
        """The program's path, or Unavailable with the reason and what to install."""
        path = shutil.which(self.program)
        if path is None:
            raise Unavailable(f"{self.program} not available: {self.install_hint}")
        try:
            done = subprocess.run([path, *self.version_argv], capture_output=True, text=True, timeout=60, check=True)
        except (OSError, subprocess.SubprocessError) as exc:
            raise Unavailable(f"{self.program} not available: {path} {' '.join(self.version_argv)} failed: {exc}") from exc
        out = (done.stdout or done.stderr).strip()
        text = out.split(self.version_after, 1)[1] if self.version_after and self.version_after in out else out
        version = _version_tuple(text.split()[0] if text.split() else "")
        if not version:
            raise Unavailable(f"{self.program} not available: cannot read the version in {out[:200]!r}")
        if version < self.minimum:
            wanted = ".".join(map(str, self.minimum))
            raise Unavailable(f"{self.program} not available: {path} is {text.split()[0]}, the harnesses need >= {wanted}; {self.install_hint}")
        return path


NODE = Toolchain("node", (20, 19), ("--version",), "install Node.js >= 20.19 (Debian: apt-get install nodejs npm)")
NPM = Toolchain("npm", (9,), ("--version",), "install npm (Debian: apt-get install npm)")
# image 0.25.10 needs Rust 1.88 (its rust-version); jpeg-encoder 0.7.1 needs 1.87.
CARGO = Toolchain("cargo", (1, 88), ("--version",), "install Rust >= 1.88 with rustup", version_after="cargo ")
# turbojpeg-sys builds its bundled libjpeg-turbo 3 with cmake (and nasm for SIMD, optional:
# without it rust-turbojpeg is built without SIMD and says so in its versions).
CMAKE = Toolchain("cmake", (3, 10), ("--version",), "install cmake (Debian: apt-get install cmake nasm)",
                  version_after="cmake version ")


@dataclass(frozen=True)
class Build:
    """A folder of this package built as a whole; its harnesses run once it is built."""

    folder: str
    #: Toolchains the build needs (the first is named when one is missing).
    toolchains: tuple[Toolchain, ...]
    #: The build command, given the executables of ``toolchains`` in order; run in the folder.
    command: Callable[[Sequence[str]], list[str]]
    #: Paths (relative to the folder) that exist once it is built.
    products: tuple[str, ...]

    @property
    def path(self) -> Path:
        return HERE / self.folder

    def check_built(self) -> None:
        """Unavailable unless every product of the build exists."""
        missing = [p for p in self.products if not (self.path / p).exists()]
        if missing:
            raise Unavailable(
                f"{self.folder} harnesses are not built ({', '.join(missing)} missing): "
                "run `python -m zarr_jpeg_conformance.harnesses install`"
            )

    def run(self) -> int:
        """Build the folder; Unavailable if a toolchain is missing."""
        tools = [t.executable() for t in self.toolchains]
        return subprocess.run(self.command(tools), cwd=self.path, check=False).returncode


@dataclass(frozen=True)
class Harness:
    """A shipped harness: the name for --impl (also the ``name`` of its ``start`` reply) and how it runs."""

    name: str
    #: The language the implementation under test is written in or called from.
    language: str
    description: str
    #: The folder (a key of BUILDS) whose build holds it.
    build: str
    #: The run command, given the build folder; the toolchain's executable comes first where one is needed.
    argv: Callable[[Path], list[str]]
    #: The toolchain that runs it (None: the build produced a native executable).
    runtime: Toolchain | None = None
    #: What it puts under test, as its ``start`` reply says (adapters.labels.KINDS): the
    #: shipped harnesses call a JPEG library the way a codec author would.
    kind: str = "library"

    def command(self) -> list[str]:
        """The argument list that runs it; Unavailable if it cannot run here."""
        build = BUILDS[self.build]
        argv = self.argv(build.path)
        if self.runtime is not None:
            argv[0] = self.runtime.executable()
        build.check_built()
        return argv


# ---------------------------------------------------------------------------- the tables

#: The binaries of the cargo workspace in harnesses/rust, each named as its harness.
RUST_HARNESSES = ("rust-zune-jpeg", "rust-image", "rust-turbojpeg")

BUILDS: dict[str, Build] = {
    b.folder: b
    for b in (
        # Optional dependencies of pdfjs-dist (a canvas binding) serve rendering, not JPEG decoding.
        Build("node", (NODE, NPM), lambda t: [t[1], "ci", "--omit=optional", "--no-audit", "--no-fund"],
              ("node_modules/jpeg-js/package.json", "node_modules/pdfjs-dist/package.json")),
        # One cargo workspace, one binary per library; release mode: the matrix measures speed.
        Build("rust", (CARGO, CMAKE), lambda t: [t[0], "build", "--locked", "--release"],
              tuple(f"target/release/{name}" for name in RUST_HARNESSES)),
    )
}


def _node_decoder(decoder: str) -> Callable[[Path], list[str]]:
    return lambda folder: ["node", str(folder / "harness.mjs"), "--decoder", decoder]


def _rust_binary(name: str) -> Callable[[Path], list[str]]:
    return lambda folder: [str(folder / "target" / "release" / name)]


HARNESSES: dict[str, Harness] = {
    h.name: h
    for h in (
        Harness("node-jpeg-js", "JavaScript (Node.js)",
                "jpeg-js 0.4.4 on Node.js, decode only (ignores APP14, like neuroglancer's jpgjs)",
                "node", _node_decoder("jpeg-js"), NODE),
        Harness("node-pdfjs", "JavaScript (Node.js)",
                "pdf.js 5.6.205 JpegImage on Node.js, decode only (the upstream of neuroglancer's jpgjs)",
                "node", _node_decoder("pdfjs"), NODE),
        Harness("rust-zune-jpeg", "Rust",
                "zune-jpeg decoder with jpeg-encoder, the pure-Rust pair zarrs_jpeg builds on",
                "rust", _rust_binary("rust-zune-jpeg")),
        Harness("rust-image", "Rust",
                "the image crate's JpegDecoder (zune-jpeg inside) and its own JpegEncoder",
                "rust", _rust_binary("rust-image")),
        Harness("rust-turbojpeg", "Rust",
                "the turbojpeg crate: libjpeg-turbo 3's TurboJPEG API, built from its bundled source",
                "rust", _rust_binary("rust-turbojpeg")),
    )
}


def command(name: str) -> list[str]:
    """The argument list that runs harness ``name``; Unavailable if it cannot run here."""
    if name not in HARNESSES:
        raise KeyError(f"unknown harness {name!r}: use one of {', '.join(HARNESSES)}")
    return HARNESSES[name].command()


def install(folders: Sequence[str] = ()) -> dict[str, str]:
    """Build each folder (all by default) whose toolchains are here: folder -> "built" or why not.

    A missing toolchain is not an error (its harnesses then report themselves
    unavailable); a build that fails is, and says so.
    """
    outcome: dict[str, str] = {}
    for folder in folders or BUILDS:
        build = BUILDS[folder]
        try:
            code = build.run()
        except Unavailable as exc:
            outcome[folder] = f"skipped: {exc}"
            continue
        outcome[folder] = "built" if code == 0 else f"FAILED: the build exited with {code}"
    return outcome


__all__ = ["BUILDS", "HARNESSES", "NODE_DIR", "Build", "Harness", "Toolchain", "Unavailable", "command", "install"]
