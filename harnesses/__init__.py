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

import fcntl
import os
import resource
import shlex
import shutil
import subprocess
import sys
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
#: The exec: client runs a harness under an address-space limit (--harness-memory, 2 GiB by
#: default), and a JVM's defaults reserve more than that up front (a quarter of the machine's
#: memory for the heap, 1 GiB of compressed class space, 240 MiB of code cache), so a plain
#: ``java`` dies before it starts. These bound each reservation, with room for chunks of tens
#: of MB: about 940 MiB of address space in all (it starts under 1024 MiB, not under 900).
#: The serial collector starts no GC threads (the harness is single-threaded). HotSpot writes
#: its own messages to stdout, the protocol's channel: initialization errors go to stderr with
#: DisplayVMOutputToStderr, crash reports with ErrorFileToStderr (no hs_err files in the
#: session's directory); only the '#' header of a fatal error still goes to stdout.
JVM_FLAGS = (
    "-XX:+DisplayVMOutputToStderr", "-XX:+ErrorFileToStderr",
    "-Xms16m", "-Xmx512m",
    "-XX:CompressedClassSpaceSize=64m", "-XX:MaxMetaspaceSize=128m", "-XX:ReservedCodeCacheSize=48m",
    "-XX:+UseSerialGC", "-XX:-UsePerfData",
)
#: glibc gives each thread that allocates its own 64 MiB malloc arena, up to 8 per core: in a
#: JVM's dozen threads that is most of the address space. Two are plenty for one worker thread.
JVM_ENVIRONMENT = (("MALLOC_ARENA_MAX", "2"),)
# The version check runs under the same limit as the harness (python -m ...harnesses NAME).
JAVA = Toolchain("java", (17,), (*JVM_FLAGS, "-version"), "install a Java runtime >= 17 (Debian: apt-get install openjdk-17-jre-headless)",
                 version_after='version "')
JAVAC = Toolchain("javac", (17,), ("-version",), "install a JDK >= 17 (Debian: apt-get install openjdk-17-jdk-headless)",
                  version_after="javac ")
MAVEN = Toolchain("mvn", (3, 6, 3), ("-B", "-v"), "install Maven >= 3.6.3 (Debian: apt-get install maven)",
                  version_after="Apache Maven ")
GO = Toolchain("go", (1, 19), ("version",), "install Go >= 1.19 (Debian: apt-get install golang-go)", version_after="go version go")
# playwright-core 1.65 speaks the DevTools protocol of current Chromium; much older builds are untested.
CHROMIUM = Toolchain("chromium", (120,), ("--version",), "install Chromium (Debian: apt-get install chromium)",
                     version_after="Chromium")
# zarrs_jpeg 0.2.0 needs Rust 1.95 (its rust-version); image 0.25.10 needs 1.88.
CARGO = Toolchain("cargo", (1, 95), ("--version",), "install Rust >= 1.95 with rustup", version_after="cargo ")
# turbojpeg-sys builds its bundled libjpeg-turbo 3 with cmake, and with nasm for its SIMD code:
# zarrs_jpeg takes the turbojpeg crate's default features, whose require-simd fails the
# build without nasm (the workspace builds libjpeg-turbo once, for both turbojpeg harnesses).
CMAKE = Toolchain("cmake", (3, 10), ("--version",), "install cmake (Debian: apt-get install cmake nasm)",
                  version_after="cmake version ")
NASM = Toolchain("nasm", (2, 13), ("-v",), "install nasm (Debian: apt-get install nasm)", version_after="NASM version ")


class NewestPython(Toolchain):
    """The newest Python >= ``minimum`` on this machine: pyenv's versions, then python3.N on PATH."""

    def candidates(self) -> list[str]:
        found: list[str] = []
        pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
        found += [str(p) for p in sorted((pyenv_root / "versions").glob("*/bin/python3"))]
        found += [path for minor in range(30, self.minimum[1] - 1, -1) if (path := shutil.which(f"python3.{minor}"))]
        return found

    def executable(self) -> str:
        best: tuple[tuple[int, ...], str] | None = None
        for path in self.candidates():
            try:
                done = subprocess.run([path, *self.version_argv], capture_output=True, text=True, timeout=60, check=True)
            except (OSError, subprocess.SubprocessError):
                continue
            version = _version_tuple(done.stdout.split()[-1] if done.stdout.split() else "")
            if version >= self.minimum and (best is None or version > best[0]):
                best = (version, path)
        if best is None:
            wanted = ".".join(map(str, self.minimum))
            raise Unavailable(f"no Python >= {wanted} on this machine (pyenv's versions, python3.N on PATH): {self.install_hint}")
        return best[1]


# imagecodecs-zarr (imagecodecs_jpeg) needs Python >= 3.12; this package supports 3.11.
PYTHON_312 = NewestPython("python3", (3, 12), ("--version",),
                          "imagecodecs-zarr needs one (pyenv install 3.13, or Debian's python3.12/python3.13)")


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
    #: Commands run after ``command``, given the same executables, each only if the one before succeeded.
    then: tuple[Callable[[Sequence[str]], list[str]], ...] = ()
    #: The environment variable that names the build's output folder (CARGO_TARGET_DIR), where the build can
    #: share one: unless it is set, the build writes to this project's cache (:func:`cache_folder`), shared by
    #: every checkout, and its products (under ``target/``) are copied into the folder. A fresh clone then
    #: rebuilds only its own crates, not their dependencies (libjpeg-turbo's C build alone takes minutes).
    shared_output: str | None = None

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
        shared, env = self.shared_folder(), self.environment()
        if shared is None:
            return self._build(tools, None)
        try:
            shared.mkdir(parents=True, exist_ok=True)
            lock = open(shared.parent / f"{shared.name}.lock", "wb")  # noqa: SIM115 - the with-block below holds it
        except OSError as exc:
            print(f"harnesses/{self.folder}: cannot use the shared build folder {shared} ({exc}): building in the folder",
                  file=sys.stderr)
            return self._build(tools, None)
        # One build at a time writes the shared folder and copies out of it: another checkout's build
        # between the two would hand this folder that checkout's binaries.
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            code = self._build(tools, env)
            if code == 0:
                for product in self.products:
                    _copy_over(shared / Path(product).relative_to("target"), self.path / product)
            return code

    def environment(self) -> dict[str, str] | None:
        """The environment of the build's commands (and of later ones in the folder, e.g. ``cargo test``):
        the shared output folder set, where the build uses one and the user did not choose a folder; else None."""
        shared = self.shared_folder()
        return None if shared is None else {**os.environ, str(self.shared_output): str(shared)}

    def shared_folder(self) -> Path | None:
        """The output folder this build shares with other checkouts' (:attr:`shared_output`), or None."""
        if self.shared_output is None or os.environ.get(self.shared_output):
            return None
        return cache_folder() / f"{self.folder}-target"

    def _build(self, tools: Sequence[str], env: dict[str, str] | None) -> int:
        for command in (self.command, *self.then):
            code = subprocess.run(command(tools), cwd=self.path, env=env, check=False).returncode
            if code != 0:
                return code
        return 0


def cache_folder() -> Path:
    """This project's folder of build caches: ``$XDG_CACHE_HOME/zarr-jpeg-conformance`` (default ``~/.cache``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "zarr-jpeg-conformance"


def _copy_over(source: Path, destination: Path) -> None:
    """Copy a built file into place whole: a harness started meanwhile runs the old file or the new one."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(f".{destination.name}.partial")
    shutil.copy2(source, partial)
    os.replace(partial, destination)


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
    #: Environment variables it needs, set through ``env`` in the command (so that the
    #: command printed by ``harnesses command NAME`` runs it the same way).
    environment: tuple[tuple[str, str], ...] = ()
    #: Other programs it drives; each one's path is passed as ``--PROGRAM PATH``.
    tools: tuple[Toolchain, ...] = ()
    #: Why it cannot run under an address-space limit (RLIMIT_AS), if it cannot.
    unlimited_address_space: str = ""
    #: What it puts under test, as its ``start`` reply says (adapters.labels.KINDS): the
    #: shipped harnesses call a JPEG library the way a codec author would.
    kind: str = "library"

    def command(self) -> list[str]:
        """The argument list that runs it; Unavailable if it cannot run here."""
        build = BUILDS[self.build]
        argv = self.argv(build.path)
        if self.runtime is not None:
            argv[0] = self.runtime.executable()
        for tool in self.tools:
            argv += [f"--{tool.program}", tool.executable()]
        build.check_built()
        if self.environment:
            env = shutil.which("env")
            if env is None:
                raise Unavailable(f"{self.name} needs env (POSIX) to set {', '.join(k for k, _ in self.environment)}")
            argv = [env, *(f"{key}={value}" for key, value in self.environment), *argv]
        return argv

    def check_address_space(self) -> None:
        """Unavailable if it cannot run under this process's address-space limit (RLIMIT_AS).

        The client's limit (``--harness-memory``) is inherited by every process the harness
        starts, and raising it again takes a privilege (CAP_SYS_RESOURCE) that neither a user
        nor CI's container has; :func:`address_space_limit` tells the client not to set it.
        """
        if not self.unlimited_address_space:
            return
        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            raise Unavailable(
                f"{self.name} cannot run under an address-space limit ({soft >> 20} MiB here): "
                f"{self.unlimited_address_space}; run it with --harness-memory 0"
            )


# ---------------------------------------------------------------------------- the tables

#: The binaries of the cargo workspace in harnesses/rust, each named as its harness.
RUST_HARNESSES = ("rust-zune-jpeg", "rust-image", "rust-turbojpeg", "zarrs-jpeg-turbo", "zarrs-jpeg-rust")
#: The harness built by a cargo invocation of its own: zarrs_jpeg's backend is a cargo feature,
#: and features unify over the packages of one build, so in one build with zarrs-jpeg-turbo both
#: binaries would run the turbojpeg backend.
RUST_SEPARATE = "zarrs-jpeg-rust"
#: The venv (harnesses/python) where imagecodecs-zarr runs when this Python is older than 3.12.
PYTHON_VENV = HERE / "python"

BUILDS: dict[str, Build] = {
    b.folder: b
    for b in (
        # Not --omit=optional: sharp's native binaries (libvips) are optional dependencies,
        # one per platform, and npm installs only this platform's. The price is pdf.js's
        # optional canvas binding (about 30 MB), which JPEG decoding does not load.
        Build("node", (NODE, NPM), lambda t: [t[1], "ci", "--no-audit", "--no-fund"],
              ("node_modules/jpeg-js/package.json", "node_modules/pdfjs-dist/package.json",
               "node_modules/sharp/package.json", "node_modules/@jsquash/jpeg/package.json",
               "node_modules/@cornerstonejs/codec-libjpeg-turbo-8bit/package.json",
               "node_modules/playwright-core/package.json")),
        # Exact versions of every dependency and plugin in pom.xml: a warm ~/.m2 builds offline.
        Build("java", (MAVEN, JAVAC), lambda t: [t[0], "-q", "-B", "-ntp", "-Dstyle.color=never", "package"],
              ("target/zarr-jpeg-harness.jar",)),
        # Standard library only: no go.sum, nothing to download.
        Build("go", (GO,), lambda t: [t[0], "build", "-trimpath", "-buildvcs=false", "-o", "go-image-jpeg", "."], ("go-image-jpeg",)),
        # One cargo workspace, one binary per library; release mode: the matrix measures speed.
        # Two invocations, so that zarrs_jpeg's backend features do not unify (RUST_SEPARATE).
        Build("rust", (CARGO, CMAKE, NASM),
              lambda t: [t[0], "build", "--locked", "--release", "--workspace", "--exclude", RUST_SEPARATE],
              tuple(f"target/release/{name}" for name in RUST_HARNESSES),
              then=(lambda t: [t[0], "build", "--locked", "--release", "-p", RUST_SEPARATE],), shared_output="CARGO_TARGET_DIR"),
        # A venv of the newest Python >= 3.12, for imagecodecs-zarr (harnesses/pyvenv.py).
        Build("python", (PYTHON_312,), lambda t: [sys.executable, "-m", f"{__name__}.pyvenv", t[0], str(PYTHON_VENV)],
              ("venv/bin/python", "site/zarr_jpeg_conformance")),
    )
}


#: V8 reserves address space for a WebAssembly memory up front: guard regions of several
#: GiB unless the trap handler is off, and then the memory's declared maximum (2 GiB in the
#: Emscripten builds here). Under the client's address-space limit (--harness-memory,
#: 2 GiB by default, of which Node itself reserves about 700 MiB) a second instance
#: fails with "Cannot allocate Wasm memory", and instances replaced after a failure pile
#: up until V8 collects them. 128 MiB per memory holds a 65500 x 8 chunk many times over
#: and bounds a decoder that trusts a forged header.
NODE_WASM_FLAGS = ("--disable-wasm-trap-handler", "--wasm-max-mem-pages=2048")


def _node_library(library: str) -> Callable[[Path], list[str]]:
    return lambda folder: ["node", *NODE_WASM_FLAGS, str(folder / "harness.mjs"), "--library", library]


NODE_JS = "JavaScript (Node.js)"


def _java_library(library: str) -> Callable[[Path], list[str]]:
    return lambda folder: ["java", *JVM_FLAGS, "-jar", str(folder / "target" / "zarr-jpeg-harness.jar"), library]


def _rust_binary(name: str) -> Callable[[Path], list[str]]:
    return lambda folder: [str(folder / "target" / "release" / name)]


HARNESSES: dict[str, Harness] = {
    h.name: h
    for h in (
        Harness("node-jpeg-js", NODE_JS,
                "jpeg-js 0.4.4 on Node.js, decode only (ignores APP14, like neuroglancer's jpgjs)",
                "node", _node_library("jpeg-js"), NODE),
        Harness("node-pdfjs", NODE_JS,
                "pdf.js 5.6.205 JpegImage on Node.js, decode only (the upstream of neuroglancer's jpgjs)",
                "node", _node_library("pdfjs"), NODE),
        Harness("node-sharp", NODE_JS,
                "sharp (libvips with mozjpeg) on Node.js: encode 4:4:4 and 4:2:0 only, decode",
                "node", _node_library("sharp"), NODE),
        Harness("node-jsquash", NODE_JS,
                "@jsquash/jpeg (mozjpeg compiled to WebAssembly, trellis quantization) on Node.js: "
                "encode with equal horizontal and vertical factors only, decode",
                "node", _node_library("jsquash"), NODE),
        Harness("node-cornerstone", NODE_JS,
                "@cornerstonejs/codec-libjpeg-turbo-8bit (libjpeg-turbo compiled to WebAssembly, as in "
                "medical web viewers) on Node.js: encode and decode through the TurboJPEG API",
                "node", _node_library("cornerstone"), NODE),
        Harness("browser-chromium", "JavaScript (browser)",
                "Chromium's own JPEG decoder as a web page gets it (createImageBitmap, canvas getImageData), "
                "headless through playwright-core; decode only",
                "node", _node_library("chromium"), NODE, tools=(CHROMIUM,),
                unlimited_address_space="Chromium reserves tens of GiB of address space at start and aborts "
                                        "(SIGTRAP) under any limit below about 64 GiB, even for --version"),
        Harness("java-imageio", "Java",
                "the JDK's javax.imageio JPEG plugin (what zarr-java's proposed codec uses), encode and decode",
                "java", _java_library("imageio"), JAVA, JVM_ENVIRONMENT),
        Harness("java-twelvemonkeys", "Java",
                "TwelveMonkeys imageio-jpeg (harness/pom.xml) through javax.imageio, encode and decode",
                "java", _java_library("twelvemonkeys"), JAVA, JVM_ENVIRONMENT),
        Harness("go-image-jpeg", "Go",
                "Go's standard image/jpeg: decode, and encode of grayscale and 4:2:0 YCbCr (all it writes)",
                "go", lambda folder: [str(folder / "go-image-jpeg")]),
        Harness("rust-zune-jpeg", "Rust",
                "zune-jpeg decoder with jpeg-encoder, the pure-Rust pair zarrs_jpeg builds on",
                "rust", _rust_binary("rust-zune-jpeg")),
        Harness("rust-image", "Rust",
                "the image crate's JpegDecoder (zune-jpeg inside) and its own JpegEncoder",
                "rust", _rust_binary("rust-image")),
        Harness("rust-turbojpeg", "Rust",
                "the turbojpeg crate: libjpeg-turbo 3's TurboJPEG API, built from its bundled source",
                "rust", _rust_binary("rust-turbojpeg")),
        Harness("zarrs-jpeg-turbo", "Rust",
                "zarrs_jpeg 0.2.0 (writes 'jpeg'), default backend libjpeg-turbo, built by zarrs' codec registry "
                "(CodecChain::from_metadata): its parse verdicts are its own",
                "rust", _rust_binary("zarrs-jpeg-turbo"), kind="codec"),
        Harness("zarrs-jpeg-rust", "Rust",
                "zarrs_jpeg 0.2.0 (writes 'jpeg'), feature backend-rust (zune-jpeg decodes, mozjpeg-rs encodes), "
                "built by zarrs' codec registry",
                "rust", _rust_binary("zarrs-jpeg-rust"), kind="codec"),
        Harness("imagecodecs_jpeg", "Python",
                "imagecodecs-zarr's imagecodecs_jpeg (writes 'imagecodecs_jpeg') through zarr-python, in a venv of "
                "the newest Python >= 3.12 (harnesses/python)",
                "python", lambda folder: [str(folder / "venv" / "bin" / "python"), "-m",
                                          "zarr_jpeg_conformance.harnesses.server", "imagecodecs_jpeg"],
                environment=(("PYTHONPATH", str(PYTHON_VENV / "site")),), kind="codec"),
    )
}


def address_space_limit(argv: Sequence[str], requested: int | None) -> int | None:
    """The address-space limit for a harness command: ``requested``, or None (no limit) for
    a shipped harness that cannot run under one (``python -m zarr_jpeg_conformance.harnesses NAME``
    with ``unlimited_address_space`` in its row). For the client that sets ``--harness-memory``."""
    args = list(argv)
    for i in range(len(args) - 2):
        if args[i] == "-m" and args[i + 1] == __name__ and args[i + 2] in HARNESSES:
            return None if HARNESSES[args[i + 2]].unlimited_address_space else requested
    return requested


def spec_memory_limit(spec: str, requested: int | None) -> int | None:
    """:func:`address_space_limit` of an ``--impl`` spec (``requested`` for anything but ``exec:``)."""
    return address_space_limit(shlex.split(spec.removeprefix("exec:")), requested) if spec.startswith("exec:") else requested


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


__all__ = ["BUILDS", "CHROMIUM", "HARNESSES", "JVM_ENVIRONMENT", "JVM_FLAGS", "NODE_DIR", "Build", "Harness", "Toolchain",
           "Unavailable", "address_space_limit", "command", "install", "spec_memory_limit"]
