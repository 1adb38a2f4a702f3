"""The built wheel is the whole product: it imports, finds its data, and runs its suites from anywhere."""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str | Path, cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path, venv_over_ours: Callable[[Path], Path]) -> Path:
    """A fresh venv with the wheel and an example adapter package installed.

    It sees the site-packages of the interpreter running the tests (conftest.venv_over_ours), so that
    numpy and the backends need no download; the project itself comes only from the wheel (checked below).
    """
    tmp = tmp_path_factory.mktemp("wheel-venv")
    python = venv_over_ours(tmp / "venv")
    pkg = tmp / "example_pkg_src"
    (pkg / "example_pkg").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "example-pkg"\nversion = "0.1"\n'
        '[tool.setuptools.package-data]\nexample_pkg = ["*.json"]\n'
    )
    (pkg / "example_pkg" / "__init__.py").write_text(
        textwrap.dedent(
            '''
            """An implementation under test, as another repository would ship its adapter."""
            from zarr_jpeg_conformance.backends.imagecodecs import ImagecodecsAdapter

            class Adapter(ImagecodecsAdapter):
                name = "example"

                def parse(self, codec):
                    # A known gap of this example implementation: no 4:4:0.
                    cfg = codec.get("configuration") if isinstance(codec, dict) else None
                    if isinstance(cfg, dict) and cfg.get("subsampling") == [[1, 2], [1, 1], [1, 1]]:
                        raise ValueError("4:4:0 is not implemented yet")
                    return super().parse(codec)
            '''
        )
    )
    (pkg / "example_pkg" / "known_failures.json").write_text(
        json.dumps({"implementation": "example", "known_failures": [
            {"case": "config.subsampling.jab-440", "reason": "4:4:0 is not implemented yet"}]})
    )
    for target in (wheel, pkg):
        done = _run(python, "-m", "pip", "install", "--no-deps", "-q", target, cwd=tmp)
        assert done.returncode == 0, done.stderr[-3000:]
    return python


def test_wheel_imports_and_finds_its_data(venv: Path, tmp_path: Path) -> None:
    """schema/ and fixtures/ are package data, found through importlib.resources from any cwd."""
    code = textwrap.dedent(
        """
        import json, zarr_jpeg_conformance as z
        from zarr_jpeg_conformance.corpus.registry import requirements, load_json
        from zarr_jpeg_conformance.corpus.cases import config_cases, chunk_cases
        print(json.dumps({"file": z.__file__, "reqs": len(requirements()), "configs": len(config_cases()),
                          "chunks": len(chunk_cases()), "schema": load_json("schema", "jpeg.schema.json")["$schema"]}))
        """
    )
    out = _run(venv, "-c", code, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert str(venv.parents[1]) in info["file"], f"imported from {info['file']}, not from the wheel"
    assert info["reqs"] > 50 and info["configs"] > 100 and info["chunks"] > 20
    assert "2020-12" in info["schema"]


def _known_failures_file(venv: Path) -> Path:
    code = "import example_pkg, pathlib; print(pathlib.Path(example_pkg.__file__).parent / 'known_failures.json')"
    return Path(_run(venv, "-c", code, cwd=venv.parent).stdout.strip())


def test_suites_run_from_an_unrelated_folder(venv: Path, tmp_path: Path) -> None:
    """pytest --pyargs zarr_jpeg_conformance.suites --impl=example_pkg:Adapter works outside the repo,
    with the implementation's own known-failure file."""
    results = tmp_path / "results.jsonl"
    out = _run(
        venv, "-m", "pytest", "--pyargs", "zarr_jpeg_conformance.suites", "--impl=example_pkg:Adapter",
        "--known-failures", _known_failures_file(venv),
        "-k", "parse", "-q", "-p", "no:cacheprovider", "--results", results, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "example" in out.stdout
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(records) > 150 and {r["implementation"] for r in records} == {"example"}
    known = [r for r in records if r.get("known")]
    assert [(r["case"], r["outcome"]) for r in known] == [("config.subsampling.jab-440", "fail")]
    assert {r["outcome"] for r in records if not r.get("known")} <= {"pass", "unsupported"}


def test_known_failure_that_passes_fails_the_run(venv: Path, tmp_path: Path) -> None:
    """Strict: listing a case the implementation passes is reported, and the run fails."""
    stale = tmp_path / "known.json"
    stale.write_text(json.dumps({"implementation": "example", "known_failures": [
        {"case": "config.quality.zero", "reason": "listed by mistake: the example rejects quality 0"}]}))
    out = _run(
        venv, "-m", "pytest", "--pyargs", "zarr_jpeg_conformance.suites", "--impl=example_pkg:Adapter",
        "--known-failures", stale, "-k", "quality", "-q", "-p", "no:cacheprovider", cwd=tmp_path,
    )
    assert out.returncode == 1, out.stdout[-2000:]
    assert "unexpected pass" in out.stdout


@pytest.mark.parametrize("language", ["rust", "go", "node", "java"])
def test_the_wheel_carries_each_harness_kit(venv: Path, tmp_path: Path, language: str) -> None:
    """A codec repository builds its harness on the kit the installed suite carries (docs/ci/*.yml): every file
    of the kit but its own tests' folder, copied out by ``harnesses kit LANG --copy DIR``."""
    from zarr_jpeg_conformance.harnesses.kits import KITS

    found = _run(venv, "-m", "zarr_jpeg_conformance.harnesses", "kit", language, cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()).is_relative_to(venv.parents[1]), "the kit of the installed wheel"
    copied = _run(venv, "-m", "zarr_jpeg_conformance.harnesses", "kit", language, "--copy", "kit", cwd=tmp_path)
    assert copied.returncode == 0 and copied.stdout.strip() == str(tmp_path / "kit"), copied.stderr

    def files(folder: Path) -> set[str]:
        return {p.relative_to(folder).as_posix() for p in folder.rglob("*")
                if p.is_file() and not {"target", "node_modules", "test"} & set(p.relative_to(folder).parts)}

    assert files(tmp_path / "kit") == files(KITS[language].path)
