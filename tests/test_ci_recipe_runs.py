"""The CI recipes of docs/ci, run as a runner runs them, on the example codec repositories of docs/examples.

Each recipe's steps run in order in a fresh folder, the workspace: ``run:`` steps with bash, as GitHub's
runner runs them (``bash --noprofile --norc -eo pipefail``), with the workflow's ``env``; a step after a
failed one only with ``if: always()``. ``uses:`` steps are what they provide here: checkout copies the
example repository into the workspace; setup-python is a venv that sees this interpreter's packages (the
recipe's ``pip install`` installs there, not into the venv running the tests); the other setup steps are
the toolchains on this machine (the test is skipped, saying which, where one is missing); upload-artifact
checks that what it would upload is there.

Each recipe is green on its example as committed (with the example's known-failures file), and red for
the right reason with a deviation planted in the example's decoder (the three components returned in
reverse order): the run exits 1, and the findings step prints the rule the suites charge it to,
JPEG-DEC-02, not marked as a known failure. The findings step speaks when the suites did not run too.

What differs from GitHub, none of it in the recipe's lines: the workflow's ``CONFORMANCE`` names a wheel
built from this checkout instead of the git URL (the network here reaches only package registries);
``PYTEST_ADDOPTS``, which pytest reads and the recipes pass on untouched, selects a few cases of each kind
(:data:`SUBSET`: parse, reference decodes of one scheme, the foreign streams where most known failures
are), so that eleven runs fit CI's budget; the builds use caches as a CI restores them: cargo's target
folder in this project's cache folder, Go's, npm's and Maven's own caches.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from zarr_jpeg_conformance.harnesses import (
    CARGO,
    GO,
    JAVA,
    JAVAC,
    MAVEN,
    NODE,
    NPM,
    Toolchain,
    Unavailable,
    cache_folder,
)

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "docs" / "ci"
EXAMPLES = ROOT / "docs" / "examples"
#: The cases each run judges (see the module's docstring); the same for every language.
SUBSET = "-k 'config.quality or stream.reference.ycbcr-420 or stream.foreign'"
#: What each recipe's setup step provides, checked here instead of installed.
TOOLCHAINS: dict[str, tuple[Toolchain, ...]] = {
    "rust": (CARGO,), "go": (GO,), "node": (NODE, NPM), "java": (MAVEN, JAVAC, JAVA), "python": (),
}
SETUP = ("actions/setup-python@", "actions/setup-go@", "actions/setup-node@", "actions/setup-java@", "dtolnay/rust-toolchain@")
#: What the examples' builds write at their root (their .gitignore files): never committed, so never checked out.
BUILT = frozenset({"target", "node_modules", "jpeg-conformance-kit", "conformance-out", "jpeg-conformance-harness"})
#: The deviation planted in each example: (file, text as committed, the same with the components reversed).
PLANTED: dict[str, tuple[str, str, str]] = {
    "rust": ("src/main.rs", "        Ok(samples)\n",
             "        let mut samples = samples;\n"
             "        if chunk.components == 3 { samples.chunks_exact_mut(3).for_each(|p| p.swap(0, 2)); }\n"
             "        Ok(samples)\n"),
    "go": ("cmd/jpeg-conformance-harness/main.go", "out = append(out, byte(r>>8), byte(g>>8), byte(b>>8))",
           "out = append(out, byte(b>>8), byte(g>>8), byte(r>>8))"),
    "node": ("test/jpeg-conformance-harness.mjs", "    return fromRGBA(image.data, components);\n",
             "    const out = fromRGBA(image.data, components);\n"
             "    if (components === 3) for (let i = 0; i < out.length; i += 3) [out[i], out[i + 2]] = [out[i + 2], out[i]];\n"
             "    return out;\n"),
    "java": ("src/main/java/example/JpegConformanceHarness.java",
             "out[i] = (byte) (rgb >> 16);\n                out[i + 1] = (byte) (rgb >> 8);\n                out[i + 2] = (byte) rgb;",
             "out[i] = (byte) rgb;\n                out[i + 1] = (byte) (rgb >> 8);\n                out[i + 2] = (byte) (rgb >> 16);"),
    "python": ("my_codec/testing.py", "return to_chunk(pixels, config, chunk_shape, self.name)",
               "return to_chunk(pixels[..., ::-1] if pixels.ndim == 3 else pixels, config, chunk_shape, self.name)"),
}


def _committed(root: Path) -> Callable[[str, list[str]], set[str]]:
    """A copytree filter that leaves out what builds wrote into ``root`` (:data:`BUILT`) and Python's caches."""
    def left_out(folder: str, names: list[str]) -> set[str]:
        built = BUILT if Path(folder) == root else set()
        return {n for n in names if n in built or n == "__pycache__" or n.endswith(".egg-info")}
    return left_out


@dataclass(frozen=True)
class Step:
    label: str
    #: The exit status; None where the step was skipped (a step before it failed).
    code: int | None
    log: str


def _workflow(language: str) -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    loaded: dict[str, Any] = yaml.safe_load((RECIPES / f"{language}.yml").read_text(encoding="utf-8"))
    return loaded


def _toolchains(language: str) -> None:
    for toolchain in TOOLCHAINS[language]:
        try:
            toolchain.executable()
        except Unavailable as exc:
            pytest.skip(f"the {language} recipe's setup step: {exc}")


@contextmanager
def _locked(language: str) -> Iterator[Path]:
    """This project's cache folder for the recipe runs, held for one language at a time: cargo's target folder
    and the kit Maven installs into the local repository are shared by every checkout's test runs."""
    folder = cache_folder() / "ci-recipes"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{language}.lock", "wb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield folder


def _uses(step: dict[str, Any], workspace: Path, env: dict[str, str], example: Path) -> tuple[int, str]:
    """What a ``uses:`` step provides here; (exit status, log)."""
    action = step["uses"]
    if action.startswith("actions/checkout@"):
        shutil.copytree(example, workspace, ignore=_committed(example), dirs_exist_ok=True)
        return 0, f"checked out {example.name}"
    if action.startswith(SETUP):
        return 0, f"{action}: the toolchain of this machine"
    if action.startswith("actions/upload-artifact@"):
        path = re.sub(r"\$\{\{\s*env\.(\w+)\s*\}\}", lambda m: env[m.group(1)], step["with"]["path"])
        found = (workspace / path).exists()
        return (0, f"would upload {path}") if found else (1, f"nothing to upload at {path}")
    raise AssertionError(f"the runner here does not know uses: {action}")


def _run_job(workflow: dict[str, Any], workspace: Path, env: dict[str, str], example: Path) -> dict[str, Step]:
    """Every step of the job in order, as a runner runs them: step label -> what it did."""
    env = {**env, **{k: str(v) for k, v in workflow.get("env", {}).items()}, "CONFORMANCE": env["CONFORMANCE"]}
    steps: dict[str, Step] = {}
    failed = False
    for step in workflow["jobs"]["conformance"]["steps"]:
        label = step.get("name") or step["uses"].split("@")[0].split("/")[-1]
        condition = step.get("if")
        assert condition in (None, "always()"), f"the runner here knows no if: {condition}"
        if failed and condition != "always()":
            steps[label] = Step(label, None, "")
            continue
        if "uses" in step:
            code, log = _uses(step, workspace, env, example)
        else:
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=workspace, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900, check=False)
            code, log = done.returncode, done.stdout
        failed = failed or code != 0
        steps[label] = Step(label, code, log)
    return steps


def _shown(steps: dict[str, Step]) -> str:
    return "\n".join(f"== {s.label}: {'skipped' if s.code is None else f'exit {s.code}'}\n{s.log[-2500:]}" for s in steps.values())


@pytest.fixture(scope="module")
def runner_env(tmp_path_factory: pytest.TempPathFactory, wheel: Path, venv_over_ours: Callable[[Path], Path]) -> dict[str, str]:
    """The environment of a job's steps: setup-python's venv first on PATH, CONFORMANCE naming this checkout's wheel."""
    python = venv_over_ours(tmp_path_factory.mktemp("runner") / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH", "CARGO_TARGET_DIR", "VIRTUAL_ENV")}
    env.update({
        "PATH": f"{python.parent}{os.pathsep}{env.get('PATH', '')}", "VIRTUAL_ENV": str(python.parents[1]), "CI": "true",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTEST_ADDOPTS": SUBSET,
        # The recipes' own value, with this checkout's wheel in place of the git URL (the extras stay).
        "CONFORMANCE": f"zarr-jpeg-conformance[zarr,imagecodecs] @ {wheel.as_uri()}",
    })
    return env


def _job(language: str, tmp_path: Path, env: dict[str, str], cache: Path, plant: tuple[str, str, str] | None = None) -> dict[str, Step]:
    """Run the language's recipe in a fresh workspace on its example, with a deviation planted if given."""
    example = EXAMPLES / language
    if plant is not None:
        planted = tmp_path / "planted"
        shutil.copytree(example, planted, ignore=_committed(example))
        path, old, new = plant
        text = (planted / path).read_text(encoding="utf-8")
        assert text.count(old) == 1, f"the deviation's place is not once in {path}"
        (planted / path).write_text(text.replace(old, new), encoding="utf-8")
        example = planted
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True)
    if language == "rust":
        # Restored as a CI restores cargo's target folder (actions/cache): the kit and jpeg-decoder built once.
        (cache / "rust-target").mkdir(exist_ok=True)
        (workspace / "target").symlink_to(cache / "rust-target", target_is_directory=True)
    return _run_job(_workflow(language), workspace, env, example)


@pytest.mark.parametrize("language", sorted(PLANTED))
def test_recipe_is_green_on_its_example_and_red_on_a_deviation(language: str, tmp_path: Path, runner_env: dict[str, str]) -> None:
    _toolchains(language)
    with _locked(language) as cache:
        green = _job(language, tmp_path / "green", runner_env, cache)
        red = _job(language, tmp_path / "red", runner_env, cache, PLANTED[language])
    assert all(s.code == 0 for s in green.values()), _shown(green)
    findings = green["Root findings"].log
    assert re.match(r"example-\S+: ", findings), f"the findings step says nothing of the example:\n{findings}"
    assert "[known failure]" in findings or "no root finding" in findings, findings
    run, findings = red["Run the suites"], red["Root findings"]
    assert run.code == 1, f"the deviation must fail the run (exit 1):\n{_shown(red)}"
    assert findings.code == 0 and red["upload-artifact"].code == 0, _shown(red)
    line = next((ln for ln in findings.log.splitlines() if re.match(r"  \d+\. JPEG-DEC-02 MUST", ln)), None)
    assert line is not None and "[known" not in line, f"no new finding JPEG-DEC-02 (components reversed):\n{findings.log}"


def test_the_findings_step_says_when_the_suites_did_not_run(tmp_path: Path, runner_env: dict[str, str]) -> None:
    """The issue's silent failure: a harness that cannot start (here, its codec's package is missing) exits 4
    before any case, and the findings step says that no case ran instead of printing nothing with exit 0."""
    _toolchains("node")
    plant = ("test/jpeg-conformance-harness.mjs", 'import jpeg from "jpeg-js";', 'import jpeg from "jpeg-js-not-installed";')
    with _locked("node") as cache:
        steps = _job("node", tmp_path, runner_env, cache, plant)
    assert steps["Run the suites"].code == 4, _shown(steps)
    findings = steps["Root findings"]
    assert findings.code == 2 and re.search(r"results\.jsonl: (empty: no case ran|no results file)", findings.log), _shown(steps)
    assert (tmp_path / "workspace" / "conformance-out" / "findings.txt").read_text().strip(), "findings.txt keeps what it said"
