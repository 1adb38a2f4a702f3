"""The harness kits: each packs as its registry expects, its version is the protocol's, and the
shipped harnesses built on it keep no protocol code of their own.

The packaging checks run the registries' own tools on the kits (no network beyond what the
harness builds already fetched, nothing published); each is skipped, saying why, where its
toolchain is missing. They reuse the harness builds' outputs, so each takes about a second.
"""

from __future__ import annotations

import json
import re
import subprocess
import tarfile
import tomllib
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest

from zarr_jpeg_conformance.harnesses import BUILDS, CARGO, GO, MAVEN, NODE, NPM, Unavailable

ROOT = Path(__file__).resolve().parents[1]
RUST = ROOT / "harnesses" / "rust"
GO_KIT = ROOT / "harnesses" / "go" / "kit"
NODE_DIR = ROOT / "harnesses" / "node"
JAVA = ROOT / "harnesses" / "java"
POM = "{http://maven.apache.org/POM/4.0.0}"
#: What the protocol's wire format looks like in code: none of it belongs in a harness's own file.
PROTOCOL_CODE = re.compile(r'"seq"|"status"|"framing"|stdin|base64', re.IGNORECASE)


def _protocol_version() -> int:
    schema = json.loads((ROOT / "schema" / "protocol" / "v1.schema.json").read_text(encoding="utf-8"))
    version: int = schema["$defs"]["start-request"]["properties"]["protocol"]["const"]
    return version


def _tool(toolchain: object) -> str:
    try:
        return toolchain.executable()  # type: ignore[attr-defined, no-any-return]
    except Unavailable as exc:
        pytest.skip(str(exc))


def test_rust_kit_metadata_is_ready_to_publish() -> None:
    package = tomllib.loads((RUST / "kit" / "Cargo.toml").read_text(encoding="utf-8"))["package"]
    assert package.get("publish", True) is not False
    for field in ("description", "license", "repository", "readme", "keywords", "categories", "rust-version"):
        assert package.get(field), f"kit/Cargo.toml has no {field}: crates.io wants it"
    assert int(package["version"].split(".")[0]) == _protocol_version(), "the kit's major version is the protocol's"
    lib = (RUST / "kit" / "src" / "lib.rs").read_text(encoding="utf-8")
    assert f"pub const PROTOCOL: u64 = {_protocol_version()};" in lib


def test_rust_kit_packs() -> None:
    cargo = _tool(CARGO)
    package = tomllib.loads((RUST / "kit" / "Cargo.toml").read_text(encoding="utf-8"))["package"]
    done = subprocess.run([cargo, "package", "--locked", "--no-verify", "--allow-dirty", "-p", package["name"]],
                          cwd=BUILDS["rust"].path, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"cargo package failed:\n{done.stderr[-3000:]}"
    crate = RUST / "target" / "package" / f"{package['name']}-{package['version']}.crate"
    with tarfile.open(crate) as archive:
        names = {Path(name).relative_to(f"{package['name']}-{package['version']}").as_posix() for name in archive.getnames()}
    assert {"Cargo.toml", "README.md", "src/lib.rs", "src/protocol.rs", "examples/jpeg_decoder.rs"} <= names, names


@pytest.mark.parametrize("harness", sorted(p.relative_to(RUST).as_posix() for p in RUST.glob("*/src/*.rs")
                                          if p.parts[-3] not in ("kit", "target")))
def test_rust_harness_holds_only_library_glue(harness: str) -> None:
    text = (RUST / harness).read_text(encoding="utf-8")
    assert not PROTOCOL_CODE.search(text), f"{harness} speaks the protocol itself: that is the kit's part"
    if harness.endswith("main.rs"):
        assert "zarr_jpeg_conformance_harness::" in text, f"{harness} is not built on the kit"


def test_go_kit_module_is_ready_to_publish() -> None:
    module = re.search(r"^module (\S+)$", (GO_KIT / "go.mod").read_text(encoding="utf-8"), re.M)
    assert module and module.group(1).endswith("/harnesses/go/kit"), "a module in a subdirectory is named by its path"
    assert _protocol_version() == 1, "protocol 2 needs the module path's /v2 suffix"
    assert f"const Protocol = {_protocol_version()}" in (GO_KIT / "kit.go").read_text(encoding="utf-8")
    harness = (GO_KIT.parent / "go.mod").read_text(encoding="utf-8")
    assert re.search(rf"^require {re.escape(module.group(1))} v{_protocol_version()}\.", harness, re.M), harness
    assert f"replace {module.group(1)} => ./kit" in harness, "the shipped harness builds on this checkout's kit"
    assert (GO_KIT / "README.md").is_file()


def test_go_kit_vets_and_passes_its_tests() -> None:
    go = _tool(GO)
    for command in ([go, "vet", "./..."], [go, "test", "./..."]):
        done = subprocess.run(command, cwd=GO_KIT, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, f"{' '.join(command[1:])} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
    assert re.search(r"^ok\s", done.stdout, re.M), done.stdout


def test_go_harness_holds_only_library_glue() -> None:
    for path in GO_KIT.parent.glob("*.go"):
        text = path.read_text(encoding="utf-8")
        assert not PROTOCOL_CODE.search(text), f"{path.name} speaks the protocol itself: that is the kit's part"
        assert '"github.com/zarr-developers/zarr-jpeg-conformance/harnesses/go/kit"' in text


def test_npm_kit_metadata_is_ready_to_publish() -> None:
    package = json.loads((NODE_DIR / "kit" / "package.json").read_text(encoding="utf-8"))
    assert not package.get("private"), "npm refuses to publish a private package"
    for field in ("description", "license", "repository", "exports", "files", "engines", "keywords"):
        assert package.get(field), f"kit/package.json has no {field}"
    assert package["type"] == "module"
    assert int(package["version"].split(".")[0]) == _protocol_version(), "the kit's major version is the protocol's"
    assert f"export const PROTOCOL = {_protocol_version()};" in (NODE_DIR / "kit" / "index.mjs").read_text(encoding="utf-8")


def test_npm_kit_packs_and_passes_its_tests() -> None:
    npm, node = _tool(NPM), _tool(NODE)
    done = subprocess.run([npm, "pack", "--dry-run", "--json"], cwd=NODE_DIR / "kit", capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, f"npm pack failed:\n{done.stderr[-3000:]}"
    packed = {f["path"] for f in json.loads(done.stdout)[0]["files"]}
    assert {"package.json", "README.md", "index.mjs", "spec.mjs"} <= packed, packed
    tested = subprocess.run([node, "--test", "test/"], cwd=NODE_DIR / "kit", capture_output=True, text=True, timeout=120, check=False)
    assert tested.returncode == 0 and re.search(r"^# pass [1-9]", tested.stdout, re.M), tested.stdout[-3000:]


@pytest.mark.parametrize("harness", sorted(p.relative_to(NODE_DIR).as_posix() for p in NODE_DIR.glob("*.mjs")))
def test_node_harness_holds_only_library_glue(harness: str) -> None:
    text = (NODE_DIR / harness).read_text(encoding="utf-8")
    assert not PROTOCOL_CODE.search(text), f"{harness} speaks the protocol itself: that is the kit's part"
    assert "./kit/index.mjs" in text, f"{harness} is not built on the kit"


def _kit_pom() -> ElementTree.Element:
    return ElementTree.parse(JAVA / "kit" / "pom.xml").getroot()


def test_maven_kit_metadata_is_ready_to_publish() -> None:
    pom = _kit_pom()
    # What Maven Central asks of every artifact's pom.
    for path in ("groupId", "artifactId", "version", "name", "description", "url", "licenses/license/name", "developers/developer",
                 "scm/url", "scm/connection"):
        element = pom.find("/".join(POM + p for p in path.split("/")))
        assert element is not None, f"kit/pom.xml has no {path}"
        assert (element.text or "").strip() or len(element) > 0, f"kit/pom.xml's {path} is empty"
    assert pom.find(POM + "parent") is None, "the kit's pom stands alone, so that it can be published without the aggregator"
    assert pom.find(POM + "dependencies") is None, "the kit depends on nothing"
    version = pom.findtext(POM + "version") or ""
    assert int(version.split(".")[0]) == _protocol_version(), "the kit's major version is the protocol's"
    harness = next((JAVA / "kit" / "src").rglob("Harness.java")).read_text(encoding="utf-8")
    assert f"public static final int PROTOCOL = {_protocol_version()};" in harness


def test_maven_kit_packs() -> None:
    mvn = _tool(MAVEN)
    done = subprocess.run([mvn, "-q", "-B", "-ntp", "-Dstyle.color=never", "-f", str(JAVA / "kit" / "pom.xml"), "package"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"mvn package failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    pom = _kit_pom()
    jar = JAVA / "kit" / "target" / f"{pom.findtext(POM + 'artifactId')}-{pom.findtext(POM + 'version')}.jar"
    with zipfile.ZipFile(jar) as archive:
        classes = {Path(name).stem for name in archive.namelist() if name.endswith(".class")}
    assert {"Harness", "Codec", "Library", "Rejection", "Config"} <= classes, classes


@pytest.mark.parametrize("harness", sorted(p.name for p in (JAVA / "harness" / "src").rglob("*.java")))
def test_java_harness_holds_only_library_glue(harness: str) -> None:
    text = next((JAVA / "harness" / "src").rglob(harness)).read_text(encoding="utf-8")
    assert not PROTOCOL_CODE.search(text), f"{harness} speaks the protocol itself: that is the kit's part"


# ------------------------------------------------------------------ the kits travel with the suite


@pytest.mark.parametrize("language", ["rust", "go", "node", "java"])
def test_kit_prints_the_folder_of_the_installed_kit(language: str, capsys: pytest.CaptureFixture[str]) -> None:
    from zarr_jpeg_conformance.harnesses.__main__ import main
    from zarr_jpeg_conformance.harnesses.kits import KITS

    assert main(["kit", language]) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert folder == KITS[language].path and KITS[language].is_copy(folder)


def test_kit_copy_replaces_only_an_earlier_copy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A copy goes where a codec's build looks; run again (a developer's second build) it replaces the earlier copy
    whole, and it never writes over a folder of someone else's files."""
    from zarr_jpeg_conformance.harnesses.__main__ import main

    kit = tmp_path / "jpeg-conformance-kit"
    assert main(["kit", "go", "--copy", str(kit)]) == 0
    assert capsys.readouterr().out.strip() == str(kit)
    assert (kit / "go.mod").is_file() and (kit / "kit.go").is_file()
    (kit / "stale.go").write_text("package kit\n")
    assert main(["kit", "go", "--copy", str(kit)]) == 0
    assert not (kit / "stale.go").exists(), "the earlier copy is replaced whole"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jpeg-conformance-kit"], "nothing left beside it"
    capsys.readouterr()
    assert main(["kit", "rust", "--copy", str(kit)]) == 2, "a copy of another kit is someone's folder"
    assert "holds no copy of the rust kit" in capsys.readouterr().err and (kit / "go.mod").is_file()
    (tmp_path / "file").write_text("mine")
    assert main(["kit", "node", "--copy", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err and (tmp_path / "file").read_text() == "mine"
    with pytest.raises(SystemExit) as exited:
        main(["kit", "cobol"])
    assert exited.value.code == 2
