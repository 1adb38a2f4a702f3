"""The requirement registry (``fixtures/requirements.json``) and the package data files behind every corpus.

Files are found through ``importlib.resources``, never through the current directory,
so the suite reads the same corpus from a source tree, an editable install or a wheel.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any, Literal

Level = Literal["MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY"]
PACKAGE = "zarr_jpeg_conformance"


def resource(*parts: str) -> Traversable:
    """A file or folder of the installed package (``schema/...``, ``fixtures/...``)."""
    node = files(PACKAGE)
    for part in parts:
        node = node / part
    return node


class CorpusFileError(ValueError):
    """A file of the installed corpus cannot be read: it was damaged (truncated, edited) since it was written."""


def read_json(node: Traversable, where: str) -> Any:
    """The JSON document of a corpus file; CorpusFileError naming ``where`` when it is not one."""
    try:
        return json.loads(node.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CorpusFileError(f"{where}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}): the corpus file is "
                              "damaged; reinstall zarr-jpeg-conformance, or restore the file from its repository") from None
    except UnicodeDecodeError as exc:
        raise CorpusFileError(f"{where}: not UTF-8 text (byte {exc.start}): the corpus file is damaged") from None
    except OSError as exc:
        raise CorpusFileError(f"{where}: cannot read it: {exc.strerror or exc}") from None


def load_json(*parts: str) -> Any:
    return read_json(resource(*parts), "/".join(parts))


@dataclass(frozen=True)
class Requirement:
    id: str
    level: Level
    text: str
    section: str
    when: tuple[str, ...]
    kind: str
    note: str | None = None

    @property
    def severity(self) -> Literal["MUST", "SHOULD", "MAY"]:
        return severity(self.level)


def severity(level: str) -> Literal["MUST", "SHOULD", "MAY"]:
    """MUST NOT counts as MUST and SHOULD NOT as SHOULD when judging outcomes."""
    return "MUST" if level.startswith("MUST") else "SHOULD" if level.startswith("SHOULD") else "MAY"


@cache
def requirements() -> Mapping[str, Requirement]:
    data = load_json("fixtures", "requirements.json")
    return {
        r["id"]: Requirement(
            id=r["id"],
            level=r["level"],
            text=r["text"],
            section=r["section"],
            when=tuple(r["when"]),
            kind=r["kind"],
            note=r.get("note"),
        )
        for r in data["requirements"]
    }
