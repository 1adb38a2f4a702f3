"""The configuration, chunk and build cases (``fixtures/configs``, ``fixtures/chunks``, ``fixtures/builds``), typed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from .registry import read_json, resource


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


@dataclass(frozen=True)
class BuildCase:
    """Options given to an implementation's builder (role ``build``), and what it may write for them.

    ``expect`` is "built" (write a valid codec object of ``configuration``), "refused" (the
    options make no valid configuration) or "either". ``configuration`` holds the members
    the written object must have, defaults applied; a member left out is the builder's choice.
    """

    id: str
    description: str
    requirements: tuple[str, ...]
    level: Literal["MUST", "SHOULD", "MAY"]
    options: dict[str, Any]
    expect: Literal["built", "refused", "either"]
    configuration: dict[str, Any] | None = None
    comment: str | None = None


def _case_files(folder: str) -> list[tuple[str, Any]]:
    root = resource("fixtures", folder)
    return [
        (f"fixtures/{folder}/{entry.name}", read_json(entry, f"fixtures/{folder}/{entry.name}"))
        for entry in sorted(root.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".json")
    ]


def _common(c: Mapping[str, Any]) -> dict[str, Any]:
    """The members every kind of case file gives each case."""
    return {"id": c["id"], "description": c["description"], "requirements": tuple(c["requirements"]),
            "level": c["level"], "comment": c.get("comment")}


@cache
def config_cases() -> tuple[ConfigCase, ...]:
    return tuple(
        ConfigCase(
            **_common(c),
            codec=c["codec"],
            valid=c["valid"],
            source=source,
        )
        for source, doc in _case_files("configs")
        for c in doc["cases"]
    )


@cache
def chunk_cases() -> tuple[ChunkCase, ...]:
    return tuple(
        ChunkCase(
            **_common(c),
            codec=c["codec"],
            chunk=ChunkSpec(shape=tuple(c["chunk"]["shape"]), dtype=c["chunk"].get("dtype", "uint8"), fill=c["chunk"].get("fill", "gradient")),
            valid=c["valid"],
            tags=tuple(c.get("tags", ())),
        )
        for _, doc in _case_files("chunks")
        for c in doc["cases"]
    )


@cache
def build_cases() -> tuple[BuildCase, ...]:
    return tuple(
        BuildCase(
            **_common(c),
            options=c["options"],
            expect=c["expect"],
            configuration=c.get("configuration"),
        )
        for _, doc in _case_files("builds")
        for c in doc["cases"]
    )
