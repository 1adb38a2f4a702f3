"""CI runs exactly the README's test command, not a variant of it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    return re.findall(r"```sh\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.S)


def test_ci_runs_the_readme_test_command() -> None:
    commands = [c.strip() for c in _readme_commands() if "pytest" in c and "report" not in c]
    assert commands, "the README has no test command"
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert commands[0] in ci_lines, f"{commands[0]!r} is not a line of .ci/run"


def test_readme_has_one_main_job_command() -> None:
    main = [c for c in _readme_commands() if "zarr_jpeg_conformance.report" in c]
    assert len(main) == 1 and main[0].startswith("apt-get update")
