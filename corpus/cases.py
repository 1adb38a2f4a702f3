"""The configuration, chunk and build cases (``fixtures/configs``, ``fixtures/chunks``, ``fixtures/builds``), typed."""

from __future__ import annotations

import json
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
    #: Of an invalid case: the valid case whose codec object differs from it in one place.
    twin: str | None = None


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
    #: Of an invalid case: the valid case with the same codec object whose chunk differs in one member.
    twin: str | None = None


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
    #: Of a refused case: the built case whose options differ from these in one member.
    twin: str | None = None


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
            "level": c["level"], "comment": c.get("comment"), "twin": c.get("twin")}


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


def differing_places(a: Any, b: Any) -> list[str]:
    """Where two codec objects (or two sets of builder options) differ, one entry per place.

    A place is a top-level member, a member of ``configuration`` when both are objects, a
    member renamed (the same value under another name), or the whole value where either is
    no object (or its configuration is empty). A valid twin differs from its invalid case in
    exactly one place, so that a rejection of the case can only be about that place.
    """
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return [] if _same(a, b) else ["<codec>"]
    if {} in (a.get("configuration"), b.get("configuration")) and not _same(a.get("configuration"), b.get("configuration")):
        rest = differing_places({k: v for k, v in a.items() if k != "configuration"},
                                {k: v for k, v in b.items() if k != "configuration"})
        return [*rest, "configuration"]
    places = []
    for key in sorted(set(a) & set(b)):
        if _same(a[key], b[key]):
            continue
        if key == "configuration" and isinstance(a[key], dict) and isinstance(b[key], dict):
            places += [f"configuration.{p}" for p in differing_places(a[key], b[key])]
        else:
            places.append(key)
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    for x in list(only_a):
        y = next((k for k in only_b if _same(b[k], a[x])), None)
        if y is not None:
            only_a.remove(x)
            only_b.remove(y)
            places.append(f"{x} -> {y}")
    return places + only_a + only_b


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: true is not 1, and 1.0 is not 1 (Python's == says both are)."""
    return _key(a) == _key(b)


def chunk_places(a: ChunkCase, b: ChunkCase) -> list[str]:
    """Where two chunk cases differ: their codec objects' places, then the chunk's shape, dtype, fill."""
    places = [f"codec {p}" for p in differing_places(a.codec, b.codec)]
    return places + [m for m in ("shape", "dtype", "fill") if getattr(a.chunk, m) != getattr(b.chunk, m)]


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@cache
def _valid_configs() -> dict[str, ConfigCase]:
    out: dict[str, ConfigCase] = {}
    for case in config_cases():
        if case.valid:
            out.setdefault(_key(case.codec), case)
    return out


@cache
def _valid_chunks() -> dict[tuple[str, tuple[int, ...], str], ChunkCase]:
    out: dict[tuple[str, tuple[int, ...], str], ChunkCase] = {}
    for case in chunk_cases():
        if case.valid:
            out.setdefault((_key(case.codec), case.chunk.shape, case.chunk.dtype), case)
    return out


def config_case_for(codec: Any) -> ConfigCase | None:
    """The valid configuration case of exactly this codec object, if the corpus has one: the case that judges its parse."""
    return _valid_configs().get(_key(codec))


def chunk_case_for(codec: Any, shape: tuple[int, ...], dtype: str) -> ChunkCase | None:
    """The valid chunk case of this codec object, shape and dtype, if the corpus has one: the case that judges its encode."""
    return _valid_chunks().get((_key(codec), tuple(int(n) for n in shape), str(dtype)))


@cache
def case_by_id() -> dict[str, ConfigCase | ChunkCase | BuildCase]:
    """Every configuration, chunk and build case by its id."""
    out: dict[str, ConfigCase | ChunkCase | BuildCase] = {}
    for kind in (config_cases(), chunk_cases(), build_cases()):
        for case in kind:
            out[case.id] = case
    return out


def twin_of(case: ConfigCase | ChunkCase | BuildCase) -> Any:
    """The valid twin an invalid case names, of the case's own kind; KeyError if the corpus has none."""
    twin = case_by_id().get(case.twin or "")
    if twin is None or type(twin) is not type(case):
        raise KeyError(f"{case.id}: its twin {case.twin!r} is no {type(case).__name__} of the corpus")
    return twin
