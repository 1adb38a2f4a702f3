"""Typed access to the requirement registry and the case corpora shipped as package data.

Files are found through ``importlib.resources``, never through the current directory,
so the suite reads the same corpus from a source tree, an editable install or a wheel.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
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


def load_json(*parts: str) -> Any:
    return json.loads(resource(*parts).read_text(encoding="utf-8"))


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


@dataclass(frozen=True)
class ConfigCase:
    """One codec object and the verdict the spec's parse rules give it."""

    id: str
    description: str
    requirements: tuple[str, ...]
    level: Literal["MUST", "SHOULD", "MAY"]
    codec: Any
    valid: bool
    comment: str | None = None
    source: str = ""


@dataclass(frozen=True)
class ChunkSpec:
    """How to build a chunk: shape, dtype and a deterministic fill."""

    shape: tuple[int, ...]
    dtype: str = "uint8"
    fill: str = "gradient"


@dataclass(frozen=True)
class ChunkCase:
    """One chunk given to an encoder, and whether the spec lets it be encoded."""

    id: str
    description: str
    requirements: tuple[str, ...]
    level: Literal["MUST", "SHOULD", "MAY"]
    codec: Any
    chunk: ChunkSpec
    valid: bool
    comment: str | None = None
    tags: tuple[str, ...] = field(default=())


def _case_files(folder: str) -> list[tuple[str, Any]]:
    root = resource("fixtures", folder)
    return [
        (f"fixtures/{folder}/{entry.name}", json.loads(entry.read_text(encoding="utf-8")))
        for entry in sorted(root.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".json")
    ]


@cache
def config_cases() -> tuple[ConfigCase, ...]:
    return tuple(
        ConfigCase(
            id=c["id"],
            description=c["description"],
            requirements=tuple(c["requirements"]),
            level=c["level"],
            codec=c["codec"],
            valid=c["valid"],
            comment=c.get("comment"),
            source=source,
        )
        for source, doc in _case_files("configs")
        for c in doc["cases"]
    )


@cache
def chunk_cases() -> tuple[ChunkCase, ...]:
    return tuple(
        ChunkCase(
            id=c["id"],
            description=c["description"],
            requirements=tuple(c["requirements"]),
            level=c["level"],
            codec=c["codec"],
            chunk=ChunkSpec(shape=tuple(c["chunk"]["shape"]), dtype=c["chunk"].get("dtype", "uint8"), fill=c["chunk"].get("fill", "gradient")),
            valid=c["valid"],
            comment=c.get("comment"),
            tags=tuple(c.get("tags", ())),
        )
        for _, doc in _case_files("chunks")
        for c in doc["cases"]
    )
