"""What each row of the matrix is, and which of its cases judge it as what.

Three kinds of row, each under its own heading (:data:`GROUPS`): this project's spec-aware
codec over one pixel library (the built-in adapters), a JPEG library called the way a
codec author would call it (adapters and harnesses of kind "library"), and any other
codec (kind "codec": a Zarr implementation's own codec). Rows name the parser their
configuration cases come from (:func:`parser_of`), so that the parse section shows each
parser once.

A decode-only row (a viewer, a reader) is judged on what a reader must do. The parse
suite's cases still apply to it, since the spec asks every parser to reject invalid
configurations, but those that concern only the writer's settings are counted apart
(:func:`writer_setting`), so that a strong decoder is not ranked by its parser's leniency
on quality values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from ..adapters import BUILTINS
from ..adapters.library import PARSER as LIBRARY_PARSER
from ..corpus.cases import config_cases

#: Row groups in display order: key -> (heading, what the rows are).
GROUPS: dict[str, tuple[str, str]] = {
    "project": (
        "This project's spec-aware codec, over one library each (the built-ins)",
        "zarr-jpeg-conformance's own codec (configuration parser, chunk checks, marker inspection, "
        "multi-scan writer in core/) with one pixel library each: what a codec that does everything the spec "
        "asks gets out of that library.",
    ),
    "codec": (
        "Codecs of Zarr implementations",
        "The jpeg codec of a Zarr implementation, as its users get it.",
    ),
    "library": (
        "Libraries, as a codec author would call them",
        "A JPEG library called through its own API, the way the author of a Zarr codec in that language would "
        "write it: encode where the library can, decode, refuse cleanly what it cannot. Nothing of this "
        "project's stream handling is added, so the row shows what the library itself does.",
    ),
}
#: The groups' names over the columns of a matrix, where a group may be one column wide.
SHORT: dict[str, str] = {"project": "this project's codec", "codec": "Zarr codecs", "library": "libraries, as a codec author calls them"}
#: The parser of this project's codec (core.config), which the built-ins use (backends/base.py)
#: and the Python library adapters say they share.
PROJECT_PARSER = LIBRARY_PARSER
#: Case IDs of the parse suite (suites/test_parse.py: the cases of fixtures/configs).
PARSE_PREFIX = "config."
PARSE_MODULE = "test_parse.py"
#: The configuration members a decoder does not use: the spec says decoding does not depend
#: on quality (JPEG-Q-04) and ignores subsampling (JPEG-DEC-01). Requirements of their
#: sections, and the interpretations about how their numbers are written (JPEG-X-02) and
#: which factors are optional (JPEG-X-04), concern only the writer.
WRITER_SECTIONS = ("Configuration parameters / quality", "Configuration parameters / subsampling")
WRITER_INTERPRETATIONS = frozenset({"JPEG-X-02", "JPEG-X-04"})
#: Requirements every invalid configuration cites, whatever member is wrong: they do not
#: make a case a reader's concern.
GENERIC_PARSE = frozenset({"JPEG-CFG-01", "JPEG-ECS-02"})
#: The case groups of those members: a malformed configuration object as a whole (an
#: array, a string) also cites JPEG-Q-05 for its missing quality, but is no writer's setting.
WRITER_GROUPS = ("config.quality.", "config.subsampling.")


def group_of(spec: str, kind: str) -> str:
    """The row group of an implementation: a key of GROUPS."""
    if spec in BUILTINS:
        return "project"
    return "library" if kind == "library" else "codec"


def parser_of(name: str, group: str, versions: Mapping[str, str]) -> str:
    """The parser a row's configuration cases come from: what its versions say under
    "parse", this project's for the built-ins, otherwise the row's own."""
    said = versions.get("parse")
    if said:
        return said
    return PROJECT_PARSER if group == "project" else f"{name}'s own parser"


def is_parse_case(case: str, test: str = "") -> bool:
    """A result of the parse suite: a configuration case, from test_parse where the test is
    known (other suites reuse configuration case IDs, e.g. to encode what was parsed)."""
    if not case.startswith(PARSE_PREFIX):
        return False
    module = test.split("::")[0]
    return not module or module.rsplit("/", 1)[-1] == PARSE_MODULE


def decode_only(roles: Iterable[str]) -> bool:
    """A reader: it decodes and does not encode (no roles at all is not a reader)."""
    roles = set(roles)
    return "decode" in roles and "encode" not in roles


@cache
def _writer_requirements() -> frozenset[str]:
    from ..corpus.registry import requirements

    return frozenset(rid for rid, r in requirements().items() if r.section in WRITER_SECTIONS) | WRITER_INTERPRETATIONS


@cache
def _config_cases() -> dict[str, Any]:
    return {c.id: c for c in config_cases()}


def writer_setting(case: str) -> bool:
    """Whether a parse case concerns only the writer's settings.

    It does when the configuration is invalid only in quality or subsampling: the case is
    of those members' groups (fixtures/configs/quality.json, subsampling.json), every
    requirement it cites is of those members (or generic to any invalid configuration) and
    at least one is. A *valid* configuration stays a reader's case whatever it holds, since a
    reader that refuses it cannot open the array.
    """
    found = _config_cases().get(case)
    if found is None or found.valid or not case.startswith(WRITER_GROUPS):
        return False
    reqs = set(found.requirements)
    writer = _writer_requirements()
    return bool(reqs & writer) and reqs <= writer | GENERIC_PARSE


def describe_classification() -> str:
    """How a parse case is classified, for the pages."""
    return (
        "A parse case concerns only the writer's settings when its configuration is invalid only in quality or "
        "subsampling, the members the spec says decoding does not use (JPEG-Q-04, JPEG-DEC-01): it is one of the "
        "config.quality or config.subsampling cases, and every requirement it cites is of the quality or "
        "subsampling sections, JPEG-X-02 or JPEG-X-04 (or one that any invalid configuration cites, JPEG-CFG-01, "
        "JPEG-ECS-02). Valid configurations stay reading cases: a reader "
        "that refuses one cannot open the array. For decode-only rows these cases are counted apart."
    )


def label(kind: str, language: str) -> str:
    """'library · Rust': what a row is, in a few words."""
    return f"{kind} · {language}"


__all__ = [
    "GROUPS",
    "SHORT",
    "PARSE_PREFIX",
    "PROJECT_PARSER",
    "decode_only",
    "describe_classification",
    "group_of",
    "is_parse_case",
    "label",
    "parser_of",
    "writer_setting",
]
